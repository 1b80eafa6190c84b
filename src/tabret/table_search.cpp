/// @file table_search.cpp
/// @brief table_search (include/tabret/table_search.hpp): a table_index and a dense_retriever
/// over a callback_embedder, instantiated here once instead of in every caller.

#include "tabret/table_search.hpp"

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/embedding/callback_embedder.hpp"
#include "tabret/embedding/hashing_embedder.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/retrieval/first_stage/dense_retriever.hpp"

namespace tabret {

struct table_search::state {
    callback_embedder embedder;
    table_index index;
    dense_options dense;
};

namespace {

callback_embedder to_embedder(const hashing_params& params) {
    const hashing_embedder hashing(params);
    return callback_embedder(
        [hashing](std::span<const std::string> texts) { return hashing.embed(texts); },
        hashing.name(), hashing_embedder::allows_zero_rows());
}

callback_embedder to_embedder(text_embedder e) {
    if (e.dim == 0) throw error(fmt::format("text_embedder '{}': dim must be positive", e.name));
    if (!e.embed) throw error(fmt::format("text_embedder '{}': no embed function", e.name));
    auto fn = [dim = e.dim, embed = std::move(e.embed)](std::span<const std::string> texts) {
        matrix out =
            matrix::Zero(static_cast<Eigen::Index>(texts.size()), static_cast<Eigen::Index>(dim));
        embed(texts, std::span<float>(out.data(), static_cast<std::size_t>(out.size())));
        return out;
    };
    return callback_embedder(std::move(fn), std::move(e.name));
}

}  // namespace

std::shared_ptr<const table_search::state> table_search::make_state(
    callback_embedder embedder, table_index index, const table_search_options& options) {
    return std::make_shared<const state>(
        state{std::move(embedder), std::move(index), {.hybrid = options.hybrid}});
}

table_search::table_search(callback_embedder embedder, class catalog cat,
                           const table_search_options& options) {
    auto index =
        table_index::build(std::move(cat), embedder, embedder.name(), {.columns = options.columns});
    state_ = make_state(std::move(embedder), std::move(index), options);
}

table_search::table_search(callback_embedder embedder, const std::filesystem::path& dir,
                           std::size_t dim, const table_search_options& options) {
    auto index = table_index::load(dir);
    if (index.embedder_name() != embedder.name() || (dim != 0 && index.dim() != dim))
        throw error(fmt::format("{}: the index was built with embedder '{}' (dim {}), not '{}'",
                                dir.string(), index.embedder_name(), index.dim(), embedder.name()));
    state_ = make_state(std::move(embedder), std::move(index), options);
}

table_search::table_search(class catalog cat, const hashing_params& params,
                           table_search_options options)
    : table_search(to_embedder(params), std::move(cat), options) {}

table_search::table_search(class catalog cat, text_embedder embedder, table_search_options options)
    : table_search(to_embedder(std::move(embedder)), std::move(cat), options) {}

table_search table_search::load(const std::filesystem::path& dir, const hashing_params& params,
                                table_search_options options) {
    return table_search(to_embedder(params), dir, params.dim, options);
}

table_search table_search::load(const std::filesystem::path& dir, text_embedder embedder,
                                table_search_options options) {
    const auto dim = embedder.dim;
    return table_search(to_embedder(std::move(embedder)), dir, dim, options);
}

void table_search::save(const std::filesystem::path& dir) const { state_->index.save(dir); }

std::vector<retrieval> table_search::retrieve(std::span<const std::string> questions,
                                              const retrieve_options& options) const {
    const dense_retriever retriever(state_->index, state_->embedder, state_->dense);
    return retriever.retrieve(questions, options);
}

const catalog& table_search::catalog() const noexcept { return state_->index.catalog(); }

const std::string& table_search::embedder_name() const noexcept {
    return state_->index.embedder_name();
}

}  // namespace tabret
