#pragma once
/// @file join/key_discovery.hpp
/// @brief Foreign keys inferred from column names (and values, when known) for catalogs that
/// declare none: a sparse key graph instead of a compatibility weight for nearly every pair.
///
/// Rules, within one database only (tables of different databases never join), for a
/// referencing column c of table A and a key column k of table B, A ≠ B:
/// - Names are compared normalised: the words of the identifier (text/tokenize.hpp's
///   schema_tokens: snake_case, CamelCase, digit runs) joined without separator, so
///   `customer_id`, `CustomerID` and `customerid` are one name. A table's name is its last
///   dotted part (`db.schema.orders` → `orders`), with the last word also taken in the singular
///   (`customers` ↔ `customer`, `categories` ↔ `category`, `people` ↔ `person`).
/// - Key candidates of a table (single columns only): its declared primary key when it is one
///   column, and its columns declared UNIQUE, if the table declares either (and
///   key_discovery_options::use_primary_keys); otherwise the columns named `id`,
///   `<table>_id`, `<table>id`, `<table>_key`, `<table>_code` (or `<table>_…_id`, such as
///   `player_api_id` of `player`), the first column when its name looks like an identifier and
///   the second column's does not (key_discovery_options::first_column_keys: `apt_id` first in
///   `apartments`), and the columns whose statistics say unique (uniqueness ≥
///   key_discovery_options::min_uniqueness). A key whose name begins with its table's name
///   (`customer_id` of `customers`) is its table's *own* key.
/// - A column named just `id` never references anything, and `id` → `id` is never linked.
/// - same_name: c's name equals k's. Among the columns sharing a name, the referenced one is
///   the only own key with that name (orientation: `customer_id` belongs to `customers`),
///   else the only key candidate with that name; with several and no single owner the name is
///   ambiguous and links nothing. Every other column of that name references it, a key of its
///   own table included (a 1:1 extension such as `customer_details.customer_id`).
/// - table_name_id: c's name is B's name followed by the name of a key candidate of B
///   (`customer_id`, `customerid` → `customers.id`), or of a column of B named `code` or
///   `key` (`set_code` → `sets.code`).
///   The table name as written wins over its singular when both match tables.
/// - role_prefixed: the two rules above after dropping a role prefix and/or a copy number:
///   c's name with trailing digit words removed, then each suffix of at least two words,
///   longest first (`recorded_by_staff_id` → `staff.staff_id`, `club_id_2` → `club.club_id`,
///   `hair_colour_id` → `colour.id`). Only own keys are reached through same_name here.
/// - Rules are tried in this order for each c; the first that yields an edge decides. An own
///   key of its table is referenced, never referencing, under table_name_id and role_prefixed.
/// - The two columns' type families must be compatible (compatibility.hpp's same_family).
/// - With statistics holding values for both columns, the inclusion |values(c) ∩ values(k)| /
///   |values(c)| raises the confidence to 1 − (1 − rule confidence)·(1 − inclusion); an edge
///   whose inclusion is below min_inclusion is vetoed. min_inclusion is 0 (no veto) by default:
///   inclusion proves a key only over complete value sets, and sampled values (JAR's first
///   rows, column_stats_from_database's max_values) veto true keys — with JAR's samples and
///   min_inclusion 0.9, BIRD dev's recall fell from 0.59 to 0.31 at the same precision.
///   Without values the confidence is the rule's: same_name to an own key 0.9, to another key
///   0.7; table_name_id 0.85; role_prefixed 0.6.
/// Cost: O(columns · words) per database through hash maps on normalised names (every
/// column's words once, each suffix of its name looked up once).

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/catalog.hpp"
#include "tabret/error.hpp"
#include "tabret/join/column_stats.hpp"
#include "tabret/join/compatibility.hpp"
#include "tabret/text/tokenize.hpp"

