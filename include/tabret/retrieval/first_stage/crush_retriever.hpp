#pragma once
/// @file retrieval/first_stage/crush_retriever.hpp
/// @brief CRUSH4SQL (Kothyari et al., 2023): collective column retrieval from a hallucinated
/// schema.
///
/// Per batch of questions: one rewriter call (for an LLM rewriter, one LLM call) turns each
/// question into probes (CRUSH: `table.column` of the hallucinated schema; any QueryRewriter
/// whose queries are probe texts works, e.g. JAR's `concept:attribute` decompositions); one
/// embedder call embeds every probe of the batch, in the question's context ("x t.c", the
/// paper) or alone (the reference demo); one column search gives each probe's top N columns.
/// Per question: the candidate set C(x) is the union of its probes' top N (paper) or the global
/// top N by the max cosine over probes (reference); the probes × candidates tensor of
/// P(d|k) = (cos + 1) / 2 is entropy-weighted into s(k, d) (scoring/entropy.hpp); a budget of
/// B columns is selected by the paper objective or the reference round robin
/// (retrieval/select/crush_selection.hpp). Tables are the distinct tables of the selected columns
/// in selection order.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/scan.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/retrieval/select/crush_selection.hpp"
#include "tabret/rewriting/rewriter.hpp"
#include "tabret/scoring/entropy.hpp"
#include "tabret/scoring/probability.hpp"
#include "tabret/serialize.hpp"

namespace tabret {

/// What a probe is embedded as.
enum class probe_context {
    question,  ///< "x t.c": the question, a space, the probe (paper; default).
    alone,     ///< The probe text alone (reference demo; the paper's ablation).
};

/// How the candidate set C(x) is formed.
enum class crush_candidates {
    per_probe_union,  ///< Union of every probe's top N columns (paper; default).
    global_top,       ///< Top N columns by the max cosine over probes (reference code).
};

/// How the budget is filled.
enum class crush_objective {
    paper,        ///< Coverage (log-sum-exp) + λ·connectivity, greedy marginal gain (default).
    round_robin,  ///< Reference greedy: every probe picks once before any picks twice.
};

struct crush_options {
    probe_context context = probe_context::question;
    crush_candidates candidates = crush_candidates::per_probe_union;
    std::size_t candidate_depth = 100;  ///< N: columns per probe (union) or in all (global).
    crush_objective objective = crush_objective::paper;
    bool entropy = true;       ///< Entropy weighting; false: s(k, d) = P(d|k) (ablation).
    bool connectivity = true;  ///< The paper objective's edge term; false: λ = 0 (ablation).
    connectivity_params edges{};
};

namespace detail::crush {

/// Each column's foreign-key partners (both directions).
inline std::vector<std::vector<column_id>> foreign_key_partners(const catalog& cat) {
    std::vector<std::vector<column_id>> out(cat.columns().size());
    for (const auto& fk : cat.foreign_keys()) {
        out[fk.from].push_back(fk.to);
        out[fk.to].push_back(fk.from);
    }
    return out;
}

/// One question's probes: the rewriter's queries, duplicates dropped; the question itself when
/// there are none (a stop or an empty answer).
inline std::vector<std::string> probes_of(const rewrite_result& r, const std::string& question) {
    std::vector<std::string> out;
    for (const auto& q : r.queries)
        if (!q.empty() && std::find(out.begin(), out.end(), q) == out.end()) out.push_back(q);
    if (out.empty()) out.push_back(question);
    return out;
}

}  // namespace detail::crush

/**
 * @brief CRUSH4SQL as methods.md pins it (see the file comment). Column-level: `columns` holds
 * the B selected columns in selection order, `tables` their distinct tables in that order (at
 * most k), and `trace[i]` says which probe picked `columns[i]` (step "probe j: db.table.column",
 * query = the probe text, score = s(probe, column)). The budget is B = max(k, k_columns).
 *
 * Holds the index, embedder and rewriter by reference (all must outlive it). `retrieve` is
 * const and thread-safe when the embedder and the rewriter are.
 */
template <Embedder E, QueryRewriter R>
class crush_retriever {
  public:
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class A2, class... Rest>
    requires detail::any_temporary<A0, A1, A2> crush_retriever(A0&&, A1&&, A2&&, Rest&&...)
    = delete;
    /** @throws error if @p index has no column vectors or candidate_depth is 0. */
    crush_retriever(const table_index& index, const E& embedder, const R& rewriter,
                    crush_options options = {})
        : index_(index),
          embedder_(embedder),
          rewriter_(rewriter),
          options_(options),
          fk_partners_(detail::crush::foreign_key_partners(index.catalog())) {
        if (!index.has_columns())
            throw error("crush_retriever needs an index built with column vectors");
        if (options.candidate_depth == 0) throw error("candidate_depth must be positive");
    }

    [[nodiscard]] const crush_options& options() const noexcept { return options_; }

    /**
     * @brief Probes, candidates, weighted scores and a budget of max(k, k_columns) columns per
     * question. @throws error for k == 0; embedding_error for a bad embedder answer; whatever
     * the rewriter throws (e.g. llm_error, missing_recording_error).
     */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        auto out = empty_results(questions.size(), o);
        if (questions.empty()) return out;
        const auto probes = probes_of(questions);
        std::vector<std::string> texts;
        std::vector<std::size_t> first{0};
        for (std::size_t i = 0; i < questions.size(); ++i) {
            for (const auto& p : probes[i]) texts.push_back(embedded_text(questions[i], p));
            first.push_back(texts.size());
        }
        const matrix q = embed_normalized(embedder_, texts, index_.dim());
        const auto found = index_.search_columns(q, options_.candidate_depth);
        const auto budget = std::max(o.k, o.k_columns);
        for (std::size_t i = 0; i < questions.size(); ++i) {
            const auto rows = static_cast<Eigen::Index>(first[i]);
            const auto n = static_cast<Eigen::Index>(first[i + 1] - first[i]);
            const auto cand = candidates(std::span(found).subspan(first[i], probes[i].size()));
            out[i] = answer(q.middleRows(rows, n), cand, probes[i], budget, o.k);
        }
        return out;
    }

