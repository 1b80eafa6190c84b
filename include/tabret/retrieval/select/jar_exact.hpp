#pragma once
/// @file retrieval/select/jar_exact.hpp
/// @brief JAR's objective (Chen et al., 2024) solved to optimality by branch-and-bound over
/// table subsets, with a maximum spanning join tree: the quality ceiling of greedy.
///
/// The objective of a set S of K candidate tables (weights w1..w5 as in JAR's reference code):
///
///   w1 · Σ F_jt over the chosen assignments (sub-query j → its best column in table t ∈ S)
/// + w2 · number of sub-queries with at least one assignment
/// + w3 · weight of the maximum spanning tree of S under ω (the chosen join edges)
/// + w4 · Σ_{t∈S} r_t
///
/// subject to: each sub-query is assigned to at most one column per table; at most ⌊w5 · J⌋
/// assignments in all (w5 multiplies no term: it is the assignment budget of the reference's
/// constraint). Given S, the best assignments are found exactly: sub-query j's values over S
/// sorted descending are w2 + w1·F_j(1), w1·F_j(2), …, non-increasing, so the best ⌊w5·J⌋
/// positive values are optimal.
///
/// Connectivity. JAR requires the chosen join edges to form a spanning tree of S; its
/// compatibility is positive for almost every pair of tables, across databases too, so that
/// constraint rarely binds there. tabret's ω is zero across databases (they cannot join), which
/// would make the constraint decide the answer (no connected set of K tables exists when K
/// exceeds the right database's size). So by default (connectivity::soft) zero-weight edges may
/// complete the tree: the join term is the maximum spanning forest and every K-subset is
/// feasible. connectivity::strict keeps JAR's hard constraint over ω > 0 edges; where no
/// connected K-subset exists (JAR's MIP is infeasible and returns nothing) it takes the best
/// connected subset of the largest size that exists and fills the rest greedily by marginal
/// objective: only that fallback is not exact. Both are solved by branch-and-bound
/// (detail::jar::subset_search documents the bound). The optimum is not prefix-consistent across K:
/// evaluate each K on its own run.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/join/join_graph.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/retrieval/select/join_aware_retriever.hpp"
#include "tabret/retrieval/select/join_problem.hpp"
#include "tabret/rewriting/rewriter.hpp"

namespace tabret {

/// jar_exact_select's default bound on search nodes per question: 2^22, the whole binary search
/// tree of 21 candidates (each node takes or skips one), so up to 21 candidates are always
/// searched to the end.
inline constexpr std::size_t jar_default_max_nodes = std::size_t{1} << 22;

/** @brief Whether a chosen set must be connected by ω > 0 edges (see the file comment). */
enum class connectivity { soft, strict };

/** @brief JAR's weights [w1..w5] (see the file comment for what each multiplies). */
struct jar_weights {
    float fine = 2.0f;         ///< w1: fine relevance of assigned columns.
    float coverage = 8.0f;     ///< w2: sub-queries covered.
    float join = 1.0f;         ///< w3: ω along the join tree.
    float coarse = 10.0f;      ///< w4: coarse relevance of the chosen tables.
    float assignments = 1.0f;  ///< w5: at most ⌊w5 · J⌋ sub-query → column assignments.
    /// JAR's Spider weights [2, 8, 1, 10, 1].
    static jar_weights spider() { return {2.0f, 8.0f, 1.0f, 10.0f, 1.0f}; }
    /// JAR's BIRD weights [3, 8, 1, 3, 1].
    static jar_weights bird() { return {3.0f, 8.0f, 1.0f, 3.0f, 1.0f}; }
};

/** @brief The objective of one subset, by term. */
struct jar_value {
    double total = 0.0;
    double fine = 0.0;      ///< w1 · Σ F over assignments.
    double coverage = 0.0;  ///< w2 · covered sub-queries.
    double join = 0.0;      ///< w3 · maximum spanning tree (forest when not connected).
    double coarse = 0.0;    ///< w4 · Σ r.
    bool connected = true;  ///< S is connected by ω > 0 edges.
};

namespace detail::jar {

/// Weight of the maximum spanning forest of @p s under ω (Prim), and whether it is a tree.
inline std::pair<double, bool> max_spanning_tree(const join_problem& p,
                                                 std::span<const std::size_t> s) {
    const auto n = p.size(), k = s.size();
    if (k <= 1) return {0.0, true};
    std::vector<bool> in(k, false);
    std::vector<float> best(k, -1.0f);
    double total = 0.0;
    bool connected = true;
    best[0] = 0.0f;
    for (std::size_t step = 0; step < k; ++step) {
        std::size_t u = k;
        for (std::size_t i = 0; i < k; ++i)
            if (!in[i] && (u == k || best[i] > best[u])) u = i;
        if (best[u] <= 0.0f && step > 0) connected = false;
        in[u] = true;
        total += std::max(0.0f, best[u]);
        for (std::size_t i = 0; i < k; ++i)
            if (!in[i]) best[i] = std::max(best[i], p.join[s[u] * n + s[i]]);
    }
    return {total, connected};
}

/// w1·fine + w2·coverage of the best assignments over @p s.
inline std::pair<double, double> assignment_value(const join_problem& p,
                                                  std::span<const std::size_t> s,
                                                  const jar_weights& w) {
    const auto n = p.size(), m = p.subquery_count();
    struct item {
        double value, fine;
        bool first;
    };
    std::vector<item> items;
    std::vector<float> f;
    for (std::size_t j = 0; j < m; ++j) {
        f.clear();
        for (auto t : s) f.push_back(p.fine[j * n + t]);
        std::sort(f.begin(), f.end(), std::greater<>());
        for (std::size_t r = 0; r < f.size(); ++r) {
            const double fine = double(w.fine) * f[r];
            const double v = fine + (r == 0 ? double(w.coverage) : 0.0);
            if (v > 0.0) items.push_back({v, fine, r == 0});
        }
    }
    const auto budget = static_cast<std::size_t>(std::floor(double(w.assignments) * double(m)));
    const auto take = std::min(budget, items.size());
    std::partial_sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(take), items.end(),
                      [](const item& a, const item& b) { return a.value > b.value; });
    double fine = 0.0, coverage = 0.0;
    for (std::size_t i = 0; i < take; ++i) {
        fine += items[i].fine;
        coverage += items[i].first ? double(w.coverage) : 0.0;
    }
    return {fine, coverage};
}

}  // namespace detail::jar

