#pragma once
/// @file embedding/matrix_bytes.hpp
/// @brief Float matrices as raw bytes (internal): how saved indexes store vectors.

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "tabret/embedding/matrix.hpp"
#include "tabret/error.hpp"

namespace tabret::detail {

/// The raw bytes of a float matrix (row-major, native endianness).
inline std::string matrix_bytes(const matrix& m) {
    return {reinterpret_cast<const char*>(m.data()),
            static_cast<std::size_t>(m.size()) * sizeof(float)};
}

/// A rows × dim float matrix from raw bytes. @throws io_error naming @p source if the size
/// does not fit.
inline matrix read_matrix(std::string_view source, const std::string& data, std::size_t rows,
                          std::size_t dim) {
    const bool fits = dim == 0 || rows <= data.size() / sizeof(float) / dim;
    if (!fits || data.size() != rows * dim * sizeof(float))
        throw io_error(fmt::format("{}: holds {} bytes, expected {} rows × {} floats", source,
                                   data.size(), rows, dim));
    matrix m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(dim));
    if (!data.empty()) std::memcpy(m.data(), data.data(), data.size());
    return m;
}

}  // namespace tabret::detail
