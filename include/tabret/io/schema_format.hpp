#pragma once
/// @file io/schema_format.hpp
/// @brief Recognising a schema file given to the wrong loader (a SQLite database given as DDL, a
/// Spider `tables.json` given as tabret catalog JSON), so the error names the loader to use.

#include <cstddef>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"

namespace tabret {

/// The schema files tabret loads, by their CLI format names (`tabret catalog FORMAT SOURCE`).
enum class schema_format { ddl, sqlite, spider, json };

namespace detail {

/// The first 16 bytes of every SQLite 3 database file.
inline constexpr std::string_view sqlite_magic{"SQLite format 3\0", 16};

struct schema_format_names {
    std::string_view cli;     ///< `tabret catalog <cli>`, `--catalog-format <cli>`
    std::string_view title;   ///< what the file is, in a sentence
    std::string_view python;  ///< the Catalog loader
    std::string_view cpp;     ///< the C++ loader
};

inline schema_format_names names_of(schema_format f) {
    switch (f) {
        case schema_format::ddl:
            return {"ddl", "SQL DDL", "from_ddl", "load_ddl"};
        case schema_format::sqlite:
            return {"sqlite", "a SQLite database", "from_sqlite", "load_sqlite"};
        case schema_format::spider:
            return {"spider", "a Spider/BIRD tables.json", "from_spider_json", "load_spider_json"};
        case schema_format::json:
            return {"json", "tabret catalog JSON", "from_json", "load_catalog_json"};
    }
    return {};
}

/**
 * @brief Refuses the file @p source, read as @p expected, that is @p found, naming the loader to
 * use. @throws io_error (another format, like a file of another version).
 */
[[noreturn]] inline void refuse_schema_format(std::string_view source, schema_format found,
                                              schema_format expected) {
    const auto f = names_of(found);
    throw io_error(fmt::format(
        "{}: is {}, not {}: use the {} loader (`tabret catalog {} {}`, "
        "`--catalog-format {}`, Python `Catalog.{}`, C++ `{}`)",
        source, f.title, names_of(expected).title, f.cli, f.cli, source, f.cli, f.python, f.cpp));
}

/// The schema format a parsed JSON document recognisably is: a list whose first entry has
/// `table_names_original` (Spider/BIRD), or an object whose `format` is `tabret-catalog`.
inline std::optional<schema_format> json_schema_format(const nlohmann::json& doc) {
    if (doc.is_array() && !doc.empty() && doc.front().is_object() &&
        doc.front().contains("table_names_original"))
        return schema_format::spider;
    if (doc.is_object() && doc.value("format", nlohmann::json()) == "tabret-catalog")
        return schema_format::json;
    return std::nullopt;
}

/// Refuses the text of @p source, read as @p expected, when it is a SQLite database file.
inline void check_not_sqlite(std::string_view text, std::string_view source,
                             schema_format expected) {
    if (text.starts_with(sqlite_magic))
        refuse_schema_format(source, schema_format::sqlite, expected);
}

/// Refuses the JSON document @p doc of @p source, read as @p expected, when it is recognisably
/// another schema format (json_schema_format).
inline void check_json_schema_format(const nlohmann::json& doc, std::string_view source,
                                     schema_format expected) {
    if (const auto found = json_schema_format(doc); found && *found != expected)
        refuse_schema_format(source, *found, expected);
}

/// Refuses DDL text of @p source that is a SQLite database or a JSON schema document (DDL never
/// starts with `[` or `{`, so only such text is parsed as JSON, once).
inline void check_ddl_text_format(std::string_view text, std::string_view source) {
    check_not_sqlite(text, source, schema_format::ddl);
    const auto start = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (start == std::string_view::npos || (text[start] != '[' && text[start] != '{')) return;
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_discarded()) check_json_schema_format(doc, source, schema_format::ddl);
}

}  // namespace detail
}  // namespace tabret
