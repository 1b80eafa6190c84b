#pragma once
/// @file rewriting/parsers.hpp
/// @brief Robust parsers of LLM answers: hallucinated schemas (CRUSH), table completions
/// (MURRE), `concept:attribute` decompositions (JAR) and single questions (RE, MURRE without
/// tabulation).
///
/// Every parser first splits the answer into content lines (text.hpp, content_lines): CRLF, CR
/// and a literal backslash-n break lines; code-fence lines are dropped and their contents kept;
/// list markers (`-`, `*`, `+`, `•`, `1.`, `1)`, `(1)`, `#1`) and enclosing quotes/backticks/`**`
/// are stripped; blank lines are dropped. A made-up next few-shot example (a later line starting
/// `Question: ` or `Table: `, as completion-style models write) is cut off first. All parsers
/// are pure functions and thread-safe, linear in the answer's length, and refuse an answer of
/// more than max_answer_bytes (an llm_parse_error): no prompt here asks for more than a few
/// hundred lines.

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/rewriting/text.hpp"

namespace tabret {

/**
 * @brief An LLM answer that yields nothing usable. A parse_error whose source is
 * `LLM answer (<parser>)`; answer() returns the raw text so the caller can log or retry.
 */
class llm_parse_error : public parse_error {
  public:
    llm_parse_error(std::string parser, std::string answer, const std::string& what)
        : parse_error(fmt::format("LLM answer ({})", parser), 0,
                      fmt::format("{}; answer: \"{}\"", what, excerpt(answer))),
          parser_(std::move(parser)),
          answer_(std::move(answer)) {}

    /// Which parser failed: "hallucinated schema", "completion", "decomposition", "question".
    [[nodiscard]] const std::string& parser() const noexcept { return parser_; }
    /// The raw answer text.
    [[nodiscard]] const std::string& answer() const noexcept { return answer_; }

