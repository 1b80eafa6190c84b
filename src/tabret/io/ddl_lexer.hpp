#pragma once
/// @file io/ddl_lexer.hpp
/// @brief The tokenizer of the DDL loader (private to src/tabret/io/ddl.cpp): words, quoted
/// identifiers, strings, numbers and symbols with 1-based line numbers; comments and blanks
/// dropped. String and comment rules follow the dialect (ddl_lex_rules): MySQL backslash escapes
/// and `#` comments, PostgreSQL nested block comments and dollar quoting, standard `''` doubling.

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "tabret/error.hpp"
#include "tabret/text/case.hpp"

namespace tabret::detail {

// ---------------------------------------------------------------------------------------------
// Tokens

enum class ddl_token_kind { word, quoted, string, number, symbol, end };

struct ddl_token {
    ddl_token_kind kind = ddl_token_kind::end;
    std::string text;          ///< Word, number or symbol as written; quoted text without quotes.
    std::size_t line = 0;      ///< 1-based line where the token starts.
    bool starts_line = false;  ///< Only blanks before it on its line.
};

/// How strings and comments read: the parts of a SQL dialect the tokenizer needs.
struct ddl_lex_rules {
    bool backslash_escapes = false;  ///< MySQL: `\'` and `\\` inside '..' and "..".
    bool hash_comments = false;      ///< MySQL: `#` starts a comment anywhere (else: line start).
    bool nested_comments = false;    ///< PostgreSQL: `/* /* */ */` is one comment.
    bool dollar_quotes = true;       ///< PostgreSQL: `$$..$$`, `$tag$..$tag$` (not MySQL).
};

/// What a tokenizer saw that another dialect would read differently.
struct ddl_lex_notes {
    bool backslash_in_quote = false;  ///< A backslash inside '..' or "..", read literally.
    std::size_t backslash_line = 0;
    bool hash_mid_line = false;  ///< A `#` after code on its line, read as a symbol.
    std::size_t hash_line = 0;
    bool comment_in_comment = false;  ///< A `/*` inside a block comment, not nesting.
    std::size_t comment_line = 0;
    bool nested_comment = false;  ///< A `/*` inside a block comment, nesting.
};

inline bool is_one_of(std::string_view word, std::initializer_list<std::string_view> words) {
    return std::any_of(words.begin(), words.end(),
                       [word](std::string_view w) { return iequals(word, w); });
}

inline bool ddl_is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}
/// Whether @p text breaks a line at @p pos: `\n`, or a `\r` not followed by `\n` (old Mac
/// line endings; `\r\n` counts once, at its `\n`).
inline bool ddl_is_line_break(std::string_view text, std::size_t pos) {
    return text[pos] == '\n' ||
           (text[pos] == '\r' && (pos + 1 == text.size() || text[pos + 1] != '\n'));
}
inline bool ddl_is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool ddl_is_word_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
}
inline bool ddl_is_word_char(char c) { return ddl_is_word_start(c) || ddl_is_digit(c) || c == '$'; }

/// The start of @p text up to its first line break, shortened for an error message.
inline std::string ddl_preview(std::string_view text) {
    text = text.substr(0, text.find_first_of("\r\n"));
    return text.size() > 30 ? fmt::format("{}...", text.substr(0, 30)) : std::string(text);
}

/// How a token reads in an error message: `'FOREIGN'`, `string 'abc'`, `end of input`.
inline std::string ddl_describe(const ddl_token& token) {
    switch (token.kind) {
        case ddl_token_kind::end:
            return "end of input";
        case ddl_token_kind::string:
            return fmt::format("string '{}'", ddl_preview(token.text));
        default:
            return fmt::format("'{}'", token.text);
    }
}

/// Splits DDL text into tokens; comments and white space are dropped.
class ddl_lexer {
  public:
    ddl_lexer(std::string_view text, std::string source, ddl_lex_rules rules = {})
        : text_(text), source_(std::move(source)), rules_(rules) {
        if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 byte order mark
    }

    /// @throws parse_error for an unterminated string, quoted identifier or comment.
    std::vector<ddl_token> run() {
        std::vector<ddl_token> tokens;
        for (skip_blanks_and_comments(); pos_ < text_.size(); skip_blanks_and_comments()) {
            const bool first = line_start_;
            tokens.push_back(read_token());
            tokens.back().starts_line = first;
        }
        tokens.push_back({ddl_token_kind::end, {}, line_, true});
        return tokens;
    }

    /// What run() saw that another dialect would read differently.
    [[nodiscard]] const ddl_lex_notes& notes() const noexcept { return notes_; }

  private:
    [[nodiscard]] char peek(std::size_t ahead = 0) const {
        return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
    }

    void advance(std::size_t n = 1) {
        for (; n > 0 && pos_ < text_.size(); --n, ++pos_) {
            if (ddl_is_line_break(text_, pos_)) {
                ++line_;
                line_start_ = true;
            } else if (!ddl_is_blank(text_[pos_])) {
                line_start_ = false;
            }
        }
    }

    [[noreturn]] void fail(std::size_t line, const std::string& message) const {
        throw parse_error(source_, line, message);
    }

    void skip_blanks_and_comments() {
        for (;;) {
            const char c = peek();
            if (pos_ < text_.size() && (ddl_is_blank(c) || c == '\n'))
                advance();
            else if ((c == '-' && peek(1) == '-') ||
                     (c == '#' && (line_start_ || rules_.hash_comments)))
                skip_line();
            else if (c == '/' && peek(1) == '*')
                skip_block_comment();
            else
                return;
        }
    }

    void skip_line() {
        while (pos_ < text_.size() && peek() != '\n' && peek() != '\r') advance();
    }

