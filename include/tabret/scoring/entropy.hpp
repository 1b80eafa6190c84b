#pragma once
/// @file scoring/entropy.hpp
/// @brief CRUSH4SQL's entropy weighting of probe scores: a probe whose similarity mass is spread
/// flat over the candidates says little, a peaked one says much.
///
/// For probe k over candidates d ∈ C: p_kd = P(d|k) / Σ_d' P(d'|k), H(k) = −Σ_d p_kd log p_kd,
/// weight w_k = sigmoid(mean_k H − H(k)), and s(k, d) = w_k · P(d|k).

#include <cmath>
#include <cstddef>
#include <vector>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "tabret/error.hpp"

namespace tabret {

/**
 * @brief Entropy of each row of @p probabilities (probes × candidates, non-negative), each row
 * first normalised to sum 1. A row summing to 0 has entropy 0. Thread-safe.
 */
template <class E>
[[nodiscard]] std::vector<float> row_entropies(const E& probabilities) {
    const auto rows = probabilities.shape()[0];
    std::vector<float> out(rows, 0.0f);
    for (std::size_t k = 0; k < rows; ++k) {
        const auto row = xt::view(probabilities, k, xt::all());
        double total = 0.0;
        for (const float p : row) total += p;
        if (total <= 0.0) continue;
        double h = 0.0;
        for (const float p : row)
            if (p > 0.0f) h -= (p / total) * std::log(p / total);
        out[k] = static_cast<float>(h);
    }
    return out;
}

/** @brief sigmoid(mean H − H(k)) per probe: above 1/2 for probes more peaked than average. */
[[nodiscard]] inline std::vector<float> entropy_weights(const std::vector<float>& entropies) {
    if (entropies.empty()) return {};
    double mean = 0.0;
    for (const float h : entropies) mean += h;
    mean /= static_cast<double>(entropies.size());
    std::vector<float> out;
    out.reserve(entropies.size());
    for (const float h : entropies)
        out.push_back(static_cast<float>(1.0 / (1.0 + std::exp(h - mean))));
    return out;
}

/**
 * @brief s(k, d) = P(d|k) · sigmoid(mean H − H(k)) for a probes × candidates tensor of
 * probabilities. Thread-safe.
 * @throws error if @p probabilities is not 2-D.
 */
template <class E>
[[nodiscard]] xt::xtensor<float, 2> entropy_weighted(const E& probabilities) {
    if (probabilities.dimension() != 2) throw error("entropy_weighted needs probes × candidates");
    const auto w = entropy_weights(row_entropies(probabilities));
    xt::xtensor<float, 2> s = probabilities;
    for (std::size_t k = 0; k < w.size(); ++k) xt::view(s, k, xt::all()) *= w[k];
    return s;
}

}  // namespace tabret
