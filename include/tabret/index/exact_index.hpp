#pragma once
/// @file index/exact_index.hpp
/// @brief Brute-force inner-product search: one pass of the scan kernel (index/scan.hpp) per
/// block of indexed rows.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "tabret/embedding/matrix.hpp"
#include "tabret/index/huge_pages.hpp"
#include "tabret/index/int8_codes.hpp"
#include "tabret/index/scan.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/index/vector_index.hpp"
#include "tabret/interrupt.hpp"

namespace tabret {

/**
 * @brief Exact top-k inner-product search over n vectors of dimension d.
 *
 * The rows are expected to be L2-normalised (then scores are cosines); the index does not
 * normalise them. Scores for a batch of queries come from one pass of detail::inner_products
 * (streamed for 1 to 6 queries, a packed GEMM micro-kernel from 7 on; compiled for AVX-512,
 * AVX2 + FMA and the baseline) per block of indexed rows; blocks are sized so that a block of
 * scores stays under `block_bytes` (default 64 MiB), whatever n is (at least one row per
 * block).
 *
 * quantize() adds int8 codes of the rows (index/int8_codes.hpp): search() for one query then
 * scans the codes (a quarter of the bytes) and re-scores exactly only the rows that may reach
 * the top k, with the same results as without codes (the exact top k, ties by id, the same
 * scores). Batches scan the float rows, which serve every query of the batch in one pass.
 *
 * A built index is immutable: every const method is thread-safe.
 */
class exact_index {
  public:
    /// Default bound on the memory of one block of scores (queries × indexed rows, float).
    static constexpr std::size_t default_block_bytes = std::size_t{64} << 20;

    /** @brief An empty index of dimension 0. Thread-safe (const methods). */
    exact_index() = default;
    exact_index(const exact_index&) = default;
    exact_index& operator=(const exact_index&) = default;
    /// A moved-from index is empty (dimension 0), as a moved-from matrix is.
    exact_index(exact_index&& other) noexcept
        : vectors_(std::exchange(other.vectors_, no_vectors())),
          block_bytes_(other.block_bytes_),
          codes_(std::exchange(other.codes_, std::nullopt)) {}
    exact_index& operator=(exact_index&& other) noexcept {
        vectors_ = std::exchange(other.vectors_, no_vectors());
        block_bytes_ = other.block_bytes_;
        codes_ = std::exchange(other.codes_, std::nullopt);
        return *this;
    }
    ~exact_index() = default;

    /**
     * @brief Indexes the rows of @p vectors (row i gets item id i).
     * @param block_bytes bound on the scores computed by one matrix product.
     * @throws embedding_error if a row has NaN or infinity, or if rows have dimension 0.
     * @throws tabret::error if there are more rows than item ids.
     * Not thread-safe with respect to @p vectors being modified concurrently.
     */
    explicit exact_index(matrix vectors, std::size_t block_bytes = default_block_bytes)
        : vectors_(std::make_shared<const matrix>(std::move(vectors))), block_bytes_(block_bytes) {
        detail::check_item_count(size(), "exact_index");
        check_embeddings(*vectors_, size(), 0, "exact_index");
        detail::back_with_huge_pages(vectors_->data(), bytes());
    }

    /** @brief Number of indexed vectors. Thread-safe. */
    [[nodiscard]] std::size_t size() const noexcept {
        return static_cast<std::size_t>(vectors_->rows());
    }

    /** @brief Dimension of the indexed vectors. Thread-safe. */
    [[nodiscard]] std::size_t dim() const noexcept {
        return static_cast<std::size_t>(vectors_->cols());
    }

    /**
     * @brief Adds int8 codes of the rows, used by search() from then on (quantised exact
     * search). Not thread-safe: call it before sharing the index.
     */
    void quantize() { codes_.emplace(*vectors_); }
    /** @brief Whether search() scans int8 codes first (quantize()). Thread-safe. */
    [[nodiscard]] bool quantized() const noexcept { return codes_.has_value(); }
    /** @brief Bytes held: the vectors, and the codes when quantised. Thread-safe. */
    [[nodiscard]] std::size_t bytes() const noexcept {
        return static_cast<std::size_t>(vectors_->size()) * sizeof(float) +
               (codes_ ? codes_->bytes() : 0);
    }

    /** @brief The indexed vectors, one per row. Thread-safe. */
    [[nodiscard]] const matrix& vectors() const noexcept { return *vectors_; }
    /**
     * @brief The indexed vectors, shared: what an HNSW graph over them keeps instead of a copy
     * (hnsw_index). They never change. Thread-safe.
     */
    [[nodiscard]] std::shared_ptr<const matrix> shared_vectors() const noexcept { return vectors_; }

