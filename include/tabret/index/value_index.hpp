#pragma once
/// @file index/value_index.hpp
/// @brief Cell values as retrieval evidence: the distinct text values of a catalog's columns,
/// and the question words that equal one of them ("the DHL shipments" finds the column
/// holding 'DHL'). Read from a database (io/sqlite.hpp `add_sqlite_values`, Python's
/// `tabret.values` for anything SQLAlchemy reaches) within stated bounds, saved as the
/// "values" part of an index directory.

#include <algorithm>
#include <cctype>
#include <cmath>
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
#include <nlohmann/json.hpp>

#include "tabret/catalog.hpp"
#include "tabret/error.hpp"
#include "tabret/io/artifact.hpp"
#include "tabret/io/catalog_fingerprint.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/io/sealed_json.hpp"
#include "tabret/text/tokenize.hpp"

namespace tabret {

/// What a value index keeps, per column and in all.
struct value_index_options {
    std::size_t max_values_per_column = 1000;  ///< Distinct values kept per column.
    std::size_t max_value_bytes = 100;         ///< Longer values are skipped.
    std::size_t max_bytes = 64u << 20;         ///< All values kept, in bytes.
};

/**
 * @brief Which one-word matches count (a match of two or more words always does): only words
 * the question marks as literals (detail::marked_words), or also the words that name nothing
 * in the catalog's schema ("the maternity ward" when no table or column is called maternity;
 * never "the car" in a catalog with a `car_makers` table).
 */
enum class one_word_values { literal, unexplained };

/// A value of the index that the question names.
struct value_match {
    column_id column = 0;
    std::string value;  ///< As stored.
    float weight = 0;   ///< Specificity: ln(1 + columns with values / columns holding it).
    friend bool operator==(const value_match&, const value_match&) = default;
};

namespace detail {

/// The Latin-1 Supplement and Latin Extended-A letter @p cp without its accent, lower case,
/// or 0 when it has no plain ASCII base.
inline char latin_base(std::uint32_t cp) {
    using namespace std::string_view_literals;  // a literal with its NULs, not cut at the first
    static constexpr auto supplement =          // U+00C0 … U+00FF
        "aaaaaaaceeeeiiii"
        "dnooooo\0ouuuuyts"
        "aaaaaaaceeeeiiii"
        "dnooooo\0ouuuuyty"sv;
    static constexpr std::string_view extended =  // U+0100 … U+017F, in pairs
        "aaaaaaccccccccdd"
        "ddeeeeeeeeeegggg"
        "gggghhhhiiiiiiii"
        "iijjjjkkklllllll"
        "lllnnnnnnnnnoooo"
        "oooorrrrrrssssss"
        "ssttttttuuuuuuuu"
        "uuuuwwyyyzzzzzzs";
    if (cp >= 0xC0 && cp <= 0xFF) return supplement[cp - 0xC0];
    if (cp >= 0x100 && cp <= 0x17F) return extended[cp - 0x100];
    return 0;
}

/// The code point at @p i of @p s and its length in bytes; an invalid or cut sequence is one
/// byte, code point 0.
inline std::pair<std::uint32_t, std::size_t> decode_utf8(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = (c & 0xE0) == 0xC0   ? 2
                          : (c & 0xF0) == 0xE0 ? 3
                          : (c & 0xF8) == 0xF0 ? 4
                                               : 1;
    if (n == 1 || i + n > s.size()) return {0, 1};
    std::uint32_t cp = c & (0x7Fu >> n);
    for (std::size_t k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return {0, 1};
        cp = (cp << 6) | (b & 0x3Fu);
    }
    return {cp, n};
}

/// Punctuation and spaces beyond ASCII: Latin-1's (¡ … ¿, ×, ÷, the no-break space), General
/// Punctuation (’ “ ” — … and the thin spaces) and CJK punctuation (、。「」).
inline bool is_separator(std::uint32_t cp) {
    return (cp >= 0xA0 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 ||
           (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x3000 && cp <= 0x303F);
}

/// One word of a text in the form values are compared in, and where it was.
struct value_word {
    std::string text;                ///< Lower case ASCII, Latin accents removed.
    std::size_t begin = 0, end = 0;  ///< Its bytes in the original text.
};

/**
 * @brief The words of @p s in the form values and question words are compared in: ASCII lower
 * case, Latin accents removed ("Zürich" → "zurich"); every run of other characters
 * (punctuation and spaces, ASCII or not: is_separator) separates words. Other non-ASCII
 * letters are kept as they are; an invalid UTF-8 byte is kept as a byte of its word.
 */
inline std::vector<value_word> value_words(std::string_view s) {
    std::vector<value_word> out;
    bool in_word = false;
    const auto put = [&](std::string_view text, std::size_t at, std::size_t n) {
        if (!in_word) out.push_back({{}, at, at});
        in_word = true;
        out.back().text += text;
        out.back().end = at + n;
    };
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (std::isalnum(c)) {
                const char lower = static_cast<char>(std::tolower(c));
                put(std::string_view(&lower, 1), i, 1);
            } else {
                in_word = false;
            }
            ++i;
            continue;
        }
        const auto [cp, n] = detail::decode_utf8(s, i);
        if (const char base = latin_base(cp)) {
            put(std::string_view(&base, 1), i, n);
        } else if (is_separator(cp)) {
            in_word = false;
        } else {
            put(s.substr(i, n), i, n);
        }
        i += n;
    }
    return out;
}

/// The words of @p s (value_words) joined by single spaces: the key a value is found by.
inline std::string normalise_value(std::string_view s) {
    std::string out;
    for (const auto& w : value_words(s)) {
        if (!out.empty()) out += ' ';
        out += w.text;
    }
    return out;
}

/// The trace query of a value matched in a column: "'France' in country" (the values stage).
inline std::string value_trace_query(std::string_view value, std::string_view column) {
    return fmt::format("'{}' in {}", value, column);
}

/**
 * @brief For each word of @p question (value_words), whether the question marks it as a
 * literal rather than a word of its own: inside quotes ('…', "…", “…”), capitalised other than
 * as the question's first word or a sentence's, in capitals (DHL), or holding a digit ("the DHL
 * shipments", "from 'France'", "in 2014"; not "the car" or "names").
 */
inline std::vector<bool> marked_words(std::string_view question,
                                      const std::vector<value_word>& words) {
    std::vector<bool> quoted(question.size() + 1, false);
    for (const std::string_view q : {"'", "\"", "\xe2\x80\x9c"}) {
        const std::string_view close = q == "\xe2\x80\x9c" ? "\xe2\x80\x9d" : q;
        std::size_t at = 0;
        while ((at = question.find(q, at)) != std::string_view::npos) {
            const bool opens =
                at == 0 || !std::isalnum(static_cast<unsigned char>(question[at - 1]));
            const auto end = question.find(close, at + q.size());
            if (!opens || end == std::string_view::npos) {
                at += q.size();
                continue;
            }
            const auto after = end + close.size();
            if (after < question.size() &&
                std::isalnum(static_cast<unsigned char>(question[after]))) {
                at += q.size();  // an apostrophe (the teacher's name), not a closing quote
                continue;
            }
            std::fill(quoted.begin() + static_cast<std::ptrdiff_t>(at),
                      quoted.begin() + static_cast<std::ptrdiff_t>(after), true);
            at = after;
        }
    }
    std::vector<bool> out(words.size(), false);
    for (std::size_t i = 0; i < words.size(); ++i) {
        const auto& w = words[i];
        const auto first = static_cast<unsigned char>(question[w.begin]);
        const auto before = question.substr(0, w.begin);
        const auto last = before.find_last_not_of(" \t\r\n\"'(");
        const bool initial = last == std::string_view::npos || before[last] == '.' ||
                             before[last] == '?' || before[last] == '!';
        const auto second =
            w.begin + 1 < question.size() ? static_cast<unsigned char>(question[w.begin + 1]) : 0u;
        const bool capital = (first >= 'A' && first <= 'Z') ||
                             (first == 0xC3 && second < 0x9F && second != 0x97);  // À…Þ
        const auto text = question.substr(w.begin, w.end - w.begin);
        const bool digit = std::ranges::any_of(text, [](char c) { return c >= '0' && c <= '9'; });
        const bool acronym = text.size() >= 2 &&
                             std::ranges::all_of(text, [](char c) { return c >= 'A' && c <= 'Z'; });
        out[i] = quoted[w.begin] || digit || acronym || (capital && !initial);
    }
    return out;
}

/// Whether a normalised key can be evidence: at least 3 characters, 4 when all digits
/// (a year, a code; not "3" of "top 3"), and not only function words.
inline bool is_evidence(std::string_view key, std::span<const value_word> words) {
    if (key.size() < 3) return false;
    if (std::ranges::all_of(key, [](char c) { return c >= '0' && c <= '9'; }) && key.size() < 4)
        return false;
    return !std::ranges::all_of(
        words, [](const value_word& w) { return function_words().contains(w.text); });
}

}  // namespace detail