  private:
    static std::string excerpt(std::string_view s) {
        auto one_line = detail::rw::collapse_spaces(s);
        if (one_line.size() > 160) one_line = one_line.substr(0, 157) + "...";
        return one_line;
    }
    std::string parser_;
    std::string answer_;
};

/** @brief One hallucinated schema element: CRUSH embeds `table.column` (text()). */
/// The longest LLM answer a parser reads (1 MiB): a longer one is a model gone wrong, refused
/// before any work (llm_parse_error).
inline constexpr std::size_t max_answer_bytes = std::size_t{1} << 20;

namespace detail::rw {
/// @throws llm_parse_error (of @p parser) when @p text is over max_answer_bytes.
inline void check_answer_size(const char* parser, std::string_view text) {
    if (text.size() <= max_answer_bytes) return;
    throw llm_parse_error(parser, std::string(text.substr(0, 4096)),
                          fmt::format("an answer of {} bytes, over the {} bytes a parser reads "
                                      "(max_answer_bytes)",
                                      text.size(), max_answer_bytes));
}
}  // namespace detail::rw

struct probe {
    std::string table;   ///< Empty for the whole-answer fallback probe.
    std::string column;  ///< Empty for a table written without columns.
    /// `table.column`, or whichever of the two is non-empty.
    [[nodiscard]] std::string text() const {
        if (table.empty()) return column;
        if (column.empty()) return table;
        return fmt::format("{}.{}", table, column);
    }
    friend bool operator==(const probe&, const probe&) = default;
};

/** @brief What parse_hallucinated_schema does when no `name(col, …)` is found. */
enum class schema_fallback {
    whole_answer,  ///< CRUSH reference behaviour: the whole answer becomes one probe.
    fail,          ///< Throw llm_parse_error.
};

/** @brief A MURRE completion: stop (the path already answers the question) or new queries. */
struct completion {
    bool stop = false;
    std::vector<std::string> lines;  ///< One query per line; empty when stop.
    friend bool operator==(const completion&, const completion&) = default;
};

/** @brief What the MURRE prompt asked for. */
enum class completion_form {
    tables,    ///< Tabulated: missing tables as `db.table(cols)` lines.
    question,  ///< No tabulation: a rewritten natural-language question.
};

/**
 * @brief One JAR sub-query `concept:attribute`; attribute may be empty (`concept` alone).
 * (`concept` is a C++20 keyword, hence `concept_name`.)
 */
struct subquery {
    std::string concept_name;  ///< The kind of thing ("singers").
    std::string attribute;     ///< Its property ("age"); empty if none was given.
    /// `concept:attribute`, or the concept alone.
    [[nodiscard]] std::string text() const {
        return attribute.empty() ? concept_name : fmt::format("{}:{}", concept_name, attribute);
    }
    friend bool operator==(const subquery&, const subquery&) = default;
};

namespace detail::rw {

/// A `name(col, col, …)` found in a line.
struct table_item {
    std::string name;
    std::vector<std::string> columns;
};

/// How table items are cleaned: CRUSH turns `/` and `-` into spaces and allows names of up to
/// 4 words; MURRE keeps the text and allows names of up to 8 words (natural-language names).
enum class item_mode { crush, murre };

/// Words that start prose rather than a table name ("We need schools(…)" → "schools").
inline bool is_lead_word(std::string_view w) {
    static constexpr std::array<std::string_view, 53> words = {
        "the",     "a",         "an",         "we",     "you",     "i",       "need",   "needs",
        "needed",  "use",       "using",      "uses",   "table",   "tables",  "schema", "is",
        "are",     "and",       "or",         "with",   "from",    "of",      "also",   "here",
        "it",      "then",      "plus",       "&",      "would",   "could",   "should", "be",
        "called",  "named",     "like",       "as",     "such",    "for",     "in",     "to",
        "this",    "that",      "these",      "those",  "another", "finally", "next",   "add",
        "missing", "remaining", "completing", "answer", "create"};
    const auto l = to_lower(w);
    return std::find(words.begin(), words.end(), l) != words.end();
}

/// Words after a `)` that still belong to a table line ("club(id) which stores clubs").
inline bool is_follow_word(std::string_view w) {
    static constexpr std::array<std::string_view, 26> words = {
        "and",     "or",      "plus",   "which",   "that",     "for",      "to",
        "with",    "storing", "stores", "holding", "holds",    "contains", "containing",
        "linking", "links",   "where",  "because", "as",       "since",    "from",
        "in",      "so",      "giving", "gives",   "providing"};
    const auto l = to_lower(w);
    return std::find(words.begin(), words.end(), l) != words.end();
}

inline bool is_type_word(std::string_view w) {
    static constexpr std::array<std::string_view, 27> words = {
        "INT",      "INTEGER",   "BIGINT",  "SMALLINT", "TEXT",    "VARCHAR", "CHAR",
        "STRING",   "REAL",      "FLOAT",   "DOUBLE",   "NUMERIC", "DECIMAL", "DATE",
        "DATETIME", "TIMESTAMP", "BOOLEAN", "BOOL",     "BLOB",    "PRIMARY", "FOREIGN",
        "KEY",      "NOT",       "NULL",    "UNIQUE",   "PK",      "FK"};
    return std::find(words.begin(), words.end(), w) != words.end();
}

inline std::vector<std::string> split_words(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (is_space(c)) {
            if (!cur.empty()) out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

inline std::string join_words(const std::vector<std::string>& w, std::size_t from = 0) {
    std::string out;
    for (std::size_t i = from; i < w.size(); ++i) {
        if (!out.empty()) out.push_back(' ');
        out += w[i];
    }
    return out;
}

inline bool has_alnum(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) { return is_alnum(c); });
}

inline std::string crush_spaces(std::string s) {
    std::replace(s.begin(), s.end(), '/', ' ');
    std::replace(s.begin(), s.end(), '-', ' ');
    return collapse_spaces(s);
}

/// Cleans the text before a `(` into a table name; empty if it is not one.
inline std::string clean_table_name(std::string_view raw, item_mode mode) {
    std::string s(strip_enclosing_quotes(trim(raw)));
    s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
    s.erase(std::remove(s.begin(), s.end(), '*'), s.end());
    if (mode == item_mode::crush) s = crush_spaces(s);
    auto words = split_words(s);
    // A `db.table` word starts the name ("also need car_1.car makers" → "car_1.car makers").
    for (std::size_t i = words.size(); i-- > 0;) {
        const auto dot = words[i].find('.');
        if (dot != std::string::npos && dot > 0 && dot + 1 < words[i].size()) {
            words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(i));
            break;
        }
    }
    const std::size_t max_words = mode == item_mode::crush ? 4 : 8;
    if (words.size() > max_words)
        words.erase(words.begin(), words.end() - static_cast<std::ptrdiff_t>(max_words));
    std::size_t from = 0;
    while (from + 1 < words.size() && is_lead_word(words[from])) ++from;
    auto name = join_words(words, from);
    name = std::string(strip_enclosing_quotes(name));
    return has_alnum(name) ? name : std::string{};
}

/// Cleans one column of a `name(…)` list; empty if nothing is left.
inline std::string clean_column(std::string_view raw, item_mode mode) {
    // Nested parentheses: a size such as (20) or (10, 2) goes, other contents stay ("price usd").
    std::string s;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '(') {
            const auto close = raw.find(')', i);
            const auto inner =
                raw.substr(i + 1, (close == std::string_view::npos ? raw.size() : close) - i - 1);
            const bool numeric = std::all_of(inner.begin(), inner.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || is_space(c);
            });
            if (!numeric) s += fmt::format(" {} ", inner);
            if (close == std::string_view::npos) break;
            i = close;
        } else if (raw[i] != ')') {
            s.push_back(raw[i]);
        }
    }
    s = std::string(strip_enclosing_quotes(trim(s)));
    s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
    if (mode == item_mode::crush) s = crush_spaces(s);
    auto words = split_words(s);
    while (words.size() > 1 && is_type_word(words.back())) words.pop_back();
    std::size_t from = 0;
    if (words.size() > 1 && (iequals(words[0], "and") || iequals(words[0], "or"))) from = 1;
    auto col = std::string(strip_enclosing_quotes(join_words(words, from)));
    if (col == "..." || col == "\xE2\x80\xA6" || iequals(col, "etc") || iequals(col, "etc."))
        return {};
    return has_alnum(col) ? col : std::string{};
}

