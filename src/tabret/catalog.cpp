/// @file catalog.cpp
/// @brief catalog (include/tabret/catalog.hpp): building, lookup by name, qualified names.

#include "tabret/catalog.hpp"

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace tabret {

namespace {

template <class Map>
std::optional<std::uint32_t> lookup(const Map& m, const std::string& key) {
    const auto it = m.find(key);
    if (it == m.end()) return std::nullopt;
    return it->second;
}

}  // namespace

namespace detail {

/// Splits snake_case, kebab-case and CamelCase identifiers into lower-case words.
std::string natural_name(std::string_view ident) {
    std::string out;
    auto push_space = [&out] {
        if (!out.empty() && out.back() != ' ') out.push_back(' ');
    };
    for (std::size_t i = 0; i < ident.size(); ++i) {
        const auto c = static_cast<unsigned char>(ident[i]);
        if (c == '_' || c == '-' || c == ' ' || c == '.') {
            push_space();
            continue;
        }
        if (std::isupper(c) && i > 0) {
            const auto prev = static_cast<unsigned char>(ident[i - 1]);
            const bool next_lower =
                i + 1 < ident.size() && std::islower(static_cast<unsigned char>(ident[i + 1]));
            if (std::islower(prev) || std::isdigit(prev) || (std::isupper(prev) && next_lower))
                push_space();
        }
        out.push_back(static_cast<char>(std::tolower(c)));
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}
}  // namespace detail

catalog::catalog() = default;
catalog::~catalog() = default;
catalog::catalog(const catalog&) = default;
catalog::catalog(catalog&&) noexcept = default;
catalog& catalog::operator=(const catalog&) = default;
catalog& catalog::operator=(catalog&&) noexcept = default;

bool operator==(const catalog& a, const catalog& b) {
    if (a.databases_ != b.databases_ || a.tables_ != b.tables_ || a.columns_ != b.columns_ ||
        a.foreign_keys_.size() != b.foreign_keys_.size())
        return false;
    for (table_id t = 0; t < a.tables_.size(); ++t)
        if (a.foreign_keys_from(t) != b.foreign_keys_from(t)) return false;
    return true;
}

database_id catalog::add_database(std::string name, std::string description) {
    if (name.empty()) throw schema_error("database name is empty");
    const auto key = detail::fold(name);
    if (database_by_name_.contains(key))
        throw schema_error(fmt::format("duplicate database '{}'", name));
    const auto id = static_cast<database_id>(databases_.size());
    databases_.push_back({std::move(name), std::move(description), {}});
    database_by_name_.emplace(key, id);
    return id;
}

table_id catalog::add_table(database_id db, std::string name, std::string nl_name,
                            std::string description) {
    check_database(db);
    if (name.empty())
        throw schema_error(fmt::format("empty table name in database '{}'", databases_[db].name));
    auto key = table_key(db, name);
    if (table_by_name_.contains(key))
        throw schema_error(
            fmt::format("duplicate table '{}' in database '{}'", name, databases_[db].name));
    if (nl_name.empty()) nl_name = detail::natural_name(name);
    const auto id = static_cast<table_id>(tables_.size());
    tables_.push_back({std::move(name), std::move(nl_name), std::move(description), db, {}, {}});
    databases_[db].tables.push_back(id);
    table_by_name_.emplace(std::move(key), id);
    return id;
}

column_id catalog::add_column(table_id t, std::string name, std::string type, std::string nl_name,
                              std::string description) {
    check_table(t);
    if (name.empty())
        throw schema_error(fmt::format("empty column name in table '{}'", qualified_name(t)));
    auto key = column_key(t, name);
    if (column_by_name_.contains(key))
        throw schema_error(
            fmt::format("duplicate column '{}' in table '{}'", name, qualified_name(t)));
    if (nl_name.empty()) nl_name = detail::natural_name(name);
    const auto id = static_cast<column_id>(columns_.size());
    columns_.push_back(
        {std::move(name), std::move(nl_name), std::move(type), std::move(description), t, {}});
    tables_[t].columns.push_back(id);
    column_by_name_.emplace(std::move(key), id);
    return id;
}

void catalog::set_constraints(column_id c, column_constraints constraints) {
    check_column(c);
    columns_[c].constraints = std::move(constraints);
}

void catalog::set_primary_key(table_id t, std::vector<column_id> key) {
    check_table(t);
    for (auto c : key) {
        check_column(c);
        if (columns_[c].table != t)
            throw schema_error(fmt::format("primary key of '{}' names column '{}' of '{}'",
                                           qualified_name(t), columns_[c].name,
                                           qualified_name(columns_[c].table)));
    }
    tables_[t].primary_key = std::move(key);
}

void catalog::add_foreign_key(column_id from, column_id to) {
    check_column(from);
    check_column(to);
    if (database_of(from) != database_of(to))
        throw schema_error(fmt::format("foreign key {} -> {} crosses databases",
                                       qualified_name_of_column(from),
                                       qualified_name_of_column(to)));
    const auto position = static_cast<std::uint32_t>(foreign_keys_.size());
    for (auto* by : {&fks_by_table_, &fks_to_table_})
        if (by->size() < tables_.size()) by->resize(tables_.size());
    fks_by_table_[columns_[from].table].push_back(position);
    fks_to_table_[columns_[to].table].push_back(position);
    foreign_keys_.push_back({from, to});
}

std::optional<database_id> catalog::find_database(std::string_view name) const {
    return lookup(database_by_name_, detail::fold(name));
}

std::optional<table_id> catalog::find_table(std::string_view db, std::string_view name) const {
    const auto d = find_database(db);
    if (!d) return std::nullopt;
    return lookup(table_by_name_, table_key(*d, name));
}

std::optional<column_id> catalog::find_column(table_id t, std::string_view name) const {
    check_table(t);
    return lookup(column_by_name_, column_key(t, name));
}

std::string catalog::qualified_name(table_id t) const {
    const auto& tb = table(t);
    return fmt::format("{}.{}", databases_[tb.database].name, tb.name);
}

std::string catalog::qualified_name_of_column(column_id c) const {
    const auto& col = column(c);
    return fmt::format("{}.{}", qualified_name(col.table), col.name);
}

namespace {

std::vector<foreign_key> keys_at(const std::vector<foreign_key>& keys,
                                 const std::vector<std::vector<std::uint32_t>>& by_table,
                                 table_id t) {
    std::vector<foreign_key> out;
    if (t >= by_table.size()) return out;
    out.reserve(by_table[t].size());
    for (const auto i : by_table[t]) out.push_back(keys[i]);
    return out;
}

}  // namespace

std::vector<foreign_key> catalog::foreign_keys_from(table_id t) const {
    return keys_at(foreign_keys_, fks_by_table_, t);
}

std::vector<foreign_key> catalog::foreign_keys_to(table_id t) const {
    return keys_at(foreign_keys_, fks_to_table_, t);
}

std::string catalog::table_key(database_id db, std::string_view name) {
    return fmt::format("{}\x1f{}", db, detail::fold(name));
}

std::string catalog::column_key(table_id t, std::string_view name) {
    return fmt::format("{}\x1f{}", t, detail::fold(name));
}

void catalog::check_database(database_id id) const {
    if (id >= databases_.size())
        throw schema_error(
            fmt::format("database id {} out of range ({} databases)", id, databases_.size()));
}

void catalog::check_table(table_id id) const {
    if (id >= tables_.size())
        throw schema_error(fmt::format("table id {} out of range ({} tables)", id, tables_.size()));
}

void catalog::check_column(column_id id) const {
    if (id >= columns_.size())
        throw schema_error(
            fmt::format("column id {} out of range ({} columns)", id, columns_.size()));
}

}  // namespace tabret
