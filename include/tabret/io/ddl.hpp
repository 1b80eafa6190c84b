#pragma once
/// @file io/ddl.hpp
/// @brief Catalog from SQL DDL text (SQLite, PostgreSQL, MySQL, Db2 dialects).
///
/// The loader reads `CREATE TABLE`, `ALTER TABLE ... ADD ...` and `COMMENT ON TABLE|COLUMN`
/// statements and skips every other statement whole (`CREATE INDEX`, `INSERT`, `SET`, functions
/// with `$$` bodies, ...). It works in three steps so that a failure never leaves a
/// half-loaded database behind: a tokenizer (tokens carry 1-based line numbers), a
/// recursive-descent parser into local structures, then validation of keys (foreign keys may
/// name tables declared later in the file) before anything is added to the catalog.
///
/// Column types are kept as written, in one canonical spelling: words separated by a single
/// space, parameter lists attached to the preceding word without spaces (`varchar(20)`,
/// `numeric(10,2)`, `DOUBLE PRECISION`, `timestamp(3) with time zone`, `enum('a','b')`,
/// `integer[]`). Letter case is kept. Identifiers keep their original case and lose their
/// quotes; schema qualifiers (`schema.table`) are dropped.

#include <filesystem>
#include <string>
#include <string_view>

#include "tabret/catalog.hpp"

namespace tabret {

/**
 * @brief The SQL dialect whose string and comment rules a DDL text follows.
 * - standard: `''` doubles a quote, comments do not nest (SQLite, Db2, the SQL standard).
 * - postgresql: as standard, plus nested block comments; `$$..$$`, `$tag$..$tag$` and `E'..'`
 *   strings (those are read in every dialect but MySQL).
 * - mysql: backslash escapes in '..' and ".." strings, `#` comments anywhere.
 * - automatic: what the text says it is (see ddl_parse in src/tabret/io/ddl.cpp).
 */
enum class ddl_dialect { automatic, standard, postgresql, mysql };

/**
 * @brief Parses DDL text and adds one database named @p db_name to @p cat.
 *
 * Reads `CREATE TABLE` (columns, types, inline and table constraints, table options),
 * `ALTER TABLE ... ADD` (columns, primary and foreign keys) and `COMMENT ON TABLE|COLUMN`;
 * every other statement is skipped. MySQL `COMMENT` clauses and `COMMENT ON` become
 * descriptions. Foreign keys may name tables declared later; `REFERENCES t` without columns
 * means t's primary key. Nothing is added to @p cat unless the whole text loads.
 *
 * @param source names the origin of @p sql in error messages (a file name, say).
 * @return the id of the new database.
 * @throws parse_error with @p source and the 1-based line for a syntax error, an unterminated
 *         string, comment or parenthesis (the line where it starts), a duplicate table, column
 *         or primary key, and a key naming a missing table or column, text that is not UTF-8
 *         (check_utf8_text: line and byte offset); without line for a text with no CREATE
 *         TABLE statement.
 * @throws schema_error if @p db_name is empty or already names a database in @p cat.
 */
database_id add_ddl(catalog& cat, std::string_view sql, std::string db_name,
                    std::string_view source = "<string>",
                    ddl_dialect dialect = ddl_dialect::automatic);

/**
 * @brief Reads a `.sql` file into a new catalog holding one database.
 * @param db_name the database name; empty means the file stem (`shop.sql` → `shop`).
 * @throws io_error naming the path if the file is missing or unreadable.
 * @throws parse_error as add_ddl(), with the path as source.
 */
catalog load_ddl(const std::filesystem::path& path, std::string db_name = {},
                 ddl_dialect dialect = ddl_dialect::automatic);

}  // namespace tabret