/// Splits at top-level commas and semicolons (parentheses nest).
inline std::vector<std::string> split_top_level(std::string_view s) {
    std::vector<std::string> out;
    int depth = 0;
    std::string cur;
    for (char c : s) {
        if (c == '(') ++depth;
        if (c == ')' && depth > 0) --depth;
        if ((c == ',' || c == ';') && depth == 0) {
            out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    out.push_back(std::move(cur));
    return out;
}

/// True if the text after a `)` still looks like part of a schema line.
inline bool follow_ok(std::string_view after) {
    after = trim(after);
    if (after.empty()) return true;
    static constexpr std::string_view punct = ",;.:|#-=>\xE2";  // \xE2 starts — – →
    if (punct.find(after.front()) != std::string_view::npos) return true;
    if (after.front() == '(') return true;
    const auto words = split_words(after);
    if (!words.empty() && is_follow_word(words.front())) return true;
    // Another item follows on the same line ("club(id) member(club_id)").
    const auto next_sep = after.find_first_of(",;");
    return after.substr(0, next_sep).find('(') != std::string_view::npos;
}

/// Every `name(col, …)` in @p line, left to right.
inline std::vector<table_item> scan_table_items(std::string_view line, item_mode mode) {
    std::vector<table_item> items;
    std::size_t name_from = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == ',' || c == ';' || c == ':' || c == '|' ||
            ((c == '.' || c == '!' || c == '?') &&
             (i + 1 == line.size() || is_space(line[i + 1])))) {
            name_from = i + 1;
            continue;
        }
        if (c != '(') continue;
        std::size_t close = i;
        for (int depth = 0; close < line.size(); ++close) {
            if (line[close] == '(') ++depth;
            if (line[close] == ')' && --depth == 0) break;
        }
        const auto inner_end = std::min(close, line.size());
        const auto name = clean_table_name(line.substr(name_from, i - name_from), mode);
        const auto after = close < line.size() ? line.substr(close + 1) : std::string_view{};
        if (!name.empty() && follow_ok(after)) {
            table_item item{name, {}};
            for (const auto& raw : split_top_level(line.substr(i + 1, inner_end - i - 1)))
                if (auto col = clean_column(raw, mode); !col.empty())
                    item.columns.push_back(std::move(col));
            items.push_back(std::move(item));
        }
        i = inner_end;
        name_from = std::min(inner_end + 1, line.size());
    }
    return items;
}

