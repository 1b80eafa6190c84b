#pragma once
/// @file rewriting/llm.hpp
/// @brief The batch-shaped LLM callback, its error type and the deduplicating call helper.

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "tabret/error.hpp"

namespace tabret {

/**
 * @brief The LLM callback: a batch of prompts in, one completion per prompt out, in order.
 *
 * tabret never calls it once per item when it can gather a batch, and never with an empty batch.
 * It may be a hosted API client, a local server, a Python callable or a replay of recorded
 * answers. tabret calls it from one thread at a time unless the caller shares it across threads
 * itself; a callback that is shared so must be thread-safe.
 */
using llm_fn = std::function<std::vector<std::string>(std::span<const std::string> prompts)>;

/** @brief An LLM callback misbehaved (wrong number of answers) or a recorded answer is missing. */
class llm_error : public error {
  public:
    using error::error;
};

/**
 * @brief Checks that an LLM returned one completion per prompt.
 * @param expected number of prompts sent; @param completions what came back;
 * @param who names the callback in the message (e.g. the model).
 * @throws llm_error naming expected and actual counts.
 */
inline void check_completions(std::size_t expected, const std::vector<std::string>& completions,
                              std::string_view who = "LLM") {
    if (completions.size() != expected)
        throw llm_error(fmt::format("{} returned {} completions for {} prompts", who,
                                    completions.size(), expected));
}

/**
 * @brief Calls @p llm once with @p prompts (not at all for an empty batch) and checks the count.
 * @throws llm_error if @p llm is empty or returns the wrong number of completions; whatever
 * @p llm throws passes through.
 */
inline std::vector<std::string> call_llm(const llm_fn& llm, std::span<const std::string> prompts,
                                         std::string_view who = "LLM") {
    if (prompts.empty()) return {};
    if (!llm) throw llm_error(fmt::format("{}: no LLM callback given", who));
    auto out = llm(prompts);
    check_completions(prompts.size(), out, who);
    return out;
}

/**
 * @brief Sends each distinct prompt once, in one batch (first-occurrence order), and fans the
 * answers back out to every position. An empty batch makes no call.
 *
 * Reentrant; thread-safe if @p llm is.
 * @throws llm_error on a wrong completion count.
 */
inline std::vector<std::string> dedup_call(const llm_fn& llm, std::span<const std::string> prompts,
                                           std::string_view who = "LLM") {
    std::vector<std::string> unique;
    std::vector<std::size_t> slot(prompts.size());
    std::unordered_map<std::string_view, std::size_t> seen;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        const auto [it, fresh] = seen.emplace(prompts[i], unique.size());
        if (fresh) unique.push_back(prompts[i]);
        slot[i] = it->second;
    }
    const auto answers = call_llm(llm, unique, who);
    std::vector<std::string> out;
    out.reserve(prompts.size());
    for (auto s : slot) out.push_back(answers[s]);
    return out;
}

/** @brief Wraps @p llm so that every call goes through dedup_call. */
inline llm_fn deduplicated(llm_fn llm) {
    return [llm = std::move(llm)](std::span<const std::string> prompts) {
        return dedup_call(llm, prompts);
    };
}

}  // namespace tabret
