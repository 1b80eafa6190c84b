#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/join/bridges.hpp>
#include <tabret/join/compatibility.hpp>
#include <tabret/join/join_graph.hpp>
#include <tabret/retrieval/post/join_closure.hpp>
#include <tabret/retrieval/select/greedy_join_retriever.hpp>
#include <tabret/retrieval/select/jar_exact.hpp>
#include <tabret/rewriting/rewriter.hpp>

#include <fmt/format.h>

#include <fstream>
#include <random>

#include "test_support.hpp"

using namespace tabret;
using tabret::test::fixed_rewriter;
using tabret::test::school_and_shop;

namespace {

table_id tid(const catalog& cat, const char* db, const char* t) { return *cat.find_table(db, t); }

/// A problem with random coarse/fine scores and a random sparse symmetric ω.
join_problem random_problem(std::mt19937& rng, std::size_t n, std::size_t m, double density) {
    std::uniform_real_distribution<float> coarse(-0.2f, 0.8f), fine(-0.2f, 0.95f), w(0.05f, 1.0f);
    std::bernoulli_distribution edge(density);
    join_problem p;
    for (std::size_t i = 0; i < n; ++i) {
        p.tables.push_back(static_cast<table_id>(i));
        p.coarse.push_back(coarse(rng));
    }
    for (std::size_t j = 0; j < m; ++j) p.subqueries.push_back(fmt::format("q{}", j));
    for (std::size_t i = 0; i < n * m; ++i) p.fine.push_back(fine(rng));
    p.join.assign(n * n, 0.0f);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = a + 1; b < n; ++b)
            if (edge(rng)) p.join[a * n + b] = p.join[b * n + a] = w(rng);
    return p;
}

/// The best k-subset by brute force (connected ones only when @p strict; nullopt if none).
std::optional<double> brute_force(const join_problem& p, std::size_t k, const jar_weights& w,
                                  bool strict) {
    std::optional<double> best;
    const auto n = p.size();
    for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
        if (static_cast<std::size_t>(__builtin_popcount(mask)) != k) continue;
        std::vector<std::size_t> s;
        for (std::size_t i = 0; i < n; ++i)
            if (mask & (1u << i)) s.push_back(i);
        const auto v = jar_objective(p, s, w);
        if ((v.connected || !strict) && (!best || v.total > *best)) best = v.total;
    }
    return best;
}

}  // namespace

TEST_CASE("column pair compatibility follows the pinned formula", "[join]") {
    CHECK(family_of("INTEGER") == type_family::number);
    CHECK(family_of("varchar(20)") == type_family::text);
    CHECK(family_of("datetime") == type_family::time);
    CHECK(same_family(type_family::unknown, type_family::text));
    CHECK_FALSE(same_family(type_family::number, type_family::text));
    CHECK(*overlap_coefficient({"a", "b"}, {"b", "c", "d"}) == Approx(0.5));
    CHECK_FALSE(overlap_coefficient({}, {"a"}));
    // u · (0.5·J + 0.5·(0.5·sem + 0.5·exact)) = 1 · (0.25 + 0.5 · 0.65)
    CHECK(column_pair_score({1.0, 0.5, 0.8, 0.5}) == Approx(0.575));
    // Without values, the name signal stands in for J: 0.5 · 0.65
    CHECK(column_pair_score({0.5, std::nullopt, 0.8, 0.5}) == Approx(0.325));
}

TEST_CASE("the join graph: declared keys weigh 1, no edge leaves a database", "[join]") {
    const auto cat = school_and_shop();
    const auto g = join_graph::build(cat, hashing_embedder{}, "hashing");
    const auto students = tid(cat, "school", "students");
    const auto enrollments = tid(cat, "school", "enrollments");
    const auto customers = tid(cat, "shop", "customers");
    CHECK(g.weight(students, enrollments) == 1.0f);
    CHECK(g.edge(students, enrollments)->declared);
    CHECK(g.weight(enrollments, students) == 1.0f);
    CHECK(g.weight(students, students) == 0.0f);
    CHECK(g.weight(students, customers) == 0.0f);  // same column names, other database
    for (const auto& e : g.edges()) {
        CHECK(cat.table(e.a).database == cat.table(e.b).database);
        CHECK(e.weight > 0.0f);
        CHECK(e.weight <= 1.0f);
    }
    // students.id and teachers.id: inferred (same type, unique, same name), not declared.
    const auto* st = g.edge(students, tid(cat, "school", "teachers"));
    REQUIRE(st != nullptr);
    CHECK_FALSE(st->declared);
    CHECK(st->weight < 1.0f);
    CHECK(g.column_vectors().rows() == static_cast<Eigen::Index>(cat.columns().size()));
    CHECK(join_graph::column_text(cat, cat.table(enrollments).columns[0], name_style::natural) ==
          "enrollments:student id");
}

