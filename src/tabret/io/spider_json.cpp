/// @file io/spider_json.cpp
/// @brief The Spider/BIRD tables.json loader (include/tabret/io/spider_json.hpp).

#include "tabret/io/spider_json.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/catalog.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/io/schema_format.hpp"

namespace tabret {

namespace detail {
namespace {

/// `[[table_index, name], …]`; Spider's `*` has table index -1.
using spider_columns = std::vector<std::pair<long, std::string>>;

std::vector<std::string> spider_strings(const json_reader& r, const char* key) {
    std::vector<std::string> out;
    for (const auto& v : r.list(key)) {
        if (!v.is_string()) r.fail(fmt::format("field '{}' holds a non-string", key));
        out.push_back(v.get<std::string>());
    }
    return out;
}

spider_columns spider_column_list(const json_reader& r, const char* key) {
    spider_columns out;
    for (const auto& v : r.list(key)) {
        if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_string())
            r.fail(fmt::format("field '{}' entry {} is not [table_index, name]", key, out.size()));
        out.emplace_back(v[0].get<long>(), v[1].get<std::string>());
    }
    return out;
}

/// A column index that exists and is not `*`.
std::size_t spider_column_index(const json_reader& r, const spider_columns& cols,
                                const nlohmann::json& v, const char* what) {
    if (!v.is_number_integer() || v.get<long>() < 0 ||
        static_cast<std::size_t>(v.get<long>()) >= cols.size())
        r.fail(fmt::format("{} refers to column {} which does not exist ({} columns)", what,
                           v.dump(), cols.size()));
    const auto i = static_cast<std::size_t>(v.get<long>());
    if (cols[i].first < 0) r.fail(fmt::format("{} refers to column {} ('*')", what, i));
    return i;
}

void add_spider_entry(catalog& cat, const nlohmann::json& j, std::string_view source,
                      std::size_t index) {
    const json_reader entry(j, source, fmt::format("database entry {}", index));
    const json_reader r(j, source, fmt::format("database '{}'", entry.str("db_id")));
    const auto tables = spider_strings(r, "table_names_original");
    const auto table_nl = j.contains("table_names") ? spider_strings(r, "table_names") : tables;
    const auto cols = spider_column_list(r, "column_names_original");
    const auto cols_nl = j.contains("column_names") ? spider_column_list(r, "column_names") : cols;
    const auto types = spider_strings(r, "column_types");
    if (table_nl.size() != tables.size())
        r.fail(fmt::format("'table_names' has {} entries, 'table_names_original' has {}",
                           table_nl.size(), tables.size()));
    if (cols_nl.size() != cols.size() || types.size() != cols.size())
        r.fail(fmt::format(
            "'column_names_original' has {} entries, 'column_names' {}, 'column_types' {}",
            cols.size(), cols_nl.size(), types.size()));

    r.placing_errors([&] {
        const auto db = cat.add_database(r.str("db_id"));
        std::vector<table_id> table_ids;
        for (std::size_t i = 0; i < tables.size(); ++i)
            table_ids.push_back(cat.add_table(db, tables[i], table_nl[i]));
        std::vector<column_id> ids(cols.size(), 0);
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const auto t = cols[i].first;
            if (t == -1) continue;
            if (t < 0 || static_cast<std::size_t>(t) >= tables.size())
                r.fail(
                    fmt::format("column '{}' points at table {} which does not exist ({} tables)",
                                cols[i].second, t, tables.size()));
            ids[i] = cat.add_column(table_ids[static_cast<std::size_t>(t)], cols[i].second,
                                    types[i], cols_nl[i].second);
        }
        for (const auto& pk : r.list("primary_keys")) {
            std::vector<column_id> key;
            for (const auto& c : pk.is_array() ? pk : nlohmann::json::array({pk}))
                key.push_back(ids[spider_column_index(r, cols, c, "primary key")]);
            if (key.empty()) r.fail("empty primary key");
            const auto t = cat.column(key.front()).table;
            cat.set_primary_key(t, std::move(key));
        }
        for (const auto& fk : r.list("foreign_keys")) {
            if (!fk.is_array() || fk.size() != 2)
                r.fail(fmt::format("foreign key {} is not a [from, to] pair", fk.dump()));
            cat.add_foreign_key(ids[spider_column_index(r, cols, fk[0], "foreign key")],
                                ids[spider_column_index(r, cols, fk[1], "foreign key")]);
        }
    });
}

}  // namespace
}  // namespace detail

void add_spider_json(catalog& cat, std::string_view text, std::string_view source) {
    detail::check_not_sqlite(text, source, schema_format::spider);
    const auto doc = detail::parse_json(text, source);
    detail::check_json_schema_format(doc, source, schema_format::spider);
    if (!doc.is_array())
        throw schema_error(fmt::format("{}: expected a JSON list of databases, found {}", source,
                                       doc.type_name()));
    catalog staged = cat;
    for (std::size_t i = 0; i < doc.size(); ++i)
        detail::add_spider_entry(staged, doc[i], source, i);
    cat = std::move(staged);
}

catalog load_spider_json(const std::filesystem::path& path) {
    catalog cat;
    add_spider_json(cat, read_text_file(path), path.string());
    return cat;
}

}  // namespace tabret
