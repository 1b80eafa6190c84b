#pragma once
/// @file rewriting/text.hpp
/// @brief Small text helpers shared by the rewriting layer: trimming, line splitting, answer
/// clean-up (fences, bullets, numbering, quotes), word tokens and a tiny stemmer.
///
/// Everything here lives in tabret::detail; the functions are pure and thread-safe.

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "tabret/text/case.hpp"

namespace tabret::detail::rw {

inline bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

inline bool is_alnum(char c) noexcept { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

inline char lower(char c) noexcept {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

/// Trims ASCII whitespace on both ends.
inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

/// Collapses every run of whitespace to one space and trims.
inline std::string collapse_spaces(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    bool pending = false;
    for (char c : s) {
        if (is_space(c)) {
            pending = !out.empty();
            continue;
        }
        if (pending) out.push_back(' ');
        pending = false;
        out.push_back(c);
    }
    return out;
}

inline std::string to_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), lower);
    return out;
}

using tabret::detail::iequals;

inline bool istarts_with(std::string_view s, std::string_view prefix) noexcept {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

/// Splits on `\n`, `\r\n`, `\r` and on the two-character sequence backslash-n (LLMs echo the
/// literal `\n` separators of prompts written on one line).
inline std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    std::string cur;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\r' || c == '\n') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            lines.push_back(std::move(cur));
            cur.clear();
        } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
            ++i;
            lines.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    lines.push_back(std::move(cur));
    return lines;
}

/// True if @p mark occurs in @p s; an apostrophe between two letters (`student's`) is no mark.
inline bool contains_mark(std::string_view s, std::string_view mark) {
    for (auto pos = s.find(mark); pos != std::string_view::npos; pos = s.find(mark, pos + 1)) {
        const bool apostrophe = (mark == "'" || mark == "\xE2\x80\x99") && pos > 0 &&
                                pos + mark.size() < s.size() && is_alnum(s[pos - 1]) &&
                                is_alnum(s[pos + mark.size()]);
        if (!apostrophe) return true;
    }
    return false;
}

/// Removes a matching pair of enclosing quotes or backticks (`"…"`, `'…'`, `` `…` ``, `“…”`,
/// `‘…’`, `**…**`), repeatedly. A pair is removed only if neither mark occurs inside
/// (`'a', 'b'` keeps its quotes; an apostrophe as in `'the student's name'` does not count).
inline std::string_view strip_enclosing_quotes(std::string_view s) {
    constexpr std::string_view pairs[][2] = {{"\"", "\""},
                                             {"'", "'"},
                                             {"`", "`"},
                                             {"**", "**"},
                                             {"\xE2\x80\x9C", "\xE2\x80\x9D"},   // “ ”
                                             {"\xE2\x80\x98", "\xE2\x80\x99"}};  // ‘ ’
    for (bool changed = true; changed;) {
        changed = false;
        s = trim(s);
        for (const auto& p : pairs) {
            if (s.size() < p[0].size() + p[1].size() || !s.starts_with(p[0]) || !s.ends_with(p[1]))
                continue;
            const auto inner = s.substr(p[0].size(), s.size() - p[0].size() - p[1].size());
            if (contains_mark(inner, p[0]) || contains_mark(inner, p[1])) continue;
            s = inner;
            changed = true;
            break;
        }
    }
    return s;
}

/// Removes a leading list marker: bullets (`-`, `*`, `+`, `•`), numbering (`1.`, `1)`, `(1)`,
/// `#1`, `a)`), repeatedly ("1. - x" → "x").
inline std::string_view strip_list_marker(std::string_view s) {
    for (bool changed = true; changed;) {
        changed = false;
        s = trim(s);
        if (s.starts_with("\xE2\x80\xA2")) {  // •
            s.remove_prefix(3);
            changed = true;
            continue;
        }
        if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && is_space(s[1])) {
            s.remove_prefix(2);
            changed = true;
            continue;
        }
        std::size_t i = 0;
        const bool paren = !s.empty() && s[0] == '(';
        const bool hash = !s.empty() && s[0] == '#';
        if (paren || hash) i = 1;
        const std::size_t digits_from = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        const bool has_digits = i > digits_from;
        // A single letter enumerator "a)" / "b." is accepted only with ')' to avoid eating words.
        if (!has_digits && !paren && !hash && s.size() >= 3 &&
            std::isalpha(static_cast<unsigned char>(s[0])) && s[1] == ')' && is_space(s[2])) {
            s.remove_prefix(3);
            changed = true;
            continue;
        }
        if (!has_digits || i >= s.size()) continue;
        if (paren && s[i] == ')') {
            s.remove_prefix(i + 1);
            changed = true;
        } else if (hash && (is_space(s[i]) || s[i] == '.' || s[i] == ':')) {
            s.remove_prefix(i + 1);
            changed = true;
        } else if (!paren && !hash && (s[i] == '.' || s[i] == ')' || s[i] == ':') &&
                   (i + 1 == s.size() || is_space(s[i + 1]))) {
            s.remove_prefix(i + 1);
            changed = true;
        }
    }
    return s;
}

/// True for a Markdown code fence line (```` ``` ````, ```` ```sql ````, `~~~`).
inline bool is_fence(std::string_view line) {
    line = trim(line);
    return line.starts_with("```") || line.starts_with("~~~");
}

/**
 * Splits an LLM answer into content lines: CRLF/CR/literal `\n` become line breaks, fence lines
 * are dropped (their contents kept), list markers and enclosing quotes are stripped, Markdown
 * heading marks (`#`) removed, blank lines dropped.
 */
inline std::vector<std::string> content_lines(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& raw : split_lines(text)) {
        if (is_fence(raw)) continue;
        std::string_view s = trim(raw);
        while (s.starts_with('#') && s.size() > 1 && (s[1] == '#' || is_space(s[1]))) {
            s.remove_prefix(1);
            s = trim(s);
        }
        s = strip_enclosing_quotes(strip_list_marker(s));
        if (s == "---" || s == "***" || s == "===") continue;
        s = trim(s);
        if (!s.empty()) out.emplace_back(s);
    }
    return out;
}

/// Lower-case runs of ASCII letters and digits; every other byte separates.
inline std::vector<std::string> word_tokens(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (is_alnum(c)) {
            cur.push_back(lower(c));
        } else if (!cur.empty()) {
            out.push_back(std::move(cur));
            cur.clear();
        }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

}  // namespace tabret::detail::rw
