#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>
#include <tabret/retrieval/select/adaptive_reranker.hpp>
#include <tabret/scoring/callback_window_scorer.hpp>
#include <tabret/scoring/similarity_window_scorer.hpp>

#include <limits>
#include <map>

#include "test_support.hpp"

using namespace tabret;

namespace {

using test::demo_index;

/// A first-stage result listing @p ids in order, with falling scores.
retrieval first_stage(const std::vector<table_id>& ids) {
    retrieval r;
    for (std::size_t i = 0; i < ids.size(); ++i)
        r.tables.push_back({ids[i], 1.0f - 0.01f * static_cast<float>(i)});
    return r;
}

/// Scripted logits: a fixed logit per table, optionally overridden in one call; a threshold per
/// call. Records every window it is sent (table ids, in the order sent), per call. Declares
/// whether it reads the tables' texts, and checks it is sent them exactly then.
template <bool ReadsTexts>
struct scripted_scorer_of {
    static constexpr bool reads_texts = ReadsTexts;
    std::map<table_id, float> logit;
    std::map<std::pair<std::size_t, table_id>, float> override_at;  ///< (call, table) -> logit
    std::vector<float> thresholds;                                  ///< per call
    mutable std::vector<std::vector<std::vector<table_id>>> calls;

    std::vector<window_scores> score(std::span<const window_request> windows) const {
        const std::size_t call = calls.size();
        calls.emplace_back();
        std::vector<window_scores> out;
        for (const auto& w : windows) {
            calls.back().emplace_back(w.tables.begin(), w.tables.end());
            REQUIRE(w.texts.size() == (ReadsTexts ? w.tables.size() : 0));
            window_scores s;
            for (const table_id t : w.tables) {
                const auto o = override_at.find({call, t});
                s.logits.push_back(o != override_at.end() ? o->second : logit.at(t));
            }
            s.threshold = thresholds.at(call);
            out.push_back(std::move(s));
        }
        return out;
    }
};

using scripted_scorer = scripted_scorer_of<true>;

const std::map<table_id, float> logits = {{0, 0.5f}, {1, 0.9f}, {2, 0.1f},  {3, 0.7f}, {4, 0.2f},
                                          {5, 0.3f}, {6, 0.8f}, {7, 0.05f}, {8, 0.6f}, {9, 0.4f}};

std::vector<table_id> ids_of(const retrieval& r) {
    std::vector<table_id> ids;
    for (const auto& t : r.tables) ids.push_back(t.table);
    return ids;
}

using windows = std::vector<std::vector<table_id>>;

}  // namespace

static_assert(WindowScorer<scripted_scorer>);
static_assert(WindowScorer<callback_window_scorer>);
static_assert(WindowScorer<similarity_window_scorer<hashing_embedder>>);

TEST_CASE(
    "Algorithm 1 replayed: windows bottom-up, R kept, cut fixed when the threshold drops "
    "below R",
    "[adaptive]") {
    // N = 10, W = 4, R = 2: windows at positions [6,10), [4,8), [2,6), [0,4).
    scripted_scorer s{logits, {{{3, 6}, 0.1f}}, {0.7f, 0.25f, 0.95f, 0.95f}, {}};
    const std::vector<std::string> q = {"question"};
    const std::vector<retrieval> first = {first_stage({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})};
    const auto out = adaptive_rerank(demo_index(), q, first, s, {10, 4, 2});
    REQUIRE(s.calls.size() == 4);
    // Window 1 keeps 6, 8 (finalises 9, 7). Its threshold (0.7) beats all but 6: still in play.
    // Window 2 = kept {6, 8} + new {4, 5}, sent in current order; 3 tables beat 0.25 ≥ R = 2,
    // so the cut is fixed at 4 + 3 = 7 (5 is in, 4 is out). Window 3 keeps 6, 3; window 4 is
    // the top and re-scores 6 lower (0.1), so it ends 4th.
    CHECK(s.calls[0] == windows{{6, 7, 8, 9}});
    CHECK(s.calls[1] == windows{{4, 5, 6, 8}});
    CHECK(s.calls[2] == windows{{2, 3, 6, 8}});
    CHECK(s.calls[3] == windows{{0, 1, 6, 3}});
    REQUIRE(out.size() == 1);
    CHECK(ids_of(out[0]) == std::vector<table_id>{1, 3, 0, 6, 8, 2, 5, 4, 9, 7});
    CHECK(out[0].cut == std::optional<std::size_t>(7));
    // Scores are the logits of the finalising window; the trace names that window.
    CHECK(out[0].tables[3].score == Approx(0.1f));
    CHECK(out[0].tables[6].score == Approx(0.3f));
    const auto& trace = out[0].trace;
    REQUIRE(trace.size() == 10);  // the scripted first stage has no trace of its own
    CHECK(trace[0].step == "atr window 4");
    CHECK(trace[4].step == "atr window 3");
    CHECK(trace[7].step == "atr window 2");
    CHECK(trace[9].step == "atr window 1");
}

