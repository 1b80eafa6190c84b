#pragma once
/// @file index/bm25_index.hpp
/// @brief Okapi BM25 over schema tokens (snake_case/CamelCase aware), with JSON persistence.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tabret/index/vector_index.hpp"

namespace tabret {

namespace detail {
class json_reader;
}  // namespace detail

/// Okapi BM25 parameters: term-frequency saturation k1 and length normalisation b.
struct bm25_params {
    double k1 = 1.2;        ///< >= 0
    double b = 0.75;        ///< in [0, 1]
    bool stopwords = true;  ///< Drop English function words (text/tokenize.hpp) from documents
                            ///< and queries; without it "the"/"of" dominate question scores.
    friend bool operator==(const bm25_params&, const bm25_params&) = default;
};

/**
 * @brief Okapi BM25 over documents tokenized by schema_tokens(), with an inverted index.
 *
 * score(q, d) = Σ over query tokens t (each occurrence counts) of
 * idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)), with
 * idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)) (always positive).
 * Search conventions follow VectorIndex: best first, ties by smaller id, k == 0 throws; items
 * with score 0 (no query token) are not returned, so a list may be shorter than k.
 *
 * A built index is immutable: every const method is thread-safe.
 */
class bm25_index {
  public:
    /** @brief An empty index (no documents). Thread-safe (const methods). */
    bm25_index() = default;

    /**
     * @brief Indexes @p documents (document i gets item id i).
     * @throws tabret::error if a parameter is out of range or there are too many documents.
     */
    explicit bm25_index(std::span<const std::string> documents, bm25_params params = {});

    /** @brief Number of documents. Thread-safe. */
    [[nodiscard]] std::size_t size() const noexcept { return doc_lengths_.size(); }

    /** @brief Number of distinct tokens. Thread-safe. */
    [[nodiscard]] std::size_t vocabulary_size() const noexcept { return postings_.size(); }

    /** @brief The BM25 parameters. Thread-safe. */
    [[nodiscard]] const bm25_params& params() const noexcept { return params_; }

    /** @brief Number of tokens of document @p id (0 if out of range). Thread-safe. */
    [[nodiscard]] std::size_t document_length(item_id id) const noexcept {
        return id < size() ? doc_lengths_[id] : 0;
    }

    /**
     * @brief For each query text, the best min(k, matching) documents by BM25, best first.
     * @throws tabret::error if k == 0. Thread-safe.
     */
    [[nodiscard]] std::vector<hits> search(std::span<const std::string> queries,
                                           std::size_t k) const;

    /**
     * @brief Like search(), restricted to @p candidates (shared by all queries; duplicates
     * count once).
     * @throws tabret::error if k == 0 or a candidate id is out of range (naming the id).
     * Thread-safe.
     */
    [[nodiscard]] std::vector<hits> search_within(std::span<const std::string> queries,
                                                  std::span<const item_id> candidates,
                                                  std::size_t k) const;

    /**
     * @brief The index as JSON: `{"format": "tabret-bm25", "version": 1, "k1", "b",
     * "doc_lengths": [...], "postings": {"token": [doc, tf, doc, tf, ...]}}`. Thread-safe.
     */
    [[nodiscard]] nlohmann::json to_json() const;

    /**
     * @brief Reads what to_json() wrote, checking every field (postings sorted by document,
     * in range, and summing to the document lengths).
     * @param source names the origin (e.g. a file) in error messages.
     * @throws schema_error naming @p source and the offending field.
     * Thread-safe.
     */
    static bm25_index from_json(const nlohmann::json& j, std::string_view source);

  private:
    static constexpr const char* format_name = "tabret-bm25";
    static constexpr long format_version = 1;

    struct posting {
        item_id doc;
        std::uint32_t tf;
    };

    std::vector<std::string> tokens_of(std::string_view text) const;

    static void check_params(const bm25_params& p);

    void read_doc_lengths(const detail::json_reader& r, const nlohmann::json& lengths);

    void read_postings(const detail::json_reader& r, const nlohmann::json& postings);

    void add_document(const std::string& text);

    void finish();

    [[nodiscard]] double idf(std::size_t df) const noexcept;

    /// Adds the BM25 terms of @p query to @p scores, listing each newly scored doc in @p touched.
    void accumulate(const std::string& query, std::vector<double>& scores,
                    std::vector<item_id>& touched) const;

    /// Search over all documents, or over those with allowed[id] != 0 when @p allowed is given.
    std::vector<hits> search_masked(std::span<const std::string> queries,
                                    std::span<const char> allowed, std::size_t k) const;

    bm25_params params_;
    std::vector<std::uint32_t> doc_lengths_;
    double avg_length_ = 0.0;
    std::unordered_map<std::string, std::vector<posting>> postings_;
};

}  // namespace tabret
