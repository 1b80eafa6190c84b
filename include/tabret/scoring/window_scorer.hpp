#pragma once
/// @file scoring/window_scorer.hpp
/// @brief The WindowScorer concept: ATR's cross-encoder seen as a callback. One window is a
/// question and a few candidate tables; the scorer gives every table a logit and gives the
/// threshold token a logit too. Tables whose logit beats the threshold's are "in".

#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "tabret/catalog.hpp"
#include "tabret/error.hpp"

namespace tabret {

/** @brief A scorer answered with the wrong number of windows or logits, or with NaN/infinity. */
class scoring_error : public error {
  public:
    using error::error;
};

/// One window to score: a question and the tables of the window, in their current order.
struct window_request {
    std::string_view question;
    std::span<const table_id> tables;    ///< The tables' ids (for scorers with stored vectors).
    std::span<const std::string> texts;  ///< Their serialisations, same order (empty for a
                                         ///< scorer that does not read them: reads_texts).
};

/// A scorer's answer for one window.
struct window_scores {
    std::vector<float> logits;  ///< One per table of the window, same order.
    float threshold = 0.0f;     ///< The threshold token's logit.
    friend bool operator==(const window_scores&, const window_scores&) = default;
};

/**
 * @brief Scores a batch of windows (several questions at once): one answer per window, in
 * order. A batch-shaped callback, like Embedder: the adaptive re-ranker sends every question's
 * current window in one call per step. `score` is const; thread-safety is the scorer's.
 */
template <class S>
concept WindowScorer = requires(const S& s, std::span<const window_request> windows) {
    { s.score(windows) } -> std::same_as<std::vector<window_scores>>;
};

/**
 * @brief Whether scorer type S reads window_request::texts: yes unless it declares
 * `static constexpr bool reads_texts = false` (a scorer of stored vectors), in which case the
 * re-ranker sends no texts and skips serialising every window's tables.
 */
template <class S>
struct reads_texts : std::true_type {};
template <class S>
requires requires { S::reads_texts; }
struct reads_texts<S> : std::bool_constant<S::reads_texts> {};

/**
 * @brief Whether scorer type S gives a table the same logit, and a question the same threshold,
 * whatever else its window holds: no unless it declares `static constexpr bool
 * window_independent = true` (a similarity of stored vectors, not a cross-encoder reading the
 * window). The re-ranker then scores each question's candidates once, as one window of all of
 * them, and walks ATR's windows on those logits: the same result as scoring every window, with
 * one scorer call and each candidate scored once.
 */
template <class S>
struct window_independent : std::false_type {};
template <class S>
requires requires { S::window_independent; }
struct window_independent<S> : std::bool_constant<S::window_independent> {};

/**
 * @brief Checks a scorer's answer against the windows it was asked about.
 * @param who names the scorer in messages.
 * @throws scoring_error for a wrong number of answers or logits, or a NaN/infinite value.
 */
inline void check_window_scores(std::span<const window_request> windows,
                                std::span<const window_scores> answers, std::string_view who) {
    if (answers.size() != windows.size())
        throw scoring_error(fmt::format("{} returned {} answers for {} windows", who,
                                        answers.size(), windows.size()));
    for (std::size_t w = 0; w < windows.size(); ++w) {
        const auto& a = answers[w];
        if (a.logits.size() != windows[w].tables.size())
            throw scoring_error(fmt::format("{} returned {} logits for window {} of {} tables", who,
                                            a.logits.size(), w, windows[w].tables.size()));
        if (!std::isfinite(a.threshold))
            throw scoring_error(
                fmt::format("{}: threshold of window {} is NaN or infinite", who, w));
        for (std::size_t j = 0; j < a.logits.size(); ++j)
            if (!std::isfinite(a.logits[j]))
                throw scoring_error(
                    fmt::format("{}: logit {} of window {} is NaN or infinite", who, j, w));
    }
}

}  // namespace tabret
