#pragma once
/// @file retrieval/first_stage/column_max_retriever.hpp
/// @brief Tables ranked by the best of their own cosine and their columns' cosines with the
/// question: a question that names one column finds its table. The example method of
/// docs/write-your-own-method.md (this header, bindings/methods/column_max.cpp and a row of
/// docs/choosing-a-method.md are all it takes).

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tabret/borrow.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/error.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

struct column_max_options {
    std::size_t depth = 100;  ///< Tables and columns searched per question before the max.
};

/**
 * @brief score(t) = max(cos(q, t), max over t's columns c of cos(q, c)), over the top `depth`
 * tables and the top `depth` columns. Holds the index and the embedder by reference; a batch
 * costs one embedder call. Thread-safe when the embedder is.
 */
template <Embedder E>
class column_max_retriever {
  public:
    template <class A0, class A1, class... Rest>
    requires detail::any_temporary<A0, A1> column_max_retriever(A0&&, A1&&, Rest&&...)
    = delete;
    column_max_retriever(const table_index& index, const E& embedder,
                         column_max_options options = {})
        : index_(index), embedder_(embedder), options_(options) {
        if (!index.has_columns()) throw error("column-max needs an index with column vectors");
        if (options.depth == 0) throw error("column-max: depth must be positive");
    }

    /** @throws error for k == 0; embedding_error for a bad embedder answer. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        if (o.k == 0) throw error("k must be positive");
        std::vector<retrieval> out(questions.size());
        if (questions.empty()) return out;
        const matrix q = embed_normalized(embedder_, questions, index_.dim());
        const auto depth = std::max({o.k, o.k_columns, options_.depth});
        const auto tables = index_.search_tables(q, depth);
        const auto columns = index_.search_columns(q, depth);
        for (std::size_t i = 0; i < questions.size(); ++i) {
            out[i].tables = best_tables(tables[i], columns[i], o.k);
            for (const auto& t : out[i].tables)
                out[i].trace.push_back({t.table, "column-max", questions[i], t.score});
            for (std::size_t c = 0; c < std::min(o.k_columns, columns[i].size()); ++c)
                out[i].columns.push_back({columns[i][c].id, columns[i][c].score});
        }
        return out;
    }

  private:
    std::vector<scored_table> best_tables(const hits& tables, const hits& columns,
                                          std::size_t k) const {
        std::unordered_map<table_id, float> best;
        const auto offer = [&](table_id t, float s) {
            auto [it, added] = best.try_emplace(t, s);
            if (!added) it->second = std::max(it->second, s);
        };
        for (const auto& h : tables) offer(static_cast<table_id>(h.id), h.score);
        for (const auto& h : columns)
            offer(index_.catalog().column(static_cast<column_id>(h.id)).table, h.score);
        std::vector<scored_table> ranked;
        for (const auto& [t, s] : best) ranked.push_back({t, s});
        std::ranges::sort(ranked, [](const scored_table& a, const scored_table& b) {
            return a.score != b.score ? a.score > b.score : a.table < b.table;
        });
        ranked.resize(std::min(k, ranked.size()));
        return ranked;
    }

    const table_index& index_;
    const E& embedder_;
    column_max_options options_;
};

}  // namespace tabret
