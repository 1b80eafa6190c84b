#pragma once
/// @file index/dot.hpp
/// @brief Inner products for the search kernels, compiled once for several instruction sets
/// (AVX-512, AVX2 + FMA, the x86-64 baseline) and chosen at load time for the CPU it runs on,
/// never by a global `-march=native` (src/tabret/index/dot.cpp).

#include <cstddef>

namespace tabret::detail {

/// a · b over @p d floats.
float dot(const float* a, const float* b, std::size_t d) noexcept;

}  // namespace tabret::detail
