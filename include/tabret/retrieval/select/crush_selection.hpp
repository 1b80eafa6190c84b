#pragma once
/// @file retrieval/select/crush_selection.hpp
/// @brief CRUSH4SQL's two ways of choosing a budget of B candidates from a probes × candidates
/// score tensor s(k, d): the paper's objective, maximised greedily, and the reference code's
/// round-robin greedy.
///
/// Paper objective, over the selected set R:
///   F(R) = Σ_k log Σ_{d∈R} exp s(k,d)  +  λ Σ_{d∈R} log Σ_{d'∈R} exp e(d,d'),
/// with e(d,d') = γ when d and d' are linked (same table, or a foreign key), else 0; e(d,d) = γ.
/// Greedy: each step adds the candidate that maximises F(R ∪ {d}) (the marginal gain; F(∅) is
/// the same for every candidate, so the first step needs no special case). The edge term gives
/// every candidate the same log|R|-like share plus a small bonus per linked member of R, so it
/// decides between candidates whose coverage gains (nearly) tie.
///
/// Both selections depend on B only through when they stop: the selection at budget B is a
/// prefix of the selection at any larger budget. Ties go to the smaller probe, then candidate
/// index. Pure functions; thread-safe.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "tabret/error.hpp"

namespace tabret {

/** @brief One selected candidate, which probe picked it and that probe's score s(k, d). */
struct crush_pick {
    std::size_t candidate = 0;
    std::size_t probe = 0;
    float score = 0.0f;
    friend bool operator==(const crush_pick&, const crush_pick&) = default;
};

/** @brief Weights of the paper objective's connectivity term. */
struct connectivity_params {
    float lambda = 1.0f;  ///< Weight of the edge term; 0 switches it off.
    float gamma = 0.01f;  ///< e(d, d') for linked pairs (paper: 0.01).
};

namespace detail::crush {

template <class S>
void check_scores(const S& s) {
    if (s.dimension() != 2) throw error("CRUSH selection needs a probes × candidates tensor");
}

/// The probe whose coverage term gains most from @p c: an uncovered probe (sum 0) beats any
/// covered one; among equals the larger s(k, c), then the smaller k.
template <class S>
std::size_t picking_probe(const S& s, const std::vector<double>& cover, std::size_t c) {
    std::size_t best = 0;
    double best_gain = -1.0;
    float best_s = -std::numeric_limits<float>::infinity();
    for (std::size_t k = 0; k < cover.size(); ++k) {
        const float v = s(k, c);
        const double gain = cover[k] > 0.0 ? std::log1p(std::exp(double{v}) / cover[k])
                                           : std::numeric_limits<double>::infinity();
        if (gain > best_gain || (gain == best_gain && v > best_s)) {
            best = k;
            best_gain = gain;
            best_s = v;
        }
    }
    return best;
}

}  // namespace detail::crush

/**
 * @brief Greedy maximisation of the paper objective (file comment) under budget @p budget.
 * @param s probes × candidates scores (any 2-D xtensor expression or view), |s| < 150.
 * @param linked candidates × candidates, non-zero where two candidates are linked; read only
 * when params.lambda != 0.
 * @return min(budget, candidates) picks in selection order.
 * @throws error if @p s is not 2-D.
 */
template <class S, class L>
[[nodiscard]] std::vector<crush_pick> select_by_objective(const S& s, const L& linked,
                                                          std::size_t budget,
                                                          connectivity_params params = {}) {
    detail::crush::check_scores(s);
    const std::size_t probes = s.shape()[0], n = s.shape()[1];
    const bool edges = params.lambda != 0.0f && probes > 0;
    const double e_linked = std::exp(double{params.gamma});
    auto link = [&](std::size_t a, std::size_t b) {
        return a == b || linked(a, b) != 0 || linked(b, a) != 0 ? e_linked : 1.0;
    };
    std::vector<double> cover(probes, 0.0), conn(n, 0.0);
    std::vector<bool> chosen(n, false);
    std::vector<crush_pick> picks;
    // exp s(k, c) once; per step, log(conn_p + link) of each pick for both link values (the
    // same numbers, summed in the same order, as evaluating them per candidate).
    std::vector<double> exp_s(probes * n);
    for (std::size_t k = 0; k < probes; ++k)
        for (std::size_t c = 0; c < n; ++c) exp_s[k * n + c] = std::exp(double{s(k, c)});
    std::vector<double> log_plain, log_linked;
    // The coverage term Σ_k log(cover_k + e^s) as the log of products of log_group factors: a
    // quarter of the logarithms. A factor is e^s or more, and at most (budget + 1) · e^max s, so
    // four of them neither overflow nor underflow a double for |s| < 150 and budgets below 10^6.
    constexpr std::size_t log_group = 4;
    while (picks.size() < std::min(budget, n)) {
        if (edges) {
            log_plain.clear();
            log_linked.clear();
            for (const auto& p : picks) {
                log_plain.push_back(std::log(conn[p.candidate] + 1.0));
                log_linked.push_back(std::log(conn[p.candidate] + e_linked));
            }
        }
        std::size_t best = n;
        double best_value = -std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < n; ++c) {
            if (chosen[c]) continue;
            double value = 0.0;
            for (std::size_t k0 = 0; k0 < probes; k0 += log_group) {
                double product = 1.0;
                for (std::size_t k = k0; k < std::min(probes, k0 + log_group); ++k)
                    product *= cover[k] + exp_s[k * n + c];
                value += std::log(product);
            }
            if (edges) {
                double e = std::log(conn[c] + link(c, c));
                for (std::size_t i = 0; i < picks.size(); ++i)
                    e += link(picks[i].candidate, c) == 1.0 ? log_plain[i] : log_linked[i];
                value += double{params.lambda} * e;
            }
            if (value > best_value) {
                best = c;
                best_value = value;
            }
        }
        if (best == n) break;
        const auto k = detail::crush::picking_probe(s, cover, best);
        picks.push_back({best, k, s(k, best)});
        chosen[best] = true;
        for (std::size_t j = 0; j < probes; ++j) cover[j] += exp_s[j * n + best];
        if (edges)
            for (std::size_t c = 0; c < n; ++c) conn[c] += link(c, best);
    }
    return picks;
}

