#pragma once
/// @file index/pca_index.hpp
/// @brief Approximate inner-product search over dense vectors: a scan of 2-bit codes of the
/// vectors' leading principal components (32 bytes a row for 128 components), 4-bit codes of
/// more components for a shortlist, then exact re-scoring of the best candidates.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tabret/embedding/matrix.hpp"
#include "tabret/index/exact_index.hpp"
#include "tabret/index/vector_index.hpp"

namespace tabret {

/// The shape of a pca_index's codes and how many rows each stage of a search keeps.
struct pca_params {
    /// Principal components in the 4-bit codes the shortlist is scored on (at most the vectors'
    /// dimension; padded to a multiple of 64 components, 32 bytes of codes). >= 1.
    std::size_t dims = 256;
    /// The leading components whose 2-bit codes are scanned for every row (rounded up to a
    /// multiple of 128, 32 bytes of codes; at most the coded components). >= 1.
    std::size_t scan_dims = 128;
    /// Rows best by the scan that are scored on the 4-bit codes (raised to rescore).
    std::size_t shortlist = 10'000;
    /// Rows re-scored exactly per query (raised to k): the best of the shortlist. >= 1.
    std::size_t rescore = 1000;
};

/**
 * @brief Top-k inner-product search that scans 2-bit codes, scores a shortlist on 4-bit codes,
 * then re-scores exactly.
 *
 * Built from the rows: their mean μ, the leading params.dims principal components P of the
 * centred rows (a covariance of at most 20,000 evenly spaced rows), and each row's
 * coordinates z = Pᵀ(v − μ) divided by each component's standard deviation σ. Those are
 * stored twice, each with a scale per row: 2-bit codes of the first params.scan_dims (a step of
 * 0.8 × the row's root mean square over them, so values beyond ±1.5 steps share the outer
 * codes; 32 bytes a row for 128 components) and 4-bit codes of all params.dims (the largest |z_j /
 * σ_j| maps to ±7.5 steps; 128 bytes a row for 256). A query q is projected the same way (Pᵀq ⊙ σ)
 * and rounded to int8; every row's 2-bit codes are scored in one pass (AVX2 where the CPU has it:
 * four multiply-adds per 32 bytes), the params.shortlist best rows are scored on their 4-bit
 * codes, and the params.rescore best of those are re-scored exactly from the float rows (shared
 * with the exact_index, not copied), their top k returned. Every returned score is the exact
 * inner product; an item is missed only when its codes rank it below those candidates. With no
 * more rows than params.rescore, search() is exact_index's.
 *
 * The build is deterministic (no random sample), so an index rebuilt from the same vectors
 * (at load) answers the same. Immutable once built; const methods are thread-safe.
 */
class pca_index {
  public:
    pca_index() = default;

    /**
     * @brief Indexes the rows of @p vectors (row i gets item id i); shares their storage.
     * @throws error for params.dims == 0 or params.rescore == 0.
     */
    explicit pca_index(const exact_index& vectors, pca_params params = {});

    [[nodiscard]] std::size_t size() const noexcept { return exact_.size(); }
    [[nodiscard]] std::size_t dim() const noexcept { return exact_.dim(); }
    [[nodiscard]] const pca_params& params() const noexcept { return params_; }
    /// Components in the 4-bit codes (params.dims, at most dim(), padded to a multiple of 64).
    [[nodiscard]] std::size_t code_dims() const noexcept { return chunks_ * chunk_dims; }
    /// Components in the 2-bit codes scanned for every row (a multiple of 128).
    [[nodiscard]] std::size_t scan_code_dims() const noexcept {
        return scan_chunks_ * scan_chunk_dims;
    }
    /// Bytes of the codes and scales (the float rows are the exact index's).
    [[nodiscard]] std::size_t bytes() const noexcept {
        return scan_codes_.size() + codes_.size() +
               (scan_scales_.size() + scales_.size()) * sizeof(float);
    }

    /**
     * @brief For each query row, the min(k, size()) items best by exact inner product among the
     * params.rescore (or k) best by the codes, best first (ties: smaller id first).
     * @throws error for k == 0; embedding_error for a bad query.
     */
    [[nodiscard]] std::vector<hits> search(const matrix& queries, std::size_t k) const;

    /// Exact search within @p candidates (exact_index::search_within).
    [[nodiscard]] std::vector<hits> search_within(const matrix& queries,
                                                  std::span<const item_id> candidates,
                                                  std::size_t k) const {
        return exact_.search_within(queries, candidates, k);
    }

    /// Components per 32-byte chunk of a row's 4-bit codes.
    static constexpr std::size_t chunk_dims = 64;
    /// Components per 32-byte chunk of a row's 2-bit codes.
    static constexpr std::size_t scan_chunk_dims = 128;

  private:
    /// The top k of rows @p ids (ascending) by exact inner product with @p query.
    [[nodiscard]] hits rescored(const float* query, std::span<const item_id> ids,
                                std::size_t k) const;
    /// A query's int8 weights per coded component and the codes' offsets (the half range
    /// times the sum of the weights) of the 2-bit and the 4-bit codes.
    struct query_codes {
        std::vector<std::int8_t> weights;
        float scan_bias = 0.0f, bias = 0.0f;
    };
    [[nodiscard]] query_codes quantized(const matrix& queries, Eigen::Index q) const;
    /// The @p keep rows (ascending ids) best by the codes for query row @p q: every row by its
    /// 2-bit codes, then the shortlist by its 4-bit codes.
    [[nodiscard]] std::vector<item_id> candidates(const matrix& queries, Eigen::Index q,
                                                  std::size_t keep) const;

    exact_index exact_;  ///< The float rows (shared) for re-scoring.
    pca_params params_;
    std::size_t scan_chunks_ = 0, chunks_ = 0;
    matrix weights_;  ///< dim × max(code dims, scan code dims): P, column j scaled by σ_j
    std::vector<std::uint8_t> scan_codes_;  ///< 2-bit: size × scan chunks × 32
    std::vector<float> scan_scales_;        ///< per row, of the 2-bit codes
    std::vector<std::uint8_t> codes_;       ///< 4-bit: size × chunks × 32
    std::vector<float> scales_;             ///< per row, of the 4-bit codes
};

static_assert(VectorIndex<pca_index>);

}  // namespace tabret
