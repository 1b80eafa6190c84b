#pragma once
/// @file rewriting/prompts.hpp
/// @brief Prompt templates: a tiny safe `{placeholder}` substitutor and a named, overridable set
/// loaded from a directory of `*.txt` files (the package data dir `tabret/data/prompts`).

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tabret/error.hpp"
#include "tabret/io/text_file.hpp"

namespace tabret {

/** @brief A prompt template that is malformed, lacks a value, or is not in the set. */
class template_error : public error {
  public:
    using error::error;
};

/// Values for a template's placeholders, by name. Extra values are allowed and ignored.
using prompt_values = std::map<std::string, std::string, std::less<>>;

/// The line that carries the question in every built-in template that takes one: the *last*
/// line of a rendered prompt starting with this marker holds the question (see replay_llm.hpp).
inline constexpr std::string_view question_marker = "Question: ";

/**
 * @brief One template. Syntax: `{name}` is a placeholder (`name` = letters, digits, `_`, not
 * starting with a digit); `{{` and `}}` are literal braces; any other brace is an error.
 *
 * Immutable once built; every method is thread-safe.
 */
class prompt_template {
  public:
    /** @brief Parses @p text. @throws template_error naming @p name, line and column. */
    prompt_template(std::string name, std::string text)
        : name_(std::move(name)), text_(std::move(text)) {
        parse();
    }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const std::string& text() const noexcept { return text_; }

    /** @brief Distinct placeholder names in order of first use. */
    [[nodiscard]] std::vector<std::string> placeholders() const {
        std::vector<std::string> out;
        for (const auto& s : segments_)
            if (s.placeholder && std::find(out.begin(), out.end(), s.text) == out.end())
                out.push_back(s.text);
        return out;
    }

    /**
     * @brief Substitutes every placeholder; values are inserted verbatim (never re-parsed).
     * @throws template_error naming the template and the first placeholder without a value.
     */
    [[nodiscard]] std::string render(const prompt_values& values) const {
        std::string out;
        for (const auto& s : segments_) {
            if (!s.placeholder) {
                out += s.text;
                continue;
            }
            const auto it = values.find(s.text);
            if (it == values.end())
                throw template_error(fmt::format(
                    "prompt template '{}': no value for placeholder {{{}}}", name_, s.text));
            out += it->second;
        }
        return out;
    }

  private:
    struct segment {
        bool placeholder;
        std::string text;
    };

    [[noreturn]] void fail(std::size_t pos, std::string_view what) const {
        const auto before = std::string_view(text_).substr(0, pos);
        const auto line = 1 + std::count(before.begin(), before.end(), '\n');
        const auto nl = before.rfind('\n');
        const auto col = pos - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
        throw template_error(
            fmt::format("prompt template '{}', line {}, column {}: {}", name_, line, col, what));
    }

    static bool name_char(char c, bool first) {
        const auto u = static_cast<unsigned char>(c);
        return c == '_' || std::isalpha(u) || (!first && std::isdigit(u));
    }

    void parse() {
        std::string lit;
        for (std::size_t i = 0; i < text_.size(); ++i) {
            const char c = text_[i];
            const bool doubled = i + 1 < text_.size() && text_[i + 1] == c;
            if ((c == '{' || c == '}') && doubled) {
                lit.push_back(c);
                ++i;
            } else if (c == '}') {
                fail(i, "single '}' (write '}}' for a literal brace)");
            } else if (c == '{') {
                const auto close = text_.find('}', i + 1);
                if (close == std::string::npos) fail(i, "unterminated placeholder");
                std::string name = text_.substr(i + 1, close - i - 1);
                if (name.empty() || !valid_name(name))
                    fail(i, fmt::format("bad placeholder '{{{}}}' (write '{{{{' for a literal "
                                        "brace)",
                                        name));
                if (!lit.empty()) segments_.push_back({false, std::move(lit)});
                lit.clear();
                segments_.push_back({true, std::move(name)});
                i = close;
            } else {
                lit.push_back(c);
            }
        }
        if (!lit.empty()) segments_.push_back({false, std::move(lit)});
    }

    static bool valid_name(std::string_view name) {
        for (std::size_t i = 0; i < name.size(); ++i)
            if (!name_char(name[i], i == 0)) return false;
        return true;
    }

