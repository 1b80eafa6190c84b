#pragma once
/// @file retrieval/select/greedy_join_retriever.hpp
/// @brief Greedy join-aware selection (Boutaleb et al., 2025) on JAR's signals: coarse
/// relevance, sub-query coverage and join compatibility, over the top-N first-stage candidates.

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include <xtensor/xview.hpp>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/join/join_graph.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/retrieval/select/join_aware_retriever.hpp"
#include "tabret/retrieval/select/join_problem.hpp"
#include "tabret/rewriting/rewriter.hpp"

namespace tabret {

/** @brief λ weights of the greedy gains. */
struct greedy_weights {
    float coarse = 4.0f;    ///< λ_coarse: the paper's 4.
    float coverage = 2.0f;  ///< λ_cov.
    float join = 1.0f;      ///< λ_join.
    /// The reference code's weights (λ_coarse 3).
    static greedy_weights reference() { return {3.0f, 2.0f, 1.0f}; }
};

/**
 * @brief The greedy selection of min(k, N) candidates (methods.md):
 * seed = argmax λ_coarse·r_i + λ_cov·Σ_j F_ji, q_j = F_j,seed; then repeatedly
 * argmax λ_coarse·r_i + λ_cov·Σ_j max(0, F_ji − q_j) + λ_join·Σ_{l∈S} ω_il and
 * q_j = max(q_j, F_ji). Ties go to the earlier candidate. Each table's score is its gain when
 * chosen; its reason is the sub-query with the largest F_ji (seed) or coverage gain.
 * Thread-safe.
 */
inline join_selection greedy_select(const join_problem& p, std::size_t k,
                                    const greedy_weights& w = {}) {
    join_selection s;
    const auto n = p.size(), m = p.subquery_count();
    if (n == 0 || k == 0) return s;
    const auto f = p.fine_view();
    const auto omega = p.join_view();
    std::vector<bool> taken(n, false);
    std::vector<float> covered(m, 0.0f);
    std::vector<float> join_sum(n, 0.0f);  // Σ_{l∈S} ω_il
    for (std::size_t step = 0; step < std::min(k, n); ++step) {
        std::size_t best = n, best_reason = 0;
        float best_gain = 0.0f;
        for (std::size_t i = 0; i < n; ++i) {
            if (taken[i]) continue;
            float cov = 0.0f, top = -2.0f;
            std::size_t reason = 0;
            for (std::size_t j = 0; j < m; ++j) {
                const float g = step == 0 ? f(j, i) : std::max(0.0f, f(j, i) - covered[j]);
                cov += g;
                if (g > top) top = g, reason = j;
            }
            const float gain = w.coarse * p.coarse[i] + w.coverage * cov + w.join * join_sum[i];
            if (best == n || gain > best_gain) best = i, best_gain = gain, best_reason = reason;
        }
        taken[best] = true;
        s.order.push_back(best);
        s.scores.push_back(best_gain);
        s.reason.push_back(best_reason);
        const auto column = xt::view(f, xt::all(), best);
        for (std::size_t j = 0; j < m; ++j)
            covered[j] = step == 0 ? column(j) : std::max(covered[j], column(j));
        for (std::size_t i = 0; i < n; ++i) join_sum[i] += omega(i, best);
    }
    return s;
}

struct greedy_join_options {
    std::size_t candidates = 20;  ///< N: first-stage tables re-ranked (at least k are taken).
    greedy_weights weights{};
};

/** @brief greedy_select as a join_aware_retriever selector. */
struct greedy_selector {
    static constexpr std::string_view step = "greedy-join";
    greedy_weights weights;
    join_selection operator()(const join_problem& p, std::size_t k) const {
        return greedy_select(p, k, weights);
    }
};

/**
 * @brief Greedy join-aware retrieval (see join_aware_retriever for the inputs, costs and
 * lifetimes). Trace step: "greedy-join".
 */
template <Embedder E, QueryRewriter Rw, FirstStage First = dense_first_stage>
class greedy_join_retriever : public join_aware_retriever<E, Rw, greedy_selector, First> {
  public:
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class A2, class A3, class... Rest>
    requires detail::any_temporary<A0, A1, A2, A3> greedy_join_retriever(A0&&, A1&&, A2&&, A3&&,
                                                                         Rest&&...)
    = delete;
    /** @throws error when @p graph was built for another catalog or embedder than @p index. */
    greedy_join_retriever(const table_index& index, const join_graph& graph, const E& embedder,
                          const Rw& rewriter, greedy_join_options options = {}, First first = {})
        : join_aware_retriever<E, Rw, greedy_selector, First>(
              index, graph, embedder, rewriter, options.candidates,
              greedy_selector{options.weights}, std::move(first)) {}
};

}  // namespace tabret