/**
 * @brief The distinct text values of a catalog's columns, and exact matching of a question's
 * word n-grams against them after normalisation (detail::normalise_value): longest match
 * first, each question word in at most one match, a one-word match only as one_word_values
 * says. Built by add(); immutable and thread-safe afterwards.
 */
class value_index {
  public:
    static constexpr int format_version = 1;
    static constexpr const char* file_name = "values.tvi";
    static constexpr std::size_t max_words = 6;  ///< Longest value matched, in words.

    value_index() = default;
    explicit value_index(const catalog& cat, value_index_options options = {})
        : fingerprint_(detail::catalog_fingerprint(cat)),
          options_(options),
          values_(cat.columns().size()) {
        if (options.max_values_per_column == 0 || options.max_value_bytes == 0)
            throw error("value index: max_values_per_column and max_value_bytes must be positive");
        const auto learn = [&](std::string_view name, std::string_view nl_name) {
            for (auto& t : schema_tokens(name)) schema_words_.insert(std::move(t));
            for (auto& w : detail::value_words(nl_name)) schema_words_.insert(std::move(w.text));
        };
        for (const auto& t : cat.tables()) learn(t.name, t.nl_name);
        for (const auto& c : cat.columns()) learn(c.name, c.nl_name);
    }

    /**
     * @brief Adds values of column @p c: distinct after normalisation, within the bounds (a
     * value over max_value_bytes, beyond max_values_per_column or max_bytes, or that is no
     * evidence, is skipped and counted in skipped()). Returns how many were kept.
     * @throws error for a column outside the catalog.
     */
    std::size_t add(column_id c, std::span<const std::string> values) {
        if (c >= values_.size())
            throw error(fmt::format("value index: column {} is not in the catalog ({} columns)", c,
                                    values_.size()));
        auto& held = values_[c];
        std::size_t kept = 0;
        for (const auto& v : values) {
            if (v.size() > options_.max_value_bytes ||
                held.size() >= options_.max_values_per_column ||
                bytes_ + v.size() > options_.max_bytes || !insert(c, v)) {
                ++skipped_;
                continue;
            }
            held.push_back(v);
            bytes_ += v.size();
            ++kept;
        }
        return kept;
    }

