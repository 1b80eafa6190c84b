#pragma once
/// @file retrieval/post/join_closure.hpp
/// @brief A post-step for any retriever: add the bridge (junction) tables on shortest
/// declared-foreign-key paths between the selected tables of each database, within a budget.

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/borrow.hpp"
#include "tabret/catalog.hpp"
#include "tabret/join/bridges.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

/** @brief Where bridge tables go. */
enum class closure_mode {
    append,    ///< After the k selected tables: up to k + budget tables come back.
    within_k,  ///< Keep k tables: the largest prefix whose closure fits in k, then the rest.
};

struct closure_options {
    std::size_t budget = 2;       ///< Bridge tables added per question, at most.
    std::size_t max_between = 2;  ///< Bridge tables on one path, at most.
    closure_mode mode = closure_mode::append;
};

namespace detail {

/// Bridges for the ranked @p selected tables (Takahashi–Matsuyama per database: each table,
/// in rank order, is linked to the nearest table already kept of its database). Returns the
/// bridges in insertion order, each with the index (into @p selected) of the table it links.
inline std::vector<std::pair<table_id, std::size_t>> find_bridges(
    const catalog& cat, const fk_graph& g, std::span<const table_id> selected,
    const closure_options& o) {
    std::vector<std::pair<table_id, std::size_t>> out;
    std::unordered_set<table_id> present(selected.begin(), selected.end());
    std::unordered_map<database_id, std::unordered_set<table_id>> kept;
    for (std::size_t i = 0; i < selected.size(); ++i) {
        const auto t = selected[i];
        auto& tree = kept[cat.table(t).database];
        if (!tree.empty() && !tree.contains(t) && out.size() < o.budget) {
            const auto path = g.bridge(t, tree, o.max_between);
            std::size_t cost = 0;
            if (path)
                for (auto b : *path) cost += present.contains(b) ? 0 : 1;
            if (path && out.size() + cost <= o.budget)
                for (auto b : *path) {
                    tree.insert(b);
                    if (present.insert(b).second) out.emplace_back(b, i);
                }
        }
        tree.insert(t);
    }
    return out;
}

/// The first @p m tables of @p r plus their bridges, bridges marked in the trace.
inline retrieval close_prefix(const catalog& cat, const fk_graph& g, const retrieval& r,
                              std::size_t m, const closure_options& o) {
    retrieval out;
    out.columns = r.columns;
    std::vector<table_id> selected;
    for (std::size_t i = 0; i < m && i < r.tables.size(); ++i) {
        out.tables.push_back(r.tables[i]);
        selected.push_back(r.tables[i].table);
    }
    const std::unordered_set<table_id> kept(selected.begin(), selected.end());
    for (const auto& e : r.trace)
        if (kept.contains(e.table)) out.trace.push_back(e);
    for (const auto& [b, i] : find_bridges(cat, g, selected, o)) {
        const auto via = out.tables[i];  // a copy: push_back below may reallocate
        out.tables.push_back({b, via.score});
        out.trace.push_back(
            {b, "bridge",
             fmt::format("{} -> {}", cat.qualified_name(via.table), cat.qualified_name(b)),
             via.score});
    }
    return out;
}

}  // namespace detail

/**
 * @brief Adds bridge tables to the top @p k tables of @p r (its cut, when set, bounds k).
 * Bridges lie on shortest declared-FK paths between selected tables of the same database, so a
 * bridge never comes from another database; each gets a trace entry with step "bridge", the
 * path's endpoints as query and the score of the selected table it links. Thread-safe.
 * @throws error for k == 0.
 */
inline retrieval join_closure(const catalog& cat, const fk_graph& g, const retrieval& r,
                              std::size_t k, const closure_options& o = {}) {
    if (k == 0) throw error("k must be positive");
    if (r.cut) k = std::min(k, *r.cut);
    k = std::min(k, r.tables.size());
    if (o.mode == closure_mode::append) {
        auto out = detail::close_prefix(cat, g, r, k, o);
        if (r.cut) out.cut = out.tables.size();
        return out;
    }
    for (std::size_t m = k; m > 0; --m) {
        auto out = detail::close_prefix(cat, g, r, m, o);
        if (out.tables.size() > k) continue;
        std::unordered_set<table_id> have;
        for (const auto& t : out.tables) have.insert(t.table);
        for (std::size_t i = m; i < r.tables.size() && out.tables.size() < k; ++i)
            if (have.insert(r.tables[i].table).second) {
                out.tables.push_back(r.tables[i]);
                for (const auto& e : r.trace)
                    if (e.table == r.tables[i].table) out.trace.push_back(e);
            }
        if (r.cut) out.cut = out.tables.size();
        return out;
    }
    return r;
}

/** @brief join_closure for each retrieval of a batch. Thread-safe. */
inline std::vector<retrieval> join_closure(const catalog& cat, const fk_graph& g,
                                           std::span<const retrieval> rs, std::size_t k,
                                           const closure_options& o = {}) {
    std::vector<retrieval> out;
    out.reserve(rs.size());
    for (const auto& r : rs) out.push_back(join_closure(cat, g, r, k, o));
    return out;
}

/**
 * @brief The join closure as a post-step over any retriever @p R: its results, then
 * join_closure with the catalog's declared-FK graph. Holds the catalog by reference and @p R by
 * value; `retrieve` is as thread-safe as @p R.
 */
template <Retriever R>
class join_closure_retriever {
  public:
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class... Rest>
    requires detail::any_temporary<A0> join_closure_retriever(A0&&, Rest&&...)
    = delete;
    join_closure_retriever(const catalog& cat, R retriever, closure_options options = {})
        : catalog_(cat), graph_(cat), retriever_(std::move(retriever)), options_(options) {}

    /** @throws whatever @p R throws. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        return join_closure(catalog_, graph_, retriever_.retrieve(questions, o), o.k, options_);
    }

  private:
    const catalog& catalog_;
    fk_graph graph_;
    R retriever_;
    closure_options options_;
};

}  // namespace tabret