namespace tabret {

/** @brief Which naming rule inferred a key (see the file's documentation). */
enum class key_rule {
    same_name,      ///< `orders.customer_id` → `customers.customer_id`.
    table_name_id,  ///< `orders.customer_id` → `customers.id`.
    role_prefixed,  ///< `orders.billing_customer_id` → `customers.customer_id`; `club_id_2`.
};

/** @brief The rule's name as Python and reports spell it ("same_name", …). */
inline std::string_view key_rule_name(key_rule r) noexcept {
    switch (r) {
        case key_rule::same_name:
            return "same_name";
        case key_rule::table_name_id:
            return "table_name_id";
        case key_rule::role_prefixed:
            return "role_prefixed";
    }
    return "unknown";
}

/** @brief One inferred foreign key: referencing column → referenced (key) column. */
struct inferred_key {
    column_id from = 0;                   ///< The referencing column (table A).
    column_id to = 0;                     ///< The referenced key column (table B ≠ A).
    key_rule rule = key_rule::same_name;  ///< The rule that found it.
    float confidence = 0.0f;              ///< In (0, 1]; the rule's, raised by value inclusion.
    friend bool operator==(const inferred_key&, const inferred_key&) = default;
};

struct key_discovery_options {
    /// Declared primary keys (and UNIQUE columns) are a table's key candidates when it has
    /// any. false: every table is treated as declaring none (names and statistics decide).
    bool use_primary_keys = true;
    /// With statistics, a column whose uniqueness is at least this is a key candidate (of a
    /// table whose keys are not declared).
    double min_uniqueness = 1.0;
    /// With values for both columns, the least fraction of the referencing column's distinct
    /// values found among the key's; below it the edge is vetoed. 0: no veto (values only
    /// raise the confidence); raise it only for complete value sets (see above).
    double min_inclusion = 0.0;
    /// Without declared keys, a table's first column is a key candidate when its name looks
    /// like an identifier (last word `id`, `key`, `code`, `no`, `number`, or ending in `id`)
    /// and the second column's does not (two leading identifiers: a link table).
    bool first_column_keys = true;
    /// Apply the role_prefixed rule (role prefixes and copy numbers).
    bool role_prefixed = true;
};

namespace detail {

/// The singular of a lower-case English word: people → person, children → child, else stem().
inline std::string singular_word(std::string_view w) {
    if (w == "people") return "person";
    if (w == "children") return "child";
    return stem(w);
}

/// Words [from, end) joined without separator: a normalised name.
inline std::string joined_words(std::span<const std::string> words, std::size_t from = 0) {
    std::string out;
    for (std::size_t i = from; i < words.size(); ++i) out += words[i];
    return out;
}

/// A table's normalised names: as written, then with the last word singular (if different).
inline std::vector<std::string> table_name_keys(std::string_view name) {
    if (const auto dot = name.rfind('.'); dot != std::string_view::npos && dot + 1 < name.size())
        name = name.substr(dot + 1);
    auto words = schema_tokens(name);
    std::vector<std::string> out;
    if (words.empty()) return out;
    out.push_back(joined_words(words));
    words.back() = singular_word(words.back());
    if (auto s = joined_words(words); s != out.front()) out.push_back(std::move(s));
    return out;
}

/// What key discovery knows of one column.
struct key_column {
    std::vector<std::string> words;  ///< schema_tokens of its name.
    std::string name;                ///< The words joined: its normalised name.
    type_family family = type_family::unknown;
    bool key = false;  ///< A single-column key candidate of its table.
    bool own = false;  ///< A key whose name begins with its table's name.
};

/// A target of a normalised name: a key column and how well its table's name matched.
struct key_target {
    column_id column = 0;
    std::size_t priority = 0;  ///< 0: the table name as written; 1: its singular.
};

/// |distinct(c) ∩ distinct(k)| / |distinct(c)|.
inline double value_inclusion(const std::vector<std::string>& c,
                              const std::unordered_set<std::string>& k) {
    const std::unordered_set<std::string> from(c.begin(), c.end());
    std::size_t found = 0;
    for (const auto& v : from) found += k.contains(v) ? 1 : 0;
    return static_cast<double>(found) / static_cast<double>(from.size());
}

/// The inference over one database (infer_foreign_keys), appending to @p out.
class key_inference {
  public:
    key_inference(const catalog& cat, const column_stats_table* stats,
                  const key_discovery_options& o)
        : cat_(cat), stats_(stats), o_(o) {}

