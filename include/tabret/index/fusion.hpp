#pragma once
/// @file index/fusion.hpp
/// @brief Hybrid retrieval: fuses dense and lexical (BM25) hit lists into one ranking.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "tabret/error.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/index/vector_index.hpp"

namespace tabret {

/// How fuse_hits() combines the two lists.
enum class fusion_mode {
    rrf,      ///< reciprocal rank fusion: Σ 1 / (rrf_k + rank), rank 1-based; scores ignored
    weighted  ///< alpha · minmax(dense) + (1 − alpha) · minmax(lexical)
};

/// Parameters of fuse_hits().
struct fusion_params {
    fusion_mode mode = fusion_mode::rrf;
    double alpha = 0.5;   ///< weighted: weight of the dense list, in [0, 1]
    double rrf_k = 60.0;  ///< rrf: rank offset (60 in Cormack et al. 2009), >= 0
};

namespace detail {

/// Adds one list's contributions to @p fused (the first occurrence of an id counts).
inline void add_fused(const hits& list, const fusion_params& p, double weight,
                      std::unordered_map<item_id, double>& fused) {
    if (list.empty()) return;
    const auto [lo, hi] = std::minmax_element(
        list.begin(), list.end(), [](const hit& a, const hit& b) { return a.score < b.score; });
    std::unordered_set<item_id> seen;
    for (std::size_t rank = 0; rank < list.size(); ++rank) {
        const hit& h = list[rank];
        if (!seen.insert(h.id).second) continue;
        double contribution = 0.0;
        if (p.mode == fusion_mode::rrf)
            contribution = 1.0 / (p.rrf_k + static_cast<double>(rank + 1));
        else if (hi->score > lo->score)
            contribution = weight * (h.score - lo->score) / (hi->score - lo->score);
        else
            contribution = weight;  // all scores equal: each is the best of its list
        fused[h.id] += contribution;
    }
}

}  // namespace detail

/**
 * @brief Fuses, per query, a dense and a lexical hit list into the best k of their union, best
 * first (ties: smaller id first).
 *
 * - `rrf`: score = Σ over the lists containing the item of 1 / (rrf_k + rank).
 * - `weighted`: each list's scores are min-max normalised to [0, 1] (a list whose scores are
 *   all equal normalises to 1); score = alpha · dense + (1 − alpha) · lexical, an item absent
 *   from a list getting 0 from it.
 * Lists are expected best first with distinct ids; a repeated id counts once (first place).
 * @throws tabret::error if k == 0, the two spans differ in length (one list per query), or a
 * parameter is out of range. Thread-safe.
 */
inline std::vector<hits> fuse_hits(std::span<const hits> dense, std::span<const hits> lexical,
                                   fusion_params p, std::size_t k) {
    detail::check_k(k);
    if (dense.size() != lexical.size())
        throw error(fmt::format("fuse_hits: {} dense hit lists but {} lexical ones", dense.size(),
                                lexical.size()));
    if (!(p.alpha >= 0.0 && p.alpha <= 1.0))
        throw error(fmt::format("fusion_params.alpha must be in [0, 1], got {}", p.alpha));
    if (!(p.rrf_k >= 0.0) || !std::isfinite(p.rrf_k))
        throw error(fmt::format("fusion_params.rrf_k must be finite and >= 0, got {}", p.rrf_k));
    std::vector<hits> result(dense.size());
    for (std::size_t q = 0; q < dense.size(); ++q) {
        std::unordered_map<item_id, double> fused;
        detail::add_fused(dense[q], p, p.alpha, fused);
        detail::add_fused(lexical[q], p, 1.0 - p.alpha, fused);
        hits row;
        row.reserve(fused.size());
        for (const auto& [id, score] : fused) row.push_back({id, static_cast<float>(score)});
        result[q] = detail::select_top_k(std::move(row), k);
    }
    return result;
}

}  // namespace tabret