/// Text after a leading label (`Completing Tables: x` → `x`): a prefix before the first `:`
/// of at most @p max_words words with no `(` or `?`; with @p keyword_only, the prefix must also
/// name a question/answer (`Question:`, `Rewritten question:`, `Answer:`, `Q:`). Returns the line
/// unchanged when there is no such label.
inline std::string_view after_label(std::string_view line, std::size_t max_words,
                                    bool keyword_only) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return line;
    const auto prefix = line.substr(0, colon);
    if (prefix.find_first_of("(?") != std::string_view::npos) return line;
    const auto words = word_tokens(prefix);
    if (words.empty() || words.size() > max_words) return line;
    if (keyword_only) {
        static constexpr std::array<std::string_view, 8> keys = {
            "question", "questions", "rewritten", "rewrite", "answer", "output", "result", "q"};
        const bool named = std::any_of(words.begin(), words.end(), [](const auto& w) {
            return std::find(keys.begin(), keys.end(), w) != keys.end();
        });
        if (!named) return line;
    }
    return trim(line.substr(colon + 1));
}

/// Strips a courtesy preface: a line opened by sure/certainly/ok/here/… loses everything up to
/// its first `:` ("Sure! Here are the tables: x" → "x"), or entirely if it has no colon and at
/// most 8 words ("Sure!", "Here you go."). A header line ending in `:` without `(` goes too.
inline std::string_view strip_preface(std::string_view line) {
    line = trim(line);
    const auto words = word_tokens(line);
    if (words.empty()) return {};
    static constexpr std::array<std::string_view, 10> openers = {
        "sure", "certainly", "ok", "okay", "here", "absolutely", "great", "alright", "of", "based"};
    const bool opener = std::find(openers.begin(), openers.end(), words[0]) != openers.end() &&
                        (words[0] != "of" || (words.size() > 1 && words[1] == "course"));
    if (opener) {
        const auto colon = line.find(':');
        if (colon != std::string_view::npos) return trim(line.substr(colon + 1));
        if (words.size() <= 8) return {};
    }
    if (line.back() == ':' && line.find('(') == std::string_view::npos) return {};
    return line;
}

/// Which labels answer_lines removes.
enum class label_mode { any, question };

/// Content lines with prefaces, headers and leading labels removed; empty lines dropped.
inline std::vector<std::string> answer_lines(std::string_view text, label_mode mode) {
    std::vector<std::string> out;
    for (const auto& line : content_lines(text)) {
        auto rest = strip_preface(line);
        rest = mode == label_mode::any ? after_label(rest, 5, false) : after_label(rest, 6, true);
        // "**Question:** x" leaves "** x" behind the label.
        while (rest.starts_with('*')) rest = trim(rest.substr(1));
        rest = trim(strip_enclosing_quotes(rest));
        if (!rest.empty()) out.emplace_back(rest);
    }
    return out;
}

