#pragma once
/// @file io/checksum.hpp
/// @brief FNV-1a 64-bit hashing: feature hashing and file checksums.

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace tabret::detail {

/// 64-bit FNV-1a; @p seed separates independent uses (feature families, files).
inline std::uint64_t fnv1a(std::string_view s, std::uint64_t seed = 0) {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/// Checksum of file contents as 16 hex digits (detects corruption, not tampering).
inline std::string checksum_hex(std::string_view data) {
    return fmt::format("{:016x}", fnv1a(data));
}

}  // namespace tabret::detail
