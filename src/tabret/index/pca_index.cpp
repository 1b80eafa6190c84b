/// @file src/tabret/index/pca_index.cpp
/// @brief pca_index: principal components, 2- and 4-bit codes, scans and exact re-scoring.

#include "tabret/index/pca_index.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include <Eigen/Eigenvalues>

#include "tabret/error.hpp"
#include "tabret/index/scan.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/interrupt.hpp"

namespace tabret {
namespace {

constexpr std::size_t max_sample = 20'000;  ///< rows the covariance is estimated from
constexpr std::size_t block_rows = 4096;    ///< rows projected per matrix product

/// Codes of @p bits bits, 0 … 2^bits − 1, stand for −half … half steps: half = (2^bits − 1) / 2.
constexpr float half_range(unsigned bits) { return static_cast<float>((1u << bits) - 1) / 2.0f; }
/// A 2-bit step per unit of the row's root mean square: found best (of 0.6 … 1.2) on the
/// MiniLM column vectors of Spider 2.0-lite (most coordinates lie within a step or two, so
/// clipping the few large ones beats a step that spans the largest).
constexpr float scan_step_per_rms = 0.8f;

/// Evenly spaced rows (all of them up to max_sample), centred.
Eigen::MatrixXf centred_sample(const matrix& v, const Eigen::RowVectorXf& mean) {
    const auto n = static_cast<std::size_t>(v.rows());
    const std::size_t step = std::max<std::size_t>(1, (n + max_sample - 1) / max_sample);
    const std::size_t count = (n + step - 1) / step;
    Eigen::MatrixXf out(static_cast<Eigen::Index>(count), v.cols());
    for (std::size_t i = 0; i < count; ++i)
        out.row(static_cast<Eigen::Index>(i)) = v.row(static_cast<Eigen::Index>(i * step)) - mean;
    return out;
}

/// Row @p w's @p bits-bit codes with step @p step (chunk layout of
/// detail::packed_inner_products, @p chunks chunks) into @p out: (w_j / step) rounded to the
/// nearest of the 2^bits levels −half … half, clipped.
void encode_row(const Eigen::Ref<const Eigen::RowVectorXf>& w, unsigned bits, float step,
                std::uint8_t* out, std::size_t chunks) {
    const float half = half_range(bits), top = 2.0f * half;
    const std::size_t per_chunk = detail::packed_chunk_bytes * 8 / bits;
    std::fill(out, out + chunks * detail::packed_chunk_bytes, std::uint8_t{0});
    for (Eigen::Index j = 0; j < w.size(); ++j) {
        const float at_step = step > 0.0f ? w(j) / step : 0.0f;
        const auto code =
            static_cast<unsigned>(std::clamp(std::floor(at_step + half + 0.5f), 0.0f, top));
        const auto at = static_cast<std::size_t>(j);
        const std::size_t chunk = at / per_chunk, within = at % per_chunk;
        std::uint8_t& byte = out[chunk * detail::packed_chunk_bytes + within % 32];
        byte = static_cast<std::uint8_t>(byte | code << (bits * (within / 32)));
    }
}

/// Scores each hit of the shortlist @p best on its 4-bit codes (@p chunks a row in @p codes)
/// with @p weights: eight rows at a time gathered into a small buffer (prefetched ahead;
/// sorting 10,000 ids by row would cost more than it saves) and scanned together.
void score_shortlist(hits& best, const std::uint8_t* codes, std::size_t chunks, const float* scales,
                     const std::int8_t* weights, float bias) {
    constexpr std::size_t rows = 8, ahead = 16;
    const std::size_t row_bytes = chunks * detail::packed_chunk_bytes;
    std::vector<std::uint8_t> block(rows * row_bytes);
    float block_scales[rows], scores[rows];
    for (std::size_t begin = 0; begin < best.size(); begin += rows) {
        const std::size_t len = std::min(rows, best.size() - begin);
        for (std::size_t j = begin; j < begin + len; ++j) {
            if (j + ahead < best.size())
                for (std::size_t line = 0; line < row_bytes; line += 64)
                    __builtin_prefetch(codes + best[j + ahead].id * row_bytes + line);
            std::copy_n(codes + best[j].id * row_bytes, row_bytes,
                        block.data() + (j - begin) * row_bytes);
            block_scales[j - begin] = scales[best[j].id];
        }
        detail::packed_inner_products(4, block.data(), block_scales, len, weights, chunks, bias,
                                      scores);
        for (std::size_t j = 0; j < len; ++j) best[begin + j].score = scores[j];
    }
}

}  // namespace

pca_index::pca_index(const exact_index& vectors, pca_params params)
    : exact_(vectors), params_(params) {
    if (params_.dims == 0 || params_.scan_dims == 0)
        throw error("pca_index: dims and scan_dims must be at least 1");
    if (params_.rescore == 0) throw error("pca_index: rescore must be at least 1");
    const matrix& v = exact_.vectors();
    const auto n = static_cast<std::size_t>(v.rows());
    const auto d = static_cast<Eigen::Index>(v.cols());
    if (n == 0 || d == 0) return;
    const auto m = std::min<std::size_t>(params_.dims, exact_.dim());
    chunks_ = (m + chunk_dims - 1) / chunk_dims;
    const std::size_t scanned = std::min(m, params_.scan_dims);
    scan_chunks_ = (scanned + scan_chunk_dims - 1) / scan_chunk_dims;
    // The 2-bit chunks code every coded component they have room for.
    const auto scan_m = static_cast<Eigen::Index>(std::min(m, scan_code_dims()));
    const Eigen::RowVectorXf mean = v.colwise().mean();  // a query needs none: q·μ ranks no row
    const Eigen::MatrixXf sample = centred_sample(v, mean);
    Eigen::MatrixXf covariance = Eigen::MatrixXf::Zero(d, d);
    covariance.selfadjointView<Eigen::Lower>().rankUpdate(sample.transpose());
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXf> solver(covariance);
    if (solver.info() != Eigen::Success) throw error("pca_index: the eigen decomposition failed");
    // Eigenvalues ascending: the last m columns, largest first, each scaled by its component's
    // standard deviation (the weights a query is projected with).
    weights_ = matrix::Zero(d, static_cast<Eigen::Index>(std::max(code_dims(), scan_code_dims())));
    Eigen::MatrixXf project(d, static_cast<Eigen::Index>(m));
    for (Eigen::Index j = 0; j < project.cols(); ++j) {
        const Eigen::Index from = d - 1 - j;
        const float variance = solver.eigenvalues()(from) /
                               static_cast<float>(std::max<Eigen::Index>(1, sample.rows()));
        const float deviation = variance > 0.0f ? std::sqrt(variance) : 1.0f;
        project.col(j) = solver.eigenvectors().col(from) / deviation;
        weights_.col(j) = solver.eigenvectors().col(from) * deviation;
    }
    const std::size_t scan_bytes = scan_chunks_ * detail::packed_chunk_bytes,
                      row_bytes = chunks_ * detail::packed_chunk_bytes;
    scan_codes_.resize(n * scan_bytes);
    scan_scales_.resize(n);
    codes_.resize(n * row_bytes);
    scales_.resize(n);
    for (std::size_t begin = 0; begin < n; begin += block_rows) {
        const std::size_t len = std::min(block_rows, n - begin);
        const auto rows =
            v.middleRows(static_cast<Eigen::Index>(begin), static_cast<Eigen::Index>(len));
        const Eigen::MatrixXf whitened = (rows.rowwise() - mean) * project;
        for (std::size_t i = 0; i < len; ++i) {
            const std::size_t r = begin + i;
            const auto w = whitened.row(static_cast<Eigen::Index>(i));
            const auto head = w.head(scan_m);
            scan_scales_[r] =
                scan_step_per_rms * std::sqrt(head.squaredNorm() / static_cast<float>(scan_m));
            encode_row(head, 2, scan_scales_[r], scan_codes_.data() + r * scan_bytes, scan_chunks_);
            scales_[r] = w.cwiseAbs().maxCoeff() / half_range(4);
            encode_row(w, 4, scales_[r], codes_.data() + r * row_bytes, chunks_);
        }
        check_interrupt();
    }
}

pca_index::query_codes pca_index::quantized(const matrix& queries, Eigen::Index q) const {
    const Eigen::RowVectorXf w = queries.row(q) * weights_;
    const float largest = w.cwiseAbs().maxCoeff();
    const float to_int = largest > 0.0f ? 127.0f / largest : 0.0f;
    query_codes out;
    out.weights.resize(static_cast<std::size_t>(w.size()));
    for (std::size_t j = 0; j < out.weights.size(); ++j) {
        const auto weight =
            static_cast<std::int8_t>(std::lround(w(static_cast<Eigen::Index>(j)) * to_int));
        out.weights[j] = weight;
        if (j < scan_code_dims()) out.scan_bias += half_range(2) * weight;
        if (j < code_dims()) out.bias += half_range(4) * weight;
    }
    return out;
}

std::vector<item_id> pca_index::candidates(const matrix& queries, Eigen::Index q,
                                           std::size_t keep) const {
    // (keep < size(): search() answers exactly otherwise)
    const auto codes = quantized(queries, q);
    const auto owner = std::make_unique_for_overwrite<float[]>(size());  // every one written
    const std::span scores{owner.get(), size()};
    hits best;
    if (const std::size_t shortlist = std::max(keep, params_.shortlist); shortlist < size()) {
        detail::packed_inner_products(2, scan_codes_.data(), scan_scales_.data(), size(),
                                      codes.weights.data(), scan_chunks_, codes.scan_bias,
                                      scores.data());
        check_interrupt();
        best = detail::best_of_row(scores, 0, shortlist);
        if (best.size() > keep)
            score_shortlist(best, codes_.data(), chunks_, scales_.data(), codes.weights.data(),
                            codes.bias);
    } else {  // every row in the shortlist: its 4-bit codes read in order, no 2-bit scan
        detail::packed_inner_products(4, codes_.data(), scales_.data(), size(),
                                      codes.weights.data(), chunks_, codes.bias, scores.data());
        best = detail::best_of_row(scores, 0, keep);
    }
    detail::keep_best(best, keep);
    std::vector<item_id> ids(best.size());
    std::transform(best.begin(), best.end(), ids.begin(), [](const hit& h) { return h.id; });
    std::sort(ids.begin(), ids.end());  // neighbouring rows read together
    return ids;
}

std::vector<hits> pca_index::search(const matrix& queries, std::size_t k) const {
    detail::check_k(k);
    detail::check_queries(queries, dim(), "pca_index");
    const std::size_t keep = std::max(k, params_.rescore);
    if (keep >= size()) return exact_.search(queries, k);
    std::vector<hits> out;
    for (Eigen::Index q = 0; q < queries.rows(); ++q)
        out.push_back(rescored(queries.row(q).data(), candidates(queries, q, keep), k));
    return out;
}

hits pca_index::rescored(const float* query, std::span<const item_id> ids, std::size_t k) const {
    // Row by row in place (no gathered copy), each through the scan kernel exact_index uses
    // for one query, so a score is bit for bit the exact search's; rows prefetched ahead.
    constexpr std::size_t ahead = 4;
    const matrix& v = exact_.vectors();
    const std::size_t d = dim();
    const auto row = [&](item_id id) { return v.row(static_cast<Eigen::Index>(id)).data(); };
    std::vector<float> scores(ids.size());
    for (std::size_t j = 0; j < ids.size(); ++j) {
        if (j + ahead < ids.size()) {
            const auto* next = reinterpret_cast<const char*>(row(ids[j + ahead]));
            for (std::size_t line = 0; line < d * sizeof(float); line += 64)
                __builtin_prefetch(next + line);
        }
        detail::inner_products(row(ids[j]), 1, query, 1, d, &scores[j]);
    }
    return detail::top_k_of_row(scores, ids, 0, k);
}

}  // namespace tabret
