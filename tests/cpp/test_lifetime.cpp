// What a retriever, scorer or cached embedder holds by reference must outlive it: constructing
// one from a temporary does not compile (include/tabret/borrow.hpp). Checked at compile time;
// the test case only records that this translation unit was built.

#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/question_index.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/join/join_graph.hpp>
#include <tabret/retrieval/first_stage/bm25_retriever.hpp>
#include <tabret/retrieval/first_stage/crush_retriever.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>
#include <tabret/retrieval/first_stage/murre_retriever.hpp>
#include <tabret/retrieval/first_stage/reverse_retriever.hpp>
#include <tabret/retrieval/select/adaptive_reranker.hpp>
#include <tabret/retrieval/select/greedy_join_retriever.hpp>
#include <tabret/retrieval/select/jar_exact.hpp>
#include <tabret/scoring/similarity_window_scorer.hpp>

#include <span>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

using namespace tabret;

namespace {

struct fake_rewriter {
    std::vector<rewrite_result> rewrite(std::span<const rewrite_request>) const { return {}; }
};

using E = hashing_embedder;
using R = fake_rewriter;
using I = const table_index&;
using G = const join_graph&;
using Q = const question_index&;
using Em = const E&;
using Rw = const R&;
using dense = dense_retriever<E>;
using scorer = similarity_window_scorer<E>;

// Lvalues construct.
static_assert(std::is_constructible_v<dense, I, Em>);
static_assert(std::is_constructible_v<dense, I, Em, dense_options>);  // options are copied
static_assert(std::is_constructible_v<bm25_retriever, I>);
static_assert(std::is_constructible_v<crush_retriever<E, R>, I, Em, Rw>);
static_assert(std::is_constructible_v<murre_retriever<E, R>, I, Em, Rw>);
static_assert(std::is_constructible_v<greedy_join_retriever<E, R>, I, G, Em, Rw>);
static_assert(std::is_constructible_v<jar_exact_retriever<E, R>, I, G, Em, Rw>);
static_assert(std::is_constructible_v<reverse_retriever<E>, I, Q, Em>);
static_assert(std::is_constructible_v<scorer, I, Em>);
static_assert(
    std::is_constructible_v<adaptive_reranker<dense, scorer>, const dense&, I, const scorer&>);
static_assert(std::is_constructible_v<cached_embedder<E>, Em>);

// A temporary in any held position does not.
static_assert(!std::is_constructible_v<dense, table_index, Em>);
static_assert(!std::is_constructible_v<dense, I, E>);
static_assert(!std::is_constructible_v<dense, I, E, dense_options>);
static_assert(!std::is_constructible_v<bm25_retriever, table_index>);
static_assert(!std::is_constructible_v<crush_retriever<E, R>, I, Em, R>);
static_assert(!std::is_constructible_v<murre_retriever<E, R>, table_index, Em, Rw>);
static_assert(!std::is_constructible_v<greedy_join_retriever<E, R>, I, join_graph, Em, Rw>);
static_assert(!std::is_constructible_v<jar_exact_retriever<E, R>, I, G, E, Rw>);
static_assert(!std::is_constructible_v<reverse_retriever<E>, I, question_index, Em>);
static_assert(!std::is_constructible_v<scorer, I, E>);
static_assert(!std::is_constructible_v<adaptive_reranker<dense, scorer>, dense, I, const scorer&>);
static_assert(!std::is_constructible_v<cached_embedder<E>, E>);

}  // namespace

TEST_CASE("holding types refuse temporaries at compile time", "[lifetime]") {
    SUCCEED("the static_asserts of this file compiled");
}
