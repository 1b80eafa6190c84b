#pragma once
/// @file io/sqlite.hpp
/// @brief Catalog from a SQLite database file, through the sqlite3 C API.

#include <filesystem>
#include <string>

#include "tabret/catalog.hpp"

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

}  // namespace tabret