  private:
    std::vector<std::vector<std::string>> probes_of(std::span<const std::string> questions) const {
        std::vector<rewrite_request> requests;
        for (const auto& q : questions) requests.push_back({q, {}});
        const auto results = rewriter_.rewrite(requests);
        if (results.size() != questions.size())
            throw error(fmt::format("the rewriter returned {} results for {} questions",
                                    results.size(), questions.size()));
        std::vector<std::vector<std::string>> out;
        for (std::size_t i = 0; i < questions.size(); ++i)
            out.push_back(detail::crush::probes_of(results[i], questions[i]));
        return out;
    }

    std::string embedded_text(const std::string& question, const std::string& probe) const {
        if (options_.context == probe_context::alone || probe == question) return probe;
        return fmt::format("{} {}", question, probe);
    }

    /// C(x), sorted by column id: the union of the probes' hits, or its global top N by the max
    /// cosine over probes (exact: a global top-N column is in its best probe's top N).
    std::vector<column_id> candidates(std::span<const hits> per_probe) const {
        std::unordered_map<column_id, float> best;
        for (const auto& h : per_probe)
            for (const auto& x : h) {
                const auto [it, fresh] = best.emplace(x.id, x.score);
                if (!fresh) it->second = std::max(it->second, x.score);
            }
        hits all;
        for (const auto& [id, score] : best) all.push_back({id, score});
        if (options_.candidates == crush_candidates::global_top)
            all = detail::select_top_k(std::move(all), options_.candidate_depth);
        std::vector<column_id> out;
        for (const auto& h : all) out.push_back(h.id);
        std::sort(out.begin(), out.end());
        return out;
    }

    /// linked(a, b) = 1 when candidates a and b share a table or a foreign key.
    xt::xtensor<std::uint8_t, 2> links(const std::vector<column_id>& cand) const {
        const auto& cat = index_.catalog();
        const auto n = cand.size();
        xt::xtensor<std::uint8_t, 2> out = xt::zeros<std::uint8_t>({n, n});
        std::unordered_map<column_id, std::size_t> pos;
        std::vector<table_id> table(n);
        for (std::size_t a = 0; a < n; ++a) {
            pos.emplace(cand[a], a);
            table[a] = cat.column(cand[a]).table;
        }
        for (std::size_t a = 0; a < n; ++a) {
            auto* row = &out(a, 0);
            for (std::size_t b = 0; b < n; ++b) row[b] = table[a] == table[b];
            for (const auto partner : fk_partners_[cand[a]])
                if (const auto it = pos.find(partner); it != pos.end()) out(a, it->second) = 1;
        }
        return out;
    }

    retrieval answer(const auto& probe_vectors, const std::vector<column_id>& cand,
                     const std::vector<std::string>& probes, std::size_t budget,
                     std::size_t k) const {
        const matrix queries = probe_vectors;
        matrix gathered(static_cast<Eigen::Index>(cand.size()), queries.cols());
        const auto& columns = index_.columns().vectors();
        for (std::size_t c = 0; c < cand.size(); ++c)
            gathered.row(static_cast<Eigen::Index>(c)) = columns.row(cand[c]);
        std::vector<float> cosines(probes.size() * cand.size());
        detail::inner_products(gathered.data(), cand.size(), queries.data(), probes.size(),
                               static_cast<std::size_t>(queries.cols()), cosines.data());
        const auto cos = xt::adapt(cosines.data(), cosines.size(), xt::no_ownership(),
                                   std::vector<std::size_t>{probes.size(), cand.size()});
        xt::xtensor<float, 2> s = cos_probability(cos);
        if (options_.entropy) s = entropy_weighted(s);
        const auto picks =
            options_.objective == crush_objective::round_robin
                ? select_round_robin(s, budget)
                : select_by_objective(s, links_if_needed(cand), budget, edge_params());
        return to_retrieval(picks, cand, probes, k);
    }

    connectivity_params edge_params() const {
        auto p = options_.edges;
        if (!options_.connectivity) p.lambda = 0.0f;
        return p;
    }

    xt::xtensor<std::uint8_t, 2> links_if_needed(const std::vector<column_id>& cand) const {
        if (edge_params().lambda == 0.0f)
            return xt::zeros<std::uint8_t>({std::size_t{0}, std::size_t{0}});
        return links(cand);
    }

    retrieval to_retrieval(const std::vector<crush_pick>& picks, const std::vector<column_id>& cand,
                           const std::vector<std::string>& probes, std::size_t k) const {
        const auto& cat = index_.catalog();
        retrieval r;
        for (const auto& p : picks) {
            const auto col = cand[p.candidate];
            const auto table = cat.column(col).table;
            r.columns.push_back({col, p.score});
            r.trace.push_back({table,
                               fmt::format("probe {}: {}", p.probe + 1,
                                           serialize_column(cat, col, name_style::original)),
                               probes[p.probe], p.score});
            const bool seen = std::any_of(r.tables.begin(), r.tables.end(),
                                          [&](const scored_table& t) { return t.table == table; });
            if (!seen && r.tables.size() < k) r.tables.push_back({table, p.score});
        }
        return r;
    }

    const table_index& index_;
    const E& embedder_;
    const R& rewriter_;
    crush_options options_;
    std::vector<std::vector<column_id>> fk_partners_;
};

}  // namespace tabret