TEST_CASE("a scorer that reads no texts is sent none and cuts the same", "[adaptive]") {
    const std::vector<std::string> q = {"question"};
    const std::vector<retrieval> first = {first_stage({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})};
    scripted_scorer with{logits, {{{3, 6}, 0.1f}}, {0.7f, 0.25f, 0.95f, 0.95f}, {}};
    scripted_scorer_of<false> without{logits, {{{3, 6}, 0.1f}}, {0.7f, 0.25f, 0.95f, 0.95f}, {}};
    static_assert(reads_texts<scripted_scorer>::value && !reads_texts<decltype(without)>::value);
    static_assert(!reads_texts<similarity_window_scorer<hashing_embedder>>::value);
    static_assert(reads_texts<callback_window_scorer>::value);
    const auto a = adaptive_rerank(demo_index(), q, first, with, {10, 4, 2});
    const auto b = adaptive_rerank(demo_index(), q, first, without, {10, 4, 2});
    CHECK(with.calls == without.calls);
    CHECK(ids_of(a[0]) == ids_of(b[0]));
    CHECK(a[0].cut == b[0].cut);
}

namespace {

/// The similarity scorer without its window_independent declaration: asked about every window.
struct every_window_scorer {
    const similarity_window_scorer<hashing_embedder>& inner;
    mutable std::size_t calls = 0;
    static constexpr bool reads_texts = false;
    std::vector<window_scores> score(std::span<const window_request> windows) const {
        ++calls;
        return inner.score(windows);
    }
};

/// The similarity scorer, counting its calls (and keeping its declaration).
struct counted_scorer {
    const similarity_window_scorer<hashing_embedder>& inner;
    mutable std::vector<std::size_t> tables_per_call;
    static constexpr bool reads_texts = false;
    static constexpr bool window_independent = true;
    std::vector<window_scores> score(std::span<const window_request> windows) const {
        std::size_t n = 0;
        for (const auto& w : windows) n += w.tables.size();
        tables_per_call.push_back(n);
        return inner.score(windows);
    }
};

}  // namespace

