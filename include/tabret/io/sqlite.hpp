#pragma once
/// @file io/sqlite.hpp
/// @brief Catalog from a SQLite database file, through the sqlite3 C API.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/index/value_index.hpp"
#include "tabret/progress.hpp"

namespace tabret {

/**
 * @brief Adds the schema of a SQLite file to @p cat as one database (default name: file stem).
 * Tables in creation order, columns in declaration order with their declared types, primary
 * keys (composite too) and foreign keys (`REFERENCES t` resolves to t's primary key).
 * All or nothing: on error @p cat is unchanged. Opens the file read-only.
 * @throws io_error for a missing or non-SQLite file; schema_error for a foreign key to a missing
 * table or column, naming the file.
 */
database_id add_sqlite(catalog& cat, const std::filesystem::path& path, std::string db_name = {});

/** @brief Loads one SQLite file into a new catalog. @throws as add_sqlite. */
catalog load_sqlite(const std::filesystem::path& path, std::string db_name = {});

/// What add_sqlite_values read.
struct value_read_report {
    std::size_t columns = 0;  ///< Columns read.
    std::size_t values = 0;   ///< Values kept.
    bool complete = true;     ///< False when the time budget ran out first.
    /// Tables and `table.column`s not in the file, and `table.column (why)` for those that
    /// could not be read (a view over a dropped table).
    std::vector<std::string> missing;
};

/**
 * @brief Reads into @p values the distinct text values (SQLite `typeof` text, valid UTF-8,
 * within the index's bounds) of every column of database @p db of @p cat from the SQLite file
 * @p path (opened read-only), table by table, reporting progress (stage "values", tables
 * done); stops, incomplete, when @p time_budget runs out. Tables and columns are found by
 * @p cat's names (case-insensitively); those the file lacks are skipped and listed in
 * `missing` (none when @p cat was read from the same file).
 * @throws error when @p values was made for another catalog than @p cat; io_error for a file
 * that cannot be read; whatever check_interrupt() throws (Ctrl-C; checked between columns).
 */
value_read_report add_sqlite_values(value_index& values, const catalog& cat, database_id db,
                                    const std::filesystem::path& path,
                                    std::optional<std::chrono::milliseconds> time_budget = {},
                                    const progress_fn& progress = {});

}  // namespace tabret
