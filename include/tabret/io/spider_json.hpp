#pragma once
/// @file io/spider_json.hpp
/// @brief Loader for Spider/BIRD `tables.json` (many databases per file).

#include <filesystem>
#include <string_view>

#include "tabret/catalog.hpp"

namespace tabret {

/**
 * @brief Adds every database of a Spider/BIRD `tables.json` document to @p cat.
 * Natural-language names come from `table_names`/`column_names` when present; Spider's `*`
 * column is dropped; foreign keys are kept as declared. All or nothing: on error @p cat is
 * unchanged.
 * @param source names the document in error messages.
 * @throws parse_error for invalid JSON, schema_error naming the file, database and field.
 */
void add_spider_json(catalog& cat, std::string_view text, std::string_view source);

/**
 * @brief Loads a Spider/BIRD `tables.json` file into a new catalog.
 * @throws io_error if the file is missing; parse_error / schema_error as add_spider_json.
 */
catalog load_spider_json(const std::filesystem::path& path);

}  // namespace tabret
