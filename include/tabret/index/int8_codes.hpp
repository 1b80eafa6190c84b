#pragma once
/// @file index/int8_codes.hpp
/// @brief Int8 codes of float vectors and the candidates of a quantised exact search: a scan
/// over a quarter of the bytes, then only the rows whose exact score may reach the top k.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "tabret/embedding/matrix.hpp"
#include "tabret/index/huge_pages.hpp"
#include "tabret/index/scan.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/index/vector_index.hpp"

namespace tabret::detail {

/**
 * @brief Each row v as int8 codes c and a scale s = max|v_i| / 127, c_i = round(v_i / s), so
 * |v_i − s·c_i| ≤ s/2 for every entry.
 *
 * For a query x, the approximate score s·(c · x) differs from v · x by at most
 * s/2 · ‖x‖₁ (the rounding of each entry, weighted by |x_i|), plus the float rounding of the
 * two sums (bounded by γ = (d + 16) · 2⁻²⁴ times the sums of absolute terms: 127·s·‖x‖₁ and
 * ‖v‖·‖x‖), and that of the bounds' own float sums. candidates() keeps every row whose upper bound
 * reaches the k-th largest lower bound, so the exact top k is always among them: re-scoring them
 * exactly gives the same top k as scoring every row (ties by id included).
 */
class int8_codes {
  public:
    int8_codes() = default;

    explicit int8_codes(const matrix& vectors)
        : dim_(static_cast<std::size_t>(vectors.cols())),
          codes_(static_cast<std::size_t>(vectors.size())),
          scales_(static_cast<std::size_t>(vectors.rows())),
          norms_(scales_.size()) {
        for (Eigen::Index r = 0; r < vectors.rows(); ++r) {
            const auto row = vectors.row(r);
            const float scale = row.cwiseAbs().maxCoeff() / 127.0f;
            const auto at = static_cast<std::size_t>(r);
            scales_[at] = scale;
            norms_[at] = row.norm();
            std::int8_t* out = codes_.data() + at * dim_;
            for (Eigen::Index c = 0; c < row.size(); ++c)
                out[c] = scale > 0.0f ? static_cast<std::int8_t>(std::lround(row(c) / scale)) : 0;
        }
        back_with_huge_pages(codes_.data(), codes_.size());
    }

    [[nodiscard]] std::size_t size() const noexcept { return scales_.size(); }
    /// Bytes of the codes, scales and norms.
    [[nodiscard]] std::size_t bytes() const noexcept {
        return codes_.size() + (scales_.size() + norms_.size()) * sizeof(float);
    }

    /**
     * @brief Rows (ascending ids) whose exact inner product with @p query (dim() floats) may be
     * among the best @p k. Requires 0 < k < size() (for k ≥ size() every row is one).
     */
    [[nodiscard]] std::vector<item_id> candidates(const float* query, std::size_t k) const {
        const std::size_t n = size();
        std::vector<item_id> out;
        std::vector<float> approx(n);
        int8_inner_products(codes_.data(), scales_.data(), n, query, dim_, approx.data());
        double l1 = 0.0, l2 = 0.0;
        for (std::size_t i = 0; i < dim_; ++i) {
            l1 += std::abs(query[i]);
            l2 += static_cast<double>(query[i]) * query[i];
        }
        l2 = std::sqrt(l2);
        const double gamma = static_cast<double>(dim_ + 16) * std::ldexp(1.0, -24);
        std::vector<float> slack(n), lower(n);
        for (std::size_t r = 0; r < n; ++r) {
            const double s = scales_[r];
            const double bound = s * l1 * (0.5 + 127.0 * gamma) + norms_[r] * l2 * gamma;
            // Plus the rounding of the float sums and differences made with it below.
            slack[r] = static_cast<float>(bound + (std::abs(approx[r]) + bound) * 0x1p-20 + 1e-30);
            lower[r] = approx[r] - slack[r];
        }
        const float kth = top_k_of_row(lower, {}, 0, k).back().score;
        for (std::size_t r = 0; r < n; ++r)
            if (approx[r] + slack[r] >= kth) out.push_back(static_cast<item_id>(r));
        return out;
    }

  private:
    std::size_t dim_ = 0;
    std::vector<std::int8_t> codes_;  ///< n × dim, row-major
    std::vector<float> scales_;
    std::vector<float> norms_;
};

}  // namespace tabret::detail
