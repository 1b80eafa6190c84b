/// @file serialize.cpp
/// @brief Text forms of tables and columns (include/tabret/serialize.hpp).

#include "tabret/serialize.hpp"

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tabret {

namespace {

bool is_plain_identifier(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

std::vector<std::string> column_names(const catalog& cat, table_id t, name_style style) {
    std::vector<std::string> names;
    for (auto c : cat.table(t).columns) {
        const auto& col = cat.column(c);
        names.push_back(detail::pick(col.name, col.nl_name, style));
    }
    return names;
}

std::string table_ddl(const catalog& cat, table_id t) {
    const auto& tb = cat.table(t);
    std::vector<std::string> lines;
    for (auto c : tb.columns) {
        const auto& col = cat.column(c);
        lines.push_back(col.type.empty()
                            ? fmt::format("  {}", detail::quote_identifier(col.name))
                            : fmt::format("  {} {}", detail::quote_identifier(col.name), col.type));
    }
    auto quoted = [&](column_id c) { return detail::quote_identifier(cat.column(c).name); };
    if (!tb.primary_key.empty()) {
        std::vector<std::string> key;
        for (auto c : tb.primary_key) key.push_back(quoted(c));
        lines.push_back(fmt::format("  PRIMARY KEY ({})", fmt::join(key, ", ")));
    }
    for (const auto& fk : cat.foreign_keys_from(t)) {
        const auto& to = cat.column(fk.to);
        lines.push_back(fmt::format("  FOREIGN KEY ({}) REFERENCES {} ({})", quoted(fk.from),
                                    detail::quote_identifier(cat.table(to.table).name),
                                    quoted(fk.to)));
    }
    return fmt::format("CREATE TABLE {} (\n{}\n);", detail::quote_identifier(tb.name),
                       fmt::join(lines, ",\n"));
}

/// The signature, then the table's description and its columns' descriptions (non-empty ones).
std::string described(const catalog& cat, table_id t, name_style style) {
    const auto& tb = cat.table(t);
    std::string out = fmt::format("{}.{}({})", cat.database(tb.database).name,
                                  detail::pick(tb.name, tb.nl_name, style),
                                  fmt::join(column_names(cat, t, style), ", "));
    if (!tb.description.empty()) out += fmt::format(" -- {}", tb.description);
    std::vector<std::string> columns;
    for (auto c : tb.columns) {
        const auto& col = cat.column(c);
        if (!col.description.empty())
            columns.push_back(
                fmt::format("{}: {}", detail::pick(col.name, col.nl_name, style), col.description));
    }
    if (!columns.empty()) out += fmt::format(" -- {}", fmt::join(columns, "; "));
    return out;
}

}  // namespace

namespace detail {

/// Double-quotes an identifier when SQL would need it.
std::string quote_identifier(std::string_view s) {
    if (is_plain_identifier(s)) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

}  // namespace detail

std::string serialize_table(const catalog& cat, table_id t, table_format format, name_style style) {
    const auto& tb = cat.table(t);
    const auto& db = cat.database(tb.database).name;
    const auto& name = detail::pick(tb.name, tb.nl_name, style);
    switch (format) {
        case table_format::signature:
            return fmt::format("{}.{}({})", db, name, fmt::join(column_names(cat, t, style), ", "));
        case table_format::words:
            return fmt::format("{} {} {}", db, name, fmt::join(column_names(cat, t, style), " "));
        case table_format::ddl:
            return table_ddl(cat, t);
        case table_format::described:
            return described(cat, t, style);
    }
    throw error("unknown table_format");
}

std::string serialize_column(const catalog& cat, column_id c, name_style style, bool description) {
    const auto& col = cat.column(c);
    const auto& tb = cat.table(col.table);
    auto text = fmt::format("{}.{}.{}", cat.database(tb.database).name,
                            detail::pick(tb.name, tb.nl_name, style),
                            detail::pick(col.name, col.nl_name, style));
    if (description && !col.description.empty()) text += fmt::format(": {}", col.description);
    return text;
}

std::string serialize_database_ddl(const catalog& cat, database_id db) {
    std::vector<std::string> out;
    for (auto t : cat.database(db).tables) out.push_back(table_ddl(cat, t));
    return fmt::format("{}\n", fmt::join(out, "\n\n"));
}

}  // namespace tabret
