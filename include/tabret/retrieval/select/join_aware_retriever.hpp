#pragma once
/// @file retrieval/select/join_aware_retriever.hpp
/// @brief Any first stage feeding any join-aware selector (greedy, exact JAR objective) as one
/// Retriever: build a batch's join problems, solve each with the selector, turn the selections
/// into results.

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tabret/embedding/embedder.hpp"
#include "tabret/error.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/join/join_graph.hpp"
#include "tabret/retrieval/first_stage.hpp"
#include "tabret/retrieval/retrieval.hpp"
#include "tabret/retrieval/select/join_problem.hpp"
#include "tabret/retrieval/selector.hpp"
#include "tabret/rewriting/rewriter.hpp"

namespace tabret {

/**
 * @brief Top-N candidates of the first stage @p First (dense by default), a decomposition
 * rewriter's sub-queries and the join graph's ω, solved per question by @p Select. A batch costs
 * one rewriter call and one embedder call, plus the first stage's calls. Holds the index, graph,
 * embedder and rewriter by reference (all must outlive it) and the selector and first stage by
 * value. `retrieve` is const and thread-safe when the callbacks, the first stage and the
 * selector are.
 */
template <Embedder E, QueryRewriter Rw, Selector Select, FirstStage First = dense_first_stage>
class join_aware_retriever {
  public:
    /** @throws error when @p graph was built for another catalog or embedder than @p index,
     * or @p candidates is 0. */
    join_aware_retriever(const table_index& index, const join_graph& graph, const E& embedder,
                         const Rw& rewriter, std::size_t candidates, Select select,
                         First first = {})
        : index_(index),
          graph_(graph),
          embedder_(embedder),
          rewriter_(rewriter),
          candidates_(candidates),
          select_(std::move(select)),
          first_(std::move(first)) {
        check_join_graph(index, graph);
        if (candidates_ == 0) throw error("candidates must be positive");
    }

    /** @throws error for k == 0; whatever the callbacks throw. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        if (o.k == 0) throw error("k must be positive");
        std::vector<retrieval> out;
        out.reserve(questions.size());
        for (const auto& p : problems(questions, std::max(o.k, candidates_)))
            out.push_back(to_retrieval(p, select_(p, o.k), Select::step, o.k_columns));
        return out;
    }

    /** @brief The selection problems of a batch over the top @p n tables (for inspection). */
    [[nodiscard]] std::vector<join_problem> problems(std::span<const std::string> questions,
                                                     std::size_t n) const {
        return build_join_problems(index_, graph_, embedder_, rewriter_, first_, questions, n);
    }

  private:
    const table_index& index_;
    const join_graph& graph_;
    const E& embedder_;
    const Rw& rewriter_;
    std::size_t candidates_;
    Select select_;
    First first_;
};

}  // namespace tabret
