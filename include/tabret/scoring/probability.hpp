#pragma once
/// @file scoring/probability.hpp
/// @brief Cosine similarity as a probability: P(d|q) = (cos + 1) / 2, the papers' convention.

#include <utility>

namespace tabret {

/** @brief (cos + 1) / 2 for one cosine in [-1, 1]. Thread-safe. */
[[nodiscard]] constexpr float cos_probability(float cos) noexcept { return (cos + 1.0f) / 2.0f; }

/** @brief (cos + 1) / 2 elementwise, as a lazy xtensor expression over @p cosines. */
template <class E>
[[nodiscard]] auto cos_probability(E&& cosines) {
    return (std::forward<E>(cosines) + 1.0f) / 2.0f;
}

}  // namespace tabret