TEST_CASE("value statistics change inferred compatibility", "[join]") {
    const auto cat = school_and_shop();
    const auto students = tid(cat, "school", "students");
    const auto teachers = tid(cat, "school", "teachers");
    column_stats_table disjoint(cat.columns().size()), same(cat.columns().size());
    const auto s_name = cat.table(students).columns[1], t_name = cat.table(teachers).columns[1];
    disjoint.set(s_name, {1.0, {"ann", "bob"}});
    disjoint.set(t_name, {1.0, {"carl", "dora"}});
    same.set(s_name, {1.0, {"ann", "bob"}});
    same.set(t_name, {1.0, {"ann", "bob"}});
    const auto a = join_graph::build(cat, hashing_embedder{}, "hashing", disjoint);
    const auto b = join_graph::build(cat, hashing_embedder{}, "hashing", same);
    CHECK(b.weight(students, teachers) > a.weight(students, teachers));
}

TEST_CASE("the join graph survives save and load; corruption is a typed error", "[join]") {
    const auto cat = school_and_shop();
    const auto g = join_graph::build(cat, hashing_embedder{}, "hashing");
    test::temp_dir dir;
    const auto saved = dir.path() / "idx";  // the graph is saved with its index
    CHECK_THROWS_WITH(g.save(saved), Catch::Contains("save the index there first"));
    table_index::build(cat, hashing_embedder{}, "hashing").save(saved);
    g.save(saved);
    CHECK(join_graph::load(saved, cat).edges() == g.edges());
    const auto path = saved / join_graph::file_name;
    const auto h = join_graph::load(path, cat);
    CHECK(h.edges() == g.edges());
    CHECK(h.column_vectors() == g.column_vectors());
    CHECK(h.embedder_name() == "hashing");
    CHECK(h.weight(tid(cat, "school", "students"), tid(cat, "school", "enrollments")) == 1.0f);

    auto text = read_text_file(path);
    SECTION("a flipped byte") {
        text[text.size() - 7] ^= 0x5a;
        write_file_atomic(path, text);
        CHECK_THROWS_AS(join_graph::load(path, cat), io_error);
    }
    SECTION("a truncated file") {
        write_file_atomic(path, text.substr(0, text.size() / 2));
        CHECK_THROWS_AS(join_graph::load(path, cat), io_error);
    }
    SECTION("a garbled header") {
        write_file_atomic(path, fmt::format("{{oops\n{}", text));
        CHECK_THROWS_AS(join_graph::load(path, cat), io_error);
    }
    SECTION("another catalog") {
        auto other = school_and_shop();
        other.add_table(0, "extra");
        CHECK_THROWS_WITH(join_graph::load(path, other), Catch::Contains("another catalog"));
    }
    SECTION("a missing file") {
        CHECK_THROWS_AS(join_graph::load(dir.path() / "none", cat), io_error);
    }
}

TEST_CASE("greedy reproduces a hand-computed selection", "[join]") {
    join_problem p;
    p.tables = {10, 11, 12};
    p.coarse = {0.5f, 0.4f, 0.1f};
    p.subqueries = {"a:x", "b:y"};
    p.fine = {0.9f, 0.1f, 0.2f,   // a:x over the three tables
              0.1f, 0.2f, 0.8f};  // b:y
    p.join = {0, 0, 1, 0, 0, 0, 1, 0, 0};
    // seed: 4·r + 2·ΣF = 4.0, 2.2, 2.4 → 0 (q = 0.9, 0.1)
    // then: 1 → 1.6 + 2·0.1 + 0 = 1.8; 2 → 0.4 + 2·0.7 + 1·ω(2,0) = 2.8 → 2
    // then: 1 → 1.6 + 0 + 0 = 1.6
    const auto s = greedy_select(p, 3);
    CHECK(s.order == std::vector<std::size_t>{0, 2, 1});
    REQUIRE(s.scores.size() == 3);
    CHECK(s.scores[0] == Approx(4.0f));
    CHECK(s.scores[1] == Approx(2.8f));
    CHECK(s.scores[2] == Approx(1.6f));
    CHECK(s.reason[0] == 0);
    CHECK(s.reason[1] == 1);
    // Without the join gain, 1 and 2 tie at 1.8 and the earlier candidate wins.
    CHECK(greedy_select(p, 2, {4.0f, 2.0f, 0.0f}).order == std::vector<std::size_t>{0, 1});
    CHECK(greedy_select(p, 5).order.size() == 3);
    CHECK(greedy_select(p, 0).order.empty());
    // The tensor views see the buffers without copying.
    CHECK(p.fine_view()(1, 2) == 0.8f);
    CHECK(p.join_view()(2, 0) == 1.0f);
}

