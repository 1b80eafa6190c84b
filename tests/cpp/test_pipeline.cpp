// Composition: every retriever models Retriever and every embedder Embedder; any first stage
// feeds the join-aware selectors; database routing and the join closure wrap any retriever.
#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/join/join_graph.hpp>
#include <tabret/retrieval/any_retriever.hpp>
#include <tabret/retrieval/first_stage.hpp>
#include <tabret/retrieval/first_stage/bm25_retriever.hpp>
#include <tabret/retrieval/first_stage/column_max_retriever.hpp>
#include <tabret/retrieval/first_stage/crush_retriever.hpp>
#include <tabret/retrieval/first_stage/database_router.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>
#include <tabret/retrieval/first_stage/fused_retriever.hpp>
#include <tabret/retrieval/first_stage/murre_retriever.hpp>
#include <tabret/retrieval/first_stage/reverse_retriever.hpp>
#include <tabret/retrieval/post/join_closure.hpp>
#include <tabret/retrieval/select/adaptive_reranker.hpp>
#include <tabret/retrieval/select/greedy_join_retriever.hpp>
#include <tabret/retrieval/select/jar_exact.hpp>
#include <tabret/retrieval/selector.hpp>
#include <tabret/rewriting/callback_rewriter.hpp>
#include <tabret/scoring/similarity_window_scorer.hpp>

#include <algorithm>
#include <functional>

#include "test_support.hpp"

using namespace tabret;
using tabret::test::fixed_rewriter;
using tabret::test::school_and_shop;

namespace {

using hashing = hashing_embedder;
using dense = dense_retriever<hashing>;

static_assert(Embedder<hashing_embedder>);
static_assert(Embedder<callback_embedder>);
static_assert(Embedder<cached_embedder<hashing_embedder>>);

static_assert(Retriever<dense>);
static_assert(Retriever<bm25_retriever>);
static_assert(Retriever<column_max_retriever<hashing>>);
static_assert(Retriever<reverse_retriever<hashing>>);
static_assert(Retriever<crush_retriever<hashing, callback_rewriter>>);
static_assert(Retriever<murre_retriever<hashing, callback_rewriter>>);
static_assert(Retriever<greedy_join_retriever<hashing, callback_rewriter>>);
static_assert(Retriever<jar_exact_retriever<hashing, callback_rewriter>>);
static_assert(
    Retriever<greedy_join_retriever<hashing, callback_rewriter, retriever_first_stage<dense>>>);
static_assert(Retriever<adaptive_reranker<dense, similarity_window_scorer<hashing>>>);
static_assert(Retriever<database_router<any_retriever>>);
static_assert(Retriever<join_closure_retriever<any_retriever>>);
static_assert(Retriever<any_retriever>);
static_assert(Retriever<fused_retriever<dense, bm25_retriever>>);

static_assert(Selector<greedy_selector>);
static_assert(Selector<jar_exact_selector>);
static_assert(FirstStage<dense_first_stage>);
static_assert(FirstStage<retriever_first_stage<any_retriever>>);

std::vector<table_id> tables_of(const retrieval& r) {
    std::vector<table_id> out;
    for (const auto& t : r.tables) out.push_back(t.table);
    return out;
}

}  // namespace

TEST_CASE("any_retriever owns or borrows a retriever and answers like it", "[pipeline]") {
    const auto cat = school_and_shop();
    const hashing e;
    const auto index = table_index::build(cat, e, e.name());
    const dense d(index, e);
    const std::vector<std::string> qs = {"student names", "orders of customers"};
    const any_retriever owned(dense(index, e)), borrowed(std::cref(d));
    CHECK(owned.retrieve(qs, {3, 2}) == d.retrieve(qs, {3, 2}));
    CHECK(borrowed.retrieve(qs, {3, 2}) == d.retrieve(qs, {3, 2}));
    CHECK_THROWS_AS(owned.retrieve(qs, {0, 0}), error);
}

