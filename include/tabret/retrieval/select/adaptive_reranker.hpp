#pragma once
/// @file retrieval/select/adaptive_reranker.hpp
/// @brief ATR: re-rank a first stage's candidates with a sliding window and a threshold logit,
/// and cut the list where the threshold lands (an adaptive number of tables per question).
///
/// The algorithm (docs/methods.md, "ATR"), for one question with a candidate list of n ≤ N
/// tables in first-stage order, window W and retain R (0 < R < W):
///  1. The first window is the bottom of the list, positions [n − W, n) (all of it when n ≤ W).
///  2. The scorer gives each table of the window a logit and the threshold token a logit. The
///     window is re-ordered by logit, best first.
///  3. The R best stay in play and move up; the others are final at the window's bottom
///     positions, in that order.
///  4. The next window is the R kept tables plus the W − R candidates just above them:
///     positions [start − (W − R), start + R). Repeat from 2 until the window starting at
///     position 0 has been scored; everything in it is final.
///  5. Let t be the number of the window's tables whose logit is strictly greater than the
///     threshold's (the threshold's 1-based rank in the window is t + 1). The first time t ≥ R
///     (the threshold ranks below the R kept tables, so it is not carried up), the threshold is
///     final: cut = start + t. Every table above it — the kept ones and all candidates not yet
///     scored — is in; every table below it is out. Later windows only re-order positions
///     [0, start + R) ⊆ [0, cut).
///
/// Ambiguities resolved here (the choice, and why):
///  - The threshold is an extra item, not one of the W tables of a window, and it is never one
///    of the R kept: W and R count tables, as the paper's window of W tables does.
///  - The threshold never ranks below R before the top window (fewer than R tables beat it in
///    every window): the top window finalises everything, the threshold included, so the cut is
///    its position there, cut = t. With a first stage that puts relevant tables first this is
///    the common case when a question needs fewer than R tables.
///  - A table whose logit equals the threshold's is out ("tables whose logit beats the
///    threshold are returned"); tables with equal logits keep their current relative order.
///  - The last window is smaller than W when fewer than W − R new candidates are left above:
///    it is the R kept plus what is left (finalised tables are never re-scored). A question with
///    n ≤ W candidates has one window of n tables; one with no candidates gets cut 0.
///  - Windows of a batch advance together: step s scores window s of every question that still
///    has one, in one scorer call. A window_independent scorer (a table's logit and the
///    threshold do not depend on the window) is called once, with every candidate of every
///    question, and the windows walk on those logits: the same result in one call.
///  - Scores in the result are the logit each table got in the window that finalised it; they are
///    comparable only within a window, so the order, not the score, is the ranking.
///  - `retrieve_options::k` is not a length here: the result holds the whole re-ranked candidate
///    list (`tables`) and the adaptive cut (`cut`); read `tables[0, cut)`. k must be positive.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/borrow.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/scoring/window_scorer.hpp"

namespace tabret {

struct adaptive_options {
    std::size_t candidates = 50;  ///< N: how many first-stage tables are re-ranked.
    std::size_t window = 20;      ///< W: tables per window (Spider/BIRD 20; Spider 2.0 10).
    std::size_t retain = 15;      ///< R: tables kept and carried up (Spider/BIRD 15; 2.0 5).
};

namespace detail {

/** @throws error unless 0 < retain < window and candidates > 0. */
inline void check_adaptive_options(const adaptive_options& o) {
    if (o.candidates == 0) throw error("adaptive: candidates must be positive");
    if (o.retain == 0 || o.retain >= o.window)
        throw error(fmt::format("adaptive: need 0 < retain < window, got retain {} and window {}",
                                o.retain, o.window));
}

/// One question's walk up its candidate list.
class window_walk {
  public:
    window_walk(std::vector<scored_table> list, adaptive_options o)
        : list_(std::move(list)), window_of_(list_.size(), 0), end_(list_.size()), o_(o) {
        if (list_.empty()) cut_ = 0;
    }

    [[nodiscard]] bool finished() const noexcept { return list_.empty() || finished_; }
    [[nodiscard]] std::size_t start() const noexcept {
        return end_ > o_.window ? end_ - o_.window : 0;
    }
    /// The current window's tables, in current order.
    [[nodiscard]] std::vector<table_id> window() const { return tables(start(), end_); }
    /// Every candidate, in current order.
    [[nodiscard]] std::vector<table_id> candidates() const { return tables(0, list_.size()); }

    /// Re-orders the current window by @p s, fixes the cut if the threshold falls out, slides.
    void apply(const window_scores& s) {
        const std::size_t first = start(), w = end_ - first;
        order_.resize(w);
        std::iota(order_.begin(), order_.end(), std::size_t{0});
        std::stable_sort(order_.begin(), order_.end(),
                         [&](std::size_t a, std::size_t b) { return s.logits[a] > s.logits[b]; });
        old_.assign(list_.begin() + static_cast<std::ptrdiff_t>(first),
                    list_.begin() + static_cast<std::ptrdiff_t>(end_));
        ++windows_;
        for (std::size_t r = 0; r < w; ++r) {
            list_[first + r] = {old_[order_[r]].table, s.logits[order_[r]]};
            window_of_[first + r] = windows_;
        }
        const auto above = static_cast<std::size_t>(std::count_if(
            s.logits.begin(), s.logits.end(), [&](float l) { return l > s.threshold; }));
        if (!cut_ && (above >= o_.retain || first == 0)) cut_ = first + above;
        if (first == 0)
            finished_ = true;
        else
            end_ = first + o_.retain;
    }

