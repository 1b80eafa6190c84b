#pragma once
/// @file retrieval/first_stage/bm25_retriever.hpp
/// @brief Lexical single-hop retrieval: BM25 over the table texts, no model at all.

#include <span>
#include <string>
#include <vector>

#include "tabret/index/table_index.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

/**
 * @brief Ranks tables by BM25 of the question against the index's table texts (the lexical
 * floor every method is compared with). Holds the index by reference. Thread-safe.
 */
class bm25_retriever {
  public:
    explicit bm25_retriever(const table_index& index) : index_(index) {}
    /// A temporary index is refused (it would dangle).
    explicit bm25_retriever(const table_index&&) = delete;

    /** @throws error for k == 0. Tables with no term in common are not returned. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        auto out = empty_results(questions.size(), o);
        const auto found = index_.bm25().search(questions, o.k);
        for (std::size_t i = 0; i < questions.size(); ++i)
            for (const auto& h : found[i]) {
                out[i].tables.push_back({h.id, h.score});
                out[i].trace.push_back({h.id, "bm25", questions[i], h.score});
            }
        return out;
    }

  private:
    const table_index& index_;
};

static_assert(Retriever<bm25_retriever>);

}  // namespace tabret
