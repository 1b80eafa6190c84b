#pragma once
/// @file retrieval/select/join_problem.hpp
/// @brief The inputs that join-aware selection (greedy, exact JAR objective) sees for one
/// question: N candidates from a first stage with coarse scores r_i, fine scores F_ji
/// (sub-query j × table i, the max over the table's columns of cos(sub-query, "table:column")),
/// and join ω among the candidates, plus one sub-query per cell value the first stage matched
/// (F_ji 1 where candidate i holds it, else 0: covering a named value counts once); gathered
/// for a whole batch with one LLM call and one embedder call (plus the first stage's own calls,
/// none for the dense one).

#include <algorithm>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>

#include "tabret/embedding/embedder.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/index/value_index.hpp"
#include "tabret/join/join_graph.hpp"
#include "tabret/retrieval/first_stage.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/rewriting/rewriter.hpp"

namespace tabret {

/** @brief One question's selection problem over N candidate tables and J sub-queries. */
struct join_problem {
    std::vector<table_id> tables;     ///< N candidates, first-stage order.
    std::vector<trace_entry> origin;  ///< The first stage's trace of the candidates.
    std::vector<float> coarse;        ///< r_i = cos(question, table text), N.
    /// J texts: the rewriter's (the question itself when none), then "value 'France'" per
    /// distinct value the first stage matched (detail::add_value_rows).
    std::vector<std::string> subqueries;
    std::vector<float> fine;                ///< F, J × N row-major.
    std::vector<float> join;                ///< ω, N × N row-major, symmetric, zero diagonal.
    std::vector<column_id> columns;         ///< Every column of the candidates.
    std::vector<std::size_t> column_owner;  ///< Per column: its candidate index.
    std::vector<float> column_scores;       ///< Per column: max over sub-queries of the cosine.

    [[nodiscard]] std::size_t size() const noexcept { return tables.size(); }
    [[nodiscard]] std::size_t subquery_count() const noexcept { return subqueries.size(); }
    /// F as a J × N tensor view (no copy).
    [[nodiscard]] auto fine_view() const {
        return xt::adapt(fine, std::vector<std::size_t>{subquery_count(), size()});
    }
    /// ω as an N × N tensor view (no copy).
    [[nodiscard]] auto join_view() const {
        return xt::adapt(join, std::vector<std::size_t>{size(), size()});
    }
};

/** @brief A selection: candidate indexes in the order chosen, with a score and reason each. */
struct join_selection {
    std::vector<std::size_t> order;   ///< Indexes into join_problem::tables.
    std::vector<float> scores;        ///< Per chosen table (method-specific; documented there).
    std::vector<std::size_t> reason;  ///< Sub-query that most drove each choice.
    /// The search stopped at its bound before it could prove the set best (jar-exact's
    /// max_nodes): the trace says so at each chosen table (step `<step>:bounded`).
    bool bounded = false;
};

namespace detail {

/// F and per-column scores of one question: sub-query rows @p sub (J × d) against the columns
/// of the candidate tables.
inline void fill_fine(join_problem& p, const catalog& cat, const join_graph& g, const matrix& sub) {
    const auto n = p.size(), j = static_cast<std::size_t>(sub.rows());
    std::vector<std::size_t> first(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        for (auto c : cat.table(p.tables[i]).columns) {
            p.columns.push_back(c);
            p.column_owner.push_back(i);
        }
        first[i + 1] = p.columns.size();
    }
    matrix cols(static_cast<Eigen::Index>(p.columns.size()), sub.cols());
    for (std::size_t c = 0; c < p.columns.size(); ++c)
        cols.row(static_cast<Eigen::Index>(c)) = g.column_vectors().row(p.columns[c]);
    const matrix sim = sub * cols.transpose();  // J × C
    p.fine.assign(j * n, -1.0f);
    auto f = xt::adapt(p.fine, std::vector<std::size_t>{j, n});
    p.column_scores.assign(p.columns.size(), -1.0f);
    for (std::size_t q = 0; q < j; ++q)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c = first[i]; c < first[i + 1]; ++c) {
                const float s = sim(static_cast<Eigen::Index>(q), static_cast<Eigen::Index>(c));
                f(q, i) = std::max(f(q, i), s);
                p.column_scores[c] = std::max(p.column_scores[c], s);
            }
}

/// One row of F per distinct (normalised) value that the first stage's trace entries matched
/// in the candidates (trace_entry::value): 1 for the candidates holding it, 0 for the others. Its
/// sub-query text is "value 'France'".
inline void add_value_rows(join_problem& p) {
    std::map<std::string, std::pair<std::string, std::vector<bool>>> rows;  // key: normalised
    for (const auto& e : p.origin) {
        const auto at = std::ranges::find(p.tables, e.table);
        if (e.value.empty() || at == p.tables.end()) continue;
        auto& [text, holders] = rows[normalise_value(e.value)];
        if (holders.empty()) text = e.value, holders.assign(p.size(), false);
        holders[static_cast<std::size_t>(at - p.tables.begin())] = true;
    }
    for (const auto& [_, row] : rows) {
        p.subqueries.push_back(fmt::format("value '{}'", row.first));
        for (const bool held : row.second) p.fine.push_back(held ? 1.0f : 0.0f);
    }
}

inline void fill_join(join_problem& p, const join_graph& g) {
    const auto n = p.size();
    p.join.assign(n * n, 0.0f);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) p.join[a * n + b] = g.weight(p.tables[a], p.tables[b]);
}

}  // namespace detail

