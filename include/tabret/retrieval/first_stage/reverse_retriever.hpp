#pragma once
/// @file retrieval/first_stage/reverse_retriever.hpp
/// @brief Reverse Engineering (Liu et al.): tables ranked by a dynamic fusion of the question's
/// similarity to the table's schema and to a question generated from the table at index time,
/// with an optional conditional re-ranker over the top candidates.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/question_index.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/rewriting/llm_rewriters.hpp"
#include "tabret/rewriting/offline.hpp"

namespace tabret {

static_assert(QuestionGenerator<template_question_generator>);
static_assert(QuestionGenerator<llm_question_generator>);

/// The parts of Reverse Engineering's score for one (question, table) pair.
struct reverse_scores {
    float r = 0.0f;      ///< cos(q, E_s): question vs. the table's schema text.
    float r_hat = 0.0f;  ///< ř = cos(q, E_qo): question vs. the table's generated question.
    float r_c = 0.0f;    ///< cos(q, E_s + E_qo).
    float alpha = 0.0f;  ///< α = max(r_c, 1 − r_c).
    float fused = 0.0f;  ///< R = α·r + (1 − α)·ř.
    friend bool operator==(const reverse_scores&, const reverse_scores&) = default;
};

/**
 * @brief The fusion of methods.md for unit vectors q, E_s, E_qo, from r = q·E_s, ř = q·E_qo and
 * ‖E_s + E_qo‖: r_c = (r + ř) / ‖E_s + E_qo‖ (cosine is scale-invariant, so normalising the
 * sum first would not change it; 0 when the sum is the zero vector), α = max(r_c, 1 − r_c),
 * R = α·r + (1 − α)·ř. As pinned, α ≥ 0.5 always and α > 1 when r_c < 0 (then ř weighs
 * negatively).
 */
inline reverse_scores reverse_fuse(float r, float r_hat, float sum_norm) noexcept {
    const float r_c = sum_norm > 0.0f ? (r + r_hat) / sum_norm : 0.0f;
    const float alpha = std::max(r_c, 1.0f - r_c);
    return {r, r_hat, r_c, alpha, alpha * r + (1.0f - alpha) * r_hat};
}

/// One candidate for the conditional re-ranker: `q [SEP] schema [SEP] q_o` in the paper.
struct rerank_input {
    std::string question;
    std::string schema;              ///< The table's text as embedded (table_index::table_text).
    std::string generated_question;  ///< q_o.
    /** @brief The three parts joined by @p sep, the paper's cross-encoder input. */
    [[nodiscard]] std::string text(std::string_view sep = " [SEP] ") const {
        return fmt::format("{}{}{}{}{}", question, sep, schema, sep, generated_question);
    }
    friend bool operator==(const rerank_input&, const rerank_input&) = default;
};

/**
 * @brief The conditional re-ranker callback: a batch of candidates in, one score per candidate
 * out (higher is better), in order. Called once per retrieve() batch with every question's
 * candidates; never with an empty batch.
 */
using rerank_fn = std::function<std::vector<float>(std::span<const rerank_input>)>;

struct reverse_options {
    std::size_t candidates = 40;  ///< K: fused top-K sent to the re-ranker (when there is one).
    rerank_fn reranker;           ///< Optional; empty = rank by the fused score R.
};

/**
 * @brief Reverse Engineering retrieval. Scores every table by R (reverse_fuse) from the table
 * vectors of @p index and the generated-question vectors of @p questions; with a re-ranker, the
 * top max(k, K) by R are re-scored by it in one call and returned in its order (ties keep the R
 * order), scores = its scores. Columns (k_columns > 0) are ranked by plain cosine, as
 * dense_retriever does.
 *
 * A batch of questions costs one embedder call and at most one re-ranker call; no LLM is ever
 * called at query time. Holds the index, the questions and the embedder by reference (they must
 * outlive it). `retrieve` is const and thread-safe when the embedder and re-ranker are.
 *
 * Trace per returned table: {"reverse", q_o, R}, {"reverse:schema", schema text, r},
 * {"reverse:question", q_o, ř}, {"reverse:alpha", "", α}, then {"rerank", question, score}
 * when re-ranked.
 */
template <Embedder E>
class reverse_retriever {
  public:
    /** @throws error when @p questions do not belong to @p index, or K == 0. */
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class A2, class... Rest>
    requires detail::any_temporary<A0, A1, A2> reverse_retriever(A0&&, A1&&, A2&&, Rest&&...)
    = delete;
    reverse_retriever(const table_index& index, const question_index& questions, const E& embedder,
                      reverse_options options = {})
        : index_(index), questions_(questions), embedder_(embedder), options_(std::move(options)) {
        questions_.check_matches(index_);
        if (options_.candidates == 0) throw error("reverse_retriever: candidates must be positive");
        const auto& s = index_.tables().vectors();
        sum_norms_ = (s + questions_.vectors().vectors()).rowwise().norm();
    }

    /**
     * @brief The score parts of table @p t for row @p i of @p queries (normalised question
     * vectors, one per row). Thread-safe.
     */
    [[nodiscard]] reverse_scores scores(const matrix& queries, std::size_t i, table_id t) const {
        const auto q = queries.row(static_cast<Eigen::Index>(i));
        const auto row = static_cast<Eigen::Index>(t);
        return reverse_fuse(q.dot(index_.tables().vectors().row(row)),
                            q.dot(questions_.vectors().vectors().row(row)), sum_norms_(row));
    }