TEST_CASE("the JAR objective by term", "[join]") {
    join_problem p;
    p.tables = {0, 1};
    p.coarse = {0.5f, 0.25f};
    p.subqueries = {"a", "b"};
    p.fine = {0.5f, 0.25f, 0.0f, 0.75f};
    p.join = {0, 0.5f, 0.5f, 0};
    const std::vector<std::size_t> both{0, 1};
    const auto v = jar_objective(p, both, jar_weights::spider());
    // budget ⌊1·2⌋ = 2 assignments: a→0 (2·0.5 + 8), b→1 (2·0.75 + 8)
    CHECK(v.fine == Approx(2 * 0.5 + 2 * 0.75));
    CHECK(v.coverage == Approx(16.0));
    CHECK(v.join == Approx(0.5));
    CHECK(v.coarse == Approx(10 * 0.75));
    CHECK(v.connected);
    p.join = {0, 0, 0, 0};
    CHECK_FALSE(jar_objective(p, both, jar_weights::spider()).connected);
}

TEST_CASE("exact JAR is optimal and never below greedy on random problems", "[join]") {
    std::mt19937 rng(20240607);
    const auto w = jar_weights::spider();
    for (int trial = 0; trial < 150; ++trial) {
        const std::size_t n = trial < 60 ? 9 : 20, m = 1 + trial % 4, k = 2 + trial % 4;
        const auto p = random_problem(rng, n, m, trial % 3 == 0 ? 0.15 : 0.5);
        INFO("trial " << trial);
        const auto greedy = greedy_select(p, k);
        const auto gv = jar_objective(p, greedy.order, w);
        const auto soft = jar_exact_select(p, k, w);
        const auto strict = jar_exact_select(p, k, w, connectivity::strict);
        REQUIRE(soft.order.size() == k);
        REQUIRE(strict.order.size() == k);
        const auto sv = jar_objective(p, soft.order, w);
        const auto tv = jar_objective(p, strict.order, w);
        CHECK(sv.total >= gv.total - 1e-6);  // every set is feasible under soft connectivity
        CHECK(sv.total >= tv.total - 1e-6);
        if (gv.connected) {  // greedy's set is feasible under the strict constraint too
            CHECK(tv.connected);
            CHECK(tv.total >= gv.total - 1e-6);
        }
        if (n <= 9) {  // against brute force
            CHECK(sv.total == Approx(*brute_force(p, k, w, false)).epsilon(1e-9));
            const auto best = brute_force(p, k, w, true);
            CHECK(tv.connected == best.has_value());
            if (best) CHECK(tv.total == Approx(*best).epsilon(1e-9));
        }
    }
}

TEST_CASE("exact JAR's node bound stops the search with the best set found", "[join]") {
    std::mt19937 rng(20261201);
    const auto w = jar_weights::spider();
    const auto p = random_problem(rng, 40, 3, 0.5);  // 2^40 nodes unbounded
    const auto bounded = jar_exact_select(p, 10, w, connectivity::soft, 2000);
    CHECK(bounded.bounded);
    REQUIRE(bounded.order.size() == 10);
    const auto strict = jar_exact_select(p, 10, w, connectivity::strict, 2000);
    CHECK(strict.bounded);
    CHECK(strict.order.size() == 10);
    // At the default bound, 20 candidates are searched to the end: the bound never binds.
    const auto small = random_problem(rng, 20, 3, 0.5);
    for (std::size_t k : {3, 8, 12}) {
        const auto exact = jar_exact_select(small, k, w);
        CHECK_FALSE(exact.bounded);
        CHECK(jar_objective(small, exact.order, w).total ==
              Approx(
                  jar_objective(
                      small,
                      jar_exact_select(small, k, w, connectivity::soft, std::size_t{1} << 30).order,
                      w)
                      .total));
    }
    const auto r = to_retrieval(p, bounded, "jar-exact", 0);
    CHECK(std::count_if(r.trace.begin(), r.trace.end(),
                        [](const auto& e) { return e.step == "jar-exact:bounded"; }) == 10);
}

