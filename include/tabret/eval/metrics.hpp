#pragma once
/// @file eval/metrics.hpp
/// @brief Retrieval metrics: recall@k, complete recall@k, and their means.

#include <algorithm>
#include <cstddef>
#include <span>
#include <unordered_set>
#include <vector>

#include "tabret/error.hpp"

namespace tabret {

/**
 * @brief Fraction of @p gold found in the first @p k of @p ranked (duplicates in either list
 * count once). An empty gold set has recall 1. @throws error for k == 0.
 */
template <class Id>
double recall_at(std::span<const Id> ranked, std::span<const Id> gold, std::size_t k) {
    if (k == 0) throw error("k must be positive");
    const std::unordered_set<Id> wanted(gold.begin(), gold.end());
    if (wanted.empty()) return 1.0;
    std::unordered_set<Id> found;
    for (std::size_t i = 0; i < std::min(k, ranked.size()); ++i)
        if (wanted.contains(ranked[i])) found.insert(ranked[i]);
    return static_cast<double>(found.size()) / static_cast<double>(wanted.size());
}

/** @brief 1 if every gold item is in the first @p k of @p ranked, else 0. */
template <class Id>
double complete_recall_at(std::span<const Id> ranked, std::span<const Id> gold, std::size_t k) {
    return recall_at(ranked, gold, k) == 1.0 ? 1.0 : 0.0;
}

/** @brief Mean of a metric over questions (0 for no questions). */
inline double mean(std::span<const double> values) {
    if (values.empty()) return 0.0;
    double sum = 0.0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
}

}  // namespace tabret