/** @brief The JAR objective of candidate subset @p s (indexes into @p p). Thread-safe. */
inline jar_value jar_objective(const join_problem& p, std::span<const std::size_t> s,
                               const jar_weights& w) {
    jar_value v;
    std::tie(v.fine, v.coverage) = detail::jar::assignment_value(p, s, w);
    double tree = 0.0;
    std::tie(tree, v.connected) = detail::jar::max_spanning_tree(p, s);
    v.join = double(w.join) * tree;
    for (auto t : s) v.coarse += double(w.coarse) * p.coarse[t];
    v.total = v.fine + v.coverage + v.join + v.coarse;
    return v;
}

namespace detail::jar {

/// Connected components of the candidates under ω > 0.
inline std::vector<std::vector<std::size_t>> components(const join_problem& p) {
    const auto n = p.size();
    std::vector<std::size_t> comp(n, n);
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t s = 0; s < n; ++s) {
        if (comp[s] != n) continue;
        out.emplace_back();
        std::vector<std::size_t> stack{s};
        comp[s] = out.size() - 1;
        while (!stack.empty()) {
            const auto u = stack.back();
            stack.pop_back();
            out.back().push_back(u);
            for (std::size_t v = 0; v < n; ++v)
                if (comp[v] == n && p.join[u * n + v] > 0.0f) {
                    comp[v] = out.size() - 1;
                    stack.push_back(v);
                }
        }
    }
    return out;
}

/// Branch-and-bound over the @p k-subsets of @p nodes (with @p strict, leaves must be
/// connected). Nodes go in descending a(v) = w4·r_v + w3·m_v, m_v the largest ω from v to
/// another node: a spanning forest's edges can be charged to distinct child endpoints, so
/// w3·MSF(S) + w4·Σ r ≤ Σ_{v∈S} a(v), and the bound takes the chosen a plus the best
/// remaining ones. The assignment part is bounded by the best F per sub-query over the chosen
/// and remaining nodes when every first assignment outweighs any extra one (w2 ≥ 2·w1, w5 ≤ 1;
/// then the value is the top ⌊w5·J⌋ first-assignment values), else by its value over all nodes
/// (it is monotone in S). It visits at most @p nodes_left search nodes (shared by the searches
/// of one question, decremented here); stopped() says when that bound, not the proof, ended it.
class subset_search {
  public:
    subset_search(const join_problem& p, std::vector<std::size_t> nodes, std::size_t k,
                  const jar_weights& w, bool strict, std::size_t& nodes_left)
        : p_(p), nodes_(std::move(nodes)), k_(k), w_(w), strict_(strict), nodes_left_(nodes_left) {
        const auto n = p.size(), m = p.subquery_count();
        std::vector<double> a(n, 0.0);
        for (auto u : nodes_) {
            float most = 0.0f;
            for (auto v : nodes_) most = std::max(most, p.join[u * n + v]);
            a[u] = double(w.coarse) * p.coarse[u] + double(w.join) * double(most);
        }
        std::stable_sort(nodes_.begin(), nodes_.end(), [&](auto x, auto y) { return a[x] > a[y]; });
        value_.resize(nodes_.size());
        suffix_.assign(nodes_.size() + 1, 0.0);
        for (std::size_t i = nodes_.size(); i-- > 0;) {
            value_[i] = a[nodes_[i]];
            suffix_[i] = suffix_[i + 1] + value_[i];
        }
        per_subquery_ = double(w.coverage) >= 2.0 * double(w.fine) && w.assignments <= 1.0f;
        budget_ = static_cast<std::size_t>(std::floor(double(w.assignments) * double(m)));
        best_after_.assign((nodes_.size() + 1) * m, -1.0f);
        for (std::size_t i = nodes_.size(); i-- > 0;)
            for (std::size_t j = 0; j < m; ++j)
                best_after_[i * m + j] =
                    std::max(best_after_[(i + 1) * m + j], p.fine[j * n + nodes_[i]]);
        const auto [fine, coverage] = assignment_value(p, nodes_, w);
        assign_bound_ = fine + coverage;
    }