TEST_CASE("a selector takes its candidates from any first stage", "[pipeline]") {
    const test::join_setup setup;
    const auto& [cat, e, index, graph, rw, qs] = setup;

    // The dense retriever as an explicit first stage: the same tables as the built-in one.
    const greedy_join_retriever builtin(index, graph, e, rw, {5, {}});
    const greedy_join_retriever<hashing, fixed_rewriter, retriever_first_stage<dense>>
        explicit_dense(index, graph, e, rw, {5, {}}, retriever_first_stage<dense>(dense(index, e)));
    CHECK(tables_of(explicit_dense.retrieve(qs, {3, 0}).at(0)) ==
          tables_of(builtin.retrieve(qs, {3, 0}).at(0)));

    // A first stage that offers only the shop's tables: the selector sees no other candidate,
    // scores them with the coarse cosine, and keeps the first stage's trace after its own.
    const auto customers = *cat.find_table("shop", "customers");
    const auto orders = *cat.find_table("shop", "orders");
    const any_retriever shop_only([&](std::span<const std::string> q, const retrieve_options&) {
        std::vector<retrieval> out(q.size());
        for (auto& r : out) {
            r.tables = {{orders, 0.5f}, {customers, 0.25f}};
            r.trace = {{orders, "fixed", "shop", 0.5f}, {customers, "fixed", "shop", 0.25f}};
        }
        return out;
    });
    const jar_exact_retriever<hashing, fixed_rewriter, retriever_first_stage<any_retriever>> exact(
        index, graph, e, rw, {}, retriever_first_stage<any_retriever>(shop_only));
    const auto r = exact.retrieve(qs, {3, 0}).at(0);
    auto got = tables_of(r);
    std::sort(got.begin(), got.end());
    CHECK(got == std::vector<table_id>{customers, orders});
    REQUIRE(r.trace.size() == 4);
    CHECK(r.trace[0].step == "jar-exact");
    CHECK(r.trace[2].step == "fixed");
    const matrix q = embed_normalized(e, std::span<const std::string>(qs), index.dim());
    const auto problems = exact.problems(qs, 5);
    REQUIRE(problems.at(0).tables == std::vector<table_id>{orders, customers});
    CHECK(problems[0].coarse[0] ==
          Approx(q.row(0).dot(index.tables().vectors().row(orders))).margin(1e-6));

    const any_retriever wrong_count(
        [](std::span<const std::string>, const retrieve_options&) -> std::vector<retrieval> {
            return {};
        });
    const greedy_join_retriever<hashing, fixed_rewriter, retriever_first_stage<any_retriever>> bad(
        index, graph, e, rw, {}, retriever_first_stage<any_retriever>(wrong_count));
    CHECK_THROWS_WITH(bad.retrieve(qs, {2, 0}),
                      Catch::Contains("first stage returned 0 results for 1 questions"));
}