/// MURRE's "nothing is missing" answers: `None`, `N/A`, "No additional tables (are needed)",
/// "None needed", "The retrieved tables are sufficient", …
inline bool is_none_answer(std::string_view line) {
    // A question is never a "nothing missing" answer, and a parenthetical does not decide.
    if (line.find('?') != std::string_view::npos) return false;
    std::string plain;
    int depth = 0;
    for (char c : line) {
        if (c == '(') ++depth;
        if (depth == 0) plain.push_back(c);
        if (c == ')' && depth > 0) --depth;
    }
    const auto w = word_tokens(plain);
    if (w.empty()) return false;
    const auto joined = fmt::format(" {} ", fmt::join(w, " "));
    if (w.size() == 1)
        return w[0] == "none" || w[0] == "null" || w[0] == "nothing" || w[0] == "no" ||
               w[0] == "nil";
    if (w.size() == 2 && w[0] == "n" && w[1] == "a") return true;
    if (w[0] == "none" && w[1] != "of") return true;
    if (w[0] == "none" && w[1] == "of") {
        for (std::string_view tail : {" needed ", " required ", " necessary ", " missing "})
            if (joined.find(tail) != std::string::npos) return true;
        return false;
    }
    static constexpr std::array<std::string_view, 38> phrases = {" no additional ",
                                                                 " no more table",
                                                                 " no further ",
                                                                 " no other table",
                                                                 " no remaining ",
                                                                 " no extra ",
                                                                 " no missing ",
                                                                 " no left ",
                                                                 " no new table",
                                                                 " no tables ",
                                                                 " no table ",
                                                                 " nothing is missing ",
                                                                 " nothing else ",
                                                                 " nothing more ",
                                                                 " are sufficient ",
                                                                 " is sufficient ",
                                                                 " already sufficient ",
                                                                 " already complete ",
                                                                 " already answer",
                                                                 " already cover",
                                                                 " not need any ",
                                                                 " no need for ",
                                                                 " been retrieved ",
                                                                 " already been ",
                                                                 " already be answered ",
                                                                 " can be answered ",
                                                                 " already retrieved ",
                                                                 " already provided ",
                                                                 " already given ",
                                                                 " already present ",
                                                                 " already included ",
                                                                 " all needed ",
                                                                 " all the needed ",
                                                                 " all required ",
                                                                 " all the required ",
                                                                 " all necessary ",
                                                                 " all the necessary ",
                                                                 " enough to answer "};
    return std::any_of(phrases.begin(), phrases.end(),
                       [&](std::string_view p) { return joined.find(p) != std::string::npos; });
}

inline std::string render_item(const table_item& item) {
    return fmt::format("{}({})", item.name, fmt::join(item.columns, ", "));
}

/// Cuts a completion-style continuation: from the first line after some content that starts a
/// new few-shot example (`Question: ` or `Table: `, as the built-in templates write them), the
/// rest of the answer is the model making up the next example.
inline std::string_view cut_continuation(std::string_view text) {
    bool content = false;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const auto line = trim(text.substr(pos, end - pos));
        if (content && (line.starts_with("Question: ") || line.starts_with("Table: ")))
            return text.substr(0, pos);
        if (!line.empty() && !is_fence(line)) content = true;
        pos = end + 1;
    }
    return text;
}

/// MURRE answers that echo the prompt ("Retrieved tables: … Missing tables: None"): the part
/// from the last line labelled as the answer (`Missing tables:`, `Completing tables:`,
/// `Remaining question:` …) on; the whole text when there is no such line.
inline std::string_view from_answer_label(std::string_view text) {
    static constexpr std::array<std::string_view, 8> labels = {
        "missing tables",    "completing tables", "completed tables",   "remaining tables",
        "additional tables", "left tables",       "remaining question", "rewritten question"};
    std::size_t found = std::string_view::npos;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        auto line = strip_list_marker(text.substr(pos, end - pos));
        while (line.starts_with('*') || line.starts_with('#')) line = trim(line.substr(1));
        for (auto label : labels)
            if (istarts_with(line, label)) found = pos;
        pos = end + 1;
    }
    return found == std::string_view::npos ? text : text.substr(found);
}

/// Drops a leading quote that has no partner ("\"How many?\" It uses…" cut after `?`).
inline std::string_view strip_unbalanced_quote(std::string_view s) {
    s = trim(s);
    if (s.empty() || (s.front() != '"' && s.front() != '\'')) return s;
    if (std::count(s.begin(), s.end(), s.front()) % 2 == 1) s.remove_prefix(1);
    if (s.starts_with("\xE2\x80\x9C") && s.find("\xE2\x80\x9D") == std::string_view::npos)
        s.remove_prefix(3);
    return trim(s);
}

