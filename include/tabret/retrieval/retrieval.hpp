#pragma once
/// @file retrieval/retrieval.hpp
/// @brief What every retriever returns, its options, and the Retriever concept.

#include <concepts>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/error.hpp"

namespace tabret {

struct scored_table {
    table_id table = 0;
    float score = 0.0f;
    friend bool operator==(const scored_table&, const scored_table&) = default;
};

struct scored_column {
    column_id column = 0;
    float score = 0.0f;
    friend bool operator==(const scored_column&, const scored_column&) = default;
};

/// Why one table is in a result: which step put it there, with which query text and score.
struct trace_entry {
    table_id table = 0;
    std::string step;   ///< e.g. "dense", "bm25", "hop 2 beam 1", "bridge".
    std::string query;  ///< The text that retrieved it.
    float score = 0.0f;
    std::string value;  ///< The cell value it matched (the values stage); empty otherwise.
    trace_entry() = default;
    trace_entry(table_id table_, std::string step_, std::string query_, float score_,
                std::string value_ = {})
        : table(table_),
          step(std::move(step_)),
          query(std::move(query_)),
          score(score_),
          value(std::move(value_)) {}
    friend bool operator==(const trace_entry&, const trace_entry&) = default;
};

/// The answer for one question.
struct retrieval {
    std::vector<scored_table> tables;    ///< Best first.
    std::vector<scored_column> columns;  ///< Best first; empty when the method ranks no columns.
    std::optional<std::size_t> cut;      ///< Set by adaptive methods: keep tables[0, cut).
    std::vector<trace_entry> trace;
    friend bool operator==(const retrieval&, const retrieval&) = default;
};

/// Options every retriever understands.
struct retrieve_options {
    std::size_t k = 10;         ///< Tables to return.
    std::size_t k_columns = 0;  ///< Columns to return (0: none).
};

/**
 * @brief Where a retriever's `retrieve` starts: one empty retrieval per question.
 * @throws error for k == 0.
 */
inline std::vector<retrieval> empty_results(std::size_t questions, const retrieve_options& o) {
    if (o.k == 0) throw error("k must be positive");
    return std::vector<retrieval>(questions);
}

/**
 * @brief A retriever answers a batch of questions; one question is a batch of one.
 * `retrieve` is const and thread-safe; k == 0 throws `tabret::error`.
 */
template <class R>
concept Retriever = requires(const R& r, std::span<const std::string> questions,
                             const retrieve_options& options) {
    { r.retrieve(questions, options) } -> std::same_as<std::vector<retrieval>>;
};

}  // namespace tabret
