// Key discovery: foreign keys inferred from names (and values) for catalogs that declare none,
// a catalog with them added, and a catalog with its declared keys hidden.
#include <tabret/join/column_stats.hpp>
#include <tabret/join/key_discovery.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "defaults.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

/// An inferred key as Python sees it: the ids and the columns' qualified names, so that its
/// repr reads without the catalog at hand.
struct named_inferred_key {
    inferred_key key;
    std::string from_name;
    std::string to_name;
};

}  // namespace

void register_key_discovery(py::module_& m) {
    py::class_<named_inferred_key>(m, "InferredKey",
                                   "An inferred foreign key: referencing -> referenced column.")
        .def_property_readonly("from_column",
                               [](const named_inferred_key& k) { return k.key.from; })
        .def_property_readonly("to_column", [](const named_inferred_key& k) { return k.key.to; })
        .def_property_readonly(
            "rule",
            [](const named_inferred_key& k) { return std::string(key_rule_name(k.key.rule)); })
        .def_property_readonly("confidence",
                               [](const named_inferred_key& k) { return k.key.confidence; })
        .def_readonly("from_name", &named_inferred_key::from_name,
                      "The referencing column as database.table.column.")
        .def_readonly("to_name", &named_inferred_key::to_name,
                      "The referenced column as database.table.column.")
        .def("__eq__", [](const named_inferred_key& a,
                          const named_inferred_key& b) { return a.key == b.key; })
        .def("__hash__",
             [](const named_inferred_key& k) {
                 return py::hash(py::make_tuple(k.key.from, k.key.to));
             })
        .def("__repr__", [](const named_inferred_key& k) {
            return fmt::format("InferredKey({} -> {}, {}, confidence {:.2f})", k.from_name,
                               k.to_name, key_rule_name(k.key.rule), k.key.confidence);
        });

    const key_discovery_options d;
    const auto infer = [](const catalog& cat, const column_stats_table* stats,
                          bool use_primary_keys, double min_uniqueness, double min_inclusion,
                          bool first_column_keys, bool role_prefixed) {
        const key_discovery_options o{use_primary_keys, min_uniqueness, min_inclusion,
                                      first_column_keys, role_prefixed};
        std::vector<named_inferred_key> out;
        {
            py::gil_scoped_release release;
            for (const auto& k : infer_foreign_keys(cat, stats, o))
                out.push_back(
                    {k, cat.qualified_name_of_column(k.from), cat.qualified_name_of_column(k.to)});
        }
        return out;
    };
    const auto args = std::make_tuple(py::arg("catalog"), py::arg("stats") = py::none(),
                                      py::arg("use_primary_keys") = d.use_primary_keys,
                                      py::arg("min_uniqueness") = d.min_uniqueness,
                                      py::arg("min_inclusion") = d.min_inclusion,
                                      py::arg("first_column_keys") = d.first_column_keys,
                                      py::arg("role_prefixed") = d.role_prefixed);
    std::apply(
        [&](const auto&... a) {
            m.def("infer_foreign_keys", infer, a...,
                  "Foreign keys inferred from column names (and values, with stats), sorted by "
                  "(from, to).");
            m.attr("infer_foreign_keys_defaults") = defaults_of(a...);
        },
        args);

    m.def(
        "with_foreign_keys",
        [](const catalog& cat, const std::vector<named_inferred_key>& keys) {
            std::vector<inferred_key> plain;
            plain.reserve(keys.size());
            for (const auto& k : keys) plain.push_back(k.key);
            py::gil_scoped_release release;
            return with_foreign_keys(cat, plain);
        },
        py::arg("catalog"), py::arg("keys"),
        "A copy of the catalog with the keys added as foreign keys (each pair once).");
    m.def("catalog_without_keys", &catalog_without_keys, py::arg("catalog"),
          py::arg("keep_primary_keys") = false, py::call_guard<py::gil_scoped_release>(),
          "A copy of the catalog without foreign keys and, unless keep_primary_keys, without "
          "primary keys and UNIQUE constraints.");
}

}  // namespace tabret::bindings
