#pragma once
/// @file serialize.hpp
/// @brief Text forms of tables and columns, as the papers embed them.

#include <string>
#include <string_view>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/join/column_stats.hpp"

namespace tabret {

/// Which names a serialisation uses.
enum class name_style {
    original,  ///< Identifiers as declared (`gasstations`, `CustomerID`).
    natural,   ///< Natural-language names (`gas stations`, `customer id`).
};

/// How a whole table is written.
enum class table_format {
    signature,  ///< `db.table(col, col, …)` — MURRE, Reverse Engineering.
    words,      ///< `db table col col …` — JAR, ATR.
    ddl,        ///< `CREATE TABLE …` with constraints, keys and descriptions as comments;
                ///< always original names (serialize_table_ddl).
    described,  ///< signature, then ` -- ` the table's description and ` -- ` `col: description;`
                ///< for each column that has one (only non-empty parts).
    related,    ///< signature, then ` references A, B` (the tables its foreign keys point to)
                ///< and `; referenced by C` (the tables whose keys point to it), each once.
};

namespace detail {

/// The name @p style picks.
inline const std::string& pick(const std::string& original, const std::string& natural,
                               name_style style) {
    return style == name_style::natural ? natural : original;
}

/// Double-quotes an identifier when SQL would need it.
std::string quote_identifier(std::string_view s);

}  // namespace detail

/**
 * @brief One table as text in the given format. Thread-safe.
 * @throws schema_error for an unknown table id.
 */
std::string serialize_table(const catalog& cat, table_id t,
                            table_format format = table_format::signature,
                            name_style style = name_style::natural);

/**
 * @brief `db.table.column` for one column, with `: description` after it when
 * @p description is set and the column has one. Thread-safe.
 * @throws schema_error for an unknown column id.
 */
std::string serialize_column(const catalog& cat, column_id c,
                             name_style style = name_style::natural, bool description = false);

/// Sample values for the DDL: at most @p per_column distinct values of each column, taken from
/// column statistics (a live database, recorded values).
struct ddl_samples {
    const column_stats_table* stats = nullptr;  ///< null: no samples.
    std::size_t per_column = 0;
};

/**
 * @brief `CREATE TABLE` for table @p t, as a prompt shows it: each column's type, `NOT NULL`,
 * `UNIQUE` and `DEFAULT` as declared, the primary and foreign keys, the table's description as
 * a `--` comment above it and each column's description and sample values as a `--` comment
 * after it (on one line; long values cut to 40 characters). Always original names. Thread-safe.
 * @throws schema_error for an unknown table id.
 */
std::string serialize_table_ddl(const catalog& cat, table_id t, const ddl_samples& samples = {});

/** @brief `CREATE TABLE` statements of every table of database @p db, in declaration order. */
std::string serialize_database_ddl(const catalog& cat, database_id db,
                                   const ddl_samples& samples = {});

}  // namespace tabret