    /// Improves @p best / @p best_set; returns whether anything feasible was found.
    bool run(double& best, std::vector<std::size_t>& best_set) {
        best_ = &best;
        best_set_ = &best_set;
        found_ = false;
        chosen_.clear();
        visit(0, 0.0, std::vector<float>(p_.subquery_count(), -1.0f));
        return found_;
    }

    /// Whether the node bound ended the search (the best set found is then not proven best).
    [[nodiscard]] bool stopped() const noexcept { return stopped_; }

  private:
    /// Bound of the assignment part given the best F per sub-query among the chosen nodes.
    double assignment_bound(std::size_t pos, const std::vector<float>& chosen_best) const {
        if (!per_subquery_) return assign_bound_;
        const auto m = p_.subquery_count();
        std::vector<double> first;
        for (std::size_t j = 0; j < m; ++j) {
            const float f = std::max(chosen_best[j], best_after_[pos * m + j]);
            first.push_back(double(w_.coverage) + double(w_.fine) * f);
        }
        const auto take = std::min(budget_, first.size());
        std::partial_sort(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(take),
                          first.end(), std::greater<>());
        double sum = 0.0;
        for (std::size_t i = 0; i < take; ++i) sum += std::max(0.0, first[i]);
        return sum;
    }

    void visit(std::size_t pos, double chosen_value, const std::vector<float>& chosen_best) {
        if (nodes_left_ == 0) {
            stopped_ = true;
            return;
        }
        --nodes_left_;
        if (chosen_.size() == k_) {
            const auto v = jar_objective(p_, chosen_, w_);
            if ((v.connected || !strict_) && v.total > *best_) {
                *best_ = v.total;
                *best_set_ = chosen_;
                found_ = true;
            }
            return;
        }
        const auto need = k_ - chosen_.size();
        if (nodes_.size() - pos < need) return;
        const double bound = chosen_value + (suffix_[pos] - suffix_[pos + need]) +
                             assignment_bound(pos, chosen_best);
        if (bound <= *best_) return;
        const auto node = nodes_[pos];
        auto with = chosen_best;
        for (std::size_t j = 0; j < with.size(); ++j)
            with[j] = std::max(with[j], p_.fine[j * p_.size() + node]);
        chosen_.push_back(node);
        visit(pos + 1, chosen_value + value_[pos], with);
        chosen_.pop_back();
        visit(pos + 1, chosen_value, chosen_best);
    }

    const join_problem& p_;
    std::vector<std::size_t> nodes_;
    std::size_t k_;
    jar_weights w_;
    bool strict_;
    std::vector<double> value_, suffix_;
    std::vector<float> best_after_;  // (position, sub-query) → best F from that position on
    bool per_subquery_ = false;
    std::size_t budget_ = 0;
    double assign_bound_ = 0.0;
    std::vector<std::size_t> chosen_;
    double* best_ = nullptr;
    std::vector<std::size_t>* best_set_ = nullptr;
    bool found_ = false;
    std::size_t& nodes_left_;
    bool stopped_ = false;
};

/// Fills @p set up to @p k by greedy marginal objective (the non-exact fallback).
inline void fill_greedily(const join_problem& p, std::vector<std::size_t>& set, std::size_t k,
                          const jar_weights& w) {
    while (set.size() < k) {
        std::size_t best = p.size();
        double best_value = -std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < p.size(); ++i) {
            if (std::find(set.begin(), set.end(), i) != set.end()) continue;
            set.push_back(i);
            const double v = jar_objective(p, set, w).total;
            set.pop_back();
            if (v > best_value) best = i, best_value = v;
        }
        set.push_back(best);
    }
}

}  // namespace detail::jar

