#pragma once
/// @file rewriting/offline.hpp
/// @brief Rewriters that need no LLM: lexical removal and coverage removal (MURRE-style
/// "remove what the path covers, tabulate the rest, stop when nothing is left"), and a template
/// table → question generator for Reverse Engineering.
///
/// Term matching: a word is a lower-case run of ASCII letters/digits; identifiers are split at
/// `_`, `-`, `.` and case changes first; words are compared after detail::rw::stem (plural `s`,
/// `es`, `ies`). Stopwords (offline_stopwords) never count as content.

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tabret/catalog.hpp"
#include "tabret/rewriting/parsers.hpp"
#include "tabret/rewriting/replay_llm.hpp"
#include "tabret/rewriting/rewriter.hpp"
#include "tabret/rewriting/text.hpp"
#include "tabret/text/tokenize.hpp"

namespace tabret {

/**
 * @brief The words that are never schema content for the offline rewriters: the English
 * function words (text/tokenize.hpp) plus aggregation / comparison / ordering words (count,
 * average, total, highest, most, more, than, order, …) that SQL expresses with operators rather
 * than with tables. All lower case.
 */
inline const std::unordered_set<std::string_view>& offline_stopwords() {
    static const std::unordered_set<std::string_view> words = [] {
        std::unordered_set<std::string_view> w = function_words();
        w.insert({"many",    "much",      "count",      "number",   "average",  "avg",
                  "total",   "sum",       "maximum",    "max",      "minimum",  "min",
                  "highest", "lowest",    "largest",    "smallest", "most",     "least",
                  "more",    "less",      "greater",    "fewer",    "top",      "order",
                  "sorted",  "ascending", "descending", "distinct", "different"});
        return w;
    }();
    return words;
}

namespace detail::rw {

/// Rewrites requests one by one (offline rewriters need no batching).
template <class F>
std::vector<rewrite_result> each_request(std::span<const rewrite_request> requests, F rewrite_one) {
    std::vector<rewrite_result> out;
    out.reserve(requests.size());
    for (const auto& r : requests) out.push_back(rewrite_one(r));
    return out;
}

inline bool is_offline_stopword(std::string_view w) { return offline_stopwords().contains(w); }

/// The question with quoted literals ('Ford', "AHD") blanked: they are values, not schema.
inline std::string drop_quoted(std::string_view q) {
    std::string out(q);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i];
        if (c != '"' && c != '\'') continue;
        if (c == '\'' && i > 0 && is_alnum(out[i - 1])) continue;  // an apostrophe: student's
        std::size_t j = i + 1;
        for (; j < out.size(); ++j)
            if (out[j] == c && (c == '"' || j + 1 == out.size() || !is_alnum(out[j + 1]))) break;
        if (j >= out.size()) continue;
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(i),
                  out.begin() + static_cast<std::ptrdiff_t>(j) + 1, ' ');
        i = j;
    }
    return out;
}

inline bool is_number(std::string_view w) {
    return std::all_of(w.begin(), w.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/// Content words of @p text: no stopwords, numbers or single letters; order kept, no repeats.
inline std::vector<std::string> content_words(std::string_view text) {
    std::vector<std::string> out;
    for (auto& w : schema_tokens(text)) {
        if (w.size() < 2 || is_number(w) || is_offline_stopword(w)) continue;
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
    }
    return out;
}

/// Stems of every word of the table's names and of its columns' names.
struct table_words {
    std::unordered_set<std::string> table;
    std::unordered_set<std::string> columns;
};

inline table_words words_of_table(const catalog& cat, table_id t) {
    table_words out;
    const auto& tb = cat.table(t);
    for (const auto* s : {&tb.name, &tb.nl_name})
        for (const auto& w : schema_tokens(*s)) out.table.insert(stem(w));
    for (auto c : tb.columns) {
        const auto& col = cat.column(c);
        for (const auto* s : {&col.name, &col.nl_name})
            for (const auto& w : schema_tokens(*s)) out.columns.insert(stem(w));
    }
    return out;
}

inline bool overlaps(const std::vector<std::string>& words, const table_words& tw) {
    return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
        const auto s = stem(w);
        return tw.table.contains(s) || tw.columns.contains(s);
    });
}

inline const std::string& path_database(const catalog& cat, const std::vector<table_id>& path) {
    return cat.database(cat.table(path.front()).database).name;
}

}  // namespace detail::rw

/** @brief The shape of what a removal rewriter writes for the next hop. */
enum class removal_output {
    tabulated,  ///< Table-like text (MURRE's hallucinated table), see each rewriter.
    terms,      ///< The remaining words as plain text.
};

