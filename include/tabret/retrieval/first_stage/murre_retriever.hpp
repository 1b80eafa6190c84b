#pragma once
/// @file retrieval/first_stage/murre_retriever.hpp
/// @brief MURRE (Zhang et al., 2025): multi-hop beam retrieval with removal. Hop 1 retrieves
/// with the question; each later hop asks a rewriter, per beam, for what the beam's tables do
/// not cover yet (or to stop) and retrieves with that.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/error.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/retrieval/first_stage/beam.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/rewriting/rewriter.hpp"

namespace tabret {

/**
 * @brief MURRE's settings. The defaults are the paper's form; the fields marked "reference"
 * name the reference code's choices (murre_options::reference() sets them all), the ones marked
 * "ablation" the paper's ablations.
 */
struct murre_options {
    std::size_t beam = 5;  ///< B: paths kept after each hop.
    std::size_t hops = 3;  ///< H: hops, the first with the question itself.
    /// Tables each beam's query adds as candidate extensions per hop: 0 = every table of the
    /// catalog (the paper: every (beam, table) extension is a candidate). Reference: 3·B.
    std::size_t per_beam = 0;
    /// Later hops search only the question's hop-1 top N tables (0 = the whole catalog).
    /// Reference: 100.
    std::size_t rerank_top = 0;
    /// A multi-query (multi-line) rewrite: false = one query, the lines joined by newlines;
    /// true (reference) = one query per line, a table takes its max cosine over the lines.
    bool per_line_max = false;
    /// Reference: when any beam of a question says stop, the whole question stops.
    bool any_beam_stop = false;
    /// Ablation when false: a stop is ignored and the beam retrieves with the question.
    bool early_stop = true;
    /// Ablation when false ("without removal"): the next query is the question followed by
    /// the path's table texts, one per line; the rewriter is still asked for stops when
    /// early_stop is on (and not at all otherwise).
    bool removal = true;
    path_scoring scoring = path_scoring::paper;  ///< Reference: path_scoring::reference.

    /** @brief The reference code's choices for @p beam: (cos+2)/2 with raw cos for selection,
     * top 3B per beam, re-rank the hop-1 top 100, per-line max, any-beam stop. */
    static murre_options reference(std::size_t beam = 5) {
        murre_options o;
        o.beam = beam;
        o.per_beam = 3 * beam;
        o.rerank_top = 100;
        o.per_line_max = true;
        o.any_beam_stop = true;
        o.scoring = path_scoring::reference;
        return o;
    }
};

namespace detail::murre {

/// Distinct strings in first-seen order, and each input's slot among them.
struct distinct_texts {
    std::vector<std::string> texts;
    std::vector<std::size_t> slot;
};

inline distinct_texts make_distinct(const std::vector<std::string>& all) {
    distinct_texts d;
    std::unordered_map<std::string_view, std::size_t> seen;
    d.slot.reserve(all.size());
    for (const auto& s : all) {
        const auto [it, fresh] = seen.emplace(s, d.texts.size());
        if (fresh) d.texts.push_back(s);
        d.slot.push_back(it->second);
    }
    return d;
}

/// Distinct ids in first-seen order.
inline std::vector<std::size_t> make_distinct_ids(const std::vector<std::size_t>& ids) {
    std::vector<std::size_t> out;
    for (auto id : ids)
        if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    return out;
}

inline std::string request_key(const rewrite_request& r) {
    return fmt::format("{}\x1f{}", r.question, fmt::join(r.path, ","));
}

inline std::string beam_step(std::size_t hop, std::size_t beam) {
    return fmt::format("hop {} beam {}", hop, beam + 1);
}

}  // namespace detail::murre

/**
 * @brief MURRE beam search over hops, as `../shared/docs/methods.md` pins it.
 *
 * Per batch of questions:
 * 1. Hop 1: every question retrieves with itself; each found table t is a path [t] scored
 *    log P(t|q), P = (cos + 1) / 2; the best B paths are the beams.
 * 2. Hop h ≥ 2: every live beam of every question becomes one rewrite_request (question +
 *    path); the rewriter answers all of them in one call (identical requests sent once). A stop
 *    ends the beam: it makes no further calls but stays a candidate with its score. Otherwise
 *    its query (the rewrite's lines joined by newlines; per line with per_line_max; an empty
 *    rewrite falls back to the question) retrieves; each found table not yet in the path
 *    extends it, score += log P(t|q_h). Paths with the same tables count once. The best B
 *    candidates are the next beams.
 * 3. A table's score is the max over every candidate path (kept or not, any hop) containing it;
 *    the result is the top k tables by score, the score reported as exp(log score) (the path
 *    probability).
 *
 * Cost per batch: one embedder call per hop that has a live beam (distinct texts only), one
 * rewriter call per hop h ≥ 2 that has a live beam; a stopped beam makes no calls. So at most
 * B·(H−1) rewrite requests per question.
 *
 * Trace (retrieval::trace): for every hop h and kept beam b (1-based), step "hop h beam b", one
 * entry per table of the path in hop order with the query that found it and the path's score
 * (exp of its final log score); a beam whose rewrite said stop gets "hop h beam b stop" (its
 * last table, empty query, the path's score).
 *
 * Holds the index, the embedder and the rewriter by reference (all must outlive it).
 * `retrieve` is const and thread-safe when the embedder and the rewriter are.
 */
template <Embedder E, QueryRewriter R>
class murre_retriever {
  public:
    /** @throws error for beam == 0 or hops == 0. */
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class A2, class... Rest>
    requires detail::any_temporary<A0, A1, A2> murre_retriever(A0&&, A1&&, A2&&, Rest&&...)
    = delete;
    murre_retriever(const table_index& index, const E& embedder, const R& rewriter,
                    murre_options options = {})
        : index_(index), embedder_(embedder), rewriter_(rewriter), options_(options) {
        if (options_.beam == 0) throw error("murre: beam must be positive");
        if (options_.hops == 0) throw error("murre: hops must be positive");
    }