    /**
     * @brief For each query row, the min(k, size()) items with the largest inner product, best
     * first (ties: smaller id first).
     * @throws tabret::error if k == 0.
     * @throws embedding_error if a query has the wrong dimension or a non-finite value.
     * Thread-safe.
     */
    [[nodiscard]] std::vector<hits> search(const matrix& queries, std::size_t k) const {
        detail::check_k(k);
        detail::check_queries(queries, dim(), "exact_index");
        // The codes pay for one query at a time (a float scan serves 2 to 6 queries in the
        // same pass over the rows, and a batch through the GEMM micro-kernel) that does not
        // ask for every row.
        if (!codes_ || queries.rows() != 1 || k >= size())
            return search_rows(queries, {}, size(), k);
        const auto ids = codes_->candidates(queries.data(), k);
        return search_rows(queries, ids, ids.size(), k);
    }

    /**
     * @brief Like search(), restricted to @p candidates (shared by all queries; duplicates count
     * once). Gathers the candidate rows and multiplies only those.
     * @throws tabret::error if k == 0 or a candidate id is out of range (naming the id).
     * @throws embedding_error if a query has the wrong dimension or a non-finite value.
     * Thread-safe.
     */
    [[nodiscard]] std::vector<hits> search_within(const matrix& queries,
                                                  std::span<const item_id> candidates,
                                                  std::size_t k) const {
        detail::check_k(k);
        detail::check_queries(queries, dim(), "exact_index");
        const auto ids = detail::unique_candidates(candidates, size(), "exact_index");
        return search_rows(queries, ids, ids.size(), k);
    }

  private:
    /// The 0 × 0 matrix shared by every empty index (copying it cannot throw).
    static const std::shared_ptr<const matrix>& no_vectors() noexcept {
        static const auto empty = std::make_shared<const matrix>();
        return empty;
    }

    /// Rows of indexed data per block, so that queries × rows floats fit in block_bytes_.
    std::size_t block_rows(std::size_t queries) const {
        const std::size_t floats = block_bytes_ / sizeof(float);
        return std::max<std::size_t>(1, floats / std::max<std::size_t>(1, queries));
    }

    /// Block [begin, end) of the rows searched: the rows of @p ids, or of the index if empty.
    matrix gather(std::span<const item_id> ids, std::size_t begin, std::size_t end) const {
        matrix block(static_cast<Eigen::Index>(end - begin), vectors_->cols());
        for (std::size_t j = begin; j < end; ++j)
            block.row(static_cast<Eigen::Index>(j - begin)) = vectors_->row(ids[j]);
        return block;
    }

    /// Top-k over @p count rows: rows `ids` (gathered) or, when ids is empty, rows 0..count-1.
    std::vector<hits> search_rows(const matrix& queries, std::span<const item_id> ids,
                                  std::size_t count, std::size_t k) const {
        const auto nq = static_cast<std::size_t>(queries.rows());
        std::vector<hits> result(nq);
        const std::size_t step = block_rows(nq);
        std::vector<float> scores;
        for (std::size_t begin = 0; begin < count; begin += step) {
            const std::size_t end = std::min(count, begin + step);
            const std::size_t len = end - begin;
            scores.resize(nq * len);
            const matrix gathered = ids.empty() ? matrix() : gather(ids, begin, end);
            const float* rows = ids.empty() ? vectors_->row(static_cast<Eigen::Index>(begin)).data()
                                            : gathered.data();
            detail::inner_products(rows, len, queries.data(), nq, dim(), scores.data());
            check_interrupt();
            const auto block_ids = ids.empty() ? ids : ids.subspan(begin, len);
            for (std::size_t q = 0; q < nq; ++q) {
                check_interrupt_every(q, 16);
                const std::span<const float> row(scores.data() + q * len, len);
                auto best = detail::top_k_of_row(row, block_ids, static_cast<item_id>(begin), k);
                result[q] = begin == 0 ? std::move(best)
                                       : detail::merge_top_k(std::move(result[q]), best, k);
            }
        }
        return result;
    }

    std::shared_ptr<const matrix> vectors_ = no_vectors();  // never null
    std::size_t block_bytes_ = default_block_bytes;
    std::optional<detail::int8_codes> codes_;
};

static_assert(VectorIndex<exact_index>);

}  // namespace tabret