    /// The values of the question, best evidence first (weight, then column).
    [[nodiscard]] std::vector<value_match> match(
        std::string_view question, one_word_values one_word = one_word_values::literal) const {
        std::vector<value_match> out;
        const auto words = detail::value_words(question);
        const auto marked = detail::marked_words(question, words);
        std::vector<bool> used(words.size(), false);
        const double columns = static_cast<double>(std::max<std::size_t>(1, columns_with_values_));
        for (std::size_t n = std::min(max_words_, words.size()); n >= 1; --n) {
            for (std::size_t i = 0; i + n <= words.size(); ++i) {
                if (std::any_of(used.begin() + static_cast<std::ptrdiff_t>(i),
                                used.begin() + static_cast<std::ptrdiff_t>(i + n),
                                [](bool u) { return u; }))
                    continue;
                if (n == 1 && !marked[i] &&
                    (one_word == one_word_values::literal || schema_words_.contains(words[i].text)))
                    continue;
                std::string key = words[i].text;
                for (std::size_t j = i + 1; j < i + n; ++j) key += ' ' + words[j].text;
                const auto it = by_key_.find(key);
                if (it == by_key_.end()) continue;
                std::fill(used.begin() + static_cast<std::ptrdiff_t>(i),
                          used.begin() + static_cast<std::ptrdiff_t>(i + n), true);
                std::unordered_set<column_id> seen;
                for (const auto& [col, _] : it->second) seen.insert(col);
                const auto weight =
                    static_cast<float>(std::log1p(columns / static_cast<double>(seen.size())));
                for (const auto& [col, at] : it->second)
                    out.push_back({col, values_[col][at], weight});
            }
        }
        std::ranges::sort(out, [](const value_match& a, const value_match& b) {
            return a.weight != b.weight ? a.weight > b.weight : a.column < b.column;
        });
        return out;
    }

    /// The values kept for column @p c (empty for a column without).
    [[nodiscard]] std::span<const std::string> values_of(column_id c) const {
        return c < values_.size() ? std::span<const std::string>(values_[c])
                                  : std::span<const std::string>();
    }
    [[nodiscard]] std::size_t size() const noexcept { return count_; }
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
    [[nodiscard]] std::size_t skipped() const noexcept { return skipped_; }
    [[nodiscard]] std::size_t columns_with_values() const noexcept { return columns_with_values_; }
    [[nodiscard]] const value_index_options& options() const noexcept { return options_; }
    [[nodiscard]] const std::string& catalog_fingerprint() const noexcept { return fingerprint_; }

    /// The index as a part of an artifact: one file, values.tvi (to_bytes).
    [[nodiscard]] detail::artifact_part to_part() const {
        detail::artifact_part part;
        part.files[file_name] = to_bytes();
        return part;
    }

