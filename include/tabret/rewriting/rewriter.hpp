#pragma once
/// @file rewriting/rewriter.hpp
/// @brief The QueryRewriter concept: questions (and the tables retrieved so far) in, search
/// texts (or a stop) out, for a whole batch at once.

#include <concepts>
#include <span>
#include <string>
#include <vector>

#include "tabret/catalog.hpp"

namespace tabret {

/** @brief One question to rewrite, with the tables a multi-hop method has retrieved so far. */
struct rewrite_request {
    std::string question;
    std::vector<table_id> path;  ///< Tables retrieved so far, in hop order; may be empty.
    friend bool operator==(const rewrite_request&, const rewrite_request&) = default;
};

/** @brief What to search for next, or that the question needs nothing more. */
struct rewrite_result {
    bool stop = false;                 ///< The path already answers the question.
    std::vector<std::string> queries;  ///< Search texts for the next hop; empty when stop.
    friend bool operator==(const rewrite_result&, const rewrite_result&) = default;
};

/**
 * @brief A batch rewriter: `r.rewrite(requests)` returns one rewrite_result per request, in
 * order. Called on a const object: a rewriter is immutable once built, and rewrite must be
 * thread-safe as long as the callbacks it holds are. An LLM-backed rewriter makes one LLM call
 * per batch (identical prompts sent once).
 */
template <class R>
concept QueryRewriter = requires(const R& r, std::span<const rewrite_request> requests) {
    { r.rewrite(requests) } -> std::same_as<std::vector<rewrite_result>>;
};

}  // namespace tabret
