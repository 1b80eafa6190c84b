#pragma once
/// @file index/sparse_index.hpp
/// @brief Inner-product search over sparse vectors (the hashing embedder's: about 8 % of the
/// dimensions non-zero) through an inverted index: a posting list per dimension. Exact up to a
/// budget of postings per query; beyond it, the query's most informative dimensions and an
/// exact re-scoring of the best candidates.

#include <algorithm>
#include <cmath>
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

/// How much of the inverted index one query may read.
struct sparse_params {
    /// Postings one query reads at most; 0: no limit (always exact). A query whose dimensions'
    /// posting lists hold more reads its most informative dimensions up to this budget, then
    /// re-scores the best `rescore` items exactly. The default keeps a query over Spider
    /// 2.0-lite's 532,388 hashed columns (about 11 million postings) to a few milliseconds;
    /// over catalogs of up to about 50,000 columns a query stays exact.
    std::size_t max_postings = 1'000'000;
    /// Items re-scored exactly after a budgeted read (raised to k); >= 1.
    std::size_t rescore = 4000;
};

/**
 * @brief Top-k inner-product search that touches only the non-zero entries.
 *
 * A query adds q[d] · v[d] over the posting list of each of its non-zero dimensions d into one
 * score per item, then keeps the top k: the work is the postings of the query's dimensions,
 * not n × d. Scores are the inner products, summed in ascending dimension order (so identical
 * vectors score identically; against a dense product only the last bits may differ).
 *
 * Exact while the query's posting lists together hold at most params.max_postings entries.
 * Beyond that the search is approximate: it reads the dimensions with the largest
 * |q[d]| · rms(v[d]) · log(n / df(d)) (a big query weight on a dimension whose postings are
 * heavy and rare) while they fit the budget, takes the params.rescore best items by that
 * partial score, and re-scores them exactly from the rows: every returned score is the exact
 * inner product, and an item is missed only if its partial score ranks it below those
 * candidates. Also keeps the rows (CSR) for that and for `search_within`. Immutable once
 * built; const methods are thread-safe.
 */
class sparse_index {
  public:
    /// Above this share of non-zero entries the two layouts (8 bytes per entry each) would take
    /// over four times the dense vectors' memory, and a dense scan is the better tool: refused.
    /// (The hashing embedder's column vectors are ~8 % non-zero, its table vectors ~28 %.)
    static constexpr double max_density = 0.5;

    sparse_index() = default;

    /// Whether vectors with @p nonzeros of @p entries non-zero are sparse enough to be indexed
    /// (at most max_density of them).
    [[nodiscard]] static bool sparse_enough(std::size_t nonzeros, std::size_t entries) noexcept {
        return static_cast<double>(nonzeros) <= max_density * static_cast<double>(entries);
    }

    /**
     * @brief Indexes the rows of @p vectors (row i gets item id i).
     * @throws error when more than max_density of the entries are non-zero (naming the share),
     * for more rows than item ids or for params.rescore == 0; embedding_error for NaN or
     * infinity.
     */
    explicit sparse_index(const matrix& vectors, sparse_params params = {})
        : n_(static_cast<std::size_t>(vectors.rows())),
          dim_(static_cast<std::size_t>(vectors.cols())),
          params_(params) {
        if (params_.rescore == 0) throw error("sparse_index: rescore must be at least 1");
        detail::check_item_count(n_, "sparse_index");
        check_embeddings(vectors, n_, 0, "sparse_index");
        const auto nnz = static_cast<std::size_t>((vectors.array() != 0.0f).count());
        if (n_ > 0 && !sparse_enough(nnz, n_ * dim_))
            throw error(fmt::format(
                "a sparse index is for sparse vectors (the hashing embedder's): these are {:.0f}% "
                "non-zero; use the exact or hnsw index",
                100.0 * static_cast<double>(nnz) / static_cast<double>(n_ * dim_)));
        build_rows(vectors, nnz);
        build_postings(nnz);
        build_dimension_weights();
    }

    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
    /// Non-zero entries stored (once per layout).
    [[nodiscard]] std::size_t nonzeros() const noexcept { return row_entries_.size(); }
    [[nodiscard]] const sparse_params& params() const noexcept { return params_; }

