#pragma once
/// @file text/utf8.hpp
/// @brief UTF-8 validation and escaping of invalid bytes (for messages that quote input).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tabret::detail {

/// Length of the valid UTF-8 sequence starting at @p i, or 0 if the byte there starts none
/// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, truncated).
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
    const auto byte = [&](std::size_t k) {
        return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u;
    };
    const auto cont = [&](std::size_t k) { return (byte(k) & 0xC0u) == 0x80u; };
    const unsigned b0 = byte(0);
    if (b0 < 0x80u) return 1;
    if (b0 >= 0xC2u && b0 <= 0xDFu) return cont(1) ? 2 : 0;
    if (b0 >= 0xE0u && b0 <= 0xEFu) {
        const unsigned b1 = byte(1);
        if ((b0 == 0xE0u && b1 < 0xA0u) || (b0 == 0xEDu && b1 > 0x9Fu)) return 0;
        return cont(1) && cont(2) ? 3 : 0;
    }
    if (b0 >= 0xF0u && b0 <= 0xF4u) {
        const unsigned b1 = byte(1);
        if ((b0 == 0xF0u && b1 < 0x90u) || (b0 == 0xF4u && b1 > 0x8Fu)) return 0;
        return cont(1) && cont(2) && cont(3) ? 4 : 0;
    }
    return 0;
}

/// Byte offset of the first byte of @p s that is not part of valid UTF-8, or nullopt.
inline std::optional<std::size_t> first_invalid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto n = utf8_sequence_length(s, i);
        if (n == 0) return i;
        i += n;
    }
    return std::nullopt;
}

/// @p s with every byte that is not part of valid UTF-8 written as `\xNN`: always valid UTF-8.
inline std::string escape_invalid_utf8(std::string_view s) {
    if (!first_invalid_utf8(s)) return std::string(s);
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size() + 16);
    for (std::size_t i = 0; i < s.size();) {
        const auto n = utf8_sequence_length(s, i);
        if (n > 0) {
            out.append(s.substr(i, n));
            i += n;
        } else {
            const auto b = static_cast<unsigned char>(s[i++]);
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 0xFu];
        }
    }
    return out;
}

}  // namespace tabret::detail