TEST_CASE("database routing ranks the tables of the most-voted database first", "[pipeline]") {
    const auto cat = school_and_shop();
    const auto table = [&](const char* db, const char* t) { return *cat.find_table(db, t); };
    const auto students = table("school", "students"), courses = table("school", "courses"),
               teachers = table("school", "teachers"), customers = table("shop", "customers"),
               orders = table("shop", "orders");
    const auto customer_name = *cat.find_column(customers, "name");
    // customers ranks first, but the school has three of the five table hits;
    // `with_columns` adds column hits that tip the vote to the shop.
    const auto first_stage = [&](bool with_columns) {
        return any_retriever([=](std::span<const std::string> q, const retrieve_options& o) {
            CHECK(o.k == 20);
            CHECK(o.k_columns == 20);
            std::vector<retrieval> out(q.size());
            for (auto& r : out) {
                r.tables = {{customers, 0.9f},
                            {students, 0.8f},
                            {courses, 0.7f},
                            {teachers, 0.6f},
                            {orders, 0.1f}};
                r.trace = {{customers, "dense", "q", 0.9f}, {students, "dense", "q", 0.8f}};
                if (with_columns)
                    r.columns = {
                        {customer_name, 0.9f}, {customer_name, 0.8f}, {customer_name, 0.7f}};
            }
            return out;
        });
    };
    const std::vector<std::string> qs = {"q"};
    const database_router school_first(cat, first_stage(false));
    const auto r = school_first.retrieve(qs, {3, 0}).at(0);
    CHECK(tables_of(r) == std::vector<table_id>{students, courses, teachers});
    REQUIRE(r.trace.size() == 4);
    CHECK(r.trace[0].step == "route");
    CHECK(r.trace[0].query == "school");
    CHECK(r.trace[0].score == Approx(1.0 / 12 + 1.0 / 13 + 1.0 / 14));
    CHECK(r.trace[3].step == "dense");
    CHECK(r.columns.empty());

    const database_router shop_first(cat, first_stage(true));
    const auto s = shop_first.retrieve(qs, {3, 1}).at(0);
    CHECK(tables_of(s) == std::vector<table_id>{customers, orders, students});
    CHECK(s.columns.size() == 1);

    const database_router two(cat, first_stage(false), {2, 20, 20, 10.0f, 3});
    CHECK(tables_of(two.retrieve(qs, {5, 0}).at(0)) ==
          std::vector<table_id>{customers, students, courses, teachers, orders});
    CHECK_THROWS_AS(database_router(cat, first_stage(false), {0, 20, 20, 10.0f, 3}), error);
    const database_router only(cat, first_stage(false), {1, 20, 20, 10.0f, 3, false});
    CHECK(tables_of(only.retrieve(qs, {5, 0}).at(0)) ==
          std::vector<table_id>{students, courses, teachers});
    CHECK_THROWS_AS(school_first.retrieve(qs, {0, 0}), error);

    // One vote counted per database: the shop's best hit (rank 1) beats the school's (rank 2).
    const database_router capped(cat, first_stage(false), {1, 20, 20, 10.0f, 1});
    CHECK(tables_of(capped.retrieve(qs, {2, 0}).at(0)) == std::vector<table_id>{customers, orders});
}

TEST_CASE("the join closure wraps any retriever as a post-step", "[pipeline]") {
    const auto cat = school_and_shop();
    const auto students = *cat.find_table("school", "students");
    const auto courses = *cat.find_table("school", "courses");
    const auto enrollments = *cat.find_table("school", "enrollments");
    const any_retriever first([&](std::span<const std::string> q, const retrieve_options&) {
        std::vector<retrieval> out(q.size());
        for (auto& r : out) r.tables = {{students, 0.9f}, {courses, 0.8f}};
        return out;
    });
    const join_closure_retriever closed(cat, first);
    const std::vector<std::string> qs = {"q"};
    const auto r = closed.retrieve(qs, {2, 0}).at(0);
    CHECK(tables_of(r) == std::vector<table_id>{students, courses, enrollments});
    CHECK(r.trace.back().step == "bridge");
}

TEST_CASE("two first stages fuse by reciprocal rank", "[pipeline]") {
    const auto cat = school_and_shop();
    const auto students = *cat.find_table("school", "students");
    const auto courses = *cat.find_table("school", "courses");
    const auto orders = *cat.find_table("shop", "orders");
    const auto ranking = [](std::vector<table_id> ids) {
        return any_retriever([ids](std::span<const std::string> q, const retrieve_options& o) {
            CHECK(o.k == 100);
            std::vector<retrieval> out(q.size());
            for (auto& r : out)
                for (auto id : ids) {
                    r.tables.push_back({id, 1.0f});
                    r.trace.push_back({id, "stage", "q", 1.0f});
                }
            return out;
        });
    };
    // courses is second in both lists: 2 / 62 beats 1 / 61 (students) and 1 / 61 (orders).
    const fused_retriever fused(ranking({students, courses}), ranking({orders, courses}));
    const std::vector<std::string> qs = {"q"};
    const auto r = fused.retrieve(qs, {2, 0}).at(0);
    CHECK(tables_of(r) == std::vector<table_id>{courses, students});
    CHECK(r.tables[0].score == Approx(2.0 / 62));
    CHECK(r.trace[0].step == "fused");
    CHECK(r.trace.size() == 2 + 3);  // two fused entries, then the stages' for those tables
    CHECK_THROWS_AS(fused.retrieve(qs, {0, 0}), error);
}
