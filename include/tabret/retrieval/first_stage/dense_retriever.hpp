#pragma once
/// @file retrieval/first_stage/dense_retriever.hpp
/// @brief The single-hop baseline: rank tables by cosine with the question (optionally fused
/// with BM25).

#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/fusion.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

struct dense_options {
    bool hybrid = false;  ///< Fuse dense hits with BM25 hits over the table texts.
    fusion_params fusion{};
    std::size_t fusion_depth = 100;  ///< Hits taken from each list before fusing.
};

/**
 * @brief Single-hop dense retrieval. Holds the index and the embedder by reference (both must
 * outlive it). A batch of questions costs one embedder call. `retrieve` is const and
 * thread-safe when the embedder is.
 */
template <Embedder E>
class dense_retriever {
  public:
    /// Temporaries for what it holds by reference are refused (they would dangle).
    template <class A0, class A1, class... Rest>
    requires detail::any_temporary<A0, A1> dense_retriever(A0&&, A1&&, Rest&&...)
    = delete;
    dense_retriever(const table_index& index, const E& embedder, dense_options options = {})
        : index_(index), embedder_(embedder), options_(options) {}

    /** @throws error for k == 0; embedding_error for a bad embedder answer. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        auto out = empty_results(questions.size(), o);
        if (questions.empty()) return out;
        const matrix q = embed_normalized(embedder_, questions, index_.dim());
        const auto depth = options_.hybrid ? std::max(o.k, options_.fusion_depth) : o.k;
        auto tables = index_.search_tables(q, depth);
        if (options_.hybrid)
            tables = fuse_hits(tables, index_.bm25().search(questions, options_.fusion_depth),
                               options_.fusion, o.k);
        const auto columns = o.k_columns > 0 ? index_.search_columns(q, o.k_columns)
                                             : std::vector<hits>(questions.size());
        for (std::size_t i = 0; i < questions.size(); ++i) {
            for (const auto& h : tables[i]) {
                out[i].tables.push_back({h.id, h.score});
                out[i].trace.push_back(
                    {h.id, options_.hybrid ? "hybrid" : "dense", questions[i], h.score});
            }
            for (const auto& h : columns[i]) out[i].columns.push_back({h.id, h.score});
        }
        return out;
    }

  private:
    const table_index& index_;
    const E& embedder_;
    dense_options options_;
};

}  // namespace tabret
