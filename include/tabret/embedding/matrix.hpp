#pragma once
/// @file embedding/matrix.hpp
/// @brief The dense float matrix every embedding and score lives in, and row normalisation.

#include <cmath>
#include <cstddef>

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
        if (!m.row(r).allFinite())
            throw embedding_error(fmt::format("{} returned NaN or infinity in row {}", what, r));
}

/**
 * @brief L2-normalises every row in place, so that inner product is cosine similarity.
 * An all-zero row stays zero (it has no direction; its cosine with anything is 0).
 */
inline void normalize_rows(matrix& m) {
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        const float norm = m.row(r).norm();
        if (norm > 0.0f) m.row(r) /= norm;
    }
}

}  // namespace tabret
