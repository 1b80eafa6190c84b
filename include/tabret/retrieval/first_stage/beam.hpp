#pragma once
/// @file retrieval/first_stage/beam.hpp
/// @brief Beam-search bookkeeping for multi-hop retrieval (MURRE): paths of tables, their
/// scores, candidate extensions, pruning to the beam width and table scores as the max over
/// the paths that contain a table.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tabret/catalog.hpp"

namespace tabret {

/** @brief How a cosine becomes a path factor. */
enum class path_scoring {
    /// The paper: P(t|q) = (cos + 1) / 2; beams are selected and tables scored by Σ log P.
    paper,
    /// MURRE's reference code: beams are selected by Σ cos (raw cosines), tables are scored by
    /// Σ log((cos + 2) / 2).
    reference,
};

/** @brief A path's two scores; `final_log` is the log of the score a table inherits. */
struct path_score {
    double select = 0.0;     ///< Ranks candidate paths for the beam.
    double final_log = 0.0;  ///< log of the path's score for the final table ranking.
    friend bool operator==(const path_score&, const path_score&) = default;
};

/// log P(t|q) with P = (cos + 1) / 2, clamped away from log 0 (cos = −1). Thread-safe.
inline double log_probability(float cos) {
    constexpr double tiny = 1e-12;
    return std::log(std::max(tiny, (static_cast<double>(cos) + 1.0) / 2.0));
}

/** @brief The score of @p parent extended by a table found with cosine @p cos. Thread-safe. */
inline path_score extend_score(const path_score& parent, float cos, path_scoring scoring) {
    if (scoring == path_scoring::paper) {
        const double lp = log_probability(cos);
        return {parent.select + lp, parent.final_log + lp};
    }
    return {parent.select + static_cast<double>(cos),
            parent.final_log + std::log((static_cast<double>(cos) + 2.0) / 2.0)};
}

/** @brief A beam: the tables chosen so far (hop order), the query that found each, its score. */
struct beam_path {
    std::vector<table_id> tables;
    std::vector<std::string> queries;  ///< queries[j] retrieved tables[j].
    path_score score;
    bool stopped = false;  ///< The rewriter said the path answers the question.
    friend bool operator==(const beam_path&, const beam_path&) = default;
};

/**
 * @brief One candidate for the next beam: beam @p parent extended by @p table (found by @p query
 * with @p score), or, with no table, the parent carried over unchanged (a stopped beam).
 */
struct beam_candidate {
    std::size_t parent = 0;
    std::optional<table_id> table;
    std::string_view query;  ///< Must outlive the candidate (it is copied into the path).
    path_score score;
};

/** @brief Candidate @p c of @p beams as a path. */
inline beam_path materialize(const std::vector<beam_path>& beams, const beam_candidate& c) {
    beam_path p = beams[c.parent];
    if (!c.table) return p;
    p.tables.push_back(*c.table);
    p.queries.emplace_back(c.query);
    p.score = c.score;
    p.stopped = false;
    return p;
}

namespace detail {

/// The path's tables as a set: [a, b] and [b, a] are one path.
inline std::vector<table_id> table_set(const std::vector<beam_path>& beams,
                                       const beam_candidate& c) {
    std::vector<table_id> s = beams[c.parent].tables;
    if (c.table) s.push_back(*c.table);
    std::sort(s.begin(), s.end());
    return s;
}

}  // namespace detail

/**
 * @brief The best @p width candidates as the next beams, best first.
 *
 * Order: select score descending, then final score descending, then candidate order (stable).
 * Candidates with the same set of tables are one path: only the best-ranked is kept. Thread-safe.
 */
inline std::vector<beam_path> prune_beams(const std::vector<beam_path>& beams,
                                          const std::vector<beam_candidate>& candidates,
                                          std::size_t width) {
    // The stable order, with the candidate's index as the last key; only as many candidates
    // are sorted as the first `width` distinct paths need (a hop has every table as a
    // candidate of every beam).
    const auto before = [&](std::size_t a, std::size_t b) {
        const auto& x = candidates[a].score;
        const auto& y = candidates[b].score;
        if (x.select != y.select) return x.select > y.select;
        if (x.final_log != y.final_log) return x.final_log > y.final_log;
        return a < b;
    };
    std::vector<std::size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::vector<beam_path> out;
    std::set<std::vector<table_id>> seen;
    std::size_t sorted = 0;
    for (std::size_t i = 0; i < order.size() && out.size() < width; ++i) {
        if (i == sorted) {
            sorted = std::min(order.size(), std::max(2 * sorted, 4 * width));
            std::partial_sort(order.begin() + static_cast<std::ptrdiff_t>(i),
                              order.begin() + static_cast<std::ptrdiff_t>(sorted), order.end(),
                              before);
        }
        const auto& c = candidates[order[i]];
        if (seen.insert(detail::table_set(beams, c)).second) out.push_back(materialize(beams, c));
    }
    return out;
}

/**
 * @brief Table scores as the max over paths: every candidate path raises the score of each of
 * its tables to its own final score. Not thread-safe (one per question).
 */
class table_scores {
  public:
    explicit table_scores(std::size_t tables)
        : best_(tables, -std::numeric_limits<double>::infinity()) {}

    /** @brief Raises the scores of the tables of candidate @p c of @p beams. */
    void add(const std::vector<beam_path>& beams, const beam_candidate& c) {
        raise(c.score.final_log, beams[c.parent].tables);
        if (c.table) raise_one(*c.table, c.score.final_log);
    }

    /** @brief log score of @p t (−∞ if no path contains it). */
    [[nodiscard]] double log_score(table_id t) const { return best_.at(t); }

    /** @brief The best min(k, scored) tables with their scores (exp of the log), best first;
     * ties go to the smaller id. */
    [[nodiscard]] std::vector<std::pair<table_id, double>> top(std::size_t k) const {
        std::vector<std::pair<table_id, double>> out;
        for (table_id t = 0; t < best_.size(); ++t)
            if (std::isfinite(best_[t])) out.emplace_back(t, best_[t]);
        const auto better = [](const auto& a, const auto& b) {
            return a.second > b.second || (a.second == b.second && a.first < b.first);
        };
        const auto n = std::min(k, out.size());
        std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), out.end(),
                          better);
        out.resize(n);
        for (auto& [t, s] : out) s = std::exp(s);
        return out;
    }

  private:
    void raise(double s, const std::vector<table_id>& tables) {
        for (auto t : tables) raise_one(t, s);
    }
    void raise_one(table_id t, double s) { best_.at(t) = std::max(best_.at(t), s); }

    std::vector<double> best_;
};

}  // namespace tabret