TEST_CASE("the greedy and exact retrievers run end to end", "[join]") {
    const test::join_setup setup;
    const auto& [cat, e, index, graph, rw, qs] = setup;
    const greedy_join_retriever greedy(index, graph, e, rw, {5, {}});
    const jar_exact_retriever exact(index, graph, e, rw,
                                    {5, jar_weights::spider(), connectivity::strict});
    for (const auto& r : {greedy.retrieve(qs, {3, 4}).at(0), exact.retrieve(qs, {3, 4}).at(0)}) {
        REQUIRE(r.tables.size() == 3);
        CHECK(r.columns.size() == 4);
        REQUIRE(r.trace.size() == 6);  // the selector's entries, then the first stage's
        for (std::size_t i = 3; i < 6; ++i) CHECK(r.trace[i].step == "dense");
    }
    const auto strict = exact.retrieve(qs, {3, 0});
    for (const auto& t : strict.at(0).tables)
        CHECK(cat.table(t.table).database == 0);  // the only component with 3 tables
    CHECK(greedy.retrieve(qs, {2, 0}).at(0).trace.at(0).step == "greedy-join");
    CHECK_THROWS_AS(greedy.retrieve(qs, {0, 0}), error);
    const auto other = join_graph::build(school_and_shop(), e, "another-name");
    CHECK_THROWS_AS(greedy_join_retriever(index, other, e, rw), error);
}

TEST_CASE("join closure adds the junction table and stays in the database", "[join]") {
    const auto cat = school_and_shop();
    const fk_graph g(cat);
    const auto students = tid(cat, "school", "students");
    const auto courses = tid(cat, "school", "courses");
    const auto enrollments = tid(cat, "school", "enrollments");
    const auto customers = tid(cat, "shop", "customers");
    const auto teachers = tid(cat, "school", "teachers");
    retrieval r;
    r.tables = {{students, 0.9f}, {customers, 0.8f}, {courses, 0.7f}, {teachers, 0.1f}};
    r.trace = {{students, "dense", "q", 0.9f},
               {customers, "dense", "q", 0.8f},
               {courses, "dense", "q", 0.7f}};

    const auto closed = join_closure(cat, g, r, 3);
    REQUIRE(closed.tables.size() == 4);
    CHECK(closed.tables[3].table == enrollments);
    CHECK(closed.trace.back().step == "bridge");
    CHECK(closed.trace.back().table == enrollments);
    CHECK(closed.trace.back().query == "school.courses -> school.enrollments");
    for (const auto& t : closed.tables)
        CHECK(
            (cat.table(t.table).database == cat.table(students).database || t.table == customers));

    CHECK(join_closure(cat, g, r, 3, {0, 2, closure_mode::append}).tables.size() == 3);
    CHECK(join_closure(cat, g, r, 1).tables.size() == 1);  // one table needs no bridge
    // within_k keeps k tables: the largest prefix whose closure fits.
    const auto within = join_closure(cat, g, r, 3, {2, 2, closure_mode::within_k});
    REQUIRE(within.tables.size() == 3);
    CHECK(within.tables[0].table == students);
    CHECK(within.tables[1].table == customers);
    CHECK(within.tables[2].table == courses);
    r.tables.erase(r.tables.begin() + 1);
    const auto within2 = join_closure(cat, g, r, 2, {2, 2, closure_mode::within_k});
    CHECK(within2.tables.size() == 2);
    const auto within3 = join_closure(cat, g, r, 3, {2, 2, closure_mode::within_k});
    REQUIRE(within3.tables.size() == 3);
    CHECK(within3.tables[2].table == enrollments);
    CHECK_THROWS_AS(join_closure(cat, g, r, 0), error);
    // The shortest path from students to teachers runs through enrollments and courses.
    CHECK(*g.bridge(students, {teachers}, 2) == std::vector<table_id>{enrollments, courses});
    CHECK_FALSE(g.bridge(students, {teachers}, 1));
    CHECK_FALSE(g.bridge(students, {customers}, 5));
}
