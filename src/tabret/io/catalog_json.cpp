/// @file io/catalog_json.cpp
/// @brief tabret's catalog JSON format (include/tabret/io/catalog_json.hpp): writer and loader.

#include "tabret/io/catalog_json.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/catalog.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/io/schema_format.hpp"

namespace tabret {

namespace detail {
namespace {

column_id json_column(const catalog& cat, const json_reader& r, table_id t,
                      const nlohmann::json& name, const char* what) {
    if (!name.is_string()) r.fail(fmt::format("{} holds a non-string", what));
    const auto c = cat.find_column(t, name.get<std::string>());
    if (!c)
        r.fail(fmt::format("{} names column '{}' which table '{}' does not have", what,
                           name.get<std::string>(), cat.qualified_name(t)));
    return *c;
}

void add_json_database(catalog& cat, const json_reader& r) {
    const auto db = cat.add_database(r.str("name"), r.opt_str("description"));
    const auto& tables = r.list("tables");
    // Tables and columns first: foreign keys may point forward.
    for (std::size_t i = 0; i < tables.size(); ++i) {
        const auto tr = r.child(tables[i], "tables", i);
        const auto t =
            cat.add_table(db, tr.str("name"), tr.opt_str("nl_name"), tr.opt_str("description"));
        const auto& cols = tr.list("columns");
        for (std::size_t k = 0; k < cols.size(); ++k) {
            const auto cr = tr.child(cols[k], "columns", k);
            const auto c = cat.add_column(t, cr.str("name"), cr.opt_str("type"),
                                          cr.opt_str("nl_name"), cr.opt_str("description"));
            cat.set_constraints(
                c, {cr.opt_bool("not_null"), cr.opt_bool("unique"), cr.opt_str("default")});
        }
    }
    const auto& ids = cat.database(db).tables;
    for (std::size_t i = 0; i < tables.size(); ++i) {
        const auto tr = r.child(tables[i], "tables", i);
        const auto t = ids[i];
        std::vector<column_id> pk;
        for (const auto& name : tr.opt_list("primary_key"))
            pk.push_back(json_column(cat, tr, t, name, "primary_key"));
        if (!pk.empty()) cat.set_primary_key(t, std::move(pk));
        const auto fks = tr.opt_list("foreign_keys");
        for (std::size_t k = 0; k < fks.size(); ++k) {
            const auto fr = tr.child(fks[k], "foreign_keys", k);
            const auto ref = cat.find_table(cat.database(db).name, fr.str("ref_table"));
            if (!ref)
                fr.fail(fmt::format("ref_table '{}' does not exist in database '{}'",
                                    fr.str("ref_table"), cat.database(db).name));
            cat.add_foreign_key(
                json_column(cat, fr, t, fr.get("column", nlohmann::json::value_t::string),
                            "column"),
                json_column(cat, fr, *ref, fr.get("ref_column", nlohmann::json::value_t::string),
                            "ref_column"));
        }
    }
}

}  // namespace
}  // namespace detail

nlohmann::json catalog_to_json(const catalog& cat) {
    using nlohmann::json;
    json dbs = json::array();
    for (const auto& db : cat.databases()) {
        json tables = json::array();
        for (auto t : db.tables) {
            const auto& tb = cat.table(t);
            json cols = json::array();
            for (auto c : tb.columns) {
                const auto& col = cat.column(c);
                json out = {{"name", col.name},
                            {"nl_name", col.nl_name},
                            {"type", col.type},
                            {"description", col.description}};
                // Only what is declared: files of catalogs without constraints stay as they were.
                if (col.constraints.not_null) out["not_null"] = true;
                if (col.constraints.unique) out["unique"] = true;
                if (!col.constraints.default_value.empty())
                    out["default"] = col.constraints.default_value;
                cols.push_back(std::move(out));
            }
            json pk = json::array();
            for (auto c : tb.primary_key) pk.push_back(cat.column(c).name);
            json fks = json::array();
            for (const auto& fk : cat.foreign_keys_from(t)) {
                const auto& to = cat.column(fk.to);
                fks.push_back({{"column", cat.column(fk.from).name},
                               {"ref_table", cat.table(to.table).name},
                               {"ref_column", to.name}});
            }
            tables.push_back({{"name", tb.name},
                              {"nl_name", tb.nl_name},
                              {"description", tb.description},
                              {"columns", cols},
                              {"primary_key", pk},
                              {"foreign_keys", fks}});
        }
        dbs.push_back({{"name", db.name}, {"description", db.description}, {"tables", tables}});
    }
    return {{"format", "tabret-catalog"}, {"version", catalog_json_version}, {"databases", dbs}};
}

catalog catalog_from_json(const nlohmann::json& doc, std::string_view source) {
    detail::check_json_schema_format(doc, source, schema_format::json);
    const detail::json_reader root(doc, source, "document");
    if (root.str("format") != "tabret-catalog")
        root.fail(fmt::format("format is '{}', expected 'tabret-catalog'", root.str("format")));
    if (const auto version = root.integer("version"); version != catalog_json_version)
        root.fail(fmt::format("version {} is not supported (this tabret reads version {})", version,
                              catalog_json_version));
    catalog cat;
    const auto& dbs = root.list("databases");
    for (std::size_t i = 0; i < dbs.size(); ++i) {
        const detail::json_reader r(dbs[i], source, fmt::format("databases[{}]", i));
        r.placing_errors([&] { detail::add_json_database(cat, r); });
    }
    return cat;
}

catalog load_catalog_json(const std::filesystem::path& path) {
    const auto text = read_text_file(path);
    detail::check_not_sqlite(text, path.string(), schema_format::json);
    return catalog_from_json(detail::parse_json(text, path.string()), path.string());
}

void save_catalog_json(const catalog& cat, const std::filesystem::path& path) {
    write_file_atomic(path, detail::dump_json(catalog_to_json(cat), 2, path.string()) + "\n");
}

}  // namespace tabret
