#pragma once
/// @file retrieval/first_stage/database_router.hpp
/// @brief Database routing as a stage: rank the databases by the evidence of their tables and
/// columns in a first stage's lists, then rank the tables of the best few first (DBCopilot's
/// route-then-select, with rank votes instead of a generative router).

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tabret/borrow.hpp"
#include "tabret/catalog.hpp"
#include "tabret/error.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

/// Defaults chosen on SpiderUnion and BirdUnion with MiniLM (docs/results.md: routing).
struct routing_options {
    std::size_t databases = 1;      ///< m: databases whose tables are ranked first.
    std::size_t depth = 20;         ///< Tables asked of the first stage (the table votes).
    std::size_t column_depth = 20;  ///< Columns asked of it (the column votes; 0: none).
    float rank_constant = 10.0f;    ///< c: the hit at rank r (from 1) votes 1 / (c + r).
    std::size_t per_database = 3;   ///< A database's best votes counted (a big one gets no
                                    ///< more say for having many tables).
    bool others = true;  ///< Keep the other databases' tables after the routed ones (false: drop
                         ///< them, so a selector sees the routed databases only).
};

namespace detail {

/// One database's routing evidence: the sum of its best `per_database` votes; `first` is the
/// rank of its best table or column hit.
struct database_vote {
    database_id database = 0;
    float votes = 0.0f;
    std::size_t first = 0;
    std::vector<float> all = {};  ///< Every vote, before the cap.
};

/// The databases voted for in @p r, most votes first (ties: the earlier hit first).
inline std::vector<database_vote> database_votes(const catalog& cat, const retrieval& r,
                                                 const routing_options& o) {
    std::vector<database_vote> out;
    const auto vote = [&](database_id db, std::size_t rank) {
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const database_vote& v) { return v.database == db; });
        if (it == out.end()) it = out.insert(out.end(), {db, 0.0f, rank});
        it->first = std::min(it->first, rank);
        it->all.push_back(1.0f / (o.rank_constant + static_cast<float>(rank + 1)));
    };
    for (std::size_t i = 0; i < std::min(r.tables.size(), o.depth); ++i)
        vote(cat.table(r.tables[i].table).database, i);
    for (std::size_t i = 0; i < std::min(r.columns.size(), o.column_depth); ++i)
        vote(cat.table(cat.column(r.columns[i].column).table).database, i);
    for (auto& v : out) {
        std::sort(v.all.begin(), v.all.end(), std::greater<>());
        const auto counted = std::min(v.all.size(), o.per_database);
        for (std::size_t i = 0; i < counted; ++i) v.votes += v.all[i];
    }
    std::stable_sort(out.begin(), out.end(), [](const database_vote& a, const database_vote& b) {
        return a.votes > b.votes || (a.votes == b.votes && a.first < b.first);
    });
    return out;
}

/// Stably moves the items whose database is routed to the front (drops the others unless
/// @p others), then keeps @p k.
template <class T, class DatabaseOf>
std::vector<T> routed_first(std::vector<T> items, std::size_t k, DatabaseOf database_of,
                            std::span<const database_vote> routed, bool others) {
    const auto is_routed = [&](const T& x) {
        const auto db = database_of(x);
        return std::any_of(routed.begin(), routed.end(),
                           [&](const database_vote& v) { return v.database == db; });
    };
    const auto end = std::stable_partition(items.begin(), items.end(), is_routed);
    if (!others) items.erase(end, items.end());
    if (items.size() > k) items.resize(k);
    return items;
}

}  // namespace detail

/**
 * @brief Wraps a first stage @p R: asks it for `depth` tables and `column_depth` columns, ranks
 * the databases by their hits' rank votes (each one's best `per_database`), and returns the
 * first stage's tables of the best
 * `databases` databases first (in its order), then (unless `others` is false) the others. Trace: a
 * "route" entry per routed table (query: the database, score: its votes), then the first stage's
 * entries. Holds the catalog by reference and @p R by value; `retrieve` is as thread-safe as @p R.
 */
template <Retriever R>
class database_router {
  public:
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class... Rest>
    requires detail::any_temporary<A0> database_router(A0&&, Rest&&...)
    = delete;
    /** @throws error when databases, depth or per_database is 0. */
    database_router(const catalog& cat, R first, routing_options options = {})
        : catalog_(cat), first_(std::move(first)), options_(options) {
        if (options_.databases == 0) throw error("databases must be positive");
        if (options_.depth == 0) throw error("depth must be positive");
        if (options_.per_database == 0) throw error("per_database must be positive");
    }

    /** @throws error for k == 0; whatever the first stage throws. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        if (o.k == 0) throw error("k must be positive");
        const retrieve_options inner{std::max(o.k, options_.depth),
                                     std::max(o.k_columns, options_.column_depth)};
        auto out = first_.retrieve(questions, inner);
        for (auto& r : out) r = route(std::move(r), o);
        return out;
    }

  private:
    retrieval route(retrieval r, const retrieve_options& o) const {
        const auto votes = detail::database_votes(catalog_, r, options_);
        const auto routed = std::span(votes).first(std::min(votes.size(), options_.databases));
        const auto db_of_table = [&](const scored_table& t) {
            return catalog_.table(t.table).database;
        };
        const auto db_of_column = [&](const scored_column& c) {
            return catalog_.table(catalog_.column(c.column).table).database;
        };
        retrieval out;
        out.tables =
            detail::routed_first(std::move(r.tables), o.k, db_of_table, routed, options_.others);
        out.columns = detail::routed_first(std::move(r.columns), o.k_columns, db_of_column, routed,
                                           options_.others);
        for (const auto& t : out.tables)
            for (const auto& v : routed)
                if (v.database == db_of_table(t))
                    out.trace.push_back(
                        {t.table, "route", catalog_.database(v.database).name, v.votes});
        for (auto& e : r.trace)
            if (std::any_of(out.tables.begin(), out.tables.end(),
                            [&](const scored_table& t) { return t.table == e.table; }))
                out.trace.push_back(std::move(e));
        return out;
    }

    const catalog& catalog_;
    R first_;
    routing_options options_;
};

}  // namespace tabret