    /**
     * @brief For each query row, the min(k, size()) items of largest inner product, best first
     * (ties: smaller id first); exact within params().max_postings (see the class).
     * @throws error for k == 0; embedding_error for a bad query.
     */
    [[nodiscard]] std::vector<hits> search(const matrix& queries, std::size_t k) const {
        detail::check_k(k);
        detail::check_queries(queries, dim_, "sparse_index");
        std::vector<hits> out;
        std::vector<float> scores(n_);
        for (Eigen::Index q = 0; q < queries.rows(); ++q) {
            const auto [dims, exact] = dimensions_to_read(queries, q);
            accumulate(queries, q, dims, scores);
            check_interrupt();
            out.push_back(exact ? detail::top_k_of_row(scores, {}, 0, k)
                                : rescored(queries, q, scores, k));
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
        for (Eigen::Index q = 0; q < queries.rows(); ++q)
            out.push_back(detail::top_k_of_row(row_scores(queries, q, ids, scores), ids, 0, k));
        return out;
    }

  private:
    struct read_plan {
        std::vector<std::uint32_t> dims;  ///< the dimensions to read, ascending
        bool exact = true;                ///< all of the query's non-zero dimensions
    };

    /// Query row @p q's non-zero dimensions, or, when their postings exceed the budget, its most
    /// informative ones that fit it (at least one).
    [[nodiscard]] read_plan dimensions_to_read(const matrix& queries, Eigen::Index q) const {
        read_plan plan;
        std::size_t postings = 0;
        for (std::size_t d = 0; d < dim_; ++d)
            if (queries(q, static_cast<Eigen::Index>(d)) != 0.0f) {
                plan.dims.push_back(static_cast<std::uint32_t>(d));
                postings += postings_of(d);
            }
        if (params_.max_postings == 0 || postings <= params_.max_postings) return plan;
        const auto priority = [&](std::uint32_t d) {
            return std::abs(queries(q, static_cast<Eigen::Index>(d))) * dim_weights_[d];
        };
        std::stable_sort(plan.dims.begin(), plan.dims.end(), [&](std::uint32_t a, std::uint32_t b) {
            return priority(a) > priority(b);
        });
        std::size_t kept = 0, read = 0;
        for (; kept < plan.dims.size(); ++kept) {
            const auto d = plan.dims[kept];
            const auto len = postings_of(d);
            if (kept > 0 && read + len > params_.max_postings) break;
            read += len;
        }
        plan.dims.resize(kept);
        std::sort(plan.dims.begin(), plan.dims.end());
        plan.exact = false;
        return plan;
    }

    /// The top k of the params_.rescore (or k) items best by @p partial scores, re-scored
    /// exactly from the rows.
    [[nodiscard]] hits rescored(const matrix& queries, Eigen::Index q,
                                std::span<const float> partial, std::size_t k) const {
        const auto candidates = detail::best_of_row(partial, 0, std::max(k, params_.rescore));
        std::vector<item_id> ids(candidates.size());
        std::transform(candidates.begin(), candidates.end(), ids.begin(),
                       [](const hit& h) { return h.id; });
        std::sort(ids.begin(), ids.end());  // neighbouring rows (a table's columns) read together
        std::vector<float> scores(ids.size());
        return detail::top_k_of_row(row_scores(queries, q, ids, scores), ids, 0, k);
    }

    /// Asks the cache for every line of row @p i's entries.
    void prefetch_row(item_id i) const noexcept {
        const auto* first = reinterpret_cast<const char*>(row_entries_.data() + row_starts_[i]);
        const auto* last = reinterpret_cast<const char*>(row_entries_.data() + row_starts_[i + 1]);
        for (const char* line = first; line < last; line += 64) __builtin_prefetch(line);
    }

    /// Query row @p q's inner product with each row of @p ids, into @p out (same size).
    std::span<const float> row_scores(const matrix& queries, Eigen::Index q,
                                      std::span<const item_id> ids, std::span<float> out) const {
        constexpr std::size_t ahead = 8;  // rows prefetched ahead of the one scored
        for (std::size_t j = 0; j < ids.size(); ++j) {
            if (j + ahead < ids.size()) prefetch_row(ids[j + ahead]);
            float s = 0.0f;
            for (std::size_t p = row_starts_[ids[j]]; p < row_starts_[ids[j] + 1]; ++p)
                s += queries(q, static_cast<Eigen::Index>(row_entries_[p].dim)) *
                     row_entries_[p].value;
            out[j] = s;
        }
        return out;
    }

    void build_rows(const matrix& vectors, std::size_t nnz) {
        row_starts_.reserve(n_ + 1);
        row_entries_.reserve(nnz);
        row_starts_.push_back(0);
        for (std::size_t i = 0; i < n_; ++i) {
            for (std::size_t d = 0; d < dim_; ++d)
                if (const float v =
                        vectors(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d));
                    v != 0.0f) {
                    row_entries_.push_back({static_cast<std::uint32_t>(d), v});
                }
            row_starts_.push_back(row_entries_.size());
        }
    }

