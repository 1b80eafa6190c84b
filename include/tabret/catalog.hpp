#pragma once
/// @file catalog.hpp
/// @brief Databases, tables, columns, keys; stable dense ids and lookup by name.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tabret/error.hpp"
#include "tabret/text/case.hpp"

namespace tabret {

using database_id = std::uint32_t;  ///< Dense index into catalog::databases().
using table_id = std::uint32_t;     ///< Dense index into catalog::tables(), across all databases.
using column_id = std::uint32_t;    ///< Dense index into catalog::columns(), across all tables.

/// What a schema declares about a column's values besides its type (all unknown by default).
struct column_constraints {
    bool not_null = false;      ///< Declared `NOT NULL` (or reflected as not nullable).
    bool unique = false;        ///< Declared `UNIQUE` on this column alone (or a unique index).
    std::string default_value;  ///< The `DEFAULT` expression as written; empty if none.
    friend bool operator==(const column_constraints&, const column_constraints&) = default;
};

struct column {
    std::string name;     ///< Original identifier, as in the schema.
    std::string nl_name;  ///< Natural-language name ("gas station id").
    std::string type;     ///< Declared type as written ("integer", "varchar(20)"); may be empty.
    std::string description;  ///< Free text; may be empty.
    table_id table = 0;       ///< Owning table.
    column_constraints constraints;
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
std::string natural_name(std::string_view ident);

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
    // Special members and == are compiled in libtabret, so that a program holding a catalog
    // does not instantiate the containers' code.
    catalog();
    ~catalog();
    catalog(const catalog&);
    catalog(catalog&&) noexcept;
    catalog& operator=(const catalog&);
    catalog& operator=(catalog&&) noexcept;

    /** @brief Adds a database. @throws schema_error if the name is taken (case-insensitive). */
    database_id add_database(std::string name, std::string description = {});

    /**
     * @brief Adds a table to database @p db. An empty @p nl_name is derived from @p name.
     * @throws schema_error for an unknown database, an empty or duplicate name.
     */
    table_id add_table(database_id db, std::string name, std::string nl_name = {},
                       std::string description = {});

    /**
     * @brief Adds a column to table @p t. An empty @p nl_name is derived from @p name.
     * @throws schema_error for an unknown table, an empty or duplicate name.
     */
    column_id add_column(table_id t, std::string name, std::string type = {},
                         std::string nl_name = {}, std::string description = {});

    /** @brief Sets the primary key of @p t. @throws schema_error if a column is not in @p t. */
    void set_primary_key(table_id t, std::vector<column_id> key);

    /// Sets what the schema declares about column @p c's values. @throws schema_error for an
    /// unknown id.
    void set_constraints(column_id c, column_constraints constraints);

    /**
     * @brief Declares that column @p from references column @p to. Both must be in the same
     * database. @throws schema_error otherwise.
     */
    void add_foreign_key(column_id from, column_id to);

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
    [[nodiscard]] std::optional<database_id> find_database(std::string_view name) const;
    /// Case-insensitive lookup of `db.table`; nullopt if absent.
    [[nodiscard]] std::optional<table_id> find_table(std::string_view db,
                                                     std::string_view name) const;
    /// Case-insensitive lookup of a column in table @p t; nullopt if absent.
    [[nodiscard]] std::optional<column_id> find_column(table_id t, std::string_view name) const;

    [[nodiscard]] database_id database_of(column_id c) const {
        return tables_[column(c).table].database;
    }

    /// `db.table`, original names.
    [[nodiscard]] std::string qualified_name(table_id t) const;
    /// `db.table.column`, original names.
    [[nodiscard]] std::string qualified_name_of_column(column_id c) const;

    /// Foreign keys whose referencing column lies in table @p t, in declaration order. Costs
    /// O(their number): an index by table is kept as foreign keys are added.
    [[nodiscard]] std::vector<foreign_key> foreign_keys_from(table_id t) const;
    /// Foreign keys whose referenced column lies in table @p t, in declaration order. Costs
    /// O(their number), as foreign_keys_from.
    [[nodiscard]] std::vector<foreign_key> foreign_keys_to(table_id t) const;

    /// Same databases, tables and columns in the same order, and the same foreign keys from each
    /// table in the same order. The order of keys across tables is not compared: catalog JSON
    /// lists them per table, and a catalog saved and loaded again compares equal.
    friend bool operator==(const catalog& a, const catalog& b);

  private:
    static std::string table_key(database_id db, std::string_view name);
    static std::string column_key(table_id t, std::string_view name);
    void check_database(database_id id) const;
    void check_table(table_id id) const;
    void check_column(column_id id) const;

    std::vector<struct database> databases_;
    std::vector<struct table> tables_;
    std::vector<struct column> columns_;
    std::vector<foreign_key> foreign_keys_;
    /// Per table, the positions in foreign_keys_ of the keys declared from it (derived).
    std::vector<std::vector<std::uint32_t>> fks_by_table_;
    /// Per table, the positions in foreign_keys_ of the keys that reference it (derived).
    std::vector<std::vector<std::uint32_t>> fks_to_table_;
    std::unordered_map<std::string, database_id> database_by_name_;
    std::unordered_map<std::string, table_id> table_by_name_;
    std::unordered_map<std::string, column_id> column_by_name_;
};

}  // namespace tabret
