#pragma once
/// @file index/bm25_index.hpp
/// @brief Okapi BM25 over schema tokens (snake_case/CamelCase aware), with JSON persistence.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/index/vector_index.hpp"
#include "tabret/interrupt.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/text/tokenize.hpp"

namespace tabret {

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
    explicit bm25_index(std::span<const std::string> documents, bm25_params params = {})
        : params_(params) {
        check_params(params_);
        detail::check_item_count(documents.size(), "bm25_index");
        doc_lengths_.reserve(documents.size());
        for (const auto& document : documents) add_document(document);
        finish();
    }

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
                                           std::size_t k) const {
        detail::check_k(k);
        return search_masked(queries, {}, k);
    }

    /**
     * @brief Like search(), restricted to @p candidates (shared by all queries; duplicates
     * count once).
     * @throws tabret::error if k == 0 or a candidate id is out of range (naming the id).
     * Thread-safe.
     */
    [[nodiscard]] std::vector<hits> search_within(std::span<const std::string> queries,
                                                  std::span<const item_id> candidates,
                                                  std::size_t k) const {
        detail::check_k(k);
        std::vector<char> allowed(size(), 0);
        for (const item_id id : detail::unique_candidates(candidates, size(), "bm25_index"))
            allowed[id] = 1;
        return search_masked(queries, allowed, k);
    }

    /**
     * @brief The index as JSON: `{"format": "tabret-bm25", "version": 1, "k1", "b",
     * "doc_lengths": [...], "postings": {"token": [doc, tf, doc, tf, ...]}}`. Thread-safe.
     */
    [[nodiscard]] nlohmann::json to_json() const {
        nlohmann::json postings = nlohmann::json::object();
        for (const auto& [term, list] : postings_) {
            auto& flat = postings[term] = nlohmann::json::array();
            for (const auto& p : list) {
                flat.push_back(p.doc);
                flat.push_back(p.tf);
            }
        }
        return {{"format", format_name},
                {"version", format_version},
                {"k1", params_.k1},
                {"b", params_.b},
                {"stopwords", params_.stopwords},
                {"doc_lengths", doc_lengths_},
                {"postings", std::move(postings)}};
    }

    /**
     * @brief Reads what to_json() wrote, checking every field (postings sorted by document,
     * in range, and summing to the document lengths).
     * @param source names the origin (e.g. a file) in error messages.
     * @throws schema_error naming @p source and the offending field.
     * Thread-safe.
     */
    static bm25_index from_json(const nlohmann::json& j, std::string_view source) {
        const detail::json_reader r(j, source, "bm25");
        if (const auto format = r.str("format"); format != format_name)
            r.fail(fmt::format("format is '{}', expected '{}'", format, format_name));
        if (const auto version = r.integer("version"); version != format_version)
            r.fail(fmt::format("unsupported version {}", version));
        bm25_index index;
        index.params_ = {number(r, j, "k1"), number(r, j, "b"),
                         r.get("stopwords", nlohmann::json::value_t::boolean).get<bool>()};
        try {
            check_params(index.params_);
        } catch (const error& e) {
            r.fail(e.what());
        }
        index.read_doc_lengths(r, r.list("doc_lengths"));
        index.read_postings(r, r.get("postings", nlohmann::json::value_t::object));
        index.finish();
        return index;
    }

  private:
    static constexpr const char* format_name = "tabret-bm25";
    static constexpr long format_version = 1;

    struct posting {
        item_id doc;
        std::uint32_t tf;
    };

    std::vector<std::string> tokens_of(std::string_view text) const {
        return params_.stopwords ? content_tokens(text) : schema_tokens(text);
    }

    static void check_params(const bm25_params& p) {
        if (!(p.k1 >= 0.0) || !std::isfinite(p.k1))
            throw error(fmt::format("bm25_params.k1 must be finite and >= 0, got {}", p.k1));
        if (!(p.b >= 0.0 && p.b <= 1.0))
            throw error(fmt::format("bm25_params.b must be in [0, 1], got {}", p.b));
    }

    static double number(const detail::json_reader& r, const nlohmann::json& j, const char* key) {
        const auto it = j.find(key);
        if (it == j.end()) r.fail(fmt::format("missing field '{}'", key));
        if (!it->is_number()) r.fail(fmt::format("field '{}' has type {}", key, it->type_name()));
        return it->get<double>();
    }

    /// An unsigned 32-bit integer at @p where, or a schema_error naming it.
    static std::uint32_t u32(const detail::json_reader& r, const nlohmann::json& v,
                             std::string_view where) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
            v.get<std::int64_t>() > 0xffffffff)
            r.fail(fmt::format("{} is not an unsigned 32-bit integer", where));
        return static_cast<std::uint32_t>(v.get<std::int64_t>());
    }

    void read_doc_lengths(const detail::json_reader& r, const nlohmann::json& lengths) {
        if (lengths.size() > std::numeric_limits<item_id>::max())
            r.fail("too many documents in 'doc_lengths'");
        for (std::size_t i = 0; i < lengths.size(); ++i)
            doc_lengths_.push_back(u32(r, lengths[i], fmt::format("doc_lengths[{}]", i)));
    }

    void read_postings(const detail::json_reader& r, const nlohmann::json& postings) {
        std::vector<std::uint64_t> sums(size(), 0);
        for (const auto& [term, flat] : postings.items()) {
            const auto where = fmt::format("postings.{}", term);
            if (term.empty()) r.fail("postings has an empty token");
            if (!flat.is_array() || flat.empty() || flat.size() % 2 != 0)
                r.fail(fmt::format("{} is not a non-empty list of (doc, tf) pairs", where));
            auto& list = postings_[term];
            for (std::size_t i = 0; i < flat.size(); i += 2) {
                const auto doc = u32(r, flat[i], fmt::format("{}[{}]", where, i));
                const auto tf = u32(r, flat[i + 1], fmt::format("{}[{}]", where, i + 1));
                if (doc >= size())
                    r.fail(fmt::format("{}[{}]: document {} out of range", where, i, doc));
                if (!list.empty() && doc <= list.back().doc)
                    r.fail(fmt::format("{}[{}]: documents not increasing", where, i));
                if (tf == 0) r.fail(fmt::format("{}[{}]: term frequency 0", where, i + 1));
                list.push_back({doc, tf});
                sums[doc] += tf;
            }
        }
        for (std::size_t d = 0; d < size(); ++d)
            if (sums[d] != doc_lengths_[d])
                r.fail(fmt::format("doc_lengths[{}] is {} but its postings sum to {}", d,
                                   doc_lengths_[d], sums[d]));
    }

    void add_document(const std::string& text) {
        const auto doc = static_cast<item_id>(doc_lengths_.size());
        const auto tokens = tokens_of(text);
        std::unordered_map<std::string_view, std::uint32_t> tf;
        for (const auto& token : tokens) ++tf[token];
        for (const auto& [term, count] : tf) postings_[std::string(term)].push_back({doc, count});
        doc_lengths_.push_back(static_cast<std::uint32_t>(tokens.size()));
    }

    void finish() {
        double total = 0.0;
        for (const auto length : doc_lengths_) total += length;
        avg_length_ = size() > 0 ? total / static_cast<double>(size()) : 0.0;
    }

    [[nodiscard]] double idf(std::size_t df) const noexcept {
        const auto n = static_cast<double>(size());
        const auto f = static_cast<double>(df);
        return std::log(1.0 + (n - f + 0.5) / (f + 0.5));
    }

    /// Adds the BM25 terms of @p query to @p scores, listing each newly scored doc in @p touched.
    void accumulate(const std::string& query, std::vector<double>& scores,
                    std::vector<item_id>& touched) const {
        const double k1 = params_.k1;
        const double b = params_.b;
        for (const auto& token : tokens_of(query)) {
            const auto it = postings_.find(token);
            if (it == postings_.end()) continue;
            const double w = idf(it->second.size());
            for (const auto& [doc, count] : it->second) {
                const double tf = count;
                const double norm = 1.0 - b + b * doc_lengths_[doc] / avg_length_;
                if (scores[doc] == 0.0) touched.push_back(doc);
                scores[doc] += w * tf * (k1 + 1.0) / (tf + k1 * norm);
            }
        }
    }

    /// Search over all documents, or over those with allowed[id] != 0 when @p allowed is given.
    std::vector<hits> search_masked(std::span<const std::string> queries,
                                    std::span<const char> allowed, std::size_t k) const {
        std::vector<hits> result(queries.size());
        std::vector<double> scores(size(), 0.0);
        std::vector<item_id> touched;
        for (std::size_t q = 0; q < queries.size(); ++q) {
            check_interrupt_every(q, 16);
            accumulate(queries[q], scores, touched);
            hits row;
            for (const item_id doc : touched) {
                if (scores[doc] > 0.0 && (allowed.empty() || allowed[doc]))
                    row.push_back({doc, static_cast<float>(scores[doc])});
                scores[doc] = 0.0;
            }
            touched.clear();
            result[q] = detail::select_top_k(std::move(row), k);
        }
        return result;
    }

    bm25_params params_;
    std::vector<std::uint32_t> doc_lengths_;
    double avg_length_ = 0.0;
    std::unordered_map<std::string, std::vector<posting>> postings_;
};

}  // namespace tabret