    /// Adds query row @p q's weight times each posting of @p dims into @p scores.
    void accumulate(const matrix& queries, Eigen::Index q, std::span<const std::uint32_t> dims,
                    std::span<float> scores) const {
        std::fill(scores.begin(), scores.end(), 0.0f);
        for (const auto d : dims) {
            const float w = queries(q, static_cast<Eigen::Index>(d));
            for (std::size_t p = dim_starts_[d]; p < dim_starts_[d + 1]; ++p)
                scores[dim_items_[p]] += w * dim_values_[p];
        }
    }

    /// The postings (CSC) from the rows: items in ascending order within each dimension.
    void build_postings(std::size_t nnz) {
        dim_starts_.assign(dim_ + 1, 0);
        for (const auto& e : row_entries_) ++dim_starts_[e.dim + 1];
        for (std::size_t d = 0; d < dim_; ++d) dim_starts_[d + 1] += dim_starts_[d];
        dim_items_.resize(nnz);
        dim_values_.resize(nnz);
        std::vector<std::size_t> next(dim_starts_.begin(), dim_starts_.end() - 1);
        for (std::size_t i = 0; i < n_; ++i)
            for (std::size_t p = row_starts_[i]; p < row_starts_[i + 1]; ++p) {
                const auto slot = next[row_entries_[p].dim]++;
                dim_items_[slot] = static_cast<item_id>(i);
                dim_values_[slot] = row_entries_[p].value;
            }
    }

    /// Per dimension, how informative its postings are: their root mean square value times the
    /// log of its inverse document frequency (0 for a dimension no item uses).
    void build_dimension_weights() {
        std::vector<double> squares(dim_, 0.0);
        for (const auto& e : row_entries_) squares[e.dim] += double{e.value} * e.value;
        dim_weights_.assign(dim_, 0.0f);
        for (std::size_t d = 0; d < dim_; ++d)
            if (const auto len = static_cast<double>(postings_of(d)); len > 0)
                dim_weights_[d] = static_cast<float>(std::sqrt(squares[d] / len) *
                                                     std::log(static_cast<double>(n_) / len));
    }

    [[nodiscard]] std::size_t postings_of(std::size_t d) const noexcept {
        return dim_starts_[d + 1] - dim_starts_[d];
    }

    std::size_t n_ = 0;
    std::size_t dim_ = 0;
    sparse_params params_;
    std::vector<std::size_t> row_starts_;  ///< CSR: row i is [row_starts_[i], row_starts_[i+1])
    struct entry {
        std::uint32_t dim;
        float value;
    };
    std::vector<entry> row_entries_;       ///< its dimensions (ascending) and values, side by side
    std::vector<std::size_t> dim_starts_;  ///< CSC: dimension d's postings
    std::vector<item_id> dim_items_;       ///< their items, ascending
    std::vector<float> dim_values_;        ///< and values
    std::vector<float> dim_weights_;       ///< build_dimension_weights()
};

static_assert(VectorIndex<sparse_index>);

}  // namespace tabret
