#pragma once
/// @file io/catalog_fingerprint.hpp
/// @brief A checksum that identifies a catalog, stored beside artifacts built for it (join
/// graph, generated questions) so that loading them against another catalog fails clearly.

#include <string>

#include <fmt/format.h>

#include "tabret/catalog.hpp"
#include "tabret/io/checksum.hpp"

namespace tabret::detail {

/// The checksum of every table's qualified name and every column's name and type, in id order.
inline std::string catalog_fingerprint(const catalog& cat) {
    std::string s;
    for (table_id t = 0; t < cat.tables().size(); ++t) {
        s += fmt::format("{}\n", cat.qualified_name(t));
        for (column_id c : cat.table(t).columns)
            s += fmt::format(" {}:{}\n", cat.column(c).name, cat.column(c).type);
    }
    return checksum_hex(s);
}

}  // namespace tabret::detail