    [[nodiscard]] const murre_options& options() const noexcept { return options_; }

    /**
     * @brief The top k tables per question (see the class comment).
     * @throws error for k == 0 or k_columns > 0 (MURRE ranks tables only); embedding_error for
     * a bad embedder answer; whatever the rewriter throws.
     */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        if (o.k == 0) throw error("k must be positive");
        if (o.k_columns > 0) throw error("murre_retriever ranks tables only (k_columns must be 0)");
        std::vector<question_state> states;
        states.reserve(questions.size());
        for (std::size_t i = 0; i < questions.size(); ++i)
            states.emplace_back(index_.catalog().tables().size());
        for (std::size_t hop = 1; hop <= options_.hops; ++hop)
            if (!run_hop(questions, states, hop)) break;
        std::vector<retrieval> out(questions.size());
        for (std::size_t i = 0; i < questions.size(); ++i) {
            for (const auto& [t, s] : states[i].scores.top(o.k))
                out[i].tables.push_back({t, static_cast<float>(s)});
            out[i].trace = std::move(states[i].trace);
        }
        return out;
    }

  private:
    struct question_state {
        explicit question_state(std::size_t tables) : scores(tables), beams(1) {}
        table_scores scores;
        std::vector<beam_path> beams;  ///< Starts as one empty root path.
        std::vector<item_id> hop1_top;
        std::vector<trace_entry> trace;
    };

    /// A beam that retrieves in this hop: its question, its index, its query lines.
    struct live_beam {
        std::size_t question = 0;
        std::size_t beam = 0;
        std::vector<std::string> lines;
    };

    /// A table a beam may add: its best cosine over the beam's lines and that line.
    struct extension {
        table_id table = 0;
        float cos = 0.0f;
        std::string_view query;
    };

    /// One hop for every question; false when no beam was live.
    bool run_hop(std::span<const std::string> questions, std::vector<question_state>& states,
                 std::size_t hop) const {
        auto live = hop == 1 ? first_queries(questions) : next_queries(questions, states, hop);
        if (live.empty()) return false;
        std::vector<std::string> all;
        for (const auto& lb : live) all.insert(all.end(), lb.lines.begin(), lb.lines.end());
        const auto distinct = detail::murre::make_distinct(all);
        const matrix q = embed_normalized(embedder_, distinct.texts, index_.dim());
        const auto found = search(q, distinct, live, states, hop);
        extend(live, found, distinct, states, hop);
        return true;
    }

    std::vector<live_beam> first_queries(std::span<const std::string> questions) const {
        std::vector<live_beam> live;
        for (std::size_t i = 0; i < questions.size(); ++i) live.push_back({i, 0, {questions[i]}});
        return live;
    }

