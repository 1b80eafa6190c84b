// The value index (index/value_index.hpp) and its SQLite reader (io/sqlite.hpp).
#include <tabret/index/value_index.hpp>
#include <tabret/interrupt.hpp>
#include <tabret/io/catalog_fingerprint.hpp>
#include <tabret/io/sqlite.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "callbacks.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

void register_values(py::module_& m) {
    py::class_<value_match>(m, "ValueMatch", "A value of the index that a question names.")
        .def_readonly("column", &value_match::column)
        .def_readonly("value", &value_match::value)
        .def_readonly("weight", &value_match::weight)
        .def("__repr__", [](const value_match& v) {
            return fmt::format("ValueMatch(column={}, value='{}', weight={:.3f})", v.column,
                               v.value, v.weight);
        });

    py::class_<value_index, std::shared_ptr<value_index>>(
        m, "ValueIndex",
        "Distinct text values of a catalog's columns, matched in questions. Fill it (add, "
        "add_sqlite) before a retriever searches it: retrievers read it without the GIL.")
        .def(py::init([](const catalog& cat, std::size_t max_values_per_column,
                         std::size_t max_value_bytes, std::size_t max_bytes) {
                 return std::make_shared<value_index>(
                     cat, value_index_options{max_values_per_column, max_value_bytes, max_bytes});
             }),
             py::arg("catalog"),
             py::arg("max_values_per_column") = value_index_options{}.max_values_per_column,
             py::arg("max_value_bytes") = value_index_options{}.max_value_bytes,
             py::arg("max_bytes") = value_index_options{}.max_bytes)
        .def(
            "add",
            [](value_index& v, column_id c, const std::vector<std::string>& values) {
                return v.add(c, values);
            },
            py::arg("column"), py::arg("values"),
            "Adds values of a column within the bounds; returns how many were kept.")
        .def(
            "match",
            [](const value_index& v, const std::string& question, const std::string& one_word) {
                if (one_word != "literal" && one_word != "unexplained")
                    throw py::value_error(fmt::format(
                        "one_word must be 'literal' or 'unexplained', not '{}'", one_word));
                return v.match(question, one_word == "literal" ? one_word_values::literal
                                                               : one_word_values::unexplained);
            },
            py::arg("question"), py::arg("one_word") = "literal",
            "The values the question names; one_word: which one-word matches count.")
        .def(
            "values_of",
            [](const value_index& v, column_id c) {
                const auto vs = v.values_of(c);
                return std::vector<std::string>(vs.begin(), vs.end());
            },
            py::arg("column"))
        .def(
            "add_sqlite",
            [](value_index& v, const catalog& cat, const std::string& db_name,
               const std::filesystem::path& path, std::optional<double> time_budget_s,
               const py::object& progress) {
                const auto db = cat.find_database(db_name);
                if (!db)
                    throw schema_error(fmt::format("no database '{}' in the catalog", db_name));
                std::optional<std::chrono::milliseconds> budget;
                if (time_budget_s) {
                    if (!std::isfinite(*time_budget_s) || *time_budget_s < 0)
                        throw py::value_error(fmt::format(
                            "time_budget_s must be a finite number >= 0, not {}", *time_budget_s));
                    budget = std::chrono::milliseconds(
                        static_cast<long long>(std::min(*time_budget_s, 1e12) * 1000));
                }
                // The GIL is kept: the index changes, and Python threads may be reading it.
                const interrupt_scope interruptible(python_interrupt());
                const auto r =
                    add_sqlite_values(v, cat, *db, path, budget, python_progress_fn(progress));
                py::dict out;
                out["columns"] = r.columns;
                out["values"] = r.values;
                out["complete"] = r.complete;
                out["missing"] = r.missing;
                return out;
            },
            py::arg("catalog"), py::arg("db_name"), py::arg("path"),
            py::arg("time_budget_s") = py::none(), py::arg("progress") = py::none(),
            "Reads the text values of database db_name from a SQLite file; returns "
            "{'columns', 'values', 'complete', 'missing'}.")
        .def("__len__", &value_index::size)
        .def_property_readonly("bytes", &value_index::bytes)
        .def_property_readonly("skipped", &value_index::skipped)
        .def_property_readonly("columns_with_values", &value_index::columns_with_values)
        .def_property_readonly(
            "max_values_per_column",
            [](const value_index& v) { return v.options().max_values_per_column; })
        .def_property_readonly("max_value_bytes",
                               [](const value_index& v) { return v.options().max_value_bytes; })
        .def_property_readonly("max_bytes",
                               [](const value_index& v) { return v.options().max_bytes; })
        .def_property_readonly("catalog_fingerprint", &value_index::catalog_fingerprint)
        .def("__repr__", [](const value_index& v) {
            return fmt::format("ValueIndex({} values in {} columns, {} bytes)", v.size(),
                               v.columns_with_values(), v.bytes());
        });

    m.def("catalog_fingerprint", &detail::catalog_fingerprint, py::arg("catalog"),
          "The checksum of a catalog's names and types that indexes and their parts carry.");
    m.def("normalise_value", &detail::normalise_value, py::arg("text"),
          "The form values and question words are compared in.");
}

}  // namespace tabret::bindings