/// What makes two parsed values the same (a probe: its table and its column).
inline std::string unique_key(const std::string& s) { return s; }
inline std::string unique_key(const probe& p) { return fmt::format("{}\x1f{}", p.table, p.column); }

/// Appends to a list the values it does not hold yet, in first-seen order, with one hash
/// look-up a value (a scan of the list per value made a 100k-line answer quadratic).
template <class T>
class unique_appender {
  public:
    explicit unique_appender(std::vector<T>& out) : out_(out) {
        for (const auto& x : out_) seen_.insert(unique_key(x));
    }
    void operator()(T x) {
        if (seen_.insert(unique_key(x)).second) out_.push_back(std::move(x));
    }

  private:
    std::vector<T>& out_;
    std::unordered_set<std::string> seen_;
};

}  // namespace detail::rw

/**
 * @brief Parses a CRUSH hallucinated schema (`club(name, id), member_of_club(club_id, …)`) into
 * one probe per hallucinated column.
 *
 * Reference parsing, made robust: per content line, the text after a leading label (`Tables:`);
 * `/` and `-` become spaces; every `name(col, col, …)` is an item (several per line, separated by
 * commas, `and`, or nothing). Prose before a name is dropped ("We need schools(…)"); a
 * parenthesis followed by prose ("This (with two tables) works") is not an item; SQL types and
 * constraints written in capitals after a column (`id INT PRIMARY KEY`) and sizes (`(20)`) are
 * dropped; `...`/`etc` columns are dropped; a table without columns gives one probe with an empty
 * column. Duplicate probes are kept once.
 *
 * @returns the probes in answer order. With schema_fallback::whole_answer (default) an answer
 * without any item becomes one probe whose column is the whole answer (lines joined by spaces).
 * @throws llm_parse_error for an empty answer, or for no item under schema_fallback::fail.
 */
inline std::vector<probe> parse_hallucinated_schema(
    std::string_view text, schema_fallback fallback = schema_fallback::whole_answer) {
    detail::rw::check_answer_size("hallucinated schema", text);
    const auto lines = detail::rw::content_lines(detail::rw::cut_continuation(text));
    if (lines.empty())
        throw llm_parse_error("hallucinated schema", std::string(text), "empty answer");
    std::vector<probe> probes;
    detail::rw::unique_appender<probe> add(probes);
    for (const auto& line : lines) {
        for (const auto& item : detail::rw::scan_table_items(line, detail::rw::item_mode::crush)) {
            if (item.columns.empty()) add(probe{item.name, {}});
            for (const auto& col : item.columns) add(probe{item.name, col});
        }
    }
    if (!probes.empty()) return probes;
    if (fallback == schema_fallback::fail)
        throw llm_parse_error("hallucinated schema", std::string(text),
                              "no 'name(column, ...)' found");
    return {probe{{}, detail::rw::collapse_spaces(fmt::format("{}", fmt::join(lines, " ")))}};
}

/**
 * @brief Parses a single question (RE's table → question; MURRE without tabulation).
 *
 * Drops filler ("Sure! Here is a question:") and labels (`Question:`, `Rewritten question:`);
 * takes the first line with a `?` (cut after its last `?`, so a trailing explanation goes),
 * else the first remaining line; strips quotes; collapses whitespace. Several questions: the
 * first wins.
 * @throws llm_parse_error for an empty answer or one with only filler.
 */
inline std::string parse_question(std::string_view text) {
    detail::rw::check_answer_size("question", text);
    const auto lines = detail::rw::answer_lines(detail::rw::cut_continuation(text),
                                                detail::rw::label_mode::question);
    if (lines.empty()) throw llm_parse_error("question", std::string(text), "no question found");
    auto pick = lines.front();
    for (const auto& l : lines) {
        const auto q = l.rfind('?');
        if (q != std::string::npos) {
            pick = l.substr(0, q + 1);
            break;
        }
    }
    auto out = detail::rw::collapse_spaces(
        detail::rw::strip_unbalanced_quote(detail::rw::strip_enclosing_quotes(pick)));
    if (out.empty()) throw llm_parse_error("question", std::string(text), "no question found");
    return out;
}

