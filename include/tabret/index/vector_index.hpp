#pragma once
/// @file index/vector_index.hpp
/// @brief The VectorIndex concept: inner-product top-k search over L2-normalised vectors.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tabret/embedding/matrix.hpp"

namespace tabret {

using item_id = std::uint32_t;  ///< Row of the indexed matrix (a table_id or a column_id).

/// One search result: the item and its inner product with the query (cosine for unit vectors).
struct hit {
    item_id id = 0;
    float score = 0.0f;
    friend bool operator==(const hit&, const hit&) = default;
};

/// Hits of one query, best first; ties broken by smaller id so results are deterministic.
using hits = std::vector<hit>;

/**
 * @brief An index over n vectors of dimension d.
 *
 * - `search(queries, k)`: for each query row, the min(k, n) items with the largest inner product.
 * - `search_within(queries, candidates, k)`: the same, restricted to @p candidates (shared by all
 *   queries; ids out of range throw `tabret::error`; duplicates count once).
 * Both are const and thread-safe; k == 0 throws `tabret::error`; a query of the wrong dimension
 * throws `embedding_error`.
 */
template <class I>
concept VectorIndex = requires(const I& index, const matrix& queries, std::size_t k,
                               std::span<const item_id> candidates) {
    { index.size() } -> std::convertible_to<std::size_t>;
    { index.dim() } -> std::convertible_to<std::size_t>;
    { index.search(queries, k) } -> std::same_as<std::vector<hits>>;
    { index.search_within(queries, candidates, k) } -> std::same_as<std::vector<hits>>;
};

}  // namespace tabret
