#pragma once
/// @file io/catalog_json.hpp
/// @brief tabret's own catalog JSON format (`"format": "tabret-catalog"`, version 1).

#include <filesystem>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "tabret/catalog.hpp"

namespace tabret {

inline constexpr int catalog_json_version = 1;

/** @brief The catalog as a JSON document (ids are implied by order). Thread-safe. */
nlohmann::json catalog_to_json(const catalog& cat);

/**
 * @brief Builds a catalog from a tabret catalog JSON document.
 * @param source names the document in error messages.
 * @throws schema_error naming the file and the JSON path of the offending item.
 */
catalog catalog_from_json(const nlohmann::json& doc, std::string_view source);

/** @brief Loads a catalog JSON file. @throws io_error, parse_error, schema_error. */
catalog load_catalog_json(const std::filesystem::path& path);

/**
 * @brief Saves @p cat as catalog JSON, atomically. Thread-safe.
 * @throws io_error; schema_error if a name or text is not valid UTF-8.
 */
void save_catalog_json(const catalog& cat, const std::filesystem::path& path);

}  // namespace tabret
