#pragma once
/// @file embedding/hashing_embedder.hpp
/// @brief A deterministic, model-free embedder: hashed word, word-pair and character n-grams.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "tabret/embedding/hashing_params.hpp"
#include "tabret/embedding/matrix.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/text/tokenize.hpp"

namespace tabret {

/**
 * @brief Embeds a text as the signed feature-hashing of its schema tokens (see schema_tokens),
 * adjacent token pairs and character n-grams. Needs no model and no data: the same text gives
 * the same vector on every machine. Lexical only — it knows no synonyms. Thread-safe.
 */
class hashing_embedder {
  public:
    explicit hashing_embedder(hashing_params params = {}) : params_(params) {
        if (params_.dim == 0) throw error("hashing_embedder: dim must be positive");
        if (params_.char_ngram == 0) throw error("hashing_embedder: char_ngram must be positive");
    }

    /** @brief One row per text (not normalised; embed_normalized does that). Thread-safe. */
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const {
        matrix out = matrix::Zero(static_cast<Eigen::Index>(texts.size()),
                                  static_cast<Eigen::Index>(params_.dim));
        for (std::size_t i = 0; i < texts.size(); ++i)
            embed_one(texts[i], out.row(static_cast<Eigen::Index>(i)));
        return out;
    }

    [[nodiscard]] std::size_t dim() const noexcept { return params_.dim; }
    /// A text with none of the features (`a`, `?`) is a zero vector: its score is 0 everywhere.
    [[nodiscard]] static constexpr bool allows_zero_rows() noexcept { return true; }
    [[nodiscard]] const hashing_params& params() const noexcept { return params_; }
    /// Names the configuration; stored in saved indexes so a mismatch is caught on load.
    [[nodiscard]] std::string name() const {
        return fmt::format("hashing(dim={},n={},w={},b={},c={}{})", params_.dim, params_.char_ngram,
                           params_.word_weight, params_.bigram_weight, params_.char_weight,
                           params_.stopwords ? "" : ",all-words");
    }

  private:
    template <class Row>
    void add(Row&& row, std::string_view feature, std::uint64_t seed, float weight) const {
        const auto h = detail::fnv1a(feature, seed);
        const auto slot = static_cast<Eigen::Index>(h % params_.dim);
        row(slot) += (h >> 63) ? -weight : weight;
    }

    template <class Row>
    void embed_one(std::string_view text, Row&& row) const {
        const auto tokens = params_.stopwords ? content_tokens(text) : schema_tokens(text);
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            add(row, tokens[i], 1, params_.word_weight);
            if (i + 1 < tokens.size())
                add(row, tokens[i] + ' ' + tokens[i + 1], 2, params_.bigram_weight);
            const std::string padded = '#' + tokens[i] + '#';
            const auto n = params_.char_ngram;
            for (std::size_t p = 0; p + n <= padded.size(); ++p)
                add(row, std::string_view(padded).substr(p, n), 3, params_.char_weight);
        }
    }

    hashing_params params_;
};

}  // namespace tabret