/**
 * @brief Lexical removal: drop the question's content words that the path's tables already
 * cover (a table or column name word, compared by stem), tabulate what is left, stop when
 * nothing is left.
 *
 * Content words: detail::rw::content_words of the question after quoted literals are blanked —
 * no stopwords (offline_stopwords), numbers or single letters.
 * Per request: empty path → the question itself (hop 1 retrieves with the original question);
 * otherwise, with remaining words w1…wn: tabulated → one query `db(w1, w2, …, wn)` (db = the
 * database of the path's first table standing in for the table name), terms → `w1 w2 … wn`;
 * none remaining → stop.
 *
 * Holds a reference to the catalog, which must outlive it. Thread-safe.
 */
class lexical_removal_rewriter {
  public:
    explicit lexical_removal_rewriter(const catalog& cat,
                                      removal_output output = removal_output::tabulated)
        : cat_(&cat), output_(output) {}

    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        return detail::rw::each_request(requests, [this](const auto& r) { return rewrite_one(r); });
    }

    /** @brief The content words of @p question (see the class comment). */
    [[nodiscard]] static std::vector<std::string> content_terms(std::string_view question) {
        return detail::rw::content_words(detail::rw::drop_quoted(question));
    }

    /** @brief The content words of the question that no table of the path covers. */
    [[nodiscard]] std::vector<std::string> remaining_terms(const rewrite_request& r) const {
        std::vector<detail::rw::table_words> covered;
        for (auto t : r.path) covered.push_back(detail::rw::words_of_table(*cat_, t));
        std::vector<std::string> out;
        for (auto& w : content_terms(r.question)) {
            const bool hit = std::any_of(covered.begin(), covered.end(), [&](const auto& tw) {
                return detail::rw::overlaps({w}, tw);
            });
            if (!hit) out.push_back(std::move(w));
        }
        return out;
    }

  private:
    [[nodiscard]] rewrite_result rewrite_one(const rewrite_request& r) const {
        if (r.path.empty()) return {false, {normalize_question(r.question)}};
        const auto rest = remaining_terms(r);
        if (rest.empty()) return {true, {}};
        if (output_ == removal_output::terms)
            return {false, {fmt::format("{}", fmt::join(rest, " "))}};
        return {false,
                {fmt::format("{}({})", detail::rw::path_database(*cat_, r.path),
                             fmt::join(rest, ", "))}};
    }

    const catalog* cat_;
    removal_output output_;
};

/** @brief A question's decomposition, by question; throws (e.g. llm_error) if it has none. */
using decomposition_fn = std::function<std::vector<subquery>(std::string_view question)>;

/**
 * @brief Decompositions read from a replay source of kind decomposition: each recorded item
 * split at its first colon (`concept:attribute`; no colon → concept alone). Thread-safe.
 * @throws (when called) missing_recording_error quoting a question without a recording.
 */
inline decomposition_fn recorded_decompositions(std::shared_ptr<const replay_source> source) {
    if (source->kind() != recording_kind::decomposition)
        throw error(fmt::format("{}: not a decomposition recording", source->name()));
    return [source = std::move(source)](std::string_view question) {
        std::vector<subquery> out;
        for (const auto& item : source->at(question))
            if (auto sq = detail::rw::to_subquery(item)) out.push_back(std::move(*sq));
        return out;
    };
}

/**
 * @brief Coverage removal: given a decomposition of each question into sub-queries, drop the
 * sub-queries the path covers, tabulate the rest, stop when none are left.
 *
 * A sub-query is covered by the path if some path table T has: a content word of its concept
 * among T's table or column name words, and (if it has an attribute) a content word of its
 * attribute among them too (stems compared; a part with only stopwords counts all its words).
 * Per request: empty path → the question itself; otherwise the uncovered sub-queries grouped by
 * concept (case-insensitive, first-seen order): tabulated → one query per concept,
 * `db.concept(attribute, attribute, …)` (or `db.concept` with no attributes; db = the path's
 * first table's database); terms → one query, every remaining concept and attribute word joined
 * by spaces; none uncovered → stop.
 *
 * Holds a reference to the catalog, which must outlive it. Thread-safe if @p decompose is.
 */