    std::string name_;
    std::string text_;
    std::vector<segment> segments_;
};

/** @brief What a built-in template must and may use. */
struct prompt_spec {
    std::string_view name;
    std::vector<std::string_view> required;  ///< Placeholders it must contain.
    std::vector<std::string_view> allowed;   ///< Placeholders it may contain (⊇ required).
};

/**
 * @brief The built-in templates shipped in `tabret/data/prompts/<name>.txt`:
 * - `crush_spider`, `crush_bird`: CRUSH schema hallucination, `{question}`.
 * - `murre_tabulated`: MURRE completion of the missing tables, `{question}` and `{tables}` (the
 *   path's tables, one `db.table(cols)` per line); answers tables or `None`.
 * - `murre_question`: the no-tabulation variant, same placeholders; answers a rewritten question
 *   or `None`.
 * - `jar_decompose`: decomposition into `concept:attribute` lines, `{question}`.
 * - `reverse_question`: RE's table → question, `{table}` (one `db.table(cols)`).
 */
inline const std::vector<prompt_spec>& builtin_prompts() {
    static const std::vector<prompt_spec> specs = {
        {"crush_spider", {"question"}, {"question"}},
        {"crush_bird", {"question"}, {"question"}},
        {"murre_tabulated", {"question", "tables"}, {"question", "tables"}},
        {"murre_question", {"question", "tables"}, {"question", "tables"}},
        {"jar_decompose", {"question"}, {"question"}},
        {"reverse_question", {"table"}, {"table"}},
    };
    return specs;
}

/**
 * @brief A named set of templates. Load the shipped ones from the package data directory (the
 * caller passes it: Python knows where its package lives), then override any by name.
 *
 * A template whose name is built-in is checked on the way in: it must use every required
 * placeholder and no placeholder outside the allowed ones. Other names are free-form.
 * Building (load_directory, set) is not thread-safe; const members are.
 */
class prompt_set {
  public:
    prompt_set() = default;

    /** @brief Every `*.txt` in @p dir, named by file stem. @throws io_error, template_error. */
    static prompt_set from_directory(const std::filesystem::path& dir) {
        prompt_set set;
        set.load_directory(dir);
        return set;
    }

    /** @brief Adds or overrides the templates of every `*.txt` in @p dir. */
    void load_directory(const std::filesystem::path& dir) {
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec))
            throw io_error(fmt::format("{}: prompt directory not found", dir.string()));
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::directory_iterator(dir))
            if (entry.is_regular_file() && entry.path().extension() == ".txt")
                files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) set_from_file(f.stem().string(), f);
    }

    /** @brief Adds or overrides template @p name. @throws template_error. */
    void set(std::string name, std::string text) {
        prompt_template t(name, std::move(text));
        validate(t);
        templates_.insert_or_assign(std::move(name), std::move(t));
    }

    /**
     * @brief Adds or overrides template @p name from a file (UTF-8).
     * @throws io_error, parse_error (not UTF-8), template_error.
     */
    void set_from_file(std::string name, const std::filesystem::path& file) {
        set(std::move(name), read_utf8_file(file));
    }

    [[nodiscard]] bool contains(std::string_view name) const {
        return templates_.find(name) != templates_.end();
    }

    /** @brief The template @p name. @throws template_error listing the names there are. */
    [[nodiscard]] const prompt_template& at(std::string_view name) const {
        const auto it = templates_.find(name);
        if (it == templates_.end())
            throw template_error(
                fmt::format("no prompt template '{}' (have: {})", name, fmt::join(names(), ", ")));
        return it->second;
    }

    /** @brief Renders template @p name. @throws template_error. */
    [[nodiscard]] std::string render(std::string_view name, const prompt_values& values) const {
        return at(name).render(values);
    }

    /** @brief Template names, sorted. */
    [[nodiscard]] std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& [k, v] : templates_) out.push_back(k);
        return out;
    }

    /** @brief Throws template_error naming every built-in template that is missing. */
    void require_builtins() const {
        std::vector<std::string_view> missing;
        for (const auto& spec : builtin_prompts())
            if (!contains(spec.name)) missing.push_back(spec.name);
        if (!missing.empty())
            throw template_error(
                fmt::format("missing prompt templates: {}", fmt::join(missing, ", ")));
    }

  private:
    static void validate(const prompt_template& t) {
        const auto& specs = builtin_prompts();
        const auto spec = std::find_if(specs.begin(), specs.end(),
                                       [&](const prompt_spec& s) { return s.name == t.name(); });
        if (spec == specs.end()) return;
        const auto used = t.placeholders();
        for (const auto& p : used)
            if (std::find(spec->allowed.begin(), spec->allowed.end(), p) == spec->allowed.end())
                throw template_error(
                    fmt::format("prompt template '{}': unknown placeholder {{{}}} (allowed: {})",
                                t.name(), p, fmt::join(spec->allowed, ", ")));
        for (const auto& r : spec->required)
            if (std::find(used.begin(), used.end(), r) == used.end())
                throw template_error(fmt::format(
                    "prompt template '{}': missing required placeholder {{{}}}", t.name(), r));
    }

    std::map<std::string, prompt_template, std::less<>> templates_;
};

}  // namespace tabret