/**
 * @brief Parses a MURRE completion.
 *
 * An answer that echoes the prompt counts from its last answer label on (`Missing tables:`,
 * `Completing tables:`, `Remaining question:` …).
 * The first decisive line (filler such as "Sure." and bare headers skipped, labels such as
 * `Completing Tables:` removed) decides: if it holds no table and reads as a "nothing missing"
 * answer (`None`, `N/A`, "No additional tables are needed", "None needed", "The retrieved tables
 * are sufficient", …) the result is stop, whatever follows.
 * Otherwise, for completion_form::tables: every `name(cols)` in the answer becomes one line,
 * re-rendered as `name(col, col)` (prose and explanations dropped); an answer without any such
 * item keeps its remaining lines as they are. For completion_form::question: the single line of
 * parse_question.
 * @throws llm_parse_error for an empty answer (or one with only filler).
 */
inline completion parse_completion(std::string_view text,
                                   completion_form form = completion_form::tables) {
    detail::rw::check_answer_size("completion", text);
    const auto body = detail::rw::from_answer_label(detail::rw::cut_continuation(text));
    const auto lines = detail::rw::answer_lines(body, detail::rw::label_mode::any);
    if (lines.empty()) throw llm_parse_error("completion", std::string(text), "empty answer");
    const bool first_has_table =
        !detail::rw::scan_table_items(lines.front(), detail::rw::item_mode::murre).empty();
    if (!first_has_table && detail::rw::is_none_answer(lines.front())) return {true, {}};
    if (form == completion_form::question) return {false, {parse_question(body)}};
    completion out;
    detail::rw::unique_appender<std::string> add(out.lines);
    for (const auto& line : lines)
        for (const auto& item : detail::rw::scan_table_items(line, detail::rw::item_mode::murre))
            add(detail::rw::render_item(item));
    if (out.lines.empty())
        for (const auto& line : lines) add(detail::rw::collapse_spaces(line));
    return out;
}

