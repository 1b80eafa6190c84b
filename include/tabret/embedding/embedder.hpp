#pragma once
/// @file embedding/embedder.hpp
/// @brief The Embedder concept and the one way the library calls an embedder.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>

#include "tabret/embedding/matrix.hpp"

namespace tabret {

/**
 * @brief Turns a batch of texts into an n×d matrix, one row per text, in order.
 * The library validates the shape and values and L2-normalises the rows itself
 * (see embed_normalized), so an embedder need not normalise.
 */
template <class E>
concept Embedder = requires(const E& e, std::span<const std::string> texts) {
    { e.embed(texts) } -> std::same_as<matrix>;
};

/// How errors name an embedder: `embedder 'NAME'` when it has a name(), else `embedder`.
template <Embedder E>
std::string embedder_label(const E& e) {
    if constexpr (requires { std::string(e.name()); })
        return "embedder '" + std::string(e.name()) + "'";
    else
        return "embedder";
}

/// Whether a zero vector is a legitimate answer of @p e (`e.allows_zero_rows()`; the hashing
/// embedder: a text with none of its features). From any other embedder a zero row is an error.
template <Embedder E>
bool embedder_allows_zero_rows(const E& e) {
    if constexpr (requires { bool(e.allows_zero_rows()); })
        return e.allows_zero_rows();
    else
        return false;
}

/**
 * @brief Embeds @p texts with one call to @p e, checks the result and L2-normalises its rows.
 * @param dim expected dimension, or 0 to accept any.
 * @throws embedding_error for a wrong shape, NaN or infinity, or a row of zeros (naming the row
 * and its text) unless embedder_allows_zero_rows(e): then such a row stays zero.
 */
template <Embedder E>
matrix embed_normalized(const E& e, std::span<const std::string> texts, std::size_t dim = 0) {
    matrix m = e.embed(texts);
    const auto label = embedder_label(e);
    check_embeddings(m, texts.size(), dim, label);
    normalize_rows(m, label, texts, embedder_allows_zero_rows(e));
    return m;
}

/**
 * @brief Embeds @p texts with one call to @p e per batch of @p batch_size texts, checked and
 * normalised (embed_normalized), into one matrix; calls @p on_batch(texts done) after each batch.
 * @param dim expected dimension, or 0 to take the first batch's.
 * @throws error for batch_size == 0; embedding_error for a bad answer; whatever @p on_batch throws.
 */
template <Embedder E, class F>
matrix embed_in_batches(const E& e, std::span<const std::string> texts, std::size_t batch_size,
                        std::size_t dim, F&& on_batch) {
    if (batch_size == 0) throw error("batch_size must be positive");
    matrix out;
    for (std::size_t begin = 0; begin < texts.size(); begin += batch_size) {
        const auto n = std::min(batch_size, texts.size() - begin);
        const auto part = embed_normalized(e, texts.subspan(begin, n), dim);
        if (begin == 0) {
            dim = static_cast<std::size_t>(part.cols());
            out.resize(static_cast<Eigen::Index>(texts.size()), part.cols());
        }
        out.middleRows(static_cast<Eigen::Index>(begin), static_cast<Eigen::Index>(n)) = part;
        on_batch(begin + n);
    }
    return out;
}

}  // namespace tabret
