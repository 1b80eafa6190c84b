#pragma once
/// @file retrieval/post/expansion.hpp
/// @brief A post-step for any retriever: the tables one declared-foreign-key hop from its top
/// tables (the hubs they reference and the satellites that reference them), each moved up to
/// right after the table it joins when its own cosine with the question earns it, within k.

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/dot.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/join/bridges.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

/// Which neighbours the expansion proposes and which it keeps (defaults chosen on Spider train,
/// docs/results.md).
struct expansion_options {
    std::size_t seeds = 1;  ///< The top tables whose key neighbours are proposed.
    double ratio = 0.75;    ///< A neighbour is kept when cos(q, it) >= ratio * cos(q, its seed).
};

namespace detail {

/// cos(q, t) of the index's (normalised) vector of table @p t and the normalised question @p q.
inline float table_cosine(const table_index& index, const matrix& q, Eigen::Index row, table_id t) {
    return dot(q.row(row).data(), index.tables().vectors().row(t).data(), index.dim());
}

/// @throws error for a ratio outside [0, 1].
inline void check(const expansion_options& o) {
    if (!(o.ratio >= 0.0 && o.ratio <= 1.0))
        throw error(fmt::format("expand: ratio must lie in [0, 1], not {}", o.ratio));
}

}  // namespace detail

/**
 * @brief @p r's first k tables with each of the first `seeds` followed by its foreign-key
 * neighbours (either direction, ascending by cosine rank) whose cosine with the question
 * (row @p row of @p q) is positive and at least `ratio` times the seed's; a neighbour already
 * among the k moves up, a new one pushes the last table out, and the list is cut to k (its cut,
 * when set, bounds k). A moved or added table gets its seed's score and a trace entry with
 * step "expand", "seed -> neighbour" as query and its cosine as score (then the stage before's
 * entries for it, if it had found it). Columns are the stage before's of the tables returned.
 * @throws error for k == 0 or a bad option.
 */
inline retrieval expand(const table_index& index, const fk_graph& g, const matrix& q,
                        Eigen::Index row, const retrieval& r, std::size_t k,
                        const expansion_options& o = {}) {
    if (k == 0) throw error("k must be positive");
    detail::check(o);
    if (r.cut) k = std::min(k, *r.cut);
    const auto& cat = index.catalog();
    retrieval out;
    std::unordered_set<table_id> placed;
    const auto carry_trace = [&](table_id t) {  // the stage before's reasons for t
        for (const auto& e : r.trace)
            if (e.table == t) out.trace.push_back(e);
    };
    const auto n = std::min(k, r.tables.size());
    for (std::size_t i = 0; i < n && out.tables.size() < k; ++i) {
        const auto seed = r.tables[i];
        if (!placed.insert(seed.table).second) continue;
        out.tables.push_back(seed);
        carry_trace(seed.table);
        if (i >= o.seeds) continue;
        const float own = detail::table_cosine(index, q, row, seed.table);
        std::vector<std::pair<float, table_id>> kept;
        for (const auto c : g.neighbours(seed.table)) {
            const float cos = detail::table_cosine(index, q, row, c);
            if (!placed.contains(c) && cos > 0.0f && cos >= o.ratio * own)
                kept.emplace_back(cos, c);
        }
        std::ranges::sort(kept, [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        for (const auto& [cos, c] : kept) {
            if (out.tables.size() == k) break;
            placed.insert(c);
            out.tables.push_back({c, seed.score});
            out.trace.push_back(
                {c, "expand",
                 fmt::format("{} -> {}", cat.qualified_name(seed.table), cat.qualified_name(c)),
                 cos});
            carry_trace(c);  // a neighbour the stage before had found keeps its reasons
        }
    }
    for (const auto& c : r.columns)  // the columns of the tables still returned
        if (placed.contains(cat.column(c.column).table)) out.columns.push_back(c);
    if (r.cut) out.cut = out.tables.size();
    return out;
}

/**
 * @brief The expansion as a post-step over any retriever @p R: its results at k, then expand
 * with the catalog's declared-FK graph and the questions embedded by @p E (one call per batch).
 * Holds the index and the embedder by reference and @p R by value; `retrieve` is as thread-safe
 * as @p R and @p E.
 */
template <Retriever R, Embedder E>
class expansion_retriever {
  public:
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class... Rest>
    requires detail::any_temporary<A0, A1> expansion_retriever(A0&&, A1&&, Rest&&...)
    = delete;
    expansion_retriever(const table_index& index, const E& embedder, R retriever,
                        expansion_options options = {})
        : index_(index),
          embedder_(embedder),
          graph_(index.catalog()),
          retriever_(std::move(retriever)),
          options_(options) {
        detail::check(options);
    }

    /** @throws whatever @p R throws; embedding_error for a bad embedder answer. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        auto found = retriever_.retrieve(questions, o);
        if (questions.empty()) return found;
        const matrix q = embed_normalized(embedder_, questions, index_.dim());
        for (std::size_t i = 0; i < found.size(); ++i)
            found[i] =
                expand(index_, graph_, q, static_cast<Eigen::Index>(i), found[i], o.k, options_);
        return found;
    }

  private:
    const table_index& index_;
    const E& embedder_;
    fk_graph graph_;
    R retriever_;
    expansion_options options_;
};

}  // namespace tabret