    void run(const struct database& db, std::vector<inferred_key>& out) {
        describe(db);
        resolve_names(db);
        index_table_names(db);
        for (auto t : db.tables)
            for (auto c : cat_.table(t).columns) link(c, out);
    }

  private:
    bool names_table(const std::string& column_name, table_id t) const {
        for (const auto& v : table_names_.at(t))
            if (column_name.starts_with(v)) return true;
        return false;
    }

    /// A name whose last word is `id`, `key` or `code`.
    static bool key_word(const std::vector<std::string>& words) {
        return !words.empty() &&
               (words.back() == "id" || words.back() == "key" || words.back() == "code");
    }

    /// A name that looks like an identifier: its last word is `id`, `key`, `code`, `no` or
    /// `number`, or it ends in `id` (`msid`, `StuID`).
    static bool id_like(const key_column& k) {
        return key_word(k.words) || k.name.ends_with("id") ||
               (!k.words.empty() && (k.words.back() == "no" || k.words.back() == "number"));
    }

    key_column describe_name(column_id c) const {
        key_column k;
        k.words = schema_tokens(cat_.column(c).name);
        k.name = joined_words(k.words);
        return k;
    }

    /// Words, names, families and key candidates of the database's columns.
    void describe(const struct database& db) {
        columns_.clear();
        table_names_.clear();
        for (auto t : db.tables) {
            const auto& tb = cat_.table(t);
            const auto& names = table_names_[t] = table_name_keys(tb.name);
            std::vector<column_id> declared;
            if (o_.use_primary_keys) {
                const auto& pk = tb.primary_key;
                if (pk.size() == 1) declared.push_back(pk.front());
                for (auto c : tb.columns)
                    if (cat_.column(c).constraints.unique && !(pk.size() == 1 && pk.front() == c))
                        declared.push_back(c);
            }
            const bool has_declared =
                o_.use_primary_keys && (!tb.primary_key.empty() || !declared.empty());
            for (auto c : tb.columns) {
                const auto& col = cat_.column(c);
                key_column k;
                k.words = schema_tokens(col.name);
                k.name = joined_words(k.words);
                k.family = family_of(col.type);
                if (has_declared) {
                    k.key = std::find(declared.begin(), declared.end(), c) != declared.end();
                } else {
                    k.key = k.name == "id" || (key_word(k.words) && names_table(k.name, t));
                    for (const auto& v : names)
                        for (const char* suffix : {"id", "key", "code"})
                            k.key = k.key || k.name == v + suffix;
                    if (o_.first_column_keys && c == tb.columns.front() && id_like(k) &&
                        (tb.columns.size() < 2 || !id_like(describe_name(tb.columns[1]))))
                        k.key = true;
                    if (stats_ != nullptr)
                        if (const auto& u = stats_->at(c).uniqueness; u && *u >= o_.min_uniqueness)
                            k.key = true;
                }
                k.own = k.key && k.name != "id" && names_table(k.name, t);
                columns_.emplace(c, std::move(k));
            }
        }
    }

    /// same_name: the referenced column of each shared normalised name, where there is one.
    void resolve_names(const struct database& db) {
        std::unordered_map<std::string, std::vector<column_id>> keys_by_name;
        for (auto t : db.tables)
            for (auto c : cat_.table(t).columns)
                if (const auto& k = columns_.at(c); k.key && !k.name.empty() && k.name != "id")
                    keys_by_name[k.name].push_back(c);
        resolved_.clear();
        for (auto& [name, keys] : keys_by_name) {
            std::size_t owners = 0;
            column_id owner = 0;
            for (auto c : keys)
                if (columns_.at(c).own) {
                    ++owners;
                    owner = c;
                }
            if (owners == 1)
                resolved_.emplace(name, owner);
            else if (owners == 0 && keys.size() == 1)
                resolved_.emplace(name, keys.front());
        }
    }

