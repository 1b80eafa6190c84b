#pragma once
/// @file scoring/similarity_window_scorer.hpp
/// @brief A training-free WindowScorer: a table's logit is its cosine with the question, the
/// threshold comes from a rule over the question's own score distribution (no labels at
/// scoring time; a rule's one parameter may be fitted on another benchmark).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/dot.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/scoring/window_scorer.hpp"

namespace tabret {

/// How the threshold logit is set from the question's top cosines s0 ≥ s1 ≥ … over the catalog.
enum class threshold_rule {
    fixed,     ///< threshold = value (an absolute cosine).
    relative,  ///< threshold = s0 − value (tables within `value` of the best one are in).
    zscore,    ///< threshold = mean + value · std of the top-`depth` cosines.
    gap,  ///< threshold in the middle of the largest drop s_i − s_{i+1} among the top `depth`;
          ///< `value` is not used.
};

struct similarity_threshold {
    threshold_rule rule = threshold_rule::relative;
    float value = 0.1f;
    std::size_t depth = 50;  ///< How many top cosines form the distribution (zscore, gap).
};

/** @throws error for depth 0 or a NaN/infinite value. */
inline void check_similarity_threshold(const similarity_threshold& t) {
    if (t.depth == 0) throw error("similarity scorer: depth must be positive");
    if (!std::isfinite(t.value)) throw error("similarity scorer: threshold value must be finite");
}

/// How many of a question's best catalog cosines @p t reads: none (fixed), the best one
/// (relative), or `depth` (zscore, gap).
inline std::size_t scores_read(const similarity_threshold& t) noexcept {
    switch (t.rule) {
        case threshold_rule::fixed:
            return 0;
        case threshold_rule::relative:
            return 1;
        case threshold_rule::zscore:
        case threshold_rule::gap:
            break;
    }
    return t.depth;
}

/**
 * @brief The threshold logit for one question from its best-first catalog cosines @p top (the
 * first scores_read(t) of them are read).
 * @throws error for an empty @p top, unless the rule reads none.
 */
inline float threshold_from_scores(std::span<const float> top, const similarity_threshold& t) {
    if (top.empty() && scores_read(t) > 0) throw error("threshold rule needs at least one score");
    switch (t.rule) {
        case threshold_rule::fixed:
            return t.value;
        case threshold_rule::relative:
            return top.front() - t.value;
        case threshold_rule::zscore: {
            const auto n = static_cast<double>(top.size());
            const double mean = std::accumulate(top.begin(), top.end(), 0.0) / n;
            double var = 0.0;
            for (const float s : top) var += (s - mean) * (s - mean);
            return static_cast<float>(mean + t.value * std::sqrt(var / n));
        }
        case threshold_rule::gap: {
            if (top.size() == 1) return top.front() - 1e-3f;  // one table: keep it
            std::size_t best = 0;
            for (std::size_t i = 1; i + 1 < top.size(); ++i)
                if (top[i] - top[i + 1] > top[best] - top[best + 1]) best = i;
            return 0.5f * (top[best] + top[best + 1]);
        }
    }
    return t.value;
}

/**
 * @brief Logit = cos(question, table) from the index's stored table vectors; threshold from a
 * threshold_rule over the question's top-`depth` catalog cosines, so the threshold of a question
 * is the same in every window (a window-independent stand-in for ATR's threshold token). Holds
 * the index and the embedder by reference. A question is embedded, and its threshold searched,
 * once: adaptive_rerank asks about every candidate in one call (window_independent), and a
 * caller that scores a question's windows one call at a time reuses both from a bounded memo
 * of recent questions. `score` is const and thread-safe when the embedder is.
 */
template <Embedder E>
class similarity_window_scorer {
  public:
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class... Rest>
    requires detail::any_temporary<A0, A1> similarity_window_scorer(A0&&, A1&&, Rest&&...)
    = delete;
    /** @throws error for depth 0 or a NaN/infinite value. */
    similarity_window_scorer(const table_index& index, const E& embedder,
                             similarity_threshold threshold = {})
        : index_(index), embedder_(embedder), threshold_(threshold) {
        check_similarity_threshold(threshold_);
    }

