#pragma once
/// @file text/case.hpp
/// @brief ASCII case folding and case-insensitive equality (SQL identifiers, keywords).

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace tabret::detail {

/// Lower-cases ASCII; SQL identifiers compare case-insensitively.
inline std::string fold(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

/// ASCII case-insensitive equality: the same folding as fold() and the catalog's lookups.
inline bool iequals(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
               return std::tolower(x) == std::tolower(y);
           });
}

}  // namespace tabret::detail