    [[nodiscard]] const std::vector<scored_table>& list() const noexcept { return list_; }
    /// 1-based number of the window that finalised position p.
    [[nodiscard]] std::size_t window_of(std::size_t p) const { return window_of_[p]; }
    [[nodiscard]] std::size_t cut() const noexcept { return cut_.value_or(0); }

  private:
    [[nodiscard]] std::vector<table_id> tables(std::size_t from, std::size_t to) const {
        std::vector<table_id> ids;
        ids.reserve(to - from);
        for (std::size_t p = from; p < to; ++p) ids.push_back(list_[p].table);
        return ids;
    }

    std::vector<scored_table> list_;
    std::vector<std::size_t> window_of_;
    std::size_t end_;
    adaptive_options o_;
    std::size_t windows_ = 0;
    std::optional<std::size_t> cut_;
    bool finished_ = false;
    std::vector<std::size_t> order_;  ///< apply's scratch, kept between windows
    std::vector<scored_table> old_;   ///< apply's scratch, kept between windows
};

/// A value per table of the catalog, for one question at a time: next() starts the next
/// question without clearing (a table's value counts only under the current stamp). Replaces
/// a sort or a hash set per question by two array lookups.
class table_scratch {
  public:
    explicit table_scratch(std::size_t tables) : stamp_(tables, 0), value_(tables, 0.0f) {}
    void next() noexcept { ++current_; }
    void set(table_id t, float value = 0.0f) noexcept {
        stamp_[t] = current_;
        value_[t] = value;
    }
    /// Whether @p t was set for this question (false for a table outside the catalog).
    [[nodiscard]] bool has(table_id t) const noexcept {
        return t < stamp_.size() && stamp_[t] == current_;
    }
    [[nodiscard]] float value(table_id t) const noexcept { return value_[t]; }

