#pragma once
/// @file retrieval/first_stage/value_retriever.hpp
/// @brief Tables ranked by the cell values the question names (index/value_index.hpp): a
/// table scores the summed weight of the distinct values of its columns found in the question.
/// Tables holding none of them are not returned, so it is a stage to fuse with others.

#include <algorithm>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "tabret/borrow.hpp"
#include "tabret/error.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/index/value_index.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

/**
 * @brief score(t) = Σ over the distinct values v of t's columns that the question names of
 * weight(v) (value_index::match). Columns are the matched ones of the returned tables, each
 * once, by weight; the trace says
 * which value matched in which column. Holds the index and the values by reference.
 * Thread-safe.
 */
class value_retriever {
  public:
    template <class A0, class A1, class... Rest>
    requires detail::any_temporary<A0, A1> value_retriever(A0&&, A1&&, Rest&&...)
    = delete;
    value_retriever(const table_index& index, const value_index& values,
                    one_word_values one_word = one_word_values::literal)
        : index_(index), values_(values), one_word_(one_word) {
        if (values.catalog_fingerprint() != index.catalog_fingerprint())
            throw error("values: the value index was read for another catalog than the index's");
    }

    /** @throws error for k == 0. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        auto out = empty_results(questions.size(), o);
        for (std::size_t i = 0; i < questions.size(); ++i) out[i] = one(questions[i], o);
        return out;
    }

  private:
    retrieval one(const std::string& question, const retrieve_options& o) const {
        const auto& cat = index_.catalog();
        const auto matches = values_.match(question, one_word_);
        // Per table, each distinct value once (the same value in two of its columns).
        std::unordered_map<table_id, std::map<std::string, float>> found;
        for (const auto& m : matches) {
            auto& w = found[cat.column(m.column).table][detail::normalise_value(m.value)];
            w = std::max(w, m.weight);
        }
        retrieval r;
        for (const auto& [t, vs] : found) {
            float s = 0;
            for (const auto& [_, w] : vs) s += w;
            r.tables.push_back({t, s});
        }
        std::ranges::sort(r.tables, [](const scored_table& a, const scored_table& b) {
            return a.score != b.score ? a.score > b.score : a.table < b.table;
        });
        r.tables.resize(std::min(o.k, r.tables.size()));
        for (const auto& t : r.tables)
            for (const auto& m : matches)
                if (cat.column(m.column).table == t.table)
                    r.trace.push_back(
                        {t.table, "values",
                         detail::value_trace_query(m.value, cat.column(m.column).name), m.weight,
                         m.value});
        // the matched columns of the returned tables, each once (matches come best first)
        for (const auto& m : matches) {
            if (r.columns.size() == o.k_columns) break;
            const bool returned = std::ranges::any_of(r.tables, [&](const scored_table& t) {
                return t.table == cat.column(m.column).table;
            });
            if (returned && std::ranges::none_of(r.columns, [&](const scored_column& c) {
                    return c.column == m.column;
                }))
                r.columns.push_back({m.column, m.weight});
        }
        return r;
    }

    const table_index& index_;
    const value_index& values_;
    one_word_values one_word_;
};

}  // namespace tabret