TEST_CASE("a window-independent scorer is called once and walks to the same result", "[adaptive]") {
    static_assert(window_independent<similarity_window_scorer<hashing_embedder>>::value);
    static_assert(!window_independent<scripted_scorer>::value);
    const hashing_embedder e;
    const similarity_window_scorer<hashing_embedder> sim(demo_index(), e, {});
    const std::vector<std::string> q = {"orders of each customer", "singers and their concerts"};
    const std::vector<retrieval> first = {first_stage({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                          first_stage({9, 3, 5, 1, 7, 0, 2})};
    every_window_scorer each{sim, 0};
    counted_scorer once{sim, {}};
    const auto a = adaptive_rerank(demo_index(), q, first, each, {10, 4, 2});
    const auto b = adaptive_rerank(demo_index(), q, first, once, {10, 4, 2});
    CHECK(each.calls == 4);  // windows [6,10), [4,8), [2,6), [0,4) of the longer list
    CHECK(once.tables_per_call == std::vector<std::size_t>{17});  // every candidate, once
    CHECK(a == b);  // tables, logits, cuts and traces alike
}

TEST_CASE("threshold never below R: the top window fixes the cut; the last window is smaller",
          "[adaptive]") {
    // N = 9, W = 4, R = 2: windows [5,9), [3,7), [1,5), then only 1 new candidate: [0,3).
    scripted_scorer s{logits, {}, {0.85f, 0.85f, 0.85f, 0.85f}, {}};
    const std::vector<std::string> q = {"question"};
    const std::vector<retrieval> first = {first_stage({0, 1, 2, 3, 4, 5, 6, 7, 8})};
    const auto out = adaptive_rerank(demo_index(), q, first, s, {9, 4, 2});
    CHECK(s.calls ==
          std::vector<windows>{{{5, 6, 7, 8}}, {{3, 4, 6, 8}}, {{1, 2, 6, 3}}, {{0, 1, 6}}});
    CHECK(ids_of(out[0]) == std::vector<table_id>{1, 6, 0, 3, 2, 8, 4, 5, 7});
    CHECK(out[0].cut == std::optional<std::size_t>(1));  // only 1 (0.9) beats 0.85
}

TEST_CASE("candidates beyond N are dropped; a short list is one window", "[adaptive]") {
    scripted_scorer s{logits, {}, {0.45f}, {}};
    const std::vector<std::string> q = {"question"};
    const std::vector<retrieval> first = {first_stage({2, 0, 9, 1, 5, 7})};
    const auto out = adaptive_rerank(demo_index(), q, first, s, {5, 20, 15});
    CHECK(s.calls == std::vector<windows>{{{2, 0, 9, 1, 5}}});
    CHECK(ids_of(out[0]) == std::vector<table_id>{1, 0, 9, 5, 2});
    CHECK(out[0].cut == std::optional<std::size_t>(2));  // 0.9 and 0.5 beat 0.45
}

TEST_CASE("a batch advances together: one scorer call per step", "[adaptive]") {
    scripted_scorer s{logits, {}, {0.95f, 0.95f, 0.95f, 0.95f}, {}};
    const std::vector<std::string> q = {"long", "short", "none"};
    const std::vector<retrieval> first = {first_stage({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                          first_stage({7, 8, 9}), retrieval{}};
    const auto out = adaptive_rerank(demo_index(), q, first, s, {10, 4, 2});
    REQUIRE(s.calls.size() == 4);
    CHECK(s.calls[0] == windows{{6, 7, 8, 9}, {7, 8, 9}});
    CHECK(s.calls[1].size() == 1);
    CHECK(ids_of(out[1]) == std::vector<table_id>{8, 9, 7});
    CHECK(out[1].cut == std::optional<std::size_t>(0));
    CHECK(out[2].tables.empty());
    CHECK(out[2].cut == std::optional<std::size_t>(0));
}

TEST_CASE("ties: a logit equal to the threshold is out, equal logits keep their order",
          "[adaptive]") {
    scripted_scorer s{{{0, 0.5f}, {1, 0.5f}, {2, 0.5f}, {3, 0.6f}}, {}, {0.5f}, {}};
    const std::vector<std::string> q = {"question"};
    const std::vector<retrieval> first = {first_stage({2, 1, 3, 0})};
    const auto out = adaptive_rerank(demo_index(), q, first, s, {});
    CHECK(ids_of(out[0]) == std::vector<table_id>{3, 2, 1, 0});
    CHECK(out[0].cut == std::optional<std::size_t>(1));
}

TEST_CASE("bad options, candidates and scorer answers are typed errors", "[adaptive][errors]") {
    const std::vector<std::string> q = {"question"};
    const std::vector<retrieval> first = {first_stage({0, 1, 2})};
    scripted_scorer ok{logits, {}, {0.5f}, {}};
    CHECK_THROWS_AS(adaptive_rerank(demo_index(), q, first, ok, {10, 4, 4}), error);
    CHECK_THROWS_AS(adaptive_rerank(demo_index(), q, first, ok, {10, 4, 0}), error);
    CHECK_THROWS_AS(adaptive_rerank(demo_index(), q, first, ok, {0, 4, 2}), error);
    CHECK_THROWS_WITH(
        adaptive_rerank(demo_index(), q, std::vector<retrieval>{first_stage({0, 1, 0})}, ok, {}),
        Catch::Contains("candidate table 0 appears twice"));
    CHECK_THROWS_WITH(
        adaptive_rerank(demo_index(), q, std::vector<retrieval>{first_stage({0, 100000})}, ok, {}),
        Catch::Contains("candidate table 100000 out of range"));
    CHECK_THROWS_WITH(adaptive_rerank(demo_index(), q, std::vector<retrieval>{}, ok, {}),
                      Catch::Contains("0 first-stage results for 1 questions"));

    const callback_window_scorer short_answer(
        [](std::span<const window_request> w) {
            return std::vector<window_scores>(w.size(), window_scores{{1.0f}, 0.0f});
        },
        "short");
    CHECK_THROWS_WITH(adaptive_rerank(demo_index(), q, first, short_answer, {}),
                      Catch::Contains("window scorer 'short' returned 1 logits for window 0 of 3"));
    const callback_window_scorer nan_threshold(
        [](std::span<const window_request> w) {
            return std::vector<window_scores>(
                w.size(),
                window_scores{{1.0f, 2.0f, 3.0f}, std::numeric_limits<float>::quiet_NaN()});
        },
        "nan");
    CHECK_THROWS_AS(adaptive_rerank(demo_index(), q, first, nan_threshold, {}), scoring_error);
    const callback_window_scorer no_answers([](auto) { return std::vector<window_scores>{}; },
                                            "none");
    CHECK_THROWS_WITH(adaptive_rerank(demo_index(), q, first, no_answers, {}),
                      Catch::Contains("returned 0 answers for 1 windows"));
}

TEST_CASE("threshold rules read the question's top scores", "[adaptive][scoring]") {
    const std::vector<float> top = {0.9f, 0.8f, 0.4f, 0.3f};
    CHECK(threshold_from_scores(top, {threshold_rule::fixed, 0.5f, 4}) == Approx(0.5f));
    CHECK(threshold_from_scores(top, {threshold_rule::relative, 0.15f, 4}) == Approx(0.75f));
    CHECK(threshold_from_scores(top, {threshold_rule::zscore, 1.0f, 4}) ==
          Approx(0.6f + 0.25495f).epsilon(1e-3));
    CHECK(threshold_from_scores(top, {threshold_rule::gap, 0.0f, 4}) == Approx(0.6f));
    CHECK_THROWS_AS(threshold_from_scores({}, {}), error);
    // what each rule reads of the top scores: nothing, the best one, `depth` of them
    CHECK(scores_read({threshold_rule::fixed, 0.5f, 4}) == 0);
    CHECK(threshold_from_scores({}, {threshold_rule::fixed, 0.5f, 4}) == Approx(0.5f));
    CHECK(scores_read({threshold_rule::relative, 0.15f, 4}) == 1);
    CHECK(threshold_from_scores(std::span(top).first(1), {threshold_rule::relative, 0.15f, 4}) ==
          Approx(0.75f));
    CHECK(scores_read({threshold_rule::zscore, 1.0f, 4}) == 4);
    CHECK(scores_read({threshold_rule::gap, 0.0f, 7}) == 7);
}

TEST_CASE("the similarity scorer's relative threshold is the best catalog cosine minus delta",
          "[adaptive][scoring]") {
    const hashing_embedder e;
    const std::vector<std::string> q = {"singers and the concerts they sang in",
                                        "how many students live in each dorm"};
    const auto best = demo_index().search_tables(embed_normalized(e, q, demo_index().dim()), 50);
    const similarity_window_scorer scorer(demo_index(), e, {threshold_rule::relative, 0.1f, 50});
    const std::vector<table_id> tables = {best[0][3].id, best[0][0].id};
    const std::vector<std::string> no_texts(tables.size());
    const std::vector<window_request> windows = {{q[0], tables, no_texts},
                                                 {q[1], tables, no_texts}};
    const auto scores = scorer.score(windows);
    for (std::size_t i = 0; i < q.size(); ++i)
        CHECK(scores[i].threshold == Approx(best[i][0].score - 0.1f));
    REQUIRE(scores[0].logits.size() == 2);
    CHECK(scores[0].logits[0] == Approx(best[0][3].score));
    CHECK(scores[0].logits[1] == Approx(best[0][0].score));
}

TEST_CASE(
    "similarity scorer over a dense first stage keeps the dense order and cuts at the "
    "threshold",
    "[adaptive][scoring]") {
    const hashing_embedder e;
    const cached_embedder cache(e);
    const dense_retriever dense(demo_index(), cache);
    const std::vector<std::string> q = {"singers and the concerts they sang in",
                                        "how many students live in each dorm"};
    const auto plain = dense.retrieve(q, {30, 0});

    const similarity_window_scorer everything(demo_index(), cache, {threshold_rule::fixed, -2.0f});
    const adaptive_reranker all(dense, demo_index(), everything, {30, 20, 15});
    const auto kept = all.retrieve(q, {1, 0});
    for (std::size_t i = 0; i < q.size(); ++i) {
        CHECK(ids_of(kept[i]) == ids_of(plain[i]));
        CHECK(kept[i].cut == std::optional<std::size_t>(30));
        CHECK(kept[i].trace.front().step == "dense");
    }

    const float tau = 0.5f * (plain[0].tables[1].score + plain[0].tables[2].score);
    const similarity_window_scorer two(demo_index(), cache, {threshold_rule::fixed, tau});
    CHECK(adaptive_reranker(dense, demo_index(), two, {30, 20, 15}).retrieve(q, {1, 0})[0].cut ==
          std::optional<std::size_t>(2));
    CHECK_THROWS_AS(all.retrieve(q, {0, 0}), error);
    CHECK_THROWS_AS(similarity_window_scorer(demo_index(), cache, {threshold_rule::zscore, 1, 0}),
                    error);
}

namespace {
/// The hashing embedder, counting the texts it is asked to embed.
struct counting_embedder {
    hashing_embedder inner;
    mutable std::size_t texts = 0;
    matrix embed(std::span<const std::string> batch) const {
        texts += batch.size();
        return inner.embed(batch);
    }
};
}  // namespace

TEST_CASE("similarity scorer embeds and thresholds a question once over all its windows",
          "[adaptive][scoring]") {
    const counting_embedder counted;
    const similarity_window_scorer scorer(demo_index(), counted, {threshold_rule::zscore, 1, 10});
    const std::string a = "singers and the concerts they sang in";
    const std::string b = "how many students live in each dorm";
    const std::vector<table_id> first{0, 1, 2}, second{3, 4};
    const std::vector<window_request> step1{{a, first, {}}, {b, first, {}}};
    const auto got1 = scorer.score(step1);
    CHECK(counted.texts == 2);
    const std::vector<window_request> step2{{a, second, {}}, {b, second, {}}, {a, first, {}}};
    const auto got2 = scorer.score(step2);
    CHECK(counted.texts == 2);  // both questions remembered
    CHECK(got2[2] == got1[0]);  // the same window scores the same
    CHECK(got2[0].threshold == got1[0].threshold);

    // a fresh scorer (nothing remembered) gives the same answers
    const hashing_embedder plain;
    const similarity_window_scorer fresh(demo_index(), plain, {threshold_rule::zscore, 1, 10});
    CHECK(fresh.score(step2) == got2);
}
