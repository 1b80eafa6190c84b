/// @file serialize.cpp
/// @brief Text forms of tables and columns (include/tabret/serialize.hpp).

#include "tabret/serialize.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tabret/text/utf8.hpp"

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

/// @p text on one line: line breaks and tabs become single spaces.
std::string one_line(std::string_view text) {
    std::string out;
    for (char c : text) {
        const bool blank = c == '\n' || c == '\r' || c == '\t';
        if (!(blank && (out.empty() || out.back() == ' '))) out.push_back(blank ? ' ' : c);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

/// A sample value as SQL shows it: a number as is, anything else quoted; cut to 40 characters.
std::string sample_literal(std::string_view value) {
    constexpr std::size_t max_chars = 40;
    std::size_t end = 0;
    std::size_t chars = 0;
    while (end < value.size() && chars < max_chars) {
        end += std::max<std::size_t>(1, detail::utf8_sequence_length(value, end));
        ++chars;
    }
    auto text = one_line(value.substr(0, std::min(end, value.size())));
    if (end < value.size()) text += "...";
    double number = 0;
    const auto* last = text.data() + text.size();
    if (const auto [end_of_number, ec] = std::from_chars(text.data(), last, number);
        !text.empty() && ec == std::errc{} && end_of_number == last)
        return text;  // 42, -1.5, 1e9; a date or a code with digits is quoted
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    return quoted + "'";
}

/// The comment after column @p c: its description, then sample values.
std::string column_comment(const catalog& cat, column_id c, const ddl_samples& samples) {
    std::string comment = one_line(cat.column(c).description);
    if (samples.stats == nullptr || samples.per_column == 0) return comment;
    const auto& values = samples.stats->at(c).values;
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < std::min(values.size(), samples.per_column); ++i)
        shown.push_back(sample_literal(values[i]));
    if (shown.empty()) return comment;
    if (!comment.empty()) comment += comment.back() == '.' ? " " : ". ";
    return comment + fmt::format("e.g. {}", fmt::join(shown, ", "));
}

/// `name type [NOT NULL] [UNIQUE] [DEFAULT x]`.
std::string column_definition(const column& col) {
    auto out = detail::quote_identifier(col.name);
    if (!col.type.empty()) out += " " + col.type;
    if (col.constraints.not_null) out += " NOT NULL";
    if (col.constraints.unique) out += " UNIQUE";
    if (!col.constraints.default_value.empty()) out += " DEFAULT " + col.constraints.default_value;
    return out;
}

/// Elements of a CREATE TABLE with their trailing comments, joined with commas before them.
std::string join_elements(const std::vector<std::pair<std::string, std::string>>& elements) {
    std::string out;
    for (std::size_t i = 0; i < elements.size(); ++i) {
        const auto& [element, comment] = elements[i];
        out += fmt::format("  {}{}", element, i + 1 < elements.size() ? "," : "");
        if (!comment.empty()) out += fmt::format("  -- {}", comment);
        out += '\n';
    }
    return out;
}

std::string table_ddl(const catalog& cat, table_id t, const ddl_samples& samples) {
    const auto& tb = cat.table(t);
    std::vector<std::pair<std::string, std::string>> elements;
    for (auto c : tb.columns)
        elements.emplace_back(column_definition(cat.column(c)), column_comment(cat, c, samples));
    auto quoted = [&](column_id c) { return detail::quote_identifier(cat.column(c).name); };
    if (!tb.primary_key.empty()) {
        std::vector<std::string> key;
        for (auto c : tb.primary_key) key.push_back(quoted(c));
        elements.emplace_back(fmt::format("PRIMARY KEY ({})", fmt::join(key, ", ")), "");
    }
    for (const auto& fk : cat.foreign_keys_from(t)) {
        const auto& to = cat.column(fk.to);
        elements.emplace_back(
            fmt::format("FOREIGN KEY ({}) REFERENCES {} ({})", quoted(fk.from),
                        detail::quote_identifier(cat.table(to.table).name), quoted(fk.to)),
            "");
    }
    const auto description = one_line(tb.description);
    return fmt::format("{}CREATE TABLE {} (\n{});",
                       description.empty() ? "" : fmt::format("-- {}\n", description),
                       detail::quote_identifier(tb.name), join_elements(elements));
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

/// The signature, then the tables it references and the tables that reference it.
std::string related(const catalog& cat, table_id t, name_style style) {
    auto out = serialize_table(cat, t, table_format::signature, style);
    auto name = [&](table_id u) {
        const auto& tb = cat.table(u);
        return detail::pick(tb.name, tb.nl_name, style);
    };
    // Each other table once, in the order of its first key.
    auto names_of = [&](const std::vector<foreign_key>& keys, column_id foreign_key::*other) {
        std::vector<table_id> seen;
        std::vector<std::string> names;
        for (const auto& fk : keys)
            if (const auto u = cat.column(fk.*other).table;
                u != t && std::find(seen.begin(), seen.end(), u) == seen.end()) {
                seen.push_back(u);
                names.push_back(name(u));
            }
        return names;
    };
    const auto to = names_of(cat.foreign_keys_from(t), &foreign_key::to);
    const auto from = names_of(cat.foreign_keys_to(t), &foreign_key::from);
    if (!to.empty()) out += fmt::format(" references {}", fmt::join(to, ", "));
    if (!from.empty())
        out += fmt::format("{}referenced by {}", to.empty() ? " " : "; ", fmt::join(from, ", "));
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
            return table_ddl(cat, t, {});
        case table_format::described:
            return described(cat, t, style);
        case table_format::related:
            return related(cat, t, style);
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

std::string serialize_table_ddl(const catalog& cat, table_id t, const ddl_samples& samples) {
    return table_ddl(cat, t, samples);
}

std::string serialize_database_ddl(const catalog& cat, database_id db, const ddl_samples& samples) {
    std::vector<std::string> out;
    for (auto t : cat.database(db).tables) out.push_back(table_ddl(cat, t, samples));
    return fmt::format("{}\n", fmt::join(out, "\n\n"));
}

}  // namespace tabret
