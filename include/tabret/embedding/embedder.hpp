#pragma once
/// @file embedding/embedder.hpp
/// @brief The Embedder concept and the one way the library calls an embedder.

#include <concepts>
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

/**
 * @brief Embeds @p texts with one call to @p e, checks the result and L2-normalises its rows.
 * @param dim expected dimension, or 0 to accept any.
 * @throws embedding_error for a wrong shape, NaN or infinity.
 */
template <Embedder E>
matrix embed_normalized(const E& e, std::span<const std::string> texts, std::size_t dim = 0) {
    matrix m = e.embed(texts);
    check_embeddings(m, texts.size(), dim, "embedder");
    normalize_rows(m);
    return m;
}

}  // namespace tabret
