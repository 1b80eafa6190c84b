#pragma once
/// @file text/tokenize.hpp
/// @brief Word tokens of schema text and questions, and the English function words that carry
/// no schema content. Shared by BM25, the hashing embedder and the offline rewriters.

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace tabret {

namespace detail {

enum class char_kind { other, lower, upper, digit };

/// ASCII classes; bytes >= 0x80 (UTF-8) count as lower-case letters, so words keep them whole.
inline char_kind kind_of(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 'a' && u <= 'z') return char_kind::lower;
    if (u >= 'A' && u <= 'Z') return char_kind::upper;
    if (u >= '0' && u <= '9') return char_kind::digit;
    return u >= 0x80 ? char_kind::lower : char_kind::other;
}

/// Whether a token ends between text[i-1] and text[i] (both alphanumeric): at a letter/digit
/// change, at `aB` (gasStations → gas | Stations) and before `Bc` in `ABc` (XMLHttp → XML | Http).
inline bool splits_before(std::string_view text, std::size_t i) noexcept {
    const auto prev = kind_of(text[i - 1]);
    const auto cur = kind_of(text[i]);
    if ((prev == char_kind::digit) != (cur == char_kind::digit)) return true;
    if (prev == char_kind::lower && cur == char_kind::upper) return true;
    return prev == char_kind::upper && cur == char_kind::upper && i + 1 < text.size() &&
           kind_of(text[i + 1]) == char_kind::lower;
}

}  // namespace detail

/**
 * @brief Splits schema text into lower-case word tokens.
 *
 * Splits on every non-alphanumeric character, between letters and digits (digit runs are
 * tokens of their own), and at CamelCase boundaries: `CustomerID` → customer, id;
 * `gasStations` → gas, stations; `customer_id` → customer, id. ASCII letters are lower-cased;
 * non-ASCII bytes are kept inside words unchanged. No stemming and no stop words: `stations`
 * and `station` are different tokens. Thread-safe.
 */
inline std::vector<std::string> schema_tokens(std::string_view text) {
    std::vector<std::string> tokens;
    std::string token;
    const auto flush = [&] {
        if (!token.empty()) tokens.push_back(std::move(token));
        token.clear();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto kind = detail::kind_of(text[i]);
        if (kind == detail::char_kind::other) {
            flush();
            continue;
        }
        if (!token.empty() && detail::splits_before(text, i)) flush();
        token.push_back(kind == detail::char_kind::upper ? static_cast<char>(text[i] - 'A' + 'a')
                                                         : text[i]);
    }
    flush();
    return tokens;
}

/**
 * A deliberately tiny English stemmer for matching question words to schema words: `ies` → `y`,
 * `sses` → `ss`, `xes`/`ches`/`shes` → drop `es`, otherwise a final `s` is dropped (not `ss`,
 * `us`, `is`), for words longer than three letters.
 */
inline std::string stem(std::string_view w) {
    std::string s(w);
    if (s.size() <= 3) return s;
    if (s.ends_with("ies")) return s.substr(0, s.size() - 3) + "y";
    if (s.ends_with("sses")) return s.substr(0, s.size() - 2);
    if (s.ends_with("xes") || s.ends_with("ches") || s.ends_with("shes"))
        return s.substr(0, s.size() - 2);
    if (s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is"))
        return s.substr(0, s.size() - 1);
    return s;
}

/**
 * @brief English function words: articles, determiners, pronouns, prepositions, conjunctions,
 * auxiliaries, wh-words and request verbs (show, list, find, …). They never name schema
 * content, so lexical matching ignores them. All lower case.
 */
inline const std::unordered_set<std::string_view>& function_words() {
    static const std::unordered_set<std::string_view> words = {
        // articles, determiners, pronouns
        "a", "an", "the", "this", "that", "these", "those", "each", "every", "all", "any", "some",
        "both", "either", "neither", "other", "another", "such", "it", "its", "they", "them",
        "their", "he", "she", "his", "her", "him", "we", "our", "us", "you", "your", "i", "me",
        "my", "there",
        // prepositions, conjunctions
        "of", "in", "on", "at", "for", "to", "from", "by", "with", "without", "about", "into", "as",
        "per", "than", "and", "or", "but", "not", "no", "nor", "if", "then", "also", "only",
        "between", "among", "within", "over", "under", "above", "below", "after", "before",
        // auxiliaries
        "is", "are", "was", "were", "be", "been", "being", "do", "does", "did", "have", "has",
        "had", "can", "could", "will", "would", "should", "may",
        // wh-words
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
        // request verbs
        "show", "list", "find", "give", "return", "display", "tell", "please", "get", "provide",
        "indicate", "state"};
    return words;
}

/** @brief schema_tokens() without function_words(). Thread-safe. */
inline std::vector<std::string> content_tokens(std::string_view text) {
    auto tokens = schema_tokens(text);
    std::erase_if(tokens, [](const std::string& t) { return function_words().contains(t); });
    return tokens;
}

}  // namespace tabret