  private:
    std::vector<std::uint32_t> stamp_;
    std::vector<float> value_;
    std::uint32_t current_ = 1;
};

/// The first N tables of a first-stage result; @throws error for an unknown or repeated table.
inline std::vector<scored_table> candidate_list(const retrieval& r, std::size_t n,
                                                std::size_t num_tables, std::size_t question,
                                                table_scratch& seen) {
    std::vector<scored_table> list(
        r.tables.begin(),
        r.tables.begin() + static_cast<std::ptrdiff_t>(std::min(n, r.tables.size())));
    seen.next();
    for (const auto& t : list) {
        if (t.table >= num_tables)
            throw error(
                fmt::format("adaptive: question {}: candidate table {} out of range "
                            "(the index has {} tables)",
                            question, t.table, num_tables));
        if (seen.has(t.table))
            throw error(fmt::format("adaptive: question {}: candidate table {} appears twice",
                                    question, t.table));
        seen.set(t.table);
    }
    return list;
}

/// A window-independent scorer's logits for every candidate of one question (@p logits, held
/// by table in a table_scratch), looked up for each of its windows.
inline window_scores stored_logits(std::span<const table_id> window, const table_scratch& logits,
                                   float threshold) {
    window_scores out{{}, threshold};
    out.logits.reserve(window.size());
    for (const table_id t : window) out.logits.push_back(logits.value(t));
    return out;
}

/// One scorer call: the windows @p ids of the questions @p active, checked.
template <WindowScorer S>
std::vector<window_scores> score_windows(const table_index& index,
                                         std::span<const std::string> questions,
                                         std::span<const std::size_t> active,
                                         const std::vector<std::vector<table_id>>& ids,
                                         const S& scorer, std::string_view who) {
    std::vector<std::vector<std::string>> texts(active.size());
    if constexpr (reads_texts<S>::value)
        for (std::size_t a = 0; a < active.size(); ++a)
            for (const table_id t : ids[a]) texts[a].push_back(index.table_text(t));
    std::vector<window_request> requests;
    requests.reserve(active.size());
    for (std::size_t a = 0; a < active.size(); ++a)
        requests.push_back({questions[active[a]], ids[a], texts[a]});
    auto answers = scorer.score(requests);
    check_window_scores(requests, answers, who);
    return answers;
}

template <class S>
std::string scorer_name(const S& s) {
    if constexpr (requires { s.name(); })
        return fmt::format("window scorer '{}'", s.name());
    else
        return "window scorer";
}

/// The re-ranked result of one finished walk: the first stage's columns and the trace of its
/// candidates moved over.
inline retrieval walk_result(const window_walk& walk, retrieval&& first, std::string_view q,
                             table_scratch& in) {
    retrieval out;
    out.tables = walk.list();
    out.columns = std::move(first.columns);
    out.cut = walk.cut();
    in.next();
    for (const auto& t : out.tables) in.set(t.table);
    out.trace = std::move(first.trace);
    std::erase_if(out.trace, [&](const trace_entry& e) { return !in.has(e.table); });
    out.trace.reserve(out.trace.size() + out.tables.size());
    // "atr window N" stays within std::string's inline buffer: no allocation per table (the
    // longer "adaptive window N" cost a tenth of a small ATR call)
    for (std::size_t p = 0; p < out.tables.size(); ++p)
        out.trace.push_back({out.tables[p].table, fmt::format("atr window {}", walk.window_of(p)),
                             std::string(q), out.tables[p].score});
    return out;
}

}  // namespace detail

/**
 * @brief The adaptive cut as a post-step: re-ranks each question's first-stage tables (the first
 * `candidates` of `first[i].tables`) with ATR's sliding window and sets `cut`. One scorer call
 * per step for the whole batch. Thread-safe when the scorer is. @p first is taken by value: an
 * rvalue's columns and trace move into the result.
 * @throws error for bad options or candidates; scoring_error for a bad scorer answer.
 */
template <WindowScorer S>
std::vector<retrieval> adaptive_rerank(const table_index& index,
                                       std::span<const std::string> questions,
                                       std::vector<retrieval> first, const S& scorer,
                                       const adaptive_options& o) {
    detail::check_adaptive_options(o);
    if (first.size() != questions.size())
        throw error(fmt::format("adaptive: {} first-stage results for {} questions", first.size(),
                                questions.size()));
    const std::size_t num_tables = index.catalog().tables().size();
    detail::table_scratch scratch(num_tables);
    std::vector<detail::window_walk> walks;
    walks.reserve(questions.size());
    for (std::size_t i = 0; i < questions.size(); ++i)
        walks.emplace_back(detail::candidate_list(first[i], o.candidates, num_tables, i, scratch),
                           o);
    const auto who = detail::scorer_name(scorer);
    const auto unfinished = [&] {
        std::vector<std::size_t> active;
        for (std::size_t i = 0; i < walks.size(); ++i)
            if (!walks[i].finished()) active.push_back(i);
        return active;
    };
    if constexpr (window_independent<S>::value) {
        // Every candidate scored once, in one call; the windows walk on those logits.
        const auto active = unfinished();
        std::vector<std::vector<table_id>> ids;
        for (const std::size_t i : active) ids.push_back(walks[i].candidates());
        const auto answers = detail::score_windows(index, questions, active, ids, scorer, who);
        for (std::size_t a = 0; a < active.size(); ++a) {
            scratch.next();
            for (std::size_t j = 0; j < ids[a].size(); ++j)
                scratch.set(ids[a][j], answers[a].logits[j]);
            auto& walk = walks[active[a]];
            while (!walk.finished())
                walk.apply(detail::stored_logits(walk.window(), scratch, answers[a].threshold));
        }
    } else {
        for (auto active = unfinished(); !active.empty(); active = unfinished()) {
            std::vector<std::vector<table_id>> ids;
            for (const std::size_t i : active) ids.push_back(walks[i].window());
            const auto answers = detail::score_windows(index, questions, active, ids, scorer, who);
            for (std::size_t a = 0; a < active.size(); ++a) walks[active[a]].apply(answers[a]);
        }
    }
    std::vector<retrieval> out;
    out.reserve(walks.size());
    for (std::size_t i = 0; i < walks.size(); ++i)
        out.push_back(detail::walk_result(walks[i], std::move(first[i]), questions[i], scratch));
    return out;
}

/**
 * @brief ATR over any first stage: asks @p first for `candidates` tables per question, then
 * adaptive_rerank. Holds the first stage, the index and the scorer by reference (all must
 * outlive it). `retrieve` is const and thread-safe when the first stage and scorer are.
 */
template <Retriever First, WindowScorer S>
class adaptive_reranker {
  public:
    /** @throws error for bad options. */
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class A2, class... Rest>
    requires detail::any_temporary<A0, A1, A2> adaptive_reranker(A0&&, A1&&, A2&&, Rest&&...)
    = delete;
    adaptive_reranker(const First& first, const table_index& index, const S& scorer,
                      adaptive_options options = {})
        : first_(first), index_(index), scorer_(scorer), options_(options) {
        detail::check_adaptive_options(options_);
    }

    /**
     * @brief The whole re-ranked candidate list per question, with `cut` set (see the file
     * comment: k only has to be positive). k_columns goes to the first stage.
     * @throws error for k == 0; scoring_error for a bad scorer answer.
     */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        if (o.k == 0) throw error("k must be positive");
        return adaptive_rerank(index_, questions,
                               first_.retrieve(questions, {options_.candidates, o.k_columns}),
                               scorer_, options_);
    }

    [[nodiscard]] const adaptive_options& options() const noexcept { return options_; }

  private:
    const First& first_;
    const table_index& index_;
    const S& scorer_;
    adaptive_options options_;
};

}  // namespace tabret
