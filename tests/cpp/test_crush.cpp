#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/retrieval/first_stage/crush_retriever.hpp>
#include <tabret/retrieval/select/crush_selection.hpp>
#include <tabret/scoring/entropy.hpp>

#include <random>
#include <set>

#include <xtensor/xrandom.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

/// Three tables of a school database and one unrelated table; a foreign key links
/// enrollment.school_id to schools.id.
catalog small_catalog() {
    catalog cat;
    const auto db = cat.add_database("edu");
    const auto schools = cat.add_table(db, "schools");
    const auto school_id = cat.add_column(schools, "id");
    cat.add_column(schools, "county");
    cat.add_column(schools, "school_name");
    const auto enrollment = cat.add_table(db, "enrollment");
    const auto fk = cat.add_column(enrollment, "school_id");
    cat.add_column(enrollment, "student_count");
    cat.add_column(enrollment, "year");
    const auto teachers = cat.add_table(db, "teachers");
    cat.add_column(teachers, "teacher_name");
    cat.add_column(teachers, "salary");
    cat.add_foreign_key(fk, school_id);
    const auto other = cat.add_database("shop");
    const auto products = cat.add_table(other, "products");
    cat.add_column(products, "product_name");
    cat.add_column(products, "price");
    return cat;
}

/// Answers every question with the same probes; counts its calls.
struct scripted_rewriter {
    std::vector<std::string> probes;
    mutable std::size_t calls = 0;
    std::vector<rewrite_result> rewrite(std::span<const rewrite_request> requests) const {
        ++calls;
        return std::vector<rewrite_result>(requests.size(), rewrite_result{false, probes});
    }
};

xt::xtensor<std::uint8_t, 2> no_links(std::size_t n) { return xt::zeros<std::uint8_t>({n, n}); }

}  // namespace

TEST_CASE("entropy weight is larger for a peaked probe than for a flat one", "[crush]") {
    const xt::xtensor<float, 2> p = {{0.95f, 0.10f, 0.10f, 0.10f}, {0.50f, 0.50f, 0.50f, 0.50f}};
    const auto h = row_entropies(p);
    CHECK(h[1] == Approx(std::log(4.0f)));
    CHECK(h[0] < h[1]);
    const auto w = entropy_weights(h);
    CHECK(w[0] > 0.5f);
    CHECK(w[1] < 0.5f);
    const auto s = entropy_weighted(p);
    CHECK(s(0, 0) == Approx(0.95f * w[0]));
    CHECK(s(1, 3) == Approx(0.50f * w[1]));
}

TEST_CASE("round robin covers every probe before any probe twice", "[crush]") {
    // Probe 0 scores highest on everything: a plain greedy would let it pick every time.
    const xt::xtensor<float, 2> s = {{0.9f, 0.9f, 0.8f, 0.8f, 0.7f, 0.7f, 0.6f},
                                     {0.2f, 0.1f, 0.3f, 0.1f, 0.1f, 0.1f, 0.1f},
                                     {0.1f, 0.1f, 0.1f, 0.1f, 0.4f, 0.1f, 0.1f}};
    const auto picks = select_round_robin(s, 6);
    REQUIRE(picks.size() == 6);
    for (std::size_t round = 0; round < 2; ++round) {
        std::set<std::size_t> probes;
        for (std::size_t i = 0; i < 3; ++i) probes.insert(picks[3 * round + i].probe);
        CHECK(probes == std::set<std::size_t>{0, 1, 2});
    }
    CHECK(picks[0] == crush_pick{0, 0, 0.9f});
    CHECK(picks[1] == crush_pick{4, 2, 0.4f});
    CHECK(picks[2] == crush_pick{2, 1, 0.3f});
    std::set<std::size_t> chosen;
    for (const auto& p : picks) chosen.insert(p.candidate);
    CHECK(chosen.size() == 6);
}

TEST_CASE("selection respects the budget and is prefix-consistent", "[crush]") {
    xt::random::seed(7);
    const xt::xtensor<float, 2> s = xt::random::rand<float>({5, 60});
    auto links = no_links(60);
    for (std::size_t a = 0; a < 60; ++a)
        for (std::size_t b = 0; b < 60; ++b) links(a, b) = (a / 6) == (b / 6);
    for (const std::size_t budget : {std::size_t{0}, std::size_t{3}, std::size_t{20}})
        CHECK(select_by_objective(s, links, budget).size() == budget);
    CHECK(select_by_objective(s, links, 100).size() == 60);
    CHECK(select_round_robin(s, 100).size() == 60);
    const auto long_paper = select_by_objective(s, links, 20);
    const auto long_rr = select_round_robin(s, 20);
    for (const std::size_t b : {3, 5, 10}) {
        const auto paper = select_by_objective(s, links, b);
        const auto rr = select_round_robin(s, b);
        CHECK(std::equal(paper.begin(), paper.end(), long_paper.begin()));
        CHECK(std::equal(rr.begin(), rr.end(), long_rr.begin()));
    }
}

TEST_CASE("connectivity prefers linked columns when coverage ties", "[crush]") {
    // One probe; candidate 0 is best, candidates 1 and 2 tie. 2 is linked to 0 (same table or
    // a foreign key), 1 is not.
    const xt::xtensor<float, 2> s = {{0.9f, 0.5f, 0.5f}};
    auto links = no_links(3);
    links(0, 2) = links(2, 0) = 1;
    const auto with = select_by_objective(s, links, 2);
    REQUIRE(with.size() == 2);
    CHECK(with[0].candidate == 0);
    CHECK(with[1].candidate == 2);
    const auto without = select_by_objective(s, links, 2, {0.0f, 0.01f});
    CHECK(without[1].candidate == 1);  // tie goes to the smaller index
    // A link never outweighs a clear coverage gain.
    const xt::xtensor<float, 2> clear = {{0.9f, 0.7f, 0.5f}};
    CHECK(select_by_objective(clear, links, 2)[1].candidate == 1);
}

