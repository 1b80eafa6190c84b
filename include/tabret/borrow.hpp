#pragma once
/// @file borrow.hpp
/// @brief Refusing temporaries where a class keeps a reference (internal). Retrievers, scorers
/// and the cached embedder hold the index, embedder, rewriter… they are given by reference; a
/// temporary there would die at the end of the full expression and leave the object dangling.
/// Each such constructor has a deleted overload constrained with any_temporary, so
/// `dense_retriever r(index, hashing_embedder{});` does not compile.

#include <type_traits>

namespace tabret::detail {

/// True when one of the forwarding-reference types @p A was deduced from a temporary (is not
/// an lvalue reference).
template <class... A>
concept any_temporary = (!std::is_lvalue_reference_v<A> || ...);

}  // namespace tabret::detail
