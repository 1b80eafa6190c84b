#pragma once
/// @file io/sealed_json.hpp
/// @brief JSON documents that carry their own checksum (internal): manifests and join-graph
/// headers. The field `self_fnv1a64` holds the FNV-1a checksum of the document's compact form
/// (keys sorted, no spaces) without that field, so an edited or damaged value that still parses
/// (an `ef_search` of 65 for 64) is refused instead of loaded.

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/io/checksum.hpp"

namespace tabret::detail {

/// The field that holds a sealed document's checksum.
inline constexpr const char* seal_field = "self_fnv1a64";

/// The checksum of @p doc without its seal field.
inline std::string seal_of(nlohmann::json doc) {
    doc.erase(seal_field);
    return checksum_hex(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

/// @p doc (an object) with its seal field set.
inline nlohmann::json sealed(nlohmann::json doc) {
    doc[seal_field] = seal_of(doc);
    return doc;
}

/**
 * @brief Checks the seal of @p doc, the @p what of file @p source.
 * @throws io_error when the seal is missing or does not match the contents.
 */
inline void check_seal(const nlohmann::json& doc, std::string_view source, std::string_view what) {
    const auto it = doc.find(seal_field);
    if (it == doc.end() || !it->is_string())
        throw io_error(
            fmt::format("{}: the {} has no checksum ('{}'): it is damaged or was "
                        "not written by tabret",
                        source, what, seal_field));
    if (it->get<std::string>() != seal_of(doc))
        throw io_error(fmt::format(
            "{}: checksum mismatch: the {} was edited or is corrupt; rebuild it", source, what));
}

}  // namespace tabret::detail