namespace detail::rw {

/// Known labels before a decomposition ("Sub-queries: a:b"). `Answer:`, `Output:` and
/// `Result:` could also be concepts ("result:Q1"), so they count as labels only before another
/// `concept:attribute` or alone.
inline std::string_view strip_decomposition_label(std::string_view line) {
    for (std::string_view label : {"sub-queries", "subqueries", "sub queries", "sub-query",
                                   "subquery", "decomposition", "answer", "output", "result"}) {
        if (!istarts_with(line, label)) continue;
        auto rest = trim(line.substr(label.size()));
        if (rest.empty()) return {};  // a bare heading
        if (!rest.starts_with(':')) continue;
        rest = trim(rest.substr(1));
        const bool weak = label == "answer" || label == "output" || label == "result";
        if (!weak || rest.empty() || rest.find(':') != std::string_view::npos) return rest;
    }
    return line;
}

/// Prose rather than a sub-query: a sentence, or a line opened by a commenting word.
inline bool is_prose(std::string_view line) {
    const auto words = split_words(line);
    const auto t = trim(line);
    if (words.size() >= 5 && (t.back() == '.' || t.back() == '!')) return true;
    static constexpr std::array<std::string_view, 14> openers = {
        "note", "explanation", "reasoning", "here", "sure", "these", "this",
        "each", "i",           "we",        "so",   "in",   "thus",  "therefore"};
    const auto first = word_tokens(words.empty() ? std::string_view{} : words[0]);
    return words.size() >= 4 && !first.empty() &&
           std::find(openers.begin(), openers.end(), first[0]) != openers.end();
}

/// `["a:b", "c"]` or `['a:b', 'c']` on one line → its items; otherwise the line itself.
inline std::vector<std::string> unbracket(std::string_view line) {
    line = trim(line);
    if (!(line.starts_with('[') && line.ends_with(']'))) return {std::string(line)};
    const auto j = nlohmann::json::parse(line, nullptr, false);
    std::vector<std::string> out;
    if (j.is_array() &&
        std::all_of(j.begin(), j.end(), [](const auto& x) { return x.is_string(); })) {
        for (const auto& x : j) out.push_back(x.template get<std::string>());
        return out;
    }
    // Python-style single quotes: split on commas outside quotes.
    std::string cur;
    char quote = 0;
    for (char c : line.substr(1, line.size() - 2)) {
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                cur.push_back(c);
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == ',') {
            out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    out.push_back(std::move(cur));
    return out;
}

/// One line may hold several sub-queries only when every comma/semicolon piece has a colon
/// ("singers:name, singers:age"); otherwise commas belong to the text ("location:Adelaide, SA").
inline std::vector<std::string> split_subqueries(std::string_view line) {
    std::vector<std::string> pieces;
    std::string cur;
    for (char c : line) {
        if (c == ',' || c == ';') {
            pieces.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    pieces.push_back(std::move(cur));
    const bool all_colon =
        pieces.size() > 1 && std::all_of(pieces.begin(), pieces.end(), [](const auto& p) {
            return p.find(':') != std::string::npos;
        });
    if (all_colon) return pieces;
    return {std::string(line)};
}

inline std::optional<subquery> to_subquery(std::string_view raw) {
    // "pilot -> name" and "pilot → name" are read as "pilot:name".
    std::string text(strip_enclosing_quotes(trim(raw)));
    for (std::string_view arrow : {"->", "\xE2\x86\x92"})
        if (const auto a = text.find(arrow);
            a != std::string::npos && text.find(':') == std::string::npos)
            text.replace(a, arrow.size(), ":");
    const std::string_view item = text;
    const auto colon = item.find(':');
    std::string concept_name(strip_enclosing_quotes(item.substr(0, colon)));
    std::string attribute = colon == std::string_view::npos
                                ? std::string{}
                                : std::string(strip_enclosing_quotes(item.substr(colon + 1)));
    concept_name = collapse_spaces(concept_name);
    attribute = collapse_spaces(attribute);
    if (concept_name.empty()) std::swap(concept_name, attribute);
    if (!has_alnum(concept_name)) return std::nullopt;
    if (split_words(concept_name).size() > 8 || split_words(attribute).size() > 10)
        return std::nullopt;
    return subquery{std::move(concept_name), std::move(attribute)};
}

}  // namespace detail::rw

/**
 * @brief Parses a JAR decomposition: one `concept:attribute` sub-query per line (a line without
 * a colon is a concept alone; text after the first colon is the attribute, later colons stay in
 * it).
 *
 * Also accepted: a JSON or Python list on one line (`["a:b", "c"]`), several sub-queries on one
 * line when every comma/semicolon piece has a colon, labels (`Sub-queries:`), filler and
 * headers ("Here is the decomposition:"), prose lines (a sentence of 5+ words ending in `.`/`!`,
 * or a line of 4+ words opened by note/explanation/this/these/…). Duplicates
 * (case-insensitive) are kept once.
 * @throws llm_parse_error for an empty answer or one without any sub-query.
 */
inline std::vector<subquery> parse_decomposition(std::string_view text) {
    detail::rw::check_answer_size("decomposition", text);
    std::vector<subquery> out;
    std::unordered_set<std::string> seen;
    for (const auto& raw : detail::rw::content_lines(detail::rw::cut_continuation(text))) {
        const auto line = detail::rw::strip_decomposition_label(detail::rw::strip_preface(raw));
        if (line.empty() || detail::rw::is_prose(line)) continue;
        for (const auto& part : detail::rw::unbracket(line))
            for (const auto& piece : detail::rw::split_subqueries(part)) {
                auto sq = detail::rw::to_subquery(piece);
                if (!sq) continue;
                if (!seen.insert(detail::rw::to_lower(sq->text())).second) continue;
                out.push_back(std::move(*sq));
            }
    }
    if (out.empty())
        throw llm_parse_error("decomposition", std::string(text), "no 'concept:attribute' found");
    return out;
}

}  // namespace tabret
