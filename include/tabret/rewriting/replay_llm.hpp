#pragma once
/// @file rewriting/replay_llm.hpp
/// @brief Recorded LLM outputs from the papers' own runs, answered by question: CRUSH's
/// hallucinated schemas (BirdUnion) and JAR's decompositions (Spider dev, BIRD dev).
///
/// Questions are matched by text, in two tiers:
/// 1. exact: normalize_question (whitespace runs → one space, trimmed; nothing else changes);
/// 2. loose, only when tier 1 misses: loose_question_key (lower-case runs of ASCII letters and
///    digits, everything else a separator). It absorbs case, punctuation, quote style and
///    mis-decoded UTF-8 (the oldest BIRD revision has `cardsï¼Ÿ` for `cards？`). A loose key
///    shared by two recordings that differ is ambiguous and never matches.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/rewriting/llm.hpp"
#include "tabret/rewriting/parsers.hpp"
#include "tabret/rewriting/prompts.hpp"
#include "tabret/rewriting/rewriter.hpp"
#include "tabret/rewriting/text.hpp"

namespace tabret {

/** @brief Tier-1 key: whitespace runs collapsed to one space, trimmed. Thread-safe. */
inline std::string normalize_question(std::string_view question) {
    return detail::rw::collapse_spaces(question);
}

/** @brief Tier-2 key: lower-case ASCII letter/digit runs joined by one space. Thread-safe. */
inline std::string loose_question_key(std::string_view question) {
    return fmt::format("{}", fmt::join(detail::rw::word_tokens(question), " "));
}

/** @brief What a recording holds. */
enum class recording_kind {
    hallucinated_schema,  ///< Items like `Schools(school_id, county)` (CRUSH).
    decomposition,        ///< Items like `schools:county` (JAR).
};

/** @brief How a question was found. */
enum class question_match { none, exact, loose };

/** @brief A question that has no recording; question() is the text asked for. */
class missing_recording_error : public llm_error {
  public:
    missing_recording_error(std::string_view source, std::string question)
        : llm_error(fmt::format("{}: no recorded answer for question \"{}\"", source, question)),
          question_(std::move(question)) {}
    [[nodiscard]] const std::string& question() const noexcept { return question_; }

  private:
    std::string question_;
};

/**
 * @brief Recorded answers keyed by question (see the file comment for matching).
 *
 * Building (add) is not thread-safe; the const members are.
 */
class replay_source {
  public:
    replay_source(std::string name, recording_kind kind) : name_(std::move(name)), kind_(kind) {}

    /**
     * @brief Records @p items for @p question. A question already recorded keeps its first
     * items; a repeat with different items is counted in conflicts().
     * @returns false if the question was already recorded.
     */
    bool add(std::string_view question, std::vector<std::string> items) {
        auto key = normalize_question(question);
        if (const auto it = exact_.find(key); it != exact_.end()) {
            if (items_[it->second] != items) ++conflicts_;
            return false;
        }
        const auto index = items_.size();
        items_.push_back(std::move(items));
        exact_.emplace(std::move(key), index);
        auto loose = loose_question_key(question);
        if (const auto it = loose_.find(loose); it == loose_.end())
            loose_.emplace(std::move(loose), index);
        else if (it->second != ambiguous && items_[it->second] != items_[index])
            it->second = ambiguous;
        return true;
    }

    /** @brief How @p question would be found. */
    [[nodiscard]] question_match match(std::string_view question) const {
        return lookup(question).second;
    }

    /** @brief The recorded items for @p question, or nullptr. */
    [[nodiscard]] const std::vector<std::string>* find(std::string_view question) const {
        return lookup(question).first;
    }

    /** @brief The recorded items. @throws missing_recording_error quoting the question. */
    [[nodiscard]] const std::vector<std::string>& at(std::string_view question) const {
        if (const auto* items = find(question)) return *items;
        throw missing_recording_error(name_, std::string(question));
    }

