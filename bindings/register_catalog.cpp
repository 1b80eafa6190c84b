// tabret::catalog and its records. Records are returned as copies (they are small and immutable).
#include <tabret/catalog.hpp>
#include <tabret/join/column_stats.hpp>
#include <tabret/serialize.hpp>
#include <tabret/text/abbreviations.hpp>
#include <tabret/text/segment.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "choices.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

table_format to_table_format(const std::string& s) {
    return choice<table_format>("format", s,
                                {{"signature", table_format::signature},
                                 {"words", table_format::words},
                                 {"ddl", table_format::ddl},
                                 {"described", table_format::described},
                                 {"related", table_format::related}});
}

name_style to_name_style(const std::string& s) {
    return choice<name_style>(
        "names", s, {{"natural", name_style::natural}, {"original", name_style::original}});
}

namespace {

/// A foreign key as Python sees it: the ids and the columns' qualified names, so that its repr
/// reads without the catalog at hand.
struct named_foreign_key {
    foreign_key key;
    std::string from_name;
    std::string to_name;
};

template <class T>
std::string record_repr(const char* type, const T& r) {
    const auto quoted = [](const std::string& text) {
        // At most 60 bytes, cut before a UTF-8 continuation byte (never inside a character).
        std::size_t cut = std::min<std::size_t>(text.size(), 60);
        while (cut > 0 && cut < text.size() &&
               (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
            --cut;
        const auto shown = cut < text.size() ? text.substr(0, cut) + "…" : text;
        return py::repr(py::str(shown)).template cast<std::string>();
    };
    std::string out = fmt::format("{}(name={}", type, quoted(r.name));
    if constexpr (requires { r.nl_name; })
        if (r.nl_name != r.name) out += fmt::format(", nl_name={}", quoted(r.nl_name));
    if (!r.description.empty()) out += fmt::format(", description={}", quoted(r.description));
    return out + ")";
}

/// The column statistics that sample values come from; samples without them are an error.
const column_stats_table* ddl_stats(const py::object& stats, std::size_t samples) {
    if (stats.is_none())
        throw py::value_error(
            fmt::format("samples={} needs stats=: column statistics holding the values (for a live "
                        "database: tabret.column_stats_from_database(catalog, url, db_name))",
                        samples));
    if (!py::isinstance<column_stats_table>(stats))
        throw py::type_error(fmt::format("stats must be a tabret.ColumnStats, got {}",
                                         py::type::of(stats).attr("__name__").cast<std::string>()));
    return &stats.cast<const column_stats_table&>();
}

}  // namespace

void register_catalog(py::module_& m) {
    py::class_<column>(m, "Column", "A column (read-only copy).")
        .def_readonly("name", &column::name)
        .def_readonly("nl_name", &column::nl_name)
        .def_readonly("type", &column::type)
        .def_readonly("description", &column::description)
        .def_readonly("table", &column::table)
        .def_property_readonly("not_null", [](const column& c) { return c.constraints.not_null; })
        .def_property_readonly("unique", [](const column& c) { return c.constraints.unique; })
        .def_property_readonly("default",
                               [](const column& c) { return c.constraints.default_value; })
        .def("__repr__", [](const column& c) { return record_repr("Column", c); });
    py::class_<table>(m, "Table", "A table (read-only copy).")
        .def_readonly("name", &table::name)
        .def_readonly("nl_name", &table::nl_name)
        .def_readonly("description", &table::description)
        .def_readonly("database", &table::database)
        .def_readonly("columns", &table::columns)
        .def_readonly("primary_key", &table::primary_key)
        .def("__repr__", [](const table& t) { return record_repr("Table", t); });
    py::class_<database>(m, "Database", "A database (read-only copy).")
        .def_readonly("name", &database::name)
        .def_readonly("description", &database::description)
        .def_readonly("tables", &database::tables)
        .def("__repr__", [](const database& d) { return record_repr("Database", d); });
    py::class_<named_foreign_key>(m, "ForeignKey",
                                  "Referencing column -> referenced column, with their names.")
        .def_property_readonly("from_column", [](const named_foreign_key& k) { return k.key.from; })
        .def_property_readonly("to_column", [](const named_foreign_key& k) { return k.key.to; })
        .def_readonly("from_name", &named_foreign_key::from_name,
                      "The referencing column as database.table.column.")
        .def_readonly("to_name", &named_foreign_key::to_name,
                      "The referenced column as database.table.column.")
        .def("__eq__",
             [](const named_foreign_key& a, const named_foreign_key& b) { return a.key == b.key; })
        .def("__hash__",
             [](const named_foreign_key& k) {
                 return py::hash(py::make_tuple(k.key.from, k.key.to));
             })
        .def("__repr__", [](const named_foreign_key& k) {
            return fmt::format("ForeignKey({} -> {}, columns {} -> {})", k.from_name, k.to_name,
                               k.key.from, k.key.to);
        });

    py::class_<catalog>(m, "Catalog", "Databases, tables and columns with dense, stable ids.")
        .def(py::init<>())
        .def(py::init<const catalog&>(), py::arg("other"), "A copy of another catalog.")
        .def("add_database", &catalog::add_database, py::arg("name"), py::arg("description") = "")
        .def("add_table", &catalog::add_table, py::arg("database"), py::arg("name"),
             py::arg("nl_name") = "", py::arg("description") = "")
        .def("add_column", &catalog::add_column, py::arg("table"), py::arg("name"),
             py::arg("type") = "", py::arg("nl_name") = "", py::arg("description") = "")
        .def("set_primary_key", &catalog::set_primary_key, py::arg("table"), py::arg("columns"))
        .def(
            "set_constraints",
            [](catalog& c, column_id col, bool not_null, bool unique, std::string default_value) {
                c.set_constraints(col, {not_null, unique, std::move(default_value)});
            },
            py::arg("column"), py::kw_only(), py::arg("not_null") = false,
            py::arg("unique") = false, py::arg("default") = "")
        .def("add_foreign_key", &catalog::add_foreign_key, py::arg("from_column"),
             py::arg("to_column"))
        .def_property_readonly("databases", &catalog::databases,
                               "Every database, copied into a new list at each access.")
        .def_property_readonly("tables", &catalog::tables,
                               "Every table, copied into a new list at each access: read it once "
                               "outside a loop; table(id) for one.")
        .def_property_readonly(
            "columns", &catalog::columns,
            "Every column, copied into a new list at each access (up to a "
            "fifth of a second for Spider 2.0-lite's 532,388): read it once outside a loop; "
            "column(id) for one.")
        .def_property_readonly("foreign_keys",
                               [](const catalog& c) {
                                   std::vector<named_foreign_key> out;
                                   out.reserve(c.foreign_keys().size());
                                   for (const auto& k : c.foreign_keys())
                                       out.push_back({k, c.qualified_name_of_column(k.from),
                                                      c.qualified_name_of_column(k.to)});
                                   return out;
                               })
        .def_property_readonly("num_databases",
                               [](const catalog& c) { return c.databases().size(); })
        .def_property_readonly("num_tables", [](const catalog& c) { return c.tables().size(); })
        .def_property_readonly("num_columns", [](const catalog& c) { return c.columns().size(); })
        .def_property_readonly("num_foreign_keys",
                               [](const catalog& c) { return c.foreign_keys().size(); })
        .def("database", &catalog::database, py::arg("id"))
        .def("table", &catalog::table, py::arg("id"))
        .def("column", &catalog::column, py::arg("id"))
        .def("find_database", &catalog::find_database, py::arg("name"))
        .def("find_table", &catalog::find_table, py::arg("database"), py::arg("name"))
        .def("find_column", &catalog::find_column, py::arg("table"), py::arg("name"))
        .def("qualified_name", &catalog::qualified_name, py::arg("table"))
        .def("qualified_column_name", &catalog::qualified_name_of_column, py::arg("column"))
        .def(
            "serialize_table",
            [](const catalog& c, table_id t, const std::string& format, const std::string& names,
               std::size_t samples, const py::object& stats) {
                const auto kind = to_table_format(format);
                if (samples == 0) return serialize_table(c, t, kind, to_name_style(names));
                if (kind != table_format::ddl)
                    throw py::value_error(fmt::format(
                        "samples={} needs format='ddl' (sample values are DDL comments), got "
                        "format='{}'",
                        samples, format));
                return serialize_table_ddl(c, t, {ddl_stats(stats, samples), samples});
            },
            py::arg("table"), py::arg("format") = "signature", py::arg("names") = "natural",
            py::kw_only(), py::arg("samples") = 0, py::arg("stats") = py::none())
        .def(
            "serialize_column",
            [](const catalog& c, column_id col, const std::string& names, bool description) {
                return serialize_column(c, col, to_name_style(names), description);
            },
            py::arg("column"), py::arg("names") = "natural", py::arg("description") = false)
        .def(
            "database_ddl",
            [](const catalog& c, database_id db, std::size_t samples, const py::object& stats) {
                return serialize_database_ddl(
                    c, db, {samples == 0 ? nullptr : ddl_stats(stats, samples), samples});
            },
            py::arg("database"), py::kw_only(), py::arg("samples") = 0,
            py::arg("stats") = py::none())
        .def("__eq__", [](const catalog& a, const catalog& b) { return a == b; })
        .def("__repr__", [](const catalog& c) {
            return fmt::format("Catalog({} databases, {} tables, {} columns, {} foreign keys)",
                               c.databases().size(), c.tables().size(), c.columns().size(),
                               c.foreign_keys().size());
        });

    constexpr segment_options segment_defaults{};
    py::class_<word_segmenter>(m, "WordSegmenter",
                               "Splits concatenated words by a frequency-ordered word list.")
        .def(py::init([](const std::vector<std::string>& words, double word_penalty,
                         std::size_t short_rank, std::size_t rare_rank, std::size_t min_length) {
                 return word_segmenter(words, {word_penalty, short_rank, rare_rank, min_length});
             }),
             py::arg("words"), py::arg("word_penalty") = segment_defaults.word_penalty,
             py::arg("short_rank") = segment_defaults.short_rank,
             py::arg("rare_rank") = segment_defaults.rare_rank,
             py::arg("min_length") = segment_defaults.min_length)
        .def("split", &word_segmenter::split, py::arg("token"))
        .def("known", &word_segmenter::known, py::arg("word"))
        .def("rank", &word_segmenter::rank, py::arg("word"))
        .def(
            "natural_name",
            [](const word_segmenter& s, std::string_view identifier) {
                return segmented_natural_name(identifier, s);
            },
            py::arg("identifier"))
        .def("__len__", &word_segmenter::size);
    m.def("with_segmented_names", &with_segmented_names, py::arg("catalog"), py::arg("segmenter"),
          py::call_guard<py::gil_scoped_release>());

    constexpr abbreviation_options abbreviation_defaults{};
    m.def("default_abbreviations", [] { return default_abbreviations(); });
    m.def(
        "learned_abbreviations",
        [](const catalog& c, database_id db, const abbreviation_map& dictionary,
           const word_segmenter* words, std::size_t min_length, std::size_t max_length,
           std::size_t max_common_rank) {
            return learned_abbreviations(c, db, dictionary, words,
                                         {true, min_length, max_length, max_common_rank});
        },
        py::arg("catalog"), py::arg("database"), py::arg("dictionary"), py::arg("words"),
        py::kw_only(), py::arg("min_length") = abbreviation_defaults.min_length,
        py::arg("max_length") = abbreviation_defaults.max_length,
        py::arg("max_common_rank") = abbreviation_defaults.max_common_rank,
        py::call_guard<py::gil_scoped_release>());
    m.def(
        "with_expanded_abbreviations",
        [](const catalog& c, const abbreviation_map& dictionary, const word_segmenter* words,
           bool learn, std::size_t min_length, std::size_t max_length,
           std::size_t max_common_rank) {
            return with_expanded_abbreviations(c, dictionary, words,
                                               {learn, min_length, max_length, max_common_rank});
        },
        py::arg("catalog"), py::arg("dictionary"), py::arg("words"), py::kw_only(),
        py::arg("learn") = abbreviation_defaults.learn,
        py::arg("min_length") = abbreviation_defaults.min_length,
        py::arg("max_length") = abbreviation_defaults.max_length,
        py::arg("max_common_rank") = abbreviation_defaults.max_common_rank,
        py::call_guard<py::gil_scoped_release>());
}

}  // namespace tabret::bindings