    /// Scores from the index's stored vectors: the re-ranker need not serialise the tables.
    static constexpr bool reads_texts = false;
    /// A table's cosine and a question's threshold do not depend on the window.
    static constexpr bool window_independent = true;

    /** @throws embedding_error for a bad embedder answer. */
    [[nodiscard]] std::vector<window_scores> score(std::span<const window_request> windows) const {
        std::unordered_map<std::string_view, std::shared_ptr<const question_scores>> of;
        std::vector<std::string> missing;
        for (const auto& w : windows) {
            if (of.contains(w.question)) continue;
            of[w.question] = memo_->find(w.question);
            if (!of[w.question]) missing.emplace_back(w.question);
        }
        if (!missing.empty())
            for (auto& [question, scores] : compute(missing))
                of.at(question) = memo_->insert(question, std::move(scores));
        std::vector<window_scores> out(windows.size());
        const auto& vectors = index_.tables().vectors();
        for (std::size_t w = 0; w < windows.size(); ++w) {
            const auto& q = *of.at(windows[w].question);
            out[w].logits.reserve(windows[w].tables.size());
            for (const table_id t : windows[w].tables)
                out[w].logits.push_back(
                    detail::dot(vectors.row(static_cast<Eigen::Index>(t)).data(), q.query.data(),
                                q.query.size()));
            out[w].threshold = q.threshold;
        }
        return out;
    }

  private:
    /// What a question's windows share: its normalised vector and its threshold.
    struct question_scores {
        std::vector<float> query;
        float threshold = 0.0f;
    };

    /// Questions already scored (a caller scoring window by window asks again): their
    /// embedding and the catalog-wide top-`depth` search behind the threshold are done once.
    /// Bounded (cleared when full); shared by copies of the scorer; thread-safe.
    class memo {
      public:
        static constexpr std::size_t capacity = 4096;
        std::shared_ptr<const question_scores> find(std::string_view question) const {
            const std::lock_guard lock(mutex_);
            const auto it = entries_.find(std::string(question));
            return it == entries_.end() ? nullptr : it->second;
        }
        std::shared_ptr<const question_scores> insert(const std::string& question,
                                                      question_scores scores) {
            auto entry = std::make_shared<const question_scores>(std::move(scores));
            const std::lock_guard lock(mutex_);
            if (entries_.size() >= capacity) entries_.clear();
            return entries_.insert_or_assign(question, std::move(entry)).first->second;
        }

      private:
        mutable std::mutex mutex_;
        std::unordered_map<std::string, std::shared_ptr<const question_scores>> entries_;
    };

    /// Embeds @p questions in one call and derives each one's threshold from its top scores.
    std::vector<std::pair<std::string, question_scores>> compute(
        std::vector<std::string>& questions) const {
        const matrix q = embed_normalized(embedder_, questions, index_.dim());
        const std::size_t read = scores_read(threshold_);
        const auto top =
            read > 0 ? index_.search_tables(q, read) : std::vector<hits>(questions.size());
        std::vector<std::pair<std::string, question_scores>> out;
        for (std::size_t i = 0; i < questions.size(); ++i) {
            std::vector<float> scores;
            for (const auto& h : top[i]) scores.push_back(h.score);
            const auto row = q.row(static_cast<Eigen::Index>(i));
            out.emplace_back(std::move(questions[i]),
                             question_scores{{row.data(), row.data() + row.size()},
                                             threshold_from_scores(scores, threshold_)});
        }
        return out;
    }

    const table_index& index_;
    const E& embedder_;
    similarity_threshold threshold_;
    std::shared_ptr<memo> memo_ = std::make_shared<memo>();
};

}  // namespace tabret