    /// table_name_id: `<table name><key name>` → the key, for every key candidate of a table.
    void index_table_names(const struct database& db) {
        composite_.clear();
        for (auto t : db.tables) {
            const auto& names = table_names_.at(t);
            for (auto c : cat_.table(t).columns) {
                const auto& k = columns_.at(c);
                if (!k.key && k.name != "code" && k.name != "key") continue;
                for (std::size_t p = 0; p < names.size(); ++p)
                    composite_[names[p] + k.name].push_back({c, p});
            }
        }
    }

    /// Emits c → k under @p rule unless the types or the values veto it; true if emitted.
    bool emit(column_id c, column_id k, key_rule rule, float confidence,
              std::vector<inferred_key>& out) {
        if (cat_.column(c).table == cat_.column(k).table) return false;
        if (!same_family(columns_.at(c).family, columns_.at(k).family)) return false;
        if (stats_ != nullptr) {
            const auto& from = stats_->at(c).values;
            const auto& to = stats_->at(k).values;
            if (!from.empty() && !to.empty()) {
                auto it = key_values_.find(k);
                if (it == key_values_.end())
                    it = key_values_
                             .emplace(k, std::unordered_set<std::string>(to.begin(), to.end()))
                             .first;
                const double inclusion = value_inclusion(from, it->second);
                if (inclusion < o_.min_inclusion) return false;
                confidence = static_cast<float>(1.0 - (1.0 - confidence) * (1.0 - inclusion));
            }
        }
        out.push_back({c, k, rule, confidence});
        return true;
    }

    /// same_name through the resolved names (@p own_only: only to an own key).
    bool by_name(column_id c, const std::string& name, key_rule rule, bool own_only, float own,
                 float other, std::vector<inferred_key>& out) {
        const auto it = resolved_.find(name);
        if (it == resolved_.end()) return false;
        const bool is_own = columns_.at(it->second).own;
        if (own_only && !is_own) return false;
        return emit(c, it->second, rule, is_own ? own : other, out);
    }

    /// table_name_id through the composite names: the best-priority matches, one table only.
    bool by_table_name(column_id c, const std::string& name, key_rule rule, float confidence,
                       std::vector<inferred_key>& out) {
        const auto it = composite_.find(name);
        if (it == composite_.end()) return false;
        const auto a = cat_.column(c).table;
        std::size_t best = static_cast<std::size_t>(-1);
        for (const auto& t : it->second)
            if (cat_.column(t.column).table != a) best = std::min(best, t.priority);
        std::vector<column_id> hits;
        for (const auto& t : it->second)
            if (cat_.column(t.column).table != a && t.priority == best) hits.push_back(t.column);
        if (hits.empty()) return false;
        const auto b = cat_.column(hits.front()).table;
        for (auto h : hits)
            if (cat_.column(h).table != b) return false;  // ambiguous: several tables
        bool any = false;
        for (auto h : hits) any = emit(c, h, rule, confidence, out) || any;
        return any;
    }

    void link(column_id c, std::vector<inferred_key>& out) {
        const auto& k = columns_.at(c);
        if (k.name.empty() || k.name == "id") return;
        if (by_name(c, k.name, key_rule::same_name, false, 0.9f, 0.7f, out)) return;
        if (k.own) return;
        if (by_table_name(c, k.name, key_rule::table_name_id, 0.85f, out)) return;
        if (!o_.role_prefixed) return;
        auto words = std::span<const std::string>(k.words);
        while (!words.empty() && std::isdigit(static_cast<unsigned char>(words.back().front())))
            words = words.first(words.size() - 1);
        if (words.size() < 2) return;
        for (std::size_t from = words.size() < k.words.size() ? 0 : 1; from + 2 <= words.size();
             ++from) {
            const auto name = joined_words(words, from);
            if (by_name(c, name, key_rule::role_prefixed, true, 0.6f, 0.6f, out)) return;
            if (by_table_name(c, name, key_rule::role_prefixed, 0.6f, out)) return;
        }
    }