TEST_CASE("paper objective: covering a new probe beats a second hit for a covered one", "[crush]") {
    const xt::xtensor<float, 2> s = {{0.9f, 0.8f, 0.0f}, {0.0f, 0.0f, 0.9f}};
    const auto picks = select_by_objective(s, no_links(3), 2, {0.0f, 0.0f});
    REQUIRE(picks.size() == 2);
    CHECK(picks[0] == crush_pick{0, 0, 0.9f});
    CHECK(picks[1] == crush_pick{2, 1, 0.9f});
    // log-sum-exp coverage is soft: with s in [0, 1] a much better second hit still wins.
    const xt::xtensor<float, 2> soft = {{0.9f, 0.85f, 0.1f}, {0.1f, 0.1f, 0.6f}};
    CHECK(select_by_objective(soft, no_links(3), 2, {0.0f, 0.0f})[1].candidate == 1);
}

TEST_CASE("crush_retriever on a small catalog", "[crush]") {
    const auto index = table_index::build(small_catalog(), hashing_embedder{}, "hashing");
    std::size_t embed_calls = 0;
    const callback_embedder embedder(
        [&](std::span<const std::string> texts) {
            ++embed_calls;
            return hashing_embedder{}.embed(texts);
        },
        "hashing");
    const scripted_rewriter rewriter{{"schools.county", "enrollment.student_count"}};
    const std::vector<std::string> questions = {"How many students are enrolled per county?",
                                                "Which county has the most schools?"};

    for (const auto objective : {crush_objective::paper, crush_objective::round_robin}) {
        crush_options opt;
        opt.objective = objective;
        const crush_retriever retriever(index, embedder, rewriter, opt);
        embed_calls = rewriter.calls = 0;
        const auto res = retriever.retrieve(questions, {3, 0});
        CHECK(embed_calls == 1);
        CHECK(rewriter.calls == 1);
        REQUIRE(res.size() == 2);
        for (const auto& r : res) {
            REQUIRE(r.columns.size() == 3);
            REQUIRE(r.trace.size() == 3);
            std::vector<table_id> tables;
            for (std::size_t i = 0; i < 3; ++i) {
                const auto t = index.catalog().column(r.columns[i].column).table;
                CHECK(r.trace[i].table == t);
                CHECK((r.trace[i].query == "schools.county" ||
                       r.trace[i].query == "enrollment.student_count"));
                if (std::find(tables.begin(), tables.end(), t) == tables.end()) tables.push_back(t);
            }
            REQUIRE(r.tables.size() == tables.size());
            for (std::size_t i = 0; i < tables.size(); ++i) CHECK(r.tables[i].table == tables[i]);
        }
        // The probes' own columns come first.
        const auto county = index.catalog().find_column(0, "county");
        const auto students = index.catalog().find_column(1, "student_count");
        std::set<column_id> first_two = {res[0].columns[0].column, res[0].columns[1].column};
        CHECK(first_two == std::set<column_id>{*county, *students});
        if (objective == crush_objective::round_robin)
            CHECK(res[0].trace[0].query != res[0].trace[1].query);
        // Bigger budget: a prefix-extension, more columns than tables.
        const auto big = retriever.retrieve(questions, {2, 8});
        CHECK(big[0].columns.size() == 8);
        CHECK(big[0].tables.size() <= 2);
        CHECK(std::equal(res[0].columns.begin(), res[0].columns.end(), big[0].columns.begin()));
    }
}

TEST_CASE("crush_retriever options and errors", "[crush]") {
    const auto cat = small_catalog();
    const hashing_embedder embedder;
    const auto index = table_index::build(cat, embedder, "hashing");
    const scripted_rewriter rewriter{{"products.price"}};
    const std::vector<std::string> q = {"What is the price of each product?"};
    crush_options opt;
    opt.context = probe_context::alone;
    opt.candidates = crush_candidates::global_top;
    opt.candidate_depth = 2;
    opt.entropy = false;
    opt.connectivity = false;
    const crush_retriever retriever(index, embedder, rewriter, opt);
    const auto res = retriever.retrieve(q, {5, 0});
    // Only N = 2 candidates exist: the budget of 5 returns both.
    REQUIRE(res[0].columns.size() == 2);
    CHECK(res[0].columns[0].column ==
          *cat.find_column(*cat.find_table("shop", "products"), "price"));
    const float p = res[0].columns[0].score;  // without entropy: P = (cos + 1) / 2
    CHECK(p > res[0].columns[1].score);
    CHECK(p > 0.5f);
    CHECK(p <= 1.0f);
    // One probe is its own mean: the entropy weight is sigmoid(0) = 1/2.
    opt.entropy = true;
    const crush_retriever weighted(index, embedder, rewriter, opt);
    CHECK(weighted.retrieve(q, {5, 0})[0].columns[0].score == Approx(p / 2));
    CHECK_THROWS_AS(retriever.retrieve(q, {0, 0}), error);

    const scripted_rewriter empty{{}};
    const crush_retriever fallback(index, embedder, empty);
    CHECK(fallback.retrieve(q, {1, 0})[0].trace[0].query == q[0]);

    table_index_options no_columns;
    no_columns.columns = false;
    const auto bare = table_index::build(cat, embedder, "hashing", no_columns);
    CHECK_THROWS_WITH((crush_retriever(bare, embedder, rewriter)),
                      Catch::Contains("column vectors"));
    crush_options zero;
    zero.candidate_depth = 0;
    CHECK_THROWS_AS((crush_retriever(index, embedder, rewriter, zero)), error);
}