class coverage_removal_rewriter {
  public:
    coverage_removal_rewriter(const catalog& cat, decomposition_fn decompose,
                              removal_output output = removal_output::tabulated)
        : cat_(&cat), decompose_(std::move(decompose)), output_(output) {}

    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        return detail::rw::each_request(requests, [this](const auto& r) { return rewrite_one(r); });
    }

    /** @brief The sub-queries of @p r's question that the path does not cover. */
    [[nodiscard]] std::vector<subquery> uncovered(const rewrite_request& r) const {
        std::vector<detail::rw::table_words> path;
        for (auto t : r.path) path.push_back(detail::rw::words_of_table(*cat_, t));
        std::vector<subquery> out;
        for (auto& sq : decompose_(r.question))
            if (!covered(sq, path)) out.push_back(std::move(sq));
        return out;
    }

  private:
    static std::vector<std::string> words(std::string_view s) {
        auto w = detail::rw::content_words(s);
        return w.empty() ? schema_tokens(s) : w;
    }

    static bool covered(const subquery& sq, const std::vector<detail::rw::table_words>& path) {
        const auto cw = words(sq.concept_name);
        const auto aw = words(sq.attribute);
        return std::any_of(path.begin(), path.end(), [&](const auto& tw) {
            return detail::rw::overlaps(cw, tw) && (aw.empty() || detail::rw::overlaps(aw, tw));
        });
    }

    [[nodiscard]] rewrite_result rewrite_one(const rewrite_request& r) const {
        if (r.path.empty()) return {false, {normalize_question(r.question)}};
        const auto rest = uncovered(r);
        if (rest.empty()) return {true, {}};
        if (output_ == removal_output::terms) {
            std::vector<std::string> parts;
            for (const auto& sq : rest) {
                parts.push_back(sq.concept_name);
                if (!sq.attribute.empty()) parts.push_back(sq.attribute);
            }
            return {false, {fmt::format("{}", fmt::join(parts, " "))}};
        }
        return {false, tabulate(detail::rw::path_database(*cat_, r.path), rest)};
    }

    static std::vector<std::string> tabulate(const std::string& db,
                                             const std::vector<subquery>& rest) {
        std::vector<std::string> concepts;  // first spelling of each concept
        std::vector<std::vector<std::string>> attributes;
        for (const auto& sq : rest) {
            auto it = std::find_if(concepts.begin(), concepts.end(), [&](const auto& c) {
                return detail::rw::iequals(c, sq.concept_name);
            });
            if (it == concepts.end()) {
                concepts.push_back(sq.concept_name);
                attributes.emplace_back();
                it = concepts.end() - 1;
            }
            auto& attrs = attributes[static_cast<std::size_t>(it - concepts.begin())];
            // a question's few sub-queries: a scan is cheaper than a set here
            if (!sq.attribute.empty() &&
                std::find(attrs.begin(), attrs.end(), sq.attribute) == attrs.end())
                attrs.push_back(sq.attribute);
        }
        std::vector<std::string> out;
        for (std::size_t i = 0; i < concepts.size(); ++i)
            out.push_back(attributes[i].empty() ? fmt::format("{}.{}", db, concepts[i])
                                                : fmt::format("{}.{}({})", db, concepts[i],
                                                              fmt::join(attributes[i], ", ")));
        return out;
    }

    const catalog* cat_;
    decomposition_fn decompose_;
    removal_output output_;
};

/**
 * @brief Reverse Engineering without an LLM: a deterministic question per table from a
 * template, `What are the c1, c2, … and cn of each <table>?` over the natural-language names of
 * the first max_columns columns (`What is recorded in <table>?` for a table without columns).
 *
 * Holds a reference to the catalog, which must outlive it. Thread-safe.
 */
class template_question_generator {
  public:
    explicit template_question_generator(const catalog& cat, std::size_t max_columns = 6)
        : cat_(&cat), max_columns_(max_columns) {}

    /** @brief The question for table @p t. @throws schema_error for an unknown id. */
    [[nodiscard]] std::string generate(table_id t) const {
        const auto& tb = cat_->table(t);
        std::vector<std::string> cols;
        for (auto c : tb.columns) {
            if (cols.size() >= max_columns_) break;
            cols.push_back(cat_->column(c).nl_name);
        }
        if (cols.empty()) return fmt::format("What is recorded in {}?", tb.nl_name);
        if (cols.size() == 1) return fmt::format("What is the {} of each {}?", cols[0], tb.nl_name);
        const auto last = cols.back();
        cols.pop_back();
        return fmt::format("What are the {} and {} of each {}?", fmt::join(cols, ", "), last,
                           tb.nl_name);
    }

    /** @brief One question per table, in order. */
    [[nodiscard]] std::vector<std::string> generate(std::span<const table_id> tables) const {
        std::vector<std::string> out;
        out.reserve(tables.size());
        for (auto t : tables) out.push_back(generate(t));
        return out;
    }

  private:
    const catalog* cat_;
    std::size_t max_columns_;
};

static_assert(QueryRewriter<lexical_removal_rewriter>);
static_assert(QueryRewriter<coverage_removal_rewriter>);

}  // namespace tabret