    /// A sealed JSON header line (format, version, catalog fingerprint, bounds, body size and
    /// checksum), then the values as JSON: [[column, [value, …]], …].
    [[nodiscard]] std::string to_bytes() const {
        nlohmann::json body = nlohmann::json::array();
        for (std::size_t c = 0; c < values_.size(); ++c)
            if (!values_[c].empty()) body.push_back({c, values_[c]});
        const auto text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        const nlohmann::json header =
            detail::sealed({{"format", "tabret-values"},
                            {"version", format_version},
                            {"catalog", fingerprint_},
                            {"max_values_per_column", options_.max_values_per_column},
                            {"max_value_bytes", options_.max_value_bytes},
                            {"max_bytes", options_.max_bytes},
                            {"skipped", skipped_},
                            {"json_bytes", text.size()},
                            {"json_checksum", detail::checksum_hex(text)}});
        return header.dump() + "\n" + text;
    }

    /// Loads the values part of an artifact already read, for @p cat (the index's catalog).
    /// @throws io_error for a damaged file; error when made for another catalog.
    static value_index load(const detail::artifact& saved, const catalog& cat) {
        return from_bytes(saved.file("values", file_name), saved.path_of(file_name), cat);
    }

    /// Parses to_bytes(); @p source names the file in messages.
    static value_index from_bytes(const std::string& data, const std::string& source,
                                  const catalog& cat) {
        auto corrupt = [&](std::string_view why) {
            return io_error(fmt::format("{}: not a valid value index file ({})", source, why));
        };
        const auto eol = data.find('\n');
        if (eol == std::string::npos) throw corrupt("no header line");
        const auto h = nlohmann::json::parse(data.substr(0, eol), nullptr, false);
        if (h.is_discarded() || !h.is_object() ||
            h.value("format", nlohmann::json()) != "tabret-values")
            throw corrupt("wrong format tag");
        const detail::json_reader r(h, source, "header");
        if (const auto v = r.integer("version"); v != format_version)
            throw io_error(
                fmt::format("{}: value index version {} is not supported (this tabret "
                            "reads version {}); rebuild it",
                            source, v, format_version));
        detail::check_seal(h, source, "header");
        const std::string_view text(data.data() + eol + 1, data.size() - eol - 1);
        if (text.size() != r.count("json_bytes")) throw corrupt("truncated");
        if (detail::checksum_hex(text) != r.str("json_checksum"))
            throw corrupt("checksum mismatch");
        value_index out(cat, {r.count("max_values_per_column"), r.count("max_value_bytes"),
                              r.count("max_bytes")});
        if (r.str("catalog") != out.fingerprint_)
            throw error(
                fmt::format("{}: the values were read for another catalog than the "
                            "index's",
                            source));
        const auto body = nlohmann::json::parse(text, nullptr, false);
        if (body.is_discarded() || !body.is_array()) throw corrupt("the values do not parse");
        for (const auto& entry : body) {
            if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_unsigned() ||
                !entry[1].is_array())
                throw corrupt("a column entry is not [column, [values]]");
            const auto c = entry[0].get<std::size_t>();
            if (c >= out.values_.size()) throw corrupt("a column outside the catalog");
            std::vector<std::string> vs;
            for (const auto& v : entry[1]) {
                if (!v.is_string()) throw corrupt("a value is not a string");
                vs.push_back(v.get<std::string>());
            }
            out.add(static_cast<column_id>(c), vs);
        }
        out.skipped_ = r.count("skipped");
        return out;
    }

  private:
    /// Files @p v of column @p c under its key; false when it is no evidence or already held.
    bool insert(column_id c, const std::string& v) {
        const auto words = detail::value_words(v);
        if (words.empty() || words.size() > max_words) return false;
        const auto key = detail::normalise_value(v);
        if (!detail::is_evidence(key, words)) return false;
        auto& at = by_key_[key];
        if (std::ranges::any_of(at, [c](const auto& e) { return e.first == c; })) return false;
        if (values_[c].empty()) ++columns_with_values_;
        at.emplace_back(c, static_cast<std::uint32_t>(values_[c].size()));
        max_words_ = std::max(max_words_, words.size());
        ++count_;
        return true;
    }

    std::string fingerprint_;
    value_index_options options_;
    std::vector<std::vector<std::string>> values_;  ///< By column, as added.
    std::unordered_map<std::string, std::vector<std::pair<column_id, std::uint32_t>>> by_key_;
    std::unordered_set<std::string> schema_words_;  ///< Words of its table and column names.
    std::size_t max_words_ = 1, count_ = 0, bytes_ = 0, skipped_ = 0, columns_with_values_ = 0;
};

}  // namespace tabret