/**
 * @brief The reference code's round-robin greedy: among the probes not yet covered, take the
 * (probe, candidate) pair with the highest s, select the candidate and mark the probe covered;
 * once every probe is covered, coverage resets. Every probe thus picks once before any picks
 * twice. No edge term (the reference disables it).
 * @return min(budget, candidates) picks in selection order.
 * @throws error if @p s is not 2-D.
 */
template <class S>
[[nodiscard]] std::vector<crush_pick> select_round_robin(const S& s, std::size_t budget) {
    detail::crush::check_scores(s);
    const std::size_t probes = s.shape()[0], n = s.shape()[1];
    std::vector<bool> covered(probes, false), chosen(n, false);
    std::size_t uncovered = probes;
    std::vector<crush_pick> picks;
    while (probes > 0 && picks.size() < std::min(budget, n)) {
        if (uncovered == 0) {
            covered.assign(probes, false);
            uncovered = probes;
        }
        crush_pick best{n, probes, -std::numeric_limits<float>::infinity()};
        for (std::size_t k = 0; k < probes; ++k) {
            if (covered[k]) continue;
            for (std::size_t c = 0; c < n; ++c)
                if (!chosen[c] && s(k, c) > best.score) best = {c, k, s(k, c)};
        }
        if (best.candidate == n) break;
        picks.push_back(best);
        chosen[best.candidate] = true;
        covered[best.probe] = true;
        --uncovered;
    }
    return picks;
}

}  // namespace tabret
