#pragma once
/// @file join/compatibility.hpp
/// @brief Join compatibility of two columns (methods.md, greedy join-aware retrieval):
/// for columns of the same type family, u · (0.5·J + 0.5·(0.5·sem + 0.5·exact)).
///
/// - u: the larger uniqueness (distinct / rows) of the two columns; a pair with u = 0 cannot
///   join. Unknown uniqueness: 1 for a column that is its table's whole primary key, else
///   compatibility_options::default_uniqueness.
/// - J: value overlap. The reference computes |A∩B| / |B| for one ordering of the pair; tabret
///   uses |A∩B| / min(|A|, |B|) (the larger of both orderings) so that ω is symmetric.
///   Without values for both columns, J is replaced by the name signal 0.5·sem + 0.5·exact
///   ("name and embedding signals stand in for values").
/// - sem: cosine of the two column texts' embeddings; exact: word-overlap coefficient
///   |A∩B| / min(|A|, |B|) of the two texts' words.
/// Type families: number, text, time, boolean, other; an empty type matches any family.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/join/column_stats.hpp"

namespace tabret {

/** @brief Coarse type classes: two columns can join only within one. */
enum class type_family { unknown, number, text, time, boolean, other };

/** @brief The family of a declared SQL type ("varchar(20)" → text, "INTEGER" → number). */
inline type_family family_of(std::string_view type) {
    const auto t = detail::fold(type);
    auto has = [&](std::string_view w) { return t.find(w) != std::string::npos; };
    if (t.empty()) return type_family::unknown;
    if (has("bool") || t == "bit") return type_family::boolean;
    if (has("date") || has("time") || has("year")) return type_family::time;
    if (has("int") || has("num") || has("real") || has("float") || has("double") || has("dec") ||
        has("money"))
        return type_family::number;
    if (has("char") || has("text") || has("string") || has("clob") || has("json"))
        return type_family::text;
    return type_family::other;
}

/** @brief Whether two families may join (equal, or either unknown). */
inline bool same_family(type_family a, type_family b) noexcept {
    return a == b || a == type_family::unknown || b == type_family::unknown;
}

/** @brief |A∩B| / min(|A|, |B|) over distinct items; nullopt when either side is empty. */
inline std::optional<double> overlap_coefficient(const std::vector<std::string>& a,
                                                 const std::vector<std::string>& b) {
    const std::unordered_set<std::string> sa(a.begin(), a.end());
    const std::unordered_set<std::string> sb(b.begin(), b.end());
    if (sa.empty() || sb.empty()) return std::nullopt;
    const auto& [small, large] = sa.size() <= sb.size() ? std::tie(sa, sb) : std::tie(sb, sa);
    std::size_t common = 0;
    for (const auto& x : small) common += large.contains(x) ? 1 : 0;
    return static_cast<double>(common) / static_cast<double>(small.size());
}

struct compatibility_options {
    double default_uniqueness = 0.5;  ///< u of a column with unknown uniqueness (not a sole PK).
    float min_weight = 0.0f;          ///< Table pairs with ω <= this get no edge.
};

/** @brief The signals of one column pair. */
struct column_pair_signals {
    double uniqueness = 0.0;      ///< u = max of the two uniquenesses.
    std::optional<double> value;  ///< J; nullopt without values.
    double semantic = 0.0;        ///< sem.
    double exact = 0.0;           ///< exact.
};

/** @brief u · (0.5·J + 0.5·(0.5·sem + 0.5·exact)), J standing in by the name signal. */
inline double column_pair_score(const column_pair_signals& s) {
    const double names = 0.5 * s.semantic + 0.5 * s.exact;
    const double value = s.value.value_or(names);
    return std::clamp(s.uniqueness * (0.5 * value + 0.5 * names), 0.0, 1.0);
}

/** @brief A column's uniqueness: its statistics, else 1 for a sole primary key, else default. */
inline double uniqueness_of(const catalog& cat, const column_stats_table& stats, column_id c,
                            const compatibility_options& o) {
    if (const auto& u = stats.at(c).uniqueness) return std::clamp(*u, 0.0, 1.0);
    const auto& pk = cat.table(cat.column(c).table).primary_key;
    return pk.size() == 1 && pk.front() == c ? 1.0 : o.default_uniqueness;
}

}  // namespace tabret