    const catalog& cat_;
    const column_stats_table* stats_;
    const key_discovery_options& o_;
    std::unordered_map<column_id, key_column> columns_;
    std::unordered_map<table_id, std::vector<std::string>> table_names_;
    std::unordered_map<std::string, column_id> resolved_;
    std::unordered_map<std::string, std::vector<key_target>> composite_;
    std::unordered_map<column_id, std::unordered_set<std::string>> key_values_;
};

}  // namespace detail

/**
 * @brief Foreign keys inferred for every database of @p cat by the rules of this file, sorted
 * by (from, to). @p stats (optional) adds key candidates by uniqueness and the value-inclusion
 * check. Declared foreign keys are not read (with_foreign_keys skips the ones already there).
 * @throws error when @p stats holds more columns than @p cat (statistics of another catalog) or
 * an option is out of range.
 */
inline std::vector<inferred_key> infer_foreign_keys(const catalog& cat,
                                                    const column_stats_table* stats = nullptr,
                                                    const key_discovery_options& o = {}) {
    if (stats != nullptr && stats->size() > cat.columns().size())
        throw error(fmt::format(
            "key discovery: column statistics for {} columns, but the catalog has {} (statistics "
            "of another catalog?)",
            stats->size(), cat.columns().size()));
    if (!(o.min_inclusion >= 0.0 && o.min_inclusion <= 1.0))
        throw error(
            fmt::format("key discovery: min_inclusion must be in [0, 1], got {}", o.min_inclusion));
    if (!(o.min_uniqueness >= 0.0 && o.min_uniqueness <= 1.0))
        throw error(fmt::format("key discovery: min_uniqueness must be in [0, 1], got {}",
                                o.min_uniqueness));
    std::vector<inferred_key> out;
    for (const auto& db : cat.databases()) detail::key_inference(cat, stats, o).run(db, out);
    std::sort(out.begin(), out.end(), [](const inferred_key& x, const inferred_key& y) {
        return std::pair(x.from, x.to) < std::pair(y.from, y.to);
    });
    return out;
}

/**
 * @brief A copy of @p cat with @p keys added as foreign keys after the declared ones; a pair
 * already declared (or listed twice) is added once.
 * @throws schema_error for a column id out of range or a pair across databases.
 */
inline catalog with_foreign_keys(const catalog& cat, std::span<const inferred_key> keys) {
    catalog out = cat;
    std::unordered_set<std::uint64_t> present;
    const auto pair = [](column_id a, column_id b) { return (std::uint64_t{a} << 32) | b; };
    for (const auto& fk : cat.foreign_keys()) present.insert(pair(fk.from, fk.to));
    for (const auto& k : keys)
        if (present.insert(pair(k.from, k.to)).second) out.add_foreign_key(k.from, k.to);
    return out;
}

/**
 * @brief A copy of @p cat with the same ids, names, types and descriptions but no foreign keys
 * and, unless @p keep_primary_keys, no primary keys and no UNIQUE constraints either: a
 * catalog as a warehouse without declared keys presents it (to measure key discovery).
 */
inline catalog catalog_without_keys(const catalog& cat, bool keep_primary_keys = false) {
    catalog out;
    for (const auto& d : cat.databases()) out.add_database(d.name, d.description);
    for (const auto& t : cat.tables()) out.add_table(t.database, t.name, t.nl_name, t.description);
    for (const auto& c : cat.columns()) {
        const auto id = out.add_column(c.table, c.name, c.type, c.nl_name, c.description);
        auto constraints = c.constraints;
        if (!keep_primary_keys) constraints.unique = false;
        if (constraints != column_constraints{}) out.set_constraints(id, std::move(constraints));
    }
    if (keep_primary_keys)
        for (table_id t = 0; t < cat.tables().size(); ++t)
            if (!cat.table(t).primary_key.empty()) out.set_primary_key(t, cat.table(t).primary_key);
    return out;
}

}  // namespace tabret
