#pragma once
/// @file retrieval/first_stage.hpp
/// @brief Where a selector's candidates come from: the FirstStage concept, the dense first stage
/// (the question's table cosines) and any Retriever as a first stage.

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/embedding/matrix.hpp"
#include "tabret/error.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

/**
 * @brief `s.candidates(index, questions, question_vectors, n)`: per question, at most @p n
 * candidate tables in first-stage order, each scored with its coarse relevance r_i =
 * cos(question, table text) (row i of @p question_vectors against the index's table vectors),
 * and the first stage's trace entries for them. Const and thread-safe.
 */
template <class S>
concept FirstStage = requires(const S& s, const table_index& index,
                              std::span<const std::string> questions, const matrix& vectors,
                              std::size_t n) {
    { s.candidates(index, questions, vectors, n) } -> std::same_as<std::vector<retrieval>>;
};

/// The dense first stage: the top-n tables by cosine (no extra embedder call).
struct dense_first_stage {
    [[nodiscard]] std::vector<retrieval> candidates(const table_index& index,
                                                    std::span<const std::string> questions,
                                                    const matrix& vectors, std::size_t n) const {
        std::vector<retrieval> out(questions.size());
        const auto found = index.search_tables(vectors, n);
        for (std::size_t i = 0; i < questions.size(); ++i)
            for (const auto& h : found[i]) {
                out[i].tables.push_back({h.id, h.score});
                out[i].trace.push_back({h.id, "dense", questions[i], h.score});
            }
        return out;
    }
};

/**
 * @brief Any Retriever as a first stage: its top-n tables in its order, rescored with the
 * coarse cosine (its own scores stay in its trace entries). One retrieve call per batch.
 */
template <Retriever R>
class retriever_first_stage {
  public:
    explicit retriever_first_stage(R retriever) : retriever_(std::move(retriever)) {}

    /** @throws whatever the retriever throws. */
    [[nodiscard]] std::vector<retrieval> candidates(const table_index& index,
                                                    std::span<const std::string> questions,
                                                    const matrix& vectors, std::size_t n) const {
        auto out = retriever_.retrieve(questions, {n, 0});
        if (out.size() != questions.size())
            throw error(fmt::format("the first stage returned {} results for {} questions",
                                    out.size(), questions.size()));
        for (std::size_t i = 0; i < out.size(); ++i) rescore(index, vectors, i, n, out[i]);
        return out;
    }

  private:
    static void rescore(const table_index& index, const matrix& vectors, std::size_t row,
                        std::size_t n, retrieval& r) {
        if (r.tables.size() > n) r.tables.resize(n);
        const auto& tables = index.tables().vectors();
        for (auto& t : r.tables) {
            (void)index.catalog().table(t.table);  // throws for an id out of range
            t.score = vectors.row(static_cast<Eigen::Index>(row))
                          .dot(tables.row(static_cast<Eigen::Index>(t.table)));
        }
        r.columns.clear();
        r.cut.reset();
    }

    R retriever_;
};

/**
 * @brief Any FirstStage behind one type (chosen at run time, e.g. dense unless the caller gives
 * a retriever). Copies share the held stage.
 */
class any_first_stage {
  public:
    template <FirstStage S>
    requires(!std::is_same_v<std::remove_cvref_t<S>, any_first_stage>) any_first_stage(S stage)
        : fn_([held = std::make_shared<const S>(std::move(stage))](
                  const table_index& index, std::span<const std::string> questions,
                  const matrix& vectors,
                  std::size_t n) { return held->candidates(index, questions, vectors, n); }) {}

    /// The dense first stage.
    any_first_stage() : any_first_stage(dense_first_stage{}) {}

    [[nodiscard]] std::vector<retrieval> candidates(const table_index& index,
                                                    std::span<const std::string> questions,
                                                    const matrix& vectors, std::size_t n) const {
        return fn_(index, questions, vectors, n);
    }

  private:
    std::function<std::vector<retrieval>(const table_index&, std::span<const std::string>,
                                         const matrix&, std::size_t)>
        fn_;
};

static_assert(FirstStage<dense_first_stage>);
static_assert(FirstStage<any_first_stage>);

}  // namespace tabret