    /** @brief The recording as an LLM answer: the items, one per line. @throws like at(). */
    [[nodiscard]] std::string completion(std::string_view question) const {
        return fmt::format("{}", fmt::join(at(question), "\n"));
    }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] recording_kind kind() const noexcept { return kind_; }
    /// Distinct recorded questions (after normalisation).
    [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
    /// Repeated questions whose recordings differ (the first was kept).
    [[nodiscard]] std::size_t conflicts() const noexcept { return conflicts_; }

  private:
    static constexpr std::size_t ambiguous = static_cast<std::size_t>(-1);

    [[nodiscard]] std::pair<const std::vector<std::string>*, question_match> lookup(
        std::string_view question) const {
        if (const auto it = exact_.find(normalize_question(question)); it != exact_.end())
            return {&items_[it->second], question_match::exact};
        if (const auto it = loose_.find(loose_question_key(question));
            it != loose_.end() && it->second != ambiguous)
            return {&items_[it->second], question_match::loose};
        return {nullptr, question_match::none};
    }

    std::string name_;
    recording_kind kind_;
    std::vector<std::vector<std::string>> items_;
    std::unordered_map<std::string, std::size_t> exact_;
    std::unordered_map<std::string, std::size_t> loose_;
    std::size_t conflicts_ = 0;
};

namespace detail::rw {

inline nlohmann::json read_json_file(const std::filesystem::path& path) {
    return detail::parse_json(read_text_file(path), path.string());
}

inline std::vector<std::string> string_list(const json_reader& r, const nlohmann::json& j,
                                            std::string_view field) {
    if (!j.is_array()) r.fail(fmt::format("'{}' is not a list", field));
    std::vector<std::string> out;
    for (const auto& x : j) {
        if (!x.is_string())
            r.fail(fmt::format("'{}' holds a {}, not a string", field, x.type_name()));
        out.push_back(x.get<std::string>());
    }
    return out;
}

}  // namespace detail::rw

/**
 * @brief Loads CRUSH's recorded hallucinated schemas (`crush4sql/data/bird_dev.json`): a list of
 * objects with `question` and `question_decomposition_hallucinate_schema_bird` (list of strings).
 * @throws io_error, parse_error (bad JSON), schema_error (wrong structure; names the item).
 */
inline replay_source load_crush_recordings(const std::filesystem::path& path) {
    const auto j = detail::rw::read_json_file(path);
    if (!j.is_array())
        throw schema_error(fmt::format("{}: expected a list of questions", path.string()));
    replay_source src(fmt::format("CRUSH recordings {}", path.filename().string()),
                      recording_kind::hallucinated_schema);
    const auto source = path.string();
    for (std::size_t i = 0; i < j.size(); ++i) {
        const detail::json_reader r(j[i], source, fmt::format("[{}]", i));
        const auto& items =
            r.get("question_decomposition_hallucinate_schema_bird", nlohmann::json::value_t::array);
        src.add(r.str("question"), detail::rw::string_list(
                                       r, items, "question_decomposition_hallucinate_schema_bird"));
    }
    return src;
}

/**
 * @brief Loads JAR's recorded decompositions: @p decomp_path is a list of lists of sub-query
 * strings, aligned by position with the questions of @p dev_path (a list of objects with
 * `question`).
 * @throws io_error, parse_error, schema_error (wrong structure, or different lengths).
 */
inline replay_source load_jar_decompositions(const std::filesystem::path& decomp_path,
                                             const std::filesystem::path& dev_path) {
    const auto decomp = detail::rw::read_json_file(decomp_path);
    const auto dev = detail::rw::read_json_file(dev_path);
    if (!decomp.is_array())
        throw schema_error(
            fmt::format("{}: expected a list of decompositions", decomp_path.string()));
    if (!dev.is_array())
        throw schema_error(fmt::format("{}: expected a list of questions", dev_path.string()));
    if (decomp.size() != dev.size())
        throw schema_error(fmt::format("{} has {} decompositions but {} has {} questions",
                                       decomp_path.string(), decomp.size(), dev_path.string(),
                                       dev.size()));
    replay_source src(fmt::format("JAR decompositions {}", decomp_path.string()),
                      recording_kind::decomposition);
    const auto dsource = decomp_path.string();
    const auto qsource = dev_path.string();
    for (std::size_t i = 0; i < dev.size(); ++i) {
        const detail::json_reader q(dev[i], qsource, fmt::format("[{}]", i));
        if (!decomp[i].is_array())
            throw schema_error(fmt::format("{}: [{}]: expected a list of sub-queries", dsource, i));
        std::vector<std::string> items;
        for (std::size_t k = 0; k < decomp[i].size(); ++k) {
            if (!decomp[i][k].is_string())
                throw schema_error(fmt::format("{}: [{}][{}]: not a string", dsource, i, k));
            items.push_back(decomp[i][k].get<std::string>());
        }
        src.add(q.str("question"), std::move(items));
    }
    return src;
}

/**
 * @brief The question of a rendered prompt: the rest of the *last* line that starts with
 * question_marker (`Question: `), trimmed; nullopt if no line does. Every built-in template
 * that takes a question ends with such a line; few-shot examples before it are skipped because
 * the last one wins. A question containing line breaks must be whitespace-normalised before
 * rendering (the built-in LLM rewriters do so).
 */
inline std::optional<std::string> extract_question(std::string_view prompt) {
    std::optional<std::string> found;
    for (const auto& line : detail::rw::split_lines(prompt)) {
        // split_lines also breaks at a literal backslash-n; questions do not contain one.
        if (std::string_view(line).starts_with(question_marker))
            found = std::string(
                detail::rw::trim(std::string_view(line).substr(question_marker.size())));
    }
    return found;
}

/**
 * @brief An LLM that answers each prompt from @p source: the question is taken from the prompt
 * by extract_question and the answer is the recording, one item per line (what the live model
 * would have written, ready for the same parser).
 *
 * Thread-safe (the source is shared and immutable).
 * @throws llm_error for a prompt without a `Question: ` line; missing_recording_error (an
 * llm_error) quoting a question without a recording.
 */
inline llm_fn replay_llm(std::shared_ptr<const replay_source> source) {
    return [source = std::move(source)](std::span<const std::string> prompts) {
        std::vector<std::string> out;
        out.reserve(prompts.size());
        for (const auto& p : prompts) {
            const auto q = extract_question(p);
            if (!q)
                throw llm_error(fmt::format("{}: prompt has no '{}' line to replay by: \"{}\"",
                                            source->name(), detail::rw::trim(question_marker),
                                            detail::rw::collapse_spaces(p).substr(0, 120)));
            out.push_back(source->completion(*q));
        }
        return out;
    };
}

/** @brief replay_llm over a source it takes ownership of. */
inline llm_fn replay_llm(replay_source source) {
    return replay_llm(std::make_shared<const replay_source>(std::move(source)));
}

/**
 * @brief A QueryRewriter that answers from recordings by question directly, with no prompt.
 *
 * Queries per request (the path is ignored; stop is always false):
 * - hallucinated_schema: the probes (`table.column`) of every recorded item, parsed with
 *   parse_hallucinated_schema;
 * - decomposition: each recorded sub-query as subquery::text() (`concept:attribute`, split at
 *   the first colon, each side trimmed).
 * Thread-safe. @throws missing_recording_error for a question without a recording.
 */
class recorded_rewriter {
  public:
    explicit recorded_rewriter(std::shared_ptr<const replay_source> source)
        : source_(std::move(source)) {}
    explicit recorded_rewriter(replay_source source)
        : source_(std::make_shared<const replay_source>(std::move(source))) {}

    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        std::vector<rewrite_result> out;
        out.reserve(requests.size());
        for (const auto& r : requests) out.push_back({false, queries(source_->at(r.question))});
        return out;
    }

    [[nodiscard]] const replay_source& source() const noexcept { return *source_; }

  private:
    [[nodiscard]] std::vector<std::string> queries(const std::vector<std::string>& items) const {
        std::vector<std::string> out;
        for (const auto& item : items) {
            if (detail::rw::trim(item).empty()) continue;
            if (source_->kind() == recording_kind::decomposition) {
                if (auto sq = detail::rw::to_subquery(item)) out.push_back(sq->text());
                continue;
            }
            for (const auto& p : parse_hallucinated_schema(item)) out.push_back(p.text());
        }
        return out;
    }

    std::shared_ptr<const replay_source> source_;
};

static_assert(QueryRewriter<recorded_rewriter>);

}  // namespace tabret
