/// @file text/segment.cpp
/// @brief word_segmenter and the segmented natural names (include/tabret/text/segment.hpp).

#include "tabret/text/segment.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/error.hpp"
#include "tabret/text/case.hpp"

namespace tabret {

word_segmenter::word_segmenter(const std::vector<std::string>& words_by_frequency,
                               segment_options options)
    : options_(options) {
    if (words_by_frequency.empty()) throw error("word_segmenter: empty word list");
    rank_.reserve(words_by_frequency.size());
    for (const auto& w : words_by_frequency) {
        if (w.empty()) continue;
        if (rank_.emplace(w, rank_.size()).second) longest_ = std::max(longest_, w.size());
    }
    if (rank_.empty()) throw error("word_segmenter: the word list holds only empty words");
    log_n_ = std::log(static_cast<double>(std::max<std::size_t>(rank_.size(), 2)));
}

bool word_segmenter::known(std::string_view word) const { return rank_.contains(word); }

std::optional<std::size_t> word_segmenter::rank(std::string_view word) const {
    const auto it = rank_.find(word);
    if (it == rank_.end()) return std::nullopt;
    return it->second;
}

namespace {

/// English suffixes: a split that ends in one (`version|ed`, `unsell|able`) cuts a word off its
/// ending, and an inflection of a known word (`versioned`, `quartiles`) is a word.
constexpr std::string_view suffixes[] = {"s",   "es", "ed",   "d",     "ing",    "er",
                                         "ers", "ly", "able", "ation", "ations", "al"};

bool is_suffix(std::string_view piece) {
    return std::find(std::begin(suffixes), std::end(suffixes), piece) != std::end(suffixes);
}

}  // namespace

bool word_segmenter::inflected(std::string_view token) const {
    for (const auto suffix : suffixes) {
        if (token.size() <= suffix.size() + 2 || !token.ends_with(suffix)) continue;
        const auto stem = token.substr(0, token.size() - suffix.size());
        if (known(stem) || known(std::string(stem) + "e")) return true;
    }
    return false;
}

bool word_segmenter::plausible(std::string_view piece) const {
    const auto it = rank_.find(piece);
    if (it == rank_.end() || piece.size() < 2) return false;
    if (piece.size() == 2) return it->second < options_.short_rank;
    if (piece.size() <= 4) return it->second < options_.rare_rank;
    return true;
}

std::vector<std::string> word_segmenter::best_split(std::string_view token) const {
    const auto n = token.size();
    constexpr double inf = std::numeric_limits<double>::infinity();
    std::vector<double> best(n + 1, inf);
    std::vector<std::size_t> from(n + 1, 0);
    best[0] = 0.0;
    for (std::size_t i = 1; i <= n; ++i) {
        for (std::size_t j = i > longest_ ? i - longest_ : 0; j < i; ++j) {
            if (best[j] == inf) continue;
            const auto it = rank_.find(token.substr(j, i - j));
            if (it == rank_.end()) continue;
            const double cost = best[j] + options_.word_penalty +
                                std::log(static_cast<double>(it->second + 1) * log_n_);
            if (cost < best[i]) {
                best[i] = cost;
                from[i] = j;
            }
        }
    }
    if (best[n] == inf) return {};
    std::vector<std::string> words;
    for (std::size_t i = n; i > 0; i = from[i])
        words.emplace_back(token.substr(from[i], i - from[i]));
    std::reverse(words.begin(), words.end());
    return words;
}

std::vector<std::string> word_segmenter::split(std::string_view token) const {
    const std::vector<std::string> whole{std::string(token)};
    if (token.size() < options_.min_length || known(token) || inflected(token)) return whole;
    if (std::any_of(token.begin(), token.end(), [](unsigned char c) { return !std::islower(c); }))
        return whole;
    auto words = best_split(token);
    if (words.size() < 2 || is_suffix(words.back()) ||
        !std::all_of(words.begin(), words.end(), [&](const auto& w) { return plausible(w); }))
        return whole;
    return words;
}

std::string segmented_natural_name(std::string_view identifier, const word_segmenter& segmenter) {
    std::istringstream words(detail::natural_name(identifier));
    std::string out;
    for (std::string word; words >> word;)
        for (const auto& piece : segmenter.split(word)) {
            if (!out.empty()) out.push_back(' ');
            out += piece;
        }
    return out;
}

namespace {

/// The natural name to keep: the segmented one when @p given was derived or is the identifier.
std::string renamed(const std::string& identifier, const std::string& given,
                    const word_segmenter& segmenter) {
    if (given != detail::natural_name(identifier) && !detail::iequals(given, identifier))
        return given;
    return segmented_natural_name(identifier, segmenter);
}

}  // namespace

catalog detail::with_natural_names(
    const catalog& cat,
    const std::function<std::string(const std::string&, const std::string&, std::size_t)>& rename) {
    catalog out;
    for (const auto& db : cat.databases()) out.add_database(db.name, db.description);
    for (const auto& t : cat.tables())
        out.add_table(t.database, t.name, rename(t.name, t.nl_name, t.database), t.description);
    for (const auto& c : cat.columns()) {
        const auto db = cat.table(c.table).database;
        out.set_constraints(
            out.add_column(c.table, c.name, c.type, rename(c.name, c.nl_name, db), c.description),
            c.constraints);
    }
    for (table_id t = 0; t < cat.tables().size(); ++t)
        if (!cat.table(t).primary_key.empty()) out.set_primary_key(t, cat.table(t).primary_key);
    for (const auto& fk : cat.foreign_keys()) out.add_foreign_key(fk.from, fk.to);
    return out;
}

catalog with_segmented_names(const catalog& cat, const word_segmenter& segmenter) {
    return detail::with_natural_names(
        cat, [&](const std::string& name, const std::string& nl_name, std::size_t) {
            return renamed(name, nl_name, segmenter);
        });
}

}  // namespace tabret
