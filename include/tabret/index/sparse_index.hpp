#pragma once
/// @file index/sparse_index.hpp
/// @brief Exact inner-product search over sparse vectors (the hashing embedder's: about 8 % of
/// the dimensions non-zero) through an inverted index: a posting list per dimension.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "tabret/embedding/matrix.hpp"
#include "tabret/error.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/index/vector_index.hpp"
#include "tabret/interrupt.hpp"

namespace tabret {

/**
 * @brief Exact top-k inner-product search that touches only the non-zero entries.
 *
 * A query adds q[d] · v[d] over the posting list of each of its non-zero dimensions d into one
 * score per item, then keeps the top k: the work is the postings of the query's dimensions,
 * not n × d. Scores are the inner products, summed in ascending dimension order (so identical
 * vectors score identically; against a dense product only the last bits may differ). Also
 * keeps the rows (CSR) for `search_within`. Immutable once built; const methods are
 * thread-safe.
 */
class sparse_index {
  public:
    /// Above this share of non-zero entries the two layouts (8 bytes per entry each) would take
    /// over four times the dense vectors' memory, and a dense scan is the better tool: refused.
    /// (The hashing embedder's column vectors are ~8 % non-zero, its table vectors ~28 %.)
    static constexpr double max_density = 0.5;

    sparse_index() = default;

    /**
     * @brief Indexes the rows of @p vectors (row i gets item id i).
     * @throws error when more than max_density of the entries are non-zero (naming the share),
     * or for more rows than item ids; embedding_error for NaN or infinity.
     */
    explicit sparse_index(const matrix& vectors)
        : n_(static_cast<std::size_t>(vectors.rows())),
          dim_(static_cast<std::size_t>(vectors.cols())) {
        detail::check_item_count(n_, "sparse_index");
        check_embeddings(vectors, n_, 0, "sparse_index");
        const auto nnz = static_cast<std::size_t>((vectors.array() != 0.0f).count());
        if (n_ > 0 && static_cast<double>(nnz) > max_density * static_cast<double>(n_ * dim_))
            throw error(fmt::format(
                "a sparse index is for sparse vectors (the hashing embedder's): these are {:.0f}% "
                "non-zero; use the exact or hnsw index",
                100.0 * static_cast<double>(nnz) / static_cast<double>(n_ * dim_)));
        build_rows(vectors, nnz);
        build_postings(nnz);
    }

    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
    /// Non-zero entries stored (once per layout).
    [[nodiscard]] std::size_t nonzeros() const noexcept { return row_values_.size(); }

    /**
     * @brief For each query row, the min(k, size()) items of largest inner product, best first
     * (ties: smaller id first). @throws error for k == 0; embedding_error for a bad query.
     */
    [[nodiscard]] std::vector<hits> search(const matrix& queries, std::size_t k) const {
        detail::check_k(k);
        detail::check_queries(queries, dim_, "sparse_index");
        std::vector<hits> out;
        std::vector<float> scores(n_);
        for (Eigen::Index q = 0; q < queries.rows(); ++q) {
            std::fill(scores.begin(), scores.end(), 0.0f);
            for (std::size_t d = 0; d < dim_; ++d) {
                const float w = queries(q, static_cast<Eigen::Index>(d));
                if (w == 0.0f) continue;
                for (std::size_t p = dim_starts_[d]; p < dim_starts_[d + 1]; ++p)
                    scores[dim_items_[p]] += w * dim_values_[p];
            }
            check_interrupt();
            out.push_back(detail::top_k_of_row(scores, {}, 0, k));
        }
        return out;
    }

    /**
     * @brief Like search(), restricted to @p candidates (duplicates count once).
     * @throws error for k == 0 or a candidate out of range; embedding_error for a bad query.
     */
    [[nodiscard]] std::vector<hits> search_within(const matrix& queries,
                                                  std::span<const item_id> candidates,
                                                  std::size_t k) const {
        detail::check_k(k);
        detail::check_queries(queries, dim_, "sparse_index");
        const auto ids = detail::unique_candidates(candidates, n_, "sparse_index");
        std::vector<hits> out;
        std::vector<float> scores(ids.size());
        for (Eigen::Index q = 0; q < queries.rows(); ++q) {
            for (std::size_t j = 0; j < ids.size(); ++j) {
                float s = 0.0f;
                for (std::size_t p = row_starts_[ids[j]]; p < row_starts_[ids[j] + 1]; ++p)
                    s += queries(q, static_cast<Eigen::Index>(row_dims_[p])) * row_values_[p];
                scores[j] = s;
            }
            out.push_back(detail::top_k_of_row(scores, ids, 0, k));
        }
        return out;
    }

  private:
    void build_rows(const matrix& vectors, std::size_t nnz) {
        row_starts_.reserve(n_ + 1);
        row_dims_.reserve(nnz);
        row_values_.reserve(nnz);
        row_starts_.push_back(0);
        for (std::size_t i = 0; i < n_; ++i) {
            for (std::size_t d = 0; d < dim_; ++d)
                if (const float v =
                        vectors(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d));
                    v != 0.0f) {
                    row_dims_.push_back(static_cast<std::uint32_t>(d));
                    row_values_.push_back(v);
                }
            row_starts_.push_back(row_dims_.size());
        }
    }

    /// The postings (CSC) from the rows: items in ascending order within each dimension.
    void build_postings(std::size_t nnz) {
        dim_starts_.assign(dim_ + 1, 0);
        for (const auto d : row_dims_) ++dim_starts_[d + 1];
        for (std::size_t d = 0; d < dim_; ++d) dim_starts_[d + 1] += dim_starts_[d];
        dim_items_.resize(nnz);
        dim_values_.resize(nnz);
        std::vector<std::size_t> next(dim_starts_.begin(), dim_starts_.end() - 1);
        for (std::size_t i = 0; i < n_; ++i)
            for (std::size_t p = row_starts_[i]; p < row_starts_[i + 1]; ++p) {
                const auto slot = next[row_dims_[p]]++;
                dim_items_[slot] = static_cast<item_id>(i);
                dim_values_[slot] = row_values_[p];
            }
    }

    std::size_t n_ = 0;
    std::size_t dim_ = 0;
    std::vector<std::size_t> row_starts_;  ///< CSR: row i is [row_starts_[i], row_starts_[i+1])
    std::vector<std::uint32_t> row_dims_;  ///< its dimensions, ascending
    std::vector<float> row_values_;        ///< and values
    std::vector<std::size_t> dim_starts_;  ///< CSC: dimension d's postings
    std::vector<item_id> dim_items_;       ///< their items, ascending
    std::vector<float> dim_values_;        ///< and values
};

static_assert(VectorIndex<sparse_index>);

}  // namespace tabret
