#pragma once
/// @file join/bridges.hpp
/// @brief The declared-foreign-key graph between tables and shortest bridge paths in it.

#include <algorithm>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tabret/catalog.hpp"

namespace tabret {

/**
 * @brief Tables as nodes, one undirected edge per pair of tables joined by a declared foreign
 * key (self-references dropped). Edges never cross databases (the catalog forbids such keys).
 * Immutable once built; const members are thread-safe.
 */
class fk_graph {
  public:
    explicit fk_graph(const catalog& cat) : neighbours_(cat.tables().size()) {
        for (const auto& fk : cat.foreign_keys()) {
            const auto a = cat.column(fk.from).table, b = cat.column(fk.to).table;
            if (a == b) continue;
            neighbours_[a].push_back(b);
            neighbours_[b].push_back(a);
        }
        for (auto& n : neighbours_) {
            std::sort(n.begin(), n.end());
            n.erase(std::unique(n.begin(), n.end()), n.end());
        }
    }

    /** @brief Tables joined to @p t by a declared key, ascending ids. */
    [[nodiscard]] const std::vector<table_id>& neighbours(table_id t) const {
        return neighbours_.at(t);
    }
    [[nodiscard]] std::size_t size() const noexcept { return neighbours_.size(); }

    /**
     * @brief The fewest-hop path from @p from to the nearest table of @p targets, as the tables
     * strictly between them (empty when @p from is adjacent to a target or in it). Ties go to
     * the lower table ids. nullopt when no target is reachable with at most @p max_between
     * tables in between.
     */
    [[nodiscard]] std::optional<std::vector<table_id>> bridge(
        table_id from, const std::unordered_set<table_id>& targets, std::size_t max_between) const {
        if (targets.contains(from)) return std::vector<table_id>{};
        std::unordered_map<table_id, table_id> parent{{from, from}};
        std::vector<table_id> frontier{from};
        for (std::size_t depth = 0; depth <= max_between && !frontier.empty(); ++depth) {
            std::vector<table_id> next;
            for (auto t : frontier)
                for (auto n : neighbours(t)) {
                    if (!parent.try_emplace(n, t).second) continue;
                    if (targets.contains(n)) return path_between(parent, from, n);
                    next.push_back(n);
                }
            frontier = std::move(next);
        }
        return std::nullopt;
    }

  private:
    static std::vector<table_id> path_between(const std::unordered_map<table_id, table_id>& parent,
                                              table_id from, table_id to) {
        std::vector<table_id> out;
        for (auto t = parent.at(to); t != from; t = parent.at(t)) out.push_back(t);
        std::reverse(out.begin(), out.end());
        return out;
    }

    std::vector<std::vector<table_id>> neighbours_;
};

}  // namespace tabret
