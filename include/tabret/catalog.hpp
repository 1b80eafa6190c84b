#pragma once
/// @file catalog.hpp
/// @brief Databases, tables, columns, keys; stable dense ids and lookup by name.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/error.hpp"
#include "tabret/text/case.hpp"

namespace tabret {

using database_id = std::uint32_t;  ///< Dense index into catalog::databases().
using table_id = std::uint32_t;     ///< Dense index into catalog::tables(), across all databases.
using column_id = std::uint32_t;    ///< Dense index into catalog::columns(), across all tables.

struct column {
    std::string name;     ///< Original identifier, as in the schema.
    std::string nl_name;  ///< Natural-language name ("gas station id").
    std::string type;     ///< Declared type as written ("integer", "varchar(20)"); may be empty.
    std::string description;  ///< Free text; may be empty.
    table_id table = 0;       ///< Owning table.
    friend bool operator==(const column&, const column&) = default;
};

struct table {
    std::string name;
    std::string nl_name;
    std::string description;
    database_id database = 0;
    std::vector<column_id> columns;      ///< In declaration order.
    std::vector<column_id> primary_key;  ///< Possibly composite; empty if none declared.
    friend bool operator==(const table&, const table&) = default;
};

struct database {
    std::string name;
    std::string description;
    std::vector<table_id> tables;  ///< In declaration order.
    friend bool operator==(const database&, const database&) = default;
};

/// One referencing column → referenced column pair. A composite key is several pairs.
struct foreign_key {
    column_id from = 0;
    column_id to = 0;
    friend bool operator==(const foreign_key&, const foreign_key&) = default;
};

namespace detail {

/// Splits snake_case, kebab-case and CamelCase identifiers into lower-case words.
inline std::string natural_name(std::string_view ident) {
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

/**
 * @brief A schema catalog of many databases. Ids are dense and stable: they are the insertion
 * order, and a catalog saved and loaded again keeps them.
 *
 * Building (add_*) is not thread-safe; a built catalog is immutable and every const method is
 * thread-safe.
 */
class catalog {
  public:
    /** @brief Adds a database. @throws schema_error if the name is taken (case-insensitive). */
    database_id add_database(std::string name, std::string description = {}) {
        if (name.empty()) throw schema_error("database name is empty");
        const auto key = detail::fold(name);
        if (database_by_name_.contains(key))
            throw schema_error(fmt::format("duplicate database '{}'", name));
        const auto id = static_cast<database_id>(databases_.size());
        databases_.push_back({std::move(name), std::move(description), {}});
        database_by_name_.emplace(key, id);
        return id;
    }

    /**
     * @brief Adds a table to database @p db. An empty @p nl_name is derived from @p name.
     * @throws schema_error for an unknown database, an empty or duplicate name.
     */
    table_id add_table(database_id db, std::string name, std::string nl_name = {},
                       std::string description = {}) {
        check_database(db);
        if (name.empty())
            throw schema_error(
                fmt::format("empty table name in database '{}'", databases_[db].name));
        auto key = table_key(db, name);
        if (table_by_name_.contains(key))
            throw schema_error(
                fmt::format("duplicate table '{}' in database '{}'", name, databases_[db].name));
        if (nl_name.empty()) nl_name = detail::natural_name(name);
        const auto id = static_cast<table_id>(tables_.size());
        tables_.push_back(
            {std::move(name), std::move(nl_name), std::move(description), db, {}, {}});
        databases_[db].tables.push_back(id);
        table_by_name_.emplace(std::move(key), id);
        return id;
    }

    /**
     * @brief Adds a column to table @p t. An empty @p nl_name is derived from @p name.
     * @throws schema_error for an unknown table, an empty or duplicate name.
     */
    column_id add_column(table_id t, std::string name, std::string type = {},
                         std::string nl_name = {}, std::string description = {}) {
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
            {std::move(name), std::move(nl_name), std::move(type), std::move(description), t});
        tables_[t].columns.push_back(id);
        column_by_name_.emplace(std::move(key), id);
        return id;
    }

    /** @brief Sets the primary key of @p t. @throws schema_error if a column is not in @p t. */
    void set_primary_key(table_id t, std::vector<column_id> key) {
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

    /**
     * @brief Declares that column @p from references column @p to. Both must be in the same
     * database. @throws schema_error otherwise.
     */
    void add_foreign_key(column_id from, column_id to) {
        check_column(from);
        check_column(to);
        if (database_of(from) != database_of(to))
            throw schema_error(fmt::format("foreign key {} -> {} crosses databases",
                                           qualified_name_of_column(from),
                                           qualified_name_of_column(to)));
        const auto t = columns_[from].table;
        if (fks_by_table_.size() <= t) fks_by_table_.resize(tables_.size());
        fks_by_table_[t].push_back(static_cast<std::uint32_t>(foreign_keys_.size()));
        foreign_keys_.push_back({from, to});
    }

    [[nodiscard]] const std::vector<struct database>& databases() const noexcept {
        return databases_;
    }
    [[nodiscard]] const std::vector<struct table>& tables() const noexcept { return tables_; }
    [[nodiscard]] const std::vector<struct column>& columns() const noexcept { return columns_; }
    [[nodiscard]] const std::vector<foreign_key>& foreign_keys() const noexcept {
        return foreign_keys_;
    }

    /// @throws schema_error for an id out of range.
    [[nodiscard]] const struct database& database(database_id id) const {
        check_database(id);
        return databases_[id];
    }
    /// @throws schema_error for an id out of range.
    [[nodiscard]] const struct table& table(table_id id) const {
        check_table(id);
        return tables_[id];
    }
    /// @throws schema_error for an id out of range.
    [[nodiscard]] const struct column& column(column_id id) const {
        check_column(id);
        return columns_[id];
    }

    /// Case-insensitive lookup; nullopt if absent.
    [[nodiscard]] std::optional<database_id> find_database(std::string_view name) const {
        return lookup(database_by_name_, detail::fold(name));
    }
    /// Case-insensitive lookup of `db.table`; nullopt if absent.
    [[nodiscard]] std::optional<table_id> find_table(std::string_view db,
                                                     std::string_view name) const {
        const auto d = find_database(db);
        if (!d) return std::nullopt;
        return lookup(table_by_name_, table_key(*d, name));
    }
    /// Case-insensitive lookup of a column in table @p t; nullopt if absent.
    [[nodiscard]] std::optional<column_id> find_column(table_id t, std::string_view name) const {
        check_table(t);
        return lookup(column_by_name_, column_key(t, name));
    }

    [[nodiscard]] database_id database_of(column_id c) const {
        return tables_[column(c).table].database;
    }

    /// `db.table`, original names.
    [[nodiscard]] std::string qualified_name(table_id t) const {
        const auto& tb = table(t);
        return fmt::format("{}.{}", databases_[tb.database].name, tb.name);
    }
    /// `db.table.column`, original names.
    [[nodiscard]] std::string qualified_name_of_column(column_id c) const {
        const auto& col = column(c);
        return fmt::format("{}.{}", qualified_name(col.table), col.name);
    }

    /// Foreign keys whose referencing column lies in table @p t, in declaration order. Costs
    /// O(their number): an index by table is kept as foreign keys are added.
    [[nodiscard]] std::vector<foreign_key> foreign_keys_from(table_id t) const {
        std::vector<foreign_key> out;
        if (t >= fks_by_table_.size()) return out;
        out.reserve(fks_by_table_[t].size());
        for (const auto i : fks_by_table_[t]) out.push_back(foreign_keys_[i]);
        return out;
    }

    friend bool operator==(const catalog& a, const catalog& b) {
        return a.databases_ == b.databases_ && a.tables_ == b.tables_ && a.columns_ == b.columns_ &&
               a.foreign_keys_ == b.foreign_keys_;
    }

  private:
    template <class Map>
    static std::optional<std::uint32_t> lookup(const Map& m, const std::string& key) {
        const auto it = m.find(key);
        if (it == m.end()) return std::nullopt;
        return it->second;
    }
    static std::string table_key(database_id db, std::string_view name) {
        return fmt::format("{}\x1f{}", db, detail::fold(name));
    }
    static std::string column_key(table_id t, std::string_view name) {
        return fmt::format("{}\x1f{}", t, detail::fold(name));
    }
    void check_database(database_id id) const {
        if (id >= databases_.size())
            throw schema_error(
                fmt::format("database id {} out of range ({} databases)", id, databases_.size()));
    }
    void check_table(table_id id) const {
        if (id >= tables_.size())
            throw schema_error(
                fmt::format("table id {} out of range ({} tables)", id, tables_.size()));
    }
    void check_column(column_id id) const {
        if (id >= columns_.size())
            throw schema_error(
                fmt::format("column id {} out of range ({} columns)", id, columns_.size()));
    }

    std::vector<struct database> databases_;
    std::vector<struct table> tables_;
    std::vector<struct column> columns_;
    std::vector<foreign_key> foreign_keys_;
    /// Per table, the positions in foreign_keys_ of the keys declared from it (derived).
    std::vector<std::vector<std::uint32_t>> fks_by_table_;
    std::unordered_map<std::string, database_id> database_by_name_;
    std::unordered_map<std::string, table_id> table_by_name_;
    std::unordered_map<std::string, column_id> column_by_name_;
};

}  // namespace tabret
