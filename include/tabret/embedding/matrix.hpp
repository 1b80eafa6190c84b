#pragma once
/// @file embedding/matrix.hpp
/// @brief The dense float matrix every embedding and score lives in, and row normalisation.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <Eigen/Core>

#include "tabret/error.hpp"

namespace tabret {

/// Row-major n×d float matrix: one embedding per row. Row-major matches numpy's default layout,
/// so Python arrays cross the binding without a copy.
using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// An embedding that cannot be used: wrong shape, NaN or infinity, all zeros.
class embedding_error : public error {
  public:
    using error::error;
};

/// Whether row @p r of @p m is free of NaN and infinity (NaN fails `<=` too). No branch in the
/// loop, so the compiler vectorises it (Eigen's allFinite() took 5 % of a small ATR call).
inline bool row_is_finite(const matrix& m, Eigen::Index r) noexcept {
    const float* row = m.row(r).data();  // row-major: the row is contiguous
    bool finite = true;
    for (Eigen::Index c = 0; c < m.cols(); ++c)
        finite &= std::abs(row[c]) <= std::numeric_limits<float>::max();
    return finite;
}

/**
 * @brief Checks that @p m has @p rows rows (and @p dim columns when dim > 0) of finite values.
 * @param what names the producer in the message (e.g. "embedder").
 * @throws embedding_error naming the first offending row.
 */
inline void check_embeddings(const matrix& m, std::size_t rows, std::size_t dim,
                             std::string_view what) {
    if (static_cast<std::size_t>(m.rows()) != rows)
        throw embedding_error(
            fmt::format("{} returned {} rows for {} texts", what, m.rows(), rows));
    if (dim > 0 && static_cast<std::size_t>(m.cols()) != dim)
        throw embedding_error(
            fmt::format("{} returned vectors of dimension {}, expected {}", what, m.cols(), dim));
    if (m.cols() == 0 && rows > 0)
        throw embedding_error(fmt::format("{} returned vectors of dimension 0", what));
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        if (!row_is_finite(m, r))
            throw embedding_error(fmt::format("{} returned NaN or infinity in row {}", what, r));
}

/**
 * @brief L2-normalises every row in place, so that inner product is cosine similarity.
 * Cannot overflow or underflow: each row is divided by its largest magnitude first and the
 * norm is computed in double, so finite rows of any magnitude (1e30, 1e-30, subnormal) become
 * unit vectors.
 * @param what names the producer in the message; @p texts, when given, the text of each row.
 * @param allow_zero_rows keep rows of zeros as they are (an embedder for which a zero vector is
 * a legitimate answer, see Embedder) instead of refusing them.
 * @throws embedding_error naming the row (and its text) for a row of zeros (it has no direction:
 * every score would be 0 and the ranking arbitrary) unless allowed, or with NaN or infinity.
 */
inline void normalize_rows(matrix& m, std::string_view what = "embedder",
                           std::span<const std::string> texts = {}, bool allow_zero_rows = false) {
    const auto fail = [&](Eigen::Index r, std::string_view why) {
        const auto i = static_cast<std::size_t>(r);
        std::string text;
        if (i < texts.size())
            text = texts[i].size() > 60 ? fmt::format(" (text '{}...')", texts[i].substr(0, 60))
                                        : fmt::format(" (text '{}')", texts[i]);
        throw embedding_error(fmt::format("{} returned {} in row {}{}", what, why, r, text));
    };
    const auto n = static_cast<std::size_t>(m.cols());
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        float* row = m.row(r).data();  // row-major: the row is contiguous
        // The largest magnitude, and whether every value is finite (NaN fails `<=` too); no
        // branch in the loop, so the compiler vectorises it.
        float scale = 0.0f;
        bool finite = true;
        for (std::size_t c = 0; c < n; ++c) {
            const float a = std::abs(row[c]);
            finite &= a <= std::numeric_limits<float>::max();
            scale = std::max(scale, a);
        }
        if (!finite) fail(r, "NaN or infinity");
        if (scale == 0.0f) {
            if (allow_zero_rows) continue;
            fail(r, "a vector of zeros (no direction to rank by)");
        }
        const double inv = 1.0 / scale;
        // Four partial sums, so the additions do not wait on each other.
        std::array<double, 4> sum{};
        std::size_t c = 0;
        for (; c + 4 <= n; c += 4)
            for (std::size_t j = 0; j < 4; ++j) {
                const double v = row[c + j] * inv;
                sum[j] += v * v;
            }
        for (; c < n; ++c) sum[0] += (row[c] * inv) * (row[c] * inv);
        const double norm = std::sqrt((sum[0] + sum[1]) + (sum[2] + sum[3]));  // in [1, sqrt(n)]
        const double factor = inv / norm;
        for (c = 0; c < n; ++c) row[c] = static_cast<float>(row[c] * factor);
    }
}

}  // namespace tabret
