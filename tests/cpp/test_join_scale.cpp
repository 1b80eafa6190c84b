#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/join/join_graph.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <string>

#include "test_support.hpp"

using namespace tabret;

namespace {

/// One database `big` of @p n tables t0..t{n-1}: t{i}(id PK integer, name_{i%13} text,
/// t{(i*7+1)%n}_id integer, score_{i%5} real), with a declared foreign key from every third
/// table's reference column to the referenced table's id.
catalog one_big_database(std::size_t n) {
    catalog cat;
    const auto db = cat.add_database("big");
    std::vector<column_id> ids, refs;
    for (std::size_t i = 0; i < n; ++i) {
        const auto t = cat.add_table(db, fmt::format("t{}", i));
        const auto id = cat.add_column(t, "id", "integer");
        cat.set_primary_key(t, {id});
        cat.add_column(t, fmt::format("name_{}", i % 13), "text");
        refs.push_back(cat.add_column(t, fmt::format("t{}_id", (i * 7 + 1) % n), "integer"));
        cat.add_column(t, fmt::format("score_{}", i % 5), "real");
        ids.push_back(id);
    }
    for (std::size_t i = 0; i < n; i += 3)
        if (const auto to = (i * 7 + 1) % n; to != i) cat.add_foreign_key(refs[i], ids[to]);
    return cat;
}

join_graph build_with(const catalog& cat, std::size_t exhaustive_max_tables,
                      std::size_t max_edges_per_table = 32) {
    join_graph_options o;
    o.exhaustive_max_tables = exhaustive_max_tables;
    o.max_edges_per_table = max_edges_per_table;
    return join_graph::build(cat, hashing_embedder(hashing_params{.dim = 32}), "h32", {}, o);
}

}  // namespace

TEST_CASE("join graph: a database under the threshold is scored exhaustively", "[join]") {
    const auto cat = one_big_database(50);
    const auto defaults =
        join_graph::build(cat, hashing_embedder(hashing_params{.dim = 32}), "h32");
    const auto exhaustive = build_with(cat, 50);
    REQUIRE(join_graph_options{}.exhaustive_max_tables == 2000);
    // Every table pair of the same family shares `id` (u = 1): the exhaustive graph is complete.
    CHECK(defaults.edges().size() == 50 * 49 / 2);
    CHECK(defaults.edges() == exhaustive.edges());
}

TEST_CASE("join graph: blocking keeps declared keys and finds only exhaustive edges", "[join]") {
    const auto cat = one_big_database(50);
    const auto exhaustive = build_with(cat, 50);
    const auto blocked = build_with(cat, 49, 4);
    CHECK(blocked.edges().size() < exhaustive.edges().size());
    CHECK(blocked.edges().size() <= 4 * 50 + cat.foreign_keys().size());
    for (const auto& fk : cat.foreign_keys()) {
        const auto a = cat.column(fk.from).table, b = cat.column(fk.to).table;
        const auto* e = blocked.edge(a, b);
        REQUIRE(e != nullptr);
        CHECK(e->declared);
        CHECK(e->weight == 1.0f);
        CHECK(*e == *exhaustive.edge(a, b));
    }
    for (const auto& e : blocked.edges()) {
        CHECK(e.a < e.b);
        const auto* x = exhaustive.edge(e.a, e.b);
        REQUIRE(x != nullptr);
        CHECK(*x == e);  // the same weight and column pair, bit for bit
    }
    // Undeclared reference pairs (t{i}.t{j}_id ~ t{j}) share the word `t{j}`: found.
    std::size_t references = 0;
    for (std::size_t i = 1; i < 50; i += 3) {
        const auto j = (i * 7 + 1) % 50;
        if (j != i && blocked.edge(static_cast<table_id>(i), static_cast<table_id>(j)) != nullptr)
            ++references;
    }
    CHECK(references > 0);
}

TEST_CASE("join graph: 5k tables in one database stay within the edge cap", "[join]") {
    constexpr std::size_t n = 5000, cap = 8;
    const auto cat = one_big_database(n);
    const auto g = build_with(cat, 1000, cap);
    CHECK(!g.edges().empty());
    CHECK(g.edges().size() <= cap * n + cat.foreign_keys().size());
    for (const auto& fk : cat.foreign_keys())
        CHECK(g.weight(cat.column(fk.from).table, cat.column(fk.to).table) == 1.0f);
}
