#pragma once
/// @file embedding/hashing_params.hpp
/// @brief The options of hashing_embedder, apart from it so that table_search.hpp can name
/// them without including Eigen.

#include <cstddef>

namespace tabret {

/// Weights of the feature families of hashing_embedder. The defaults were chosen on tabret's
/// own demo questions (never on a benchmark): among dims 512/1024/2048, char weights
/// 0.25/0.5/1 and pair weights 0/0.25/0.5, 2048/1/0.25 scored best and 1024/1/0.25 within two
/// points of it at half the memory.
struct hashing_params {
    std::size_t dim = 1024;      ///< Output dimension.
    std::size_t char_ngram = 3;  ///< Character n-gram length within a word (with `#` borders).
    float word_weight = 1.0f;
    float bigram_weight = 0.25f;  ///< Adjacent word pairs.
    float char_weight = 1.0f;     ///< Character n-grams: robust to inflection (`singer`/`singers`).
    bool stopwords = true;        ///< Drop English function words (text/tokenize.hpp) first.
};

}  // namespace tabret