    /// Skips a block comment; with nested_comments, `/*` inside opens a nested one.
    void skip_block_comment() {
        const auto start_line = line_;
        std::size_t depth = 0;
        while (pos_ < text_.size()) {
            if (peek() == '/' && peek(1) == '*') {
                if (depth > 0 && !rules_.nested_comments) {
                    if (!notes_.comment_in_comment) notes_.comment_line = line_;
                    notes_.comment_in_comment = true;
                    advance(2);
                    continue;
                }
                if (depth > 0) notes_.nested_comment = true;
                ++depth;
                advance(2);
            } else if (peek() == '*' && peek(1) == '/') {
                advance(2);
                if (--depth == 0) return;
            } else {
                advance();
            }
        }
        fail(start_line, rules_.nested_comments
                             ? "unterminated /* comment (comments nest in this dialect): no "
                               "matching */ before end of input"
                             : "unterminated /* comment: no closing */ before end of input");
    }

    ddl_token read_token() {
        const auto line = line_;
        const char c = peek();
        if (c == '\'')
            return {ddl_token_kind::string,
                    read_quoted('\'', "string literal", rules_.backslash_escapes), line};
        if (c == '"')
            return {ddl_token_kind::quoted,
                    read_quoted(c, "quoted identifier", rules_.backslash_escapes), line};
        if (c == '`') return {ddl_token_kind::quoted, read_quoted(c, "quoted identifier"), line};
        if (c == '[' && opens_bracket_identifier())
            return {ddl_token_kind::quoted, read_quoted(']', "quoted identifier"), line};
        if (c == '$' && rules_.dollar_quotes && dollar_tag_length() > 0)
            return {ddl_token_kind::string, read_dollar_string(), line};
        if (ddl_is_digit(c) || (c == '.' && ddl_is_digit(peek(1))))
            return {ddl_token_kind::number, read_number(), line};
        if (ddl_is_word_start(c)) return read_word();
        if (c == '#' && !notes_.hash_mid_line) {  // a MySQL comment would start here
            notes_.hash_mid_line = true;
            notes_.hash_line = line;
        }
        return {ddl_token_kind::symbol, read_symbol(), line};
    }

    /// `[name]` quotes an identifier (SQL Server, SQLite); `x[1]` and `int[]` are subscripts.
    [[nodiscard]] bool opens_bracket_identifier() const {
        const char before = pos_ > 0 ? text_[pos_ - 1] : ' ';
        return !ddl_is_word_char(before) && before != ']' && before != ')' && peek(1) != ']' &&
               !ddl_is_digit(peek(1));
    }

    /// Reads text up to @p close; a doubled @p close stands for itself.
    std::string read_quoted(char close, std::string_view what, bool backslash_escapes = false) {
        const auto start_line = line_;
        const auto start = pos_;
        advance();  // the opening quote
        std::string out;
        for (;;) {
            if (pos_ >= text_.size())
                fail(start_line, fmt::format("unterminated {} starting with {}", what,
                                             ddl_preview(text_.substr(start))));
            const char c = peek();
            if (backslash_escapes && c == '\\' && pos_ + 1 < text_.size()) {
                const char e = peek(1);
                out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
                advance(2);
                continue;
            }
            if (c == '\\' && close != ']' && close != '`' && !notes_.backslash_in_quote) {
                notes_.backslash_in_quote = true;  // MySQL would read an escape here
                notes_.backslash_line = line_;
            }
            advance();
            if (c == close && peek() == close) {
                out += close;
                advance();
            } else if (c == close) {
                return out;
            } else {
                out += c;
            }
        }
    }

    /// Length of a `$tag$` or `$$` opening a PostgreSQL dollar-quoted string, or 0.
    [[nodiscard]] std::size_t dollar_tag_length() const {
        std::size_t i = 1;
        while (ddl_is_word_start(peek(i)) || (i > 1 && ddl_is_digit(peek(i)))) ++i;
        return peek(i) == '$' ? i + 1 : 0;
    }

    std::string read_dollar_string() {
        const auto tag = text_.substr(pos_, dollar_tag_length());
        const auto close = text_.find(tag, pos_ + tag.size());
        if (close == std::string_view::npos)
            fail(line_, fmt::format("unterminated dollar-quoted string: no closing {}", tag));
        std::string body(text_.substr(pos_ + tag.size(), close - pos_ - tag.size()));
        advance(close + tag.size() - pos_);
        return body;
    }

    std::string read_number() {
        const auto start = pos_;
        while (ddl_is_digit(peek()) || peek() == '.') advance();
        while (ddl_is_word_char(peek())) advance();  // exponent, hex digits, units (`1M`)
        return std::string(text_.substr(start, pos_ - start));
    }

    /// A word; `N'..'`, `E'..'`, `B'..'`, `X'..'` and MySQL `_utf8mb4'..'` are strings.
    ddl_token read_word() {
        const auto line = line_;
        const auto start = pos_;
        while (ddl_is_word_char(peek())) advance();
        std::string word(text_.substr(start, pos_ - start));
        if (peek() == '\'' && (is_one_of(word, {"N", "E", "B", "X"}) || word.front() == '_'))
            return {
                ddl_token_kind::string,
                read_quoted('\'', "string literal", iequals(word, "E") || rules_.backslash_escapes),
                line};
        return {ddl_token_kind::word, std::move(word), line};
    }

    std::string read_symbol() {
        const auto two = text_.substr(pos_, 2);
        const auto length = (two == "::" || two == "||") ? 2 : 1;
        std::string symbol(text_.substr(pos_, length));
        advance(length);
        return symbol;
    }

    std::string_view text_;
    std::string source_;
    ddl_lex_rules rules_;
    ddl_lex_notes notes_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;
    bool line_start_ = true;  ///< Only blanks since the last line break: `#` starts a comment.
};

}  // namespace tabret::detail