    /// Asks the rewriter for every live beam (one call), applies stops, and returns the beams
    /// that retrieve in this hop with their query lines.
    std::vector<live_beam> next_queries(std::span<const std::string> questions,
                                        std::vector<question_state>& states,
                                        std::size_t hop) const {
        std::vector<live_beam> live;
        for (std::size_t i = 0; i < questions.size(); ++i)
            for (std::size_t b = 0; b < states[i].beams.size(); ++b)
                if (!states[i].beams[b].stopped) live.push_back({i, b, {}});
        if (live.empty()) return live;
        const bool ask = options_.removal || options_.early_stop;
        const auto results =
            ask ? rewrite(questions, states, live) : std::vector<rewrite_result>(live.size());
        std::vector<bool> question_stops(questions.size(), false);
        for (std::size_t j = 0; j < live.size(); ++j)
            if (options_.early_stop && results[j].stop) question_stops[live[j].question] = true;
        std::vector<live_beam> out;
        for (std::size_t j = 0; j < live.size(); ++j) {
            auto& lb = live[j];
            auto& state = states[lb.question];
            auto& path = state.beams[lb.beam];
            const bool stop =
                options_.early_stop &&
                (results[j].stop || (options_.any_beam_stop && question_stops[lb.question]));
            if (stop) {
                path.stopped = true;
                state.trace.push_back({path.tables.back(),
                                       detail::murre::beam_step(hop - 1, lb.beam) + " stop", "",
                                       static_cast<float>(std::exp(path.score.final_log))});
                continue;
            }
            lb.lines = query_lines(questions[lb.question], path, results[j]);
            out.push_back(std::move(lb));
        }
        return out;
    }

    /// One rewriter call for the distinct (question, path) requests of @p live.
    std::vector<rewrite_result> rewrite(std::span<const std::string> questions,
                                        const std::vector<question_state>& states,
                                        const std::vector<live_beam>& live) const {
        std::vector<rewrite_request> requests;
        std::vector<std::size_t> slot;
        std::unordered_map<std::string, std::size_t> seen;
        for (const auto& lb : live) {
            rewrite_request r{questions[lb.question], states[lb.question].beams[lb.beam].tables};
            const auto [it, fresh] = seen.emplace(detail::murre::request_key(r), requests.size());
            if (fresh) requests.push_back(std::move(r));
            slot.push_back(it->second);
        }
        const auto answers = rewriter_.rewrite(requests);
        if (answers.size() != requests.size())
            throw error(fmt::format("murre: the rewriter returned {} results for {} requests",
                                    answers.size(), requests.size()));
        std::vector<rewrite_result> out;
        out.reserve(live.size());
        for (auto s : slot) out.push_back(answers[s]);
        return out;
    }

    /// The texts a live beam retrieves with.
    std::vector<std::string> query_lines(const std::string& question, const beam_path& path,
                                         const rewrite_result& r) const {
        std::vector<std::string> lines;
        if (!options_.removal) {
            lines.push_back(question);
            for (auto t : path.tables) lines.push_back(index_.table_text(t));
            return {fmt::format("{}", fmt::join(lines, "\n"))};
        }
        if (r.stop || r.queries.empty()) return {question};  // early stop off, or nothing said
        if (options_.per_line_max) return r.queries;
        return {fmt::format("{}", fmt::join(r.queries, "\n"))};
    }

    std::size_t depth(std::size_t available, std::size_t hop) const {
        // A beam's own tables are skipped, so ask for as many more as the path is long.
        const auto per = options_.per_beam == 0 ? available : options_.per_beam + hop - 1;
        return std::min(available, per);
    }

    /// The hits of every query line of a hop: storage[line_index[line]].
    struct hop_hits {
        std::vector<hits> storage;
        std::vector<std::size_t> line_index;
        [[nodiscard]] const hits& of(std::size_t line) const { return storage[line_index[line]]; }
    };

    /// Searches the whole catalog (one search for every distinct text) or, at hops >= 2 with
    /// rerank_top, each question's hop-1 top tables (one search per question).
    hop_hits search(const matrix& q, const detail::murre::distinct_texts& distinct,
                    const std::vector<live_beam>& live, const std::vector<question_state>& states,
                    std::size_t hop) const {
        const auto n_tables = index_.catalog().tables().size();
        hop_hits out;
        if (hop == 1 || options_.rerank_top == 0) {
            auto d = depth(n_tables, hop);
            if (hop == 1) d = std::max(d, std::min(n_tables, options_.rerank_top));
            out.storage = index_.search_tables(q, d);
            out.line_index = distinct.slot;
            return out;
        }
        out.line_index.resize(distinct.slot.size());
        std::size_t line = 0;
        for (std::size_t j = 0; j < live.size();) {
            // live is grouped by question: [j, end) are the beams of one question.
            const auto question = live[j].question;
            const auto first_line = line;
            std::vector<std::size_t> slots;
            for (; j < live.size() && live[j].question == question; ++j)
                for (std::size_t l = 0; l < live[j].lines.size(); ++l, ++line)
                    slots.push_back(distinct.slot[line]);
            const auto unique = detail::murre::make_distinct_ids(slots);
            matrix sub(static_cast<Eigen::Index>(unique.size()), q.cols());
            for (std::size_t r = 0; r < unique.size(); ++r)
                sub.row(static_cast<Eigen::Index>(r)) = q.row(static_cast<Eigen::Index>(unique[r]));
            const auto& cands = states[question].hop1_top;
            const auto base = out.storage.size();
            for (auto& h : index_.tables().search_within(sub, cands, depth(cands.size(), hop)))
                out.storage.push_back(std::move(h));
            for (std::size_t l = first_line; l < line; ++l)
                out.line_index[l] =
                    base +
                    static_cast<std::size_t>(
                        std::find(unique.begin(), unique.end(), distinct.slot[l]) - unique.begin());
        }
        return out;
    }