    /**
     * @throws error for k == 0, a re-ranker answer of the wrong length or with NaN/infinity;
     * embedding_error for a bad embedder answer; whatever the re-ranker throws.
     */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        auto out = empty_results(questions.size(), o);
        if (questions.empty()) return out;
        const matrix q = embed_normalized(embedder_, questions, index_.dim());
        const bool rerank = static_cast<bool>(options_.reranker);
        auto ranked = fused_top(q, rerank ? std::max(o.k, options_.candidates) : o.k);
        if (rerank) ranked = rerank_all(questions, std::move(ranked), o.k);
        const auto columns = o.k_columns > 0 ? index_.search_columns(q, o.k_columns)
                                             : std::vector<hits>(questions.size());
        for (std::size_t i = 0; i < questions.size(); ++i) {
            for (const auto& h : ranked[i]) {
                out[i].tables.push_back({h.id, h.score});
                trace(out[i].trace, scores(q, i, h.id), h);
                if (rerank) out[i].trace.push_back({h.id, "rerank", questions[i], h.score});
            }
            for (const auto& h : columns[i]) out[i].columns.push_back({h.id, h.score});
        }
        return out;
    }

  private:
    /**
     * @brief Top-@p k tables by R per query row, ties by id. The block scan (matrix products a
     * block of tables at a time, so memory stays bounded) proposes k + max(k, 16); those are
     * re-scored one pair at a time (scores(): the same value alone and in any batch, whose
     * products round differently) and cut to k, so a question's near-ties (R within a few
     * 1e-7) rank the same in a batch as alone, and a table's score is its trace's R.
     */
    std::vector<hits> fused_top(const matrix& q, std::size_t k) const {
        auto out = scanned_top(q, k + std::max<std::size_t>(k, 16));
        for (std::size_t i = 0; i < out.size(); ++i) {
            for (auto& h : out[i]) h.score = scores(q, i, h.id).fused;
            std::sort(out[i].begin(), out[i].end(), [](const hit& a, const hit& b) {
                return a.score != b.score ? a.score > b.score : a.id < b.id;
            });
            if (out[i].size() > k) out[i].resize(k);
        }
        return out;
    }

    /// Top-@p k tables by R per query row from the block scan's matrix products.
    std::vector<hits> scanned_top(const matrix& q, std::size_t k) const {
        const auto& s = index_.tables().vectors();
        const auto& g = questions_.vectors().vectors();
        const auto n = static_cast<std::size_t>(s.rows());
        const auto nq = static_cast<std::size_t>(q.rows());
        const std::size_t step = std::max<std::size_t>(
            1, exact_index::default_block_bytes / sizeof(float) / 2 / std::max<std::size_t>(1, nq));
        std::vector<hits> out(nq);
        matrix r, r_hat;
        std::vector<float> fused;
        for (std::size_t begin = 0; begin < n; begin += step) {
            const auto len = static_cast<Eigen::Index>(std::min(n, begin + step) - begin);
            const auto b = static_cast<Eigen::Index>(begin);
            r.noalias() = q * s.middleRows(b, len).transpose();
            r_hat.noalias() = q * g.middleRows(b, len).transpose();
            fused.resize(static_cast<std::size_t>(len));
            for (std::size_t i = 0; i < nq; ++i) {
                const auto row = static_cast<Eigen::Index>(i);
                for (Eigen::Index j = 0; j < len; ++j)
                    fused[static_cast<std::size_t>(j)] =
                        reverse_fuse(r(row, j), r_hat(row, j), sum_norms_(b + j)).fused;
                auto best = detail::top_k_of_row(fused, {}, static_cast<item_id>(begin), k);
                out[i] =
                    begin == 0 ? std::move(best) : detail::merge_top_k(std::move(out[i]), best, k);
            }
        }
        return out;
    }

    /// One re-ranker call for every question's candidates; each list re-sorted, cut to @p k.
    std::vector<hits> rerank_all(std::span<const std::string> questions, std::vector<hits> ranked,
                                 std::size_t k) const {
        std::vector<rerank_input> inputs;
        for (std::size_t i = 0; i < questions.size(); ++i)
            for (const auto& h : ranked[i])
                inputs.push_back(
                    {questions[i], index_.table_text(h.id), questions_.question(h.id)});
        if (inputs.empty()) return ranked;
        const auto scores = options_.reranker(inputs);
        if (scores.size() != inputs.size())
            throw error(fmt::format("re-ranker returned {} scores for {} candidates", scores.size(),
                                    inputs.size()));
        std::size_t next = 0;
        for (auto& list : ranked) {
            for (auto& h : list) {
                if (!std::isfinite(scores[next]))
                    throw error(
                        fmt::format("re-ranker returned NaN or infinity for candidate {}", next));
                h.score = scores[next++];
            }
            std::stable_sort(list.begin(), list.end(),
                             [](const hit& a, const hit& b) { return a.score > b.score; });
            if (list.size() > k) list.resize(k);
        }
        return ranked;
    }

    void trace(std::vector<trace_entry>& out, const reverse_scores& s, const hit& h) const {
        const auto& q_o = questions_.question(h.id);
        out.push_back({h.id, "reverse", q_o, s.fused});
        out.push_back({h.id, "reverse:schema", index_.table_text(h.id), s.r});
        out.push_back({h.id, "reverse:question", q_o, s.r_hat});
        out.push_back({h.id, "reverse:alpha", "", s.alpha});
    }

    const table_index& index_;
    const question_index& questions_;
    const E& embedder_;
    reverse_options options_;
    Eigen::VectorXf sum_norms_;  ///< ‖E_s + E_qo‖ per table.
};

}  // namespace tabret