/**
 * @brief The subset of min(k, N) candidates that maximises the JAR objective (see the file
 * comment for @p c). Tables come back ordered by their own contribution
 * w4·r_t + w1·max_j F_jt (best first), each with that score and the sub-query of its largest F
 * as reason. The search visits at most @p max_nodes nodes (jar_default_max_nodes: the whole
 * search tree of 21 candidates, so the default 20 are always searched to the end); where the
 * bound ends it, the best set found so far is returned with `bounded` set. Thread-safe.
 */
inline join_selection jar_exact_select(const join_problem& p, std::size_t k, const jar_weights& w,
                                       connectivity c = connectivity::soft,
                                       std::size_t max_nodes = jar_default_max_nodes) {
    join_selection s;
    k = std::min(k, p.size());
    if (k == 0) return s;
    double best = -std::numeric_limits<double>::infinity();
    std::vector<std::size_t> set;
    std::size_t nodes_left = max_nodes;
    if (c == connectivity::soft) {
        std::vector<std::size_t> all(p.size());
        std::iota(all.begin(), all.end(), std::size_t{0});
        detail::jar::subset_search search(p, std::move(all), k, w, false, nodes_left);
        search.run(best, set);
        s.bounded = search.stopped();
    } else {
        auto comps = detail::jar::components(p);
        std::size_t largest = 0;
        for (const auto& comp : comps) largest = std::max(largest, comp.size());
        const auto size = std::min(k, largest);
        for (auto& comp : comps) {
            if (comp.size() < size) continue;
            detail::jar::subset_search search(p, comp, size, w, true, nodes_left);
            search.run(best, set);
            s.bounded = s.bounded || search.stopped();
        }
        detail::jar::fill_greedily(p, set, k, w);
    }
    const auto n = p.size(), m = p.subquery_count();
    std::vector<std::pair<double, std::size_t>> ranked;
    for (auto t : set) {
        float top = -2.0f;
        for (std::size_t j = 0; j < m; ++j) top = std::max(top, p.fine[j * n + t]);
        ranked.emplace_back(double(w.coarse) * p.coarse[t] + double(w.fine) * top, t);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [score, t] : ranked) {
        std::size_t reason = 0;
        for (std::size_t j = 1; j < m; ++j)
            if (p.fine[j * n + t] > p.fine[reason * n + t]) reason = j;
        s.order.push_back(t);
        s.scores.push_back(static_cast<float>(score));
        s.reason.push_back(reason);
    }
    return s;
}

struct jar_exact_options {
    std::size_t candidates = 20;  ///< N: first-stage tables considered (at least k are taken).
    jar_weights weights = jar_weights::spider();
    connectivity connected = connectivity::soft;
    /// Search nodes visited per question at most (jar_exact_select): a bound on the time of a
    /// large N (40 candidates may need 2^40), never reached at the default N.
    std::size_t max_nodes = jar_default_max_nodes;
};

/** @brief jar_exact_select as a join_aware_retriever selector. */
struct jar_exact_selector {
    static constexpr std::string_view step = "jar-exact";
    jar_weights weights;
    connectivity connected;
    std::size_t max_nodes;
    join_selection operator()(const join_problem& p, std::size_t k) const {
        return jar_exact_select(p, k, weights, connected, max_nodes);
    }
};

/**
 * @brief The exact JAR-objective retriever: the same inputs as greedy_join_retriever (see
 * join_aware_retriever for them, the costs and lifetimes), the optimum of the JAR objective for
 * each k. Trace step: "jar-exact".
 */
template <Embedder E, QueryRewriter Rw, FirstStage First = dense_first_stage>
class jar_exact_retriever : public join_aware_retriever<E, Rw, jar_exact_selector, First> {
  public:
    /** @throws error when @p graph was built for another catalog or embedder than @p index. */
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class A2, class A3, class... Rest>
    requires detail::any_temporary<A0, A1, A2, A3> jar_exact_retriever(A0&&, A1&&, A2&&, A3&&,
                                                                       Rest&&...)
    = delete;
    jar_exact_retriever(const table_index& index, const join_graph& graph, const E& embedder,
                        const Rw& rewriter, jar_exact_options options = {}, First first = {})
        : join_aware_retriever<E, Rw, jar_exact_selector, First>(
              index, graph, embedder, rewriter, options.candidates,
              jar_exact_selector{options.weights, options.connected, options.max_nodes},
              std::move(first)) {
        if (options.max_nodes == 0) throw error("jar_exact: max_nodes must be positive");
    }
};

}  // namespace tabret