/**
 * @brief Builds the problems of a batch: one rewriter call (sub-queries; a question without
 * any uses itself), one embedder call (questions and sub-queries), at most @p n candidate tables
 * per question from @p first, F from @p graph's column vectors and the values @p first matched
 * (detail::add_value_rows), ω from @p graph.
 * @throws error when the graph and index embedders differ; whatever the callbacks throw.
 */
template <Embedder E, QueryRewriter Rw, FirstStage F>
std::vector<join_problem> build_join_problems(const table_index& index, const join_graph& graph,
                                              const E& embedder, const Rw& rewriter, const F& first,
                                              std::span<const std::string> questions,
                                              std::size_t n) {
    std::vector<join_problem> out(questions.size());
    if (questions.empty()) return out;
    std::vector<rewrite_request> requests;
    for (const auto& q : questions) requests.push_back({q, {}});
    const auto rewrites = rewriter.rewrite(requests);
    if (rewrites.size() != questions.size())
        throw error(fmt::format("rewriter returned {} results for {} questions", rewrites.size(),
                                questions.size()));
    std::vector<std::string> texts(questions.begin(), questions.end());
    std::vector<std::size_t> first_sub;
    for (std::size_t i = 0; i < questions.size(); ++i) {
        out[i].subqueries = rewrites[i].queries;
        if (out[i].subqueries.empty()) out[i].subqueries.push_back(questions[i]);
        first_sub.push_back(texts.size());
        texts.insert(texts.end(), out[i].subqueries.begin(), out[i].subqueries.end());
    }
    const matrix all = embed_normalized(embedder, std::span<const std::string>(texts), index.dim());
    const matrix question_vectors = all.topRows(static_cast<Eigen::Index>(questions.size()));
    auto candidates = first.candidates(index, questions, question_vectors, n);
    for (std::size_t i = 0; i < questions.size(); ++i) {
        auto& p = out[i];
        for (const auto& t : candidates[i].tables) {
            p.tables.push_back(t.table);
            p.coarse.push_back(t.score);
        }
        p.origin = std::move(candidates[i].trace);
        const matrix sub = all.middleRows(static_cast<Eigen::Index>(first_sub[i]),
                                          static_cast<Eigen::Index>(p.subqueries.size()));
        detail::fill_fine(p, index.catalog(), graph, sub);
        detail::add_value_rows(p);
        detail::fill_join(p, graph);
    }
    return out;
}

/** @brief Checks that @p graph belongs to @p index. @throws error otherwise. */
inline void check_join_graph(const table_index& index, const join_graph& graph) {
    if (graph.catalog_fingerprint() != index.catalog_fingerprint())
        throw error("the join graph was built for another catalog than the index");
    if (graph.embedder_name() != index.embedder_name() || graph.dim() != index.dim())
        throw error(
            fmt::format("the join graph was built with embedder '{}' ({} dims), the index "
                        "with '{}' ({} dims)",
                        graph.embedder_name(), graph.dim(), index.embedder_name(), index.dim()));
}

/**
 * @brief The retrieval for one solved problem: the chosen tables in order, trace entries with
 * step @p step and the driving sub-query followed by the first stage's entries of the chosen
 * tables, and the top @p k_columns columns of the chosen tables by their best sub-query cosine.
 */
inline retrieval to_retrieval(const join_problem& p, const join_selection& s, std::string_view step,
                              std::size_t k_columns) {
    retrieval r;
    std::vector<bool> chosen(p.size(), false);
    for (std::size_t k = 0; k < s.order.size(); ++k) {
        const auto i = s.order[k];
        chosen[i] = true;
        r.tables.push_back({p.tables[i], s.scores[k]});
        r.trace.push_back(
            {p.tables[i], std::string(step), p.subqueries.at(s.reason[k]), s.scores[k]});
        if (s.bounded)
            r.trace.push_back({p.tables[i], fmt::format("{}:bounded", step),
                               "the search stopped at its bound: the best set found, not "
                               "proven best",
                               s.scores[k]});
    }
    for (const auto& e : p.origin)
        if (const auto at = std::find(p.tables.begin(), p.tables.end(), e.table);
            at != p.tables.end() && chosen[static_cast<std::size_t>(at - p.tables.begin())])
            r.trace.push_back(e);
    if (k_columns == 0) return r;
    hits cols;
    for (std::size_t c = 0; c < p.columns.size(); ++c)
        if (chosen[p.column_owner[c]]) cols.push_back({p.columns[c], p.column_scores[c]});
    for (const auto& h : detail::select_top_k(std::move(cols), k_columns))
        r.columns.push_back({h.id, h.score});
    return r;
}

}  // namespace tabret