    /// Candidate extensions of every live beam, carried stopped beams, table scores, pruning
    /// and the beam trace.
    void extend(const std::vector<live_beam>& live, const hop_hits& found,
                const detail::murre::distinct_texts& distinct, std::vector<question_state>& states,
                std::size_t hop) const {
        std::vector<std::vector<beam_candidate>> candidates(states.size());
        std::vector<bool> touched(states.size(), false);
        extensions best(index_.catalog().tables().size());
        std::size_t line = 0;
        for (const auto& lb : live) {
            auto& state = states[lb.question];
            const auto& parent = state.beams[lb.beam];
            if (hop == 1 && options_.rerank_top > 0)
                for (const auto& h : found.of(line))
                    if (state.hop1_top.size() < options_.rerank_top) state.hop1_top.push_back(h.id);
            // table -> (best cosine, the line that gave it) over the beam's lines
            best.clear();
            for (std::size_t l = 0; l < lb.lines.size(); ++l, ++line) {
                const std::string_view text = distinct.texts[distinct.slot[line]];
                for (const auto& h : found.of(line))
                    if (std::find(parent.tables.begin(), parent.tables.end(), h.id) ==
                        parent.tables.end())
                        best.offer({h.id, h.score, text});
            }
            // One line's hits come best first (cosine, then smaller id): already ranked.
            for (const auto& e : ranked_extensions(best, lb.lines.size() > 1))
                candidates[lb.question].push_back(
                    {lb.beam, e.table, e.query,
                     extend_score(parent.score, e.cos, options_.scoring)});
            touched[lb.question] = true;
        }
        for (std::size_t i = 0; i < states.size(); ++i) {
            if (!touched[i]) continue;
            auto& state = states[i];
            for (std::size_t b = 0; b < state.beams.size(); ++b)
                if (state.beams[b].stopped)
                    candidates[i].push_back({b, std::nullopt, {}, state.beams[b].score});
            for (const auto& c : candidates[i]) state.scores.add(state.beams, c);
            state.beams = prune_beams(state.beams, candidates[i], options_.beam);
            trace_beams(state, hop);
        }
    }

    /// A beam's extensions: each table once with its best cosine over the beam's lines (the
    /// first line reaching it), in the order first offered. A slot per table of the catalog,
    /// reused across beams.
    class extensions {
      public:
        explicit extensions(std::size_t tables) : slot_(tables, none) {}
        void clear() {
            for (const auto& e : list_) slot_[e.table] = none;
            list_.clear();
        }
        void offer(const extension& e) {
            auto& s = slot_[e.table];
            if (s == none) {
                s = list_.size();
                list_.push_back(e);
            } else if (e.cos > list_[s].cos) {
                list_[s] = e;
            }
        }
        [[nodiscard]] const std::vector<extension>& list() const noexcept { return list_; }

      private:
        static constexpr std::size_t none = static_cast<std::size_t>(-1);
        std::vector<std::size_t> slot_;
        std::vector<extension> list_;
    };

    /// A beam's extensions by cosine (ties: smaller id), at most per_beam of them (if set);
    /// sorted only when @p several lines were searched (one line's are offered in that order).
    std::vector<extension> ranked_extensions(const extensions& best, bool several) const {
        std::vector<extension> ext = best.list();
        if (several)
            std::sort(ext.begin(), ext.end(), [](const auto& a, const auto& b) {
                return a.cos > b.cos || (a.cos == b.cos && a.table < b.table);
            });
        if (options_.per_beam > 0 && ext.size() > options_.per_beam) ext.resize(options_.per_beam);
        return ext;
    }

    static void trace_beams(question_state& state, std::size_t hop) {
        for (std::size_t b = 0; b < state.beams.size(); ++b) {
            const auto& p = state.beams[b];
            const auto score = static_cast<float>(std::exp(p.score.final_log));
            for (std::size_t j = 0; j < p.tables.size(); ++j)
                state.trace.push_back(
                    {p.tables[j], detail::murre::beam_step(hop, b), p.queries[j], score});
        }
    }

    const table_index& index_;
    const E& embedder_;
    const R& rewriter_;
    murre_options options_;
};

}  // namespace tabret
