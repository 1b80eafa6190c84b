#pragma once
/// @file join/column_stats.hpp
/// @brief Value statistics of columns (uniqueness, sample values): what join compatibility uses
/// when a database's contents are known. Any source can fill them: a live database through
/// SQLAlchemy (Python `tabret.join.column_stats_from_database`) or recorded statistics (JAR's
/// files, `tabret.join.jar_column_stats`).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tabret/catalog.hpp"

namespace tabret {

/** @brief What is known about one column's values; every field may be unknown. */
struct column_stats {
    std::optional<double> uniqueness;  ///< distinct / rows in [0, 1].
    std::vector<std::string> values;   ///< Distinct values (or a sample), as text.
    friend bool operator==(const column_stats&, const column_stats&) = default;
};

/**
 * @brief Statistics for every column of a catalog, indexed by column_id. Columns nobody set
 * stay unknown. Building is not thread-safe; const members are.
 */
class column_stats_table {
  public:
    column_stats_table() = default;
    explicit column_stats_table(std::size_t columns) : stats_(columns) {}

    /** @brief Sets the statistics of @p c, growing the table as needed. */
    void set(column_id c, column_stats s) {
        if (c >= stats_.size()) stats_.resize(static_cast<std::size_t>(c) + 1);
        stats_[c] = std::move(s);
    }
    /** @brief The statistics of @p c (all unknown when never set). Thread-safe. */
    [[nodiscard]] const column_stats& at(column_id c) const {
        static const column_stats unknown{};
        return c < stats_.size() ? stats_[c] : unknown;
    }
    [[nodiscard]] std::size_t size() const noexcept { return stats_.size(); }
    /// Columns with a known uniqueness or at least one value.
    [[nodiscard]] std::size_t known() const noexcept {
        std::size_t n = 0;
        for (const auto& s : stats_) n += (s.uniqueness || !s.values.empty()) ? 1 : 0;
        return n;
    }

  private:
    std::vector<column_stats> stats_;
};

}  // namespace tabret
