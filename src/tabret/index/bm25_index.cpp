/// @file index/bm25_index.cpp
/// @brief bm25_index (include/tabret/index/bm25_index.hpp): indexing, search, JSON form.

#include "tabret/index/bm25_index.hpp"

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
#include "tabret/interrupt.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/text/tokenize.hpp"

namespace tabret {

namespace {

double number(const detail::json_reader& r, const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) r.fail(fmt::format("missing field '{}'", key));
    if (!it->is_number()) r.fail(fmt::format("field '{}' has type {}", key, it->type_name()));
    return it->get<double>();
}

/// An unsigned 32-bit integer at @p where, or a schema_error naming it.
std::uint32_t u32(const detail::json_reader& r, const nlohmann::json& v, std::string_view where) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 0xffffffff)
        r.fail(fmt::format("{} is not an unsigned 32-bit integer", where));
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
}

}  // namespace

bm25_index::bm25_index(std::span<const std::string> documents, bm25_params params)
    : params_(params) {
    check_params(params_);
    detail::check_item_count(documents.size(), "bm25_index");
    doc_lengths_.reserve(documents.size());
    for (const auto& document : documents) add_document(document);
    finish();
}

std::vector<hits> bm25_index::search(std::span<const std::string> queries, std::size_t k) const {
    detail::check_k(k);
    return search_masked(queries, {}, k);
}

std::vector<hits> bm25_index::search_within(std::span<const std::string> queries,
                                            std::span<const item_id> candidates,
                                            std::size_t k) const {
    detail::check_k(k);
    std::vector<char> allowed(size(), 0);
    for (const item_id id : detail::unique_candidates(candidates, size(), "bm25_index"))
        allowed[id] = 1;
    return search_masked(queries, allowed, k);
}

nlohmann::json bm25_index::to_json() const {
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

bm25_index bm25_index::from_json(const nlohmann::json& j, std::string_view source) {
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

std::vector<std::string> bm25_index::tokens_of(std::string_view text) const {
    return params_.stopwords ? content_tokens(text) : schema_tokens(text);
}

void bm25_index::check_params(const bm25_params& p) {
    if (!(p.k1 >= 0.0) || !std::isfinite(p.k1))
        throw error(fmt::format("bm25_params.k1 must be finite and >= 0, got {}", p.k1));
    if (!(p.b >= 0.0 && p.b <= 1.0))
        throw error(fmt::format("bm25_params.b must be in [0, 1], got {}", p.b));
}

void bm25_index::read_doc_lengths(const detail::json_reader& r, const nlohmann::json& lengths) {
    if (lengths.size() > std::numeric_limits<item_id>::max())
        r.fail("too many documents in 'doc_lengths'");
    for (std::size_t i = 0; i < lengths.size(); ++i)
        doc_lengths_.push_back(u32(r, lengths[i], fmt::format("doc_lengths[{}]", i)));
}

void bm25_index::read_postings(const detail::json_reader& r, const nlohmann::json& postings) {
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

void bm25_index::add_document(const std::string& text) {
    const auto doc = static_cast<item_id>(doc_lengths_.size());
    const auto tokens = tokens_of(text);
    std::unordered_map<std::string_view, std::uint32_t> tf;
    for (const auto& token : tokens) ++tf[token];
    for (const auto& [term, count] : tf) postings_[std::string(term)].push_back({doc, count});
    doc_lengths_.push_back(static_cast<std::uint32_t>(tokens.size()));
}

void bm25_index::finish() {
    double total = 0.0;
    for (const auto length : doc_lengths_) total += length;
    avg_length_ = size() > 0 ? total / static_cast<double>(size()) : 0.0;
}

double bm25_index::idf(std::size_t df) const noexcept {
    const auto n = static_cast<double>(size());
    const auto f = static_cast<double>(df);
    return std::log(1.0 + (n - f + 0.5) / (f + 0.5));
}

void bm25_index::accumulate(const std::string& query, std::vector<double>& scores,
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

std::vector<hits> bm25_index::search_masked(std::span<const std::string> queries,
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

}  // namespace tabret
