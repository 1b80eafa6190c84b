#pragma once
/// @file text/segment.hpp
/// @brief Word segmentation of concatenated identifiers (`accountholdername` → account holder
/// name) and natural names derived with it.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tabret {

class catalog;

struct segment_options {
    /// Added to the cost of every word of a split: a split into fewer words wins a near tie
    /// (`invoicelines` → invoice lines, not in voice lines).
    double word_penalty = 3.0;
    /// A split is kept only when every piece is a plausible word: 1-letter pieces never; pieces
    /// of 2 letters among the `short_rank` most frequent words, of 3 or 4 letters among the
    /// `rare_rank` most frequent, longer pieces anywhere in the word list. Otherwise the token
    /// stays whole (`quartile` is not split into quart ile).
    std::size_t short_rank = 5000;
    std::size_t rare_rank = 20000;
    std::size_t min_length = 5;  ///< Shorter tokens are never split.
};

/**
 * @brief Splits a lower-case token into words by the most probable split under a Zipf model of
 * a word list ordered by frequency (cost of the word of rank r: log((r + 1) · log N), the model
 * of wordninja), plus a per-word penalty. A token that is itself a word, an inflection of one
 * (a known word + an English suffix: s, es, ed, d, ing, er, ers, ly, able, ation(s), al), not
 * lower-case ASCII letters, or without a confident split (see segment_options; a split ending
 * in such a suffix is not one) is returned whole. Immutable once built; thread-safe.
 */
class word_segmenter {
  public:
    /// @param words_by_frequency most frequent first, lower-case; duplicates keep their first
    /// rank. @throws error for an empty list.
    explicit word_segmenter(const std::vector<std::string>& words_by_frequency,
                            segment_options options = {});

    /// The words of @p token (lower-case ASCII expected), or {token} when it stays whole.
    [[nodiscard]] std::vector<std::string> split(std::string_view token) const;

    [[nodiscard]] bool known(std::string_view word) const;
    /// The rank of @p word in the list (0: the most frequent), or nullopt when not in it.
    [[nodiscard]] std::optional<std::size_t> rank(std::string_view word) const;
    [[nodiscard]] std::size_t size() const noexcept { return rank_.size(); }
    [[nodiscard]] const segment_options& options() const noexcept { return options_; }

  private:
    [[nodiscard]] bool inflected(std::string_view token) const;
    [[nodiscard]] bool plausible(std::string_view piece) const;
    [[nodiscard]] std::vector<std::string> best_split(std::string_view token) const;

    /// Looks strings up by string_view, without a temporary string per lookup.
    struct hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept {
            return std::hash<std::string_view>{}(s);
        }
    };
    std::unordered_map<std::string, std::size_t, hash, std::equal_to<>> rank_;
    std::size_t longest_ = 0;
    double log_n_ = 0.0;
    segment_options options_;
};

/// The natural name of @p identifier (detail::natural_name: snake, kebab and camel case split,
/// lower-cased), each of its words split further by @p segmenter.
std::string segmented_natural_name(std::string_view identifier, const word_segmenter& segmenter);

namespace detail {

/// A copy of @p cat (same ids, types, descriptions, constraints and keys) whose table and
/// column natural names are `rename(identifier, natural name, database)`.
catalog with_natural_names(
    const catalog& cat,
    const std::function<std::string(const std::string&, const std::string&, std::size_t)>& rename);

}  // namespace detail

/**
 * @brief @p cat with the natural names of its tables and columns re-derived by
 * segmented_natural_name wherever they were derived (equal to detail::natural_name of the
 * identifier) or equal the identifier (case-insensitively); names given by the schema are kept.
 * Ids, keys, types and descriptions are unchanged.
 */
catalog with_segmented_names(const catalog& cat, const word_segmenter& segmenter);

}  // namespace tabret
