#pragma once
/// @file retrieval/selector.hpp
/// @brief The Selector concept: chooses k tables of one question's join problem (candidates from
/// any first stage, sub-queries, join ω). Greedy join-aware selection and the exact JAR
/// objective are selectors; join_aware_retriever turns any selector and first stage into a
/// Retriever.

#include <concepts>
#include <cstddef>
#include <string_view>

#include "tabret/retrieval/select/join_problem.hpp"

namespace tabret {

/**
 * @brief `s(problem, k)` chooses min(k, N) candidates, best first, with a score and the driving
 * sub-query each; `S::step` names it in traces. Must be const and thread-safe.
 */
template <class S>
concept Selector = requires(const S& s, const join_problem& p, std::size_t k) {
    { s(p, k) } -> std::same_as<join_selection>;
    { S::step } -> std::convertible_to<std::string_view>;
};

}  // namespace tabret
