#pragma once
/// @file saved_index.hpp
/// @brief A table index saved or loaded together with its join graph, generated questions,
/// cell values and tuned pipeline: one directory, one manifest, one consistent read
/// (io/artifact.hpp).

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/index/question_index.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/index/value_index.hpp"
#include "tabret/io/artifact.hpp"
#include "tabret/join/join_graph.hpp"

namespace tabret {

/**
 * @brief Saves @p index with (when given) @p graph, @p questions and @p values into directory
 * @p dir in
 * one step. Parts already there and not given are kept when they fit the index (same catalog
 * and embedder); ones that do not are refused unless @p replace.
 * @throws error when @p graph, @p questions or @p values were made for another catalog or
 * embedder;
 * io_error as table_index::save.
 */
inline void save_index(const std::filesystem::path& dir, const table_index& index,
                       const join_graph* graph = nullptr, const question_index* questions = nullptr,
                       bool replace = false, const value_index* values = nullptr) {
    const auto& fp = index.catalog_fingerprint();
    std::map<std::string, detail::artifact_part> parts{{"index", index.to_part()}};
    if (graph) {
        if (graph->catalog_fingerprint() != fp)
            throw error("the join graph was built for another catalog than the index's");
        parts.emplace("join_graph", graph->to_part());
    }
    if (questions) {
        questions->check_matches(index);
        parts.emplace("questions", questions->to_part());
    }
    if (values) {
        if (values->catalog_fingerprint() != fp)
            throw error("the values were read for another catalog than the index's");
        parts.emplace("values", values->to_part());
    }
    detail::save_artifact(dir, fp, std::move(parts), replace);
}

/**
 * @brief Saves @p choice, the pipeline `tabret tune` chose for @p index (JSON that only the
 * Python package reads), as the "tuning" part of the directory @p dir, which must hold
 * @p index; its other parts are kept. A later save of another catalog or embedder there
 * refuses to discard it unless asked (save_index's @p replace), like every other part.
 * @throws io_error as save_index, and when @p dir holds another catalog's index.
 */
inline void save_tuning(const std::filesystem::path& dir, const table_index& index,
                        const nlohmann::json& choice) {
    detail::artifact_part part;
    part.meta = {{"embedder", index.embedder_name()}, {"choice", choice}};
    detail::save_artifact(dir, index.catalog_fingerprint(), {{"tuning", std::move(part)}}, false);
}

/// An index directory read once: the index and whichever other parts it holds.
struct saved_index {
    table_index index;
    std::optional<join_graph> graph;
    std::optional<question_index> questions;
    std::optional<value_index> values;
    std::optional<nlohmann::json> tuning;  ///< save_tuning's choice
};

/// Which parts besides the index load_index() reads (all by default).
struct load_parts {
    bool graph = true, questions = true, values = true;
};

/**
 * @brief Loads everything saved in @p dir from one consistent read, so the parts belong
 * together even while another process saves to the same directory.
 * @throws as table_index::load, join_graph::load and question_index::load.
 */
inline saved_index load_index(const std::filesystem::path& dir, load_parts parts = {}) {
    const auto saved = detail::artifact::read(dir);
    saved_index out{table_index::load(saved), std::nullopt, std::nullopt, std::nullopt,
                    std::nullopt};
    const auto& cat = out.index.catalog();
    if (parts.graph && saved.has("join_graph")) out.graph.emplace(join_graph::load(saved, cat));
    if (parts.questions && saved.has("questions"))
        out.questions.emplace(question_index::load(saved, out.index));
    if (parts.values && saved.has("values")) out.values.emplace(value_index::load(saved, cat));
    if (saved.has("tuning"))
        out.tuning = saved.part("tuning").meta.value("choice", nlohmann::json());
    return out;
}

}  // namespace tabret
