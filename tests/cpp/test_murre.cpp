#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/retrieval/first_stage/beam.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>
#include <tabret/retrieval/first_stage/murre_retriever.hpp>
#include <tabret/rewriting/callback_rewriter.hpp>
#include <tabret/rewriting/llm_rewriters.hpp>
#include <tabret/rewriting/offline.hpp>
#include <tabret/rewriting/prompts.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "test_support.hpp"

using namespace tabret;

namespace {

std::filesystem::path prompts_dir() {
    return std::filesystem::path(TABRET_DEMO_DIR).parent_path() / "prompts";
}

/// The worked example's catalog: Spider's world (city, country, countrylanguage) among tables
/// of other databases that share its words (city, country, people).
catalog world() {
    catalog cat;
    const auto w = cat.add_database("world");
    const auto city = cat.add_table(w, "city");
    for (const auto* c : {"id", "name", "country_code", "district", "population"})
        cat.add_column(city, c);
    const auto country = cat.add_table(w, "country");
    for (const auto* c : {"code", "name", "continent", "region", "population"})
        cat.add_column(country, c);
    const auto lang = cat.add_table(w, "countrylanguage", "country language");
    for (const auto* c : {"country_code", "language", "is_official", "percentage"})
        cat.add_column(lang, c);
    const auto add = [&](const char* db, const char* table, std::vector<const char*> cols) {
        auto d = cat.find_database(db);
        const auto t = cat.add_table(d ? *d : cat.add_database(db), table);
        for (const auto* c : cols) cat.add_column(t, c);
    };
    add("tourism", "attraction", {"city", "attraction_name", "visitors"});
    add("weather", "forecast", {"city", "date", "temperature"});
    add("transport", "metro_line", {"city", "line_name", "stations"});
    add("census", "household", {"district", "people", "income"});
    add("geo", "border", {"country_name", "neighbour", "length"});
    add("geo", "river", {"river_name", "country_name", "length"});
    add("sports", "team", {"id", "name", "city", "country"});
    add("school", "student", {"id", "name", "city", "age"});
    return cat;
}

constexpr table_id city_t = 0, country_t = 1, language_t = 2;
const std::string city_question =
    "Name the cities with a population above one million in countries where English is spoken by "
    "most people.";

/// The worked example's LLM, reading the path from the prompt's last "Retrieved tables:" block:
/// a path without the city asks for it; with the city, the language table the question needs
/// ("English is spoken") is missing next, then the country; with all three it answers None.
llm_fn scripted_llm(std::shared_ptr<std::vector<std::string>> seen = nullptr) {
    return [seen](std::span<const std::string> prompts) {
        std::vector<std::string> out;
        for (const auto& p : prompts) {
            if (seen) seen->push_back(p);
            const auto from = p.rfind("Retrieved tables:\n");
            const auto block = p.substr(from, p.rfind("Missing tables:") - from);
            const auto has = [&](const char* t) { return block.find(t) != std::string::npos; };
            std::vector<std::string> missing;
            if (!has("world.city(")) missing.push_back("world.city(id, name, country code)");
            if (!has("world.country language("))
                missing.push_back("world.country language(country code, language, is official)");
            if (!has("world.country("))
                missing.push_back("world.country(code, name, continent, population)");
            out.push_back(missing.empty() ? "None" : missing.front());
        }
        return out;
    };
}

/// Counts embedder calls and texts (the hashing embedder underneath).
struct counting_embedder {
    std::shared_ptr<int> calls = std::make_shared<int>(0);
    std::shared_ptr<int> texts = std::make_shared<int>(0);
    [[nodiscard]] matrix embed(std::span<const std::string> batch) const {
        ++*calls;
        *texts += static_cast<int>(batch.size());
        return hashing_embedder{}.embed(batch);
    }
};

/// A fake LLM counting calls and prompts (and every prompt); its answer depends on @p answer.
struct counting_llm {
    std::function<std::string(const std::string&)> answer;
    std::shared_ptr<std::vector<std::vector<std::string>>> batches =
        std::make_shared<std::vector<std::vector<std::string>>>();
    [[nodiscard]] llm_fn fn() const {
        return [answer = answer, batches = batches](std::span<const std::string> prompts) {
            batches->emplace_back(prompts.begin(), prompts.end());
            std::vector<std::string> out;
            for (const auto& p : prompts) out.push_back(answer(p));
            return out;
        };
    }
    [[nodiscard]] std::size_t prompts() const {
        std::size_t n = 0;
        for (const auto& b : *batches) n += b.size();
        return n;
    }
};

std::vector<table_id> ids(const retrieval& r) {
    std::vector<table_id> out;
    for (const auto& t : r.tables) out.push_back(t.table);
    return out;
}

std::size_t rank_of(const retrieval& r, table_id t) {
    const auto v = ids(r);
    return static_cast<std::size_t>(std::find(v.begin(), v.end(), t) - v.begin());
}

std::vector<trace_entry> steps(const retrieval& r, const std::string& step) {
    std::vector<trace_entry> out;
    for (const auto& e : r.trace)
        if (e.step == step) out.push_back(e);
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Path scoring and beam pruning

TEST_CASE("path scores: sum of log P with P = (cos + 1) / 2, and the reference form",
          "[murre][beam]") {
    CHECK(log_probability(1.0f) == Approx(0.0));
    CHECK(log_probability(0.0f) == Approx(std::log(0.5)));
    CHECK(std::isfinite(log_probability(-1.0f)));  // clamped, never -inf
    CHECK(log_probability(-1.0f) < -20.0);

    const auto s =
        extend_score(extend_score({}, 0.6f, path_scoring::paper), 0.2f, path_scoring::paper);
    CHECK(std::exp(s.final_log) == Approx(0.8 * 0.6));
    CHECK(s.select == s.final_log);

    const auto r = extend_score(extend_score({}, 0.6f, path_scoring::reference), 0.2f,
                                path_scoring::reference);
    CHECK(r.select == Approx(0.8));                     // raw cosines
    CHECK(std::exp(r.final_log) == Approx(1.3 * 1.1));  // (cos + 2) / 2
}

TEST_CASE("beam pruning selects as a stable sort of every candidate would", "[murre][beam]") {
    // Many candidates with few distinct scores (ties everywhere) and repeated table sets: the
    // partial selection must keep exactly the paths the full stable sort keeps, in its order.
    std::mt19937 gen(12);
    std::uniform_int_distribution<int> level(0, 4), table(0, 30), parent(0, 2);
    const std::vector<beam_path> beams = {{{1}, {"q"}, {-0.1, -0.1}, false},
                                          {{2}, {"q"}, {-0.2, -0.3}, false},
                                          {{3}, {"q"}, {-0.2, -0.2}, true}};
    for (int round = 0; round < 20; ++round) {
        std::vector<beam_candidate> cands;
        for (int i = 0; i < 300; ++i) {
            const double lv = -0.1 * level(gen);
            const auto p = static_cast<std::size_t>(parent(gen));
            if (i % 50 == 0)
                cands.push_back({p, std::nullopt, {}, beams[p].score});
            else
                cands.push_back(
                    {p, static_cast<table_id>(table(gen)), "x", {lv, lv - 0.1 * (i % 2)}});
        }
        auto sorted = cands;
        std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
            if (a.score.select != b.score.select) return a.score.select > b.score.select;
            return a.score.final_log > b.score.final_log;
        });
        for (const std::size_t width : {1u, 2u, 5u, 9u, 40u}) {
            std::vector<beam_path> want;
            std::set<std::vector<table_id>> seen;
            for (const auto& c : sorted) {
                if (want.size() >= width) break;
                if (seen.insert(detail::table_set(beams, c)).second)
                    want.push_back(materialize(beams, c));
            }
            CHECK(prune_beams(beams, cands, width) == want);
        }
    }
}

TEST_CASE("beam pruning keeps the best B, merges equal table sets, carries stopped beams",
          "[murre][beam]") {
    const path_score a{std::log(0.9), std::log(0.9)}, b{std::log(0.8), std::log(0.8)};
    std::vector<beam_path> beams = {{{1}, {"q"}, a, false}, {{2}, {"q"}, b, true}};
    const auto ext = [&](std::size_t parent, table_id t, double p) {
        const auto& s = beams[parent].score;
        return beam_candidate{parent, t, "q2", {s.select + std::log(p), s.final_log + std::log(p)}};
    };
    std::vector<beam_candidate> cands = {
        ext(0, 2, 0.95),           // {1, 2}: 0.855
        ext(0, 3, 0.5),            // {1, 3}: 0.45
        {1, std::nullopt, {}, b},  // stopped {2}: 0.8, carried as it is
        ext(0, 4, 0.85),           // {1, 4}: 0.765
        {1, 1, "q3", {b.select + std::log(0.9), b.final_log + std::log(0.9)}},  // {2, 1}: 0.72
    };
    const auto kept = prune_beams(beams, cands, 3);
    REQUIRE(kept.size() == 3);
    CHECK(kept[0].tables == std::vector<table_id>{1, 2});
    CHECK(kept[0].queries == std::vector<std::string>{"q", "q2"});
    CHECK_FALSE(kept[0].stopped);
    CHECK(kept[1].tables == std::vector<table_id>{2});
    CHECK(kept[1].stopped);  // a stopped beam competes with its score unchanged
    CHECK(kept[2].tables == std::vector<table_id>{1, 4});

    // {2, 1} is the same table set as {1, 2}: with width 5 it is merged away.
    const auto wide = prune_beams(beams, cands, 5);
    CHECK(wide.size() == 4);
    CHECK(std::none_of(wide.begin(), wide.end(), [](const auto& p) {
        return p.tables == std::vector<table_id>{2, 1};
    }));
    CHECK(prune_beams(beams, cands, 1).size() == 1);

    // Table score = max over the candidate paths containing it.
    table_scores scores(5);
    for (const auto& c : cands) scores.add(beams, c);
    CHECK(std::exp(scores.log_score(2)) == Approx(0.855));
    CHECK(std::exp(scores.log_score(1)) == Approx(0.855));  // path {1, 2}
    CHECK(std::exp(scores.log_score(4)) == Approx(0.765));
    CHECK(std::isinf(scores.log_score(0)));
    const auto top = scores.top(10);
    REQUIRE(top.size() == 4);
    CHECK(top[0].first == 1);  // ties (0.855) go to the smaller id
    CHECK(top[1].first == 2);
    CHECK(top[0].second == Approx(0.855));
    CHECK(scores.top(2).size() == 2);
}

// ---------------------------------------------------------------------------------------------
// The paper's worked example, replayed with a scripted LLM

TEST_CASE("worked example: the language table is found only at hop 2", "[murre]") {
    const auto cat = world();
    const hashing_embedder emb;
    const auto index = table_index::build(cat, emb, emb.name());
    const std::vector<std::string> q = {city_question};

    const dense_retriever single(index, emb);
    const auto base = single.retrieve(q, {10, 0})[0];
    INFO("single-hop ranks the language table at " << rank_of(base, language_t));
    CHECK(rank_of(base, language_t) >= 5);  // outside the hop-1 beam (B = 5)

    const auto prompts = prompt_set::from_directory(prompts_dir());
    auto seen = std::make_shared<std::vector<std::string>>();
    const murre_rewriter rw(cat, scripted_llm(seen), prompts);
    const murre_retriever murre(index, emb, rw);
    const auto r = murre.retrieve(q, {5, 0})[0];

    // Hop 1 keeps the city (with the question) but not the language table.
    const auto hop1 = steps(r, "hop 1 beam 1");
    REQUIRE(hop1.size() == 1);
    CHECK(hop1[0].table == city_t);
    for (std::size_t b = 1; b <= 5; ++b)
        for (const auto& e : steps(r, fmt::format("hop 1 beam {}", b))) {
            CHECK(e.query == city_question);
            CHECK(e.table != language_t);
        }
    // Hop 2: the beam through the city asked for the language table and found it.
    bool found_at_hop2 = false;
    for (std::size_t b = 1; b <= 5; ++b) {
        const auto beam = steps(r, fmt::format("hop 2 beam {}", b));
        if (beam.size() == 2 && beam[0].table == city_t && beam[1].table == language_t) {
            found_at_hop2 = true;
            CHECK(beam[1].query == "world.country language(country code, language, is official)");
            CHECK(beam[0].score == beam[1].score);  // the path's score on every entry
        }
    }
    CHECK(found_at_hop2);
    // Hop 3 completes {city, country, language}; the LLM then says None: those beams stop.
    CHECK_FALSE(steps(r, "hop 3 beam 1").empty());
    CHECK(std::any_of(seen->begin(), seen->end(), [](const std::string& p) {
        return p.find("Question: " + city_question) != std::string::npos;
    }));
    // The final list holds all three world tables in the top 5, the language table well above
    // its single-hop rank.
    INFO("MURRE ranks: city " << rank_of(r, city_t) << ", country " << rank_of(r, country_t)
                              << ", language " << rank_of(r, language_t));
    CHECK(rank_of(r, city_t) < 5);
    CHECK(rank_of(r, country_t) < 5);
    CHECK(rank_of(r, language_t) < 5);
    CHECK(rank_of(r, language_t) < rank_of(base, language_t));
    CHECK(std::is_sorted(r.tables.begin(), r.tables.end(),
                         [](const auto& a, const auto& b) { return a.score > b.score; }));
}

TEST_CASE("worked example: the offline lexical-removal rewriter also reaches hop 2", "[murre]") {
    const auto cat = world();
    const hashing_embedder emb;
    const auto index = table_index::build(cat, emb, emb.name());
    const lexical_removal_rewriter rw(cat);
    const murre_retriever murre(index, emb, rw);
    const auto r = murre.retrieve(std::vector<std::string>{city_question}, {12, 0})[0];
    CHECK(r.tables.size() == cat.tables().size());  // every table is a hop-1 candidate
    CHECK_FALSE(steps(r, "hop 2 beam 1").empty());
    // Every hop-2 query is the rewrite of a path: `db(remaining words)`.
    for (const auto& e : steps(r, "hop 2 beam 1"))
        if (e.query != city_question) CHECK(e.query.find('(') != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Cost discipline

TEST_CASE(
    "call budget: at most B(H-1) prompts per question, one LLM and one embedder call per "
    "hop",
    "[murre][budget]") {
    const auto cat = world();
    const hashing_embedder emb;
    const auto index = table_index::build(cat, emb, emb.name());
    const auto prompts = prompt_set::from_directory(prompts_dir());
    const std::vector<std::string> qs = {city_question, "How many students live in each city?",
                                         "Which country has the longest border?"};

    SECTION("never stopping: exactly B(H-1) distinct prompts per question, 2 LLM calls") {
        counting_llm llm{[](const std::string&) { return "world.country(code, name)"; }};
        const murre_rewriter rw(cat, llm.fn(), prompts);
        const counting_embedder ce;
        const murre_retriever murre(index, ce, rw);
        (void)murre.retrieve(qs, {10, 0});
        CHECK(llm.batches->size() == 2);            // hops 2 and 3
        CHECK(llm.prompts() == qs.size() * 5 * 2);  // B (H - 1) per question
        CHECK(*ce.calls == 3);                      // one per hop
        for (const auto& b : *llm.batches)
            CHECK(std::set<std::string>(b.begin(), b.end()).size() == b.size());
    }
    SECTION("always stopping: B prompts per question at hop 2, no call at hop 3") {
        counting_llm llm{[](const std::string&) { return "None"; }};
        const murre_rewriter rw(cat, llm.fn(), prompts);
        const counting_embedder ce;
        const murre_retriever murre(index, ce, rw);
        const auto out = murre.retrieve(qs, {10, 0});
        CHECK(llm.batches->size() == 1);
        CHECK(llm.prompts() == qs.size() * 5);
        CHECK(*ce.calls == 1);  // hop 1 only
        for (const auto& r : out) {
            CHECK(steps(r, "hop 1 beam 1 stop").size() == 1);
            CHECK(steps(r, "hop 2 beam 1").empty());
        }
        // Same list as hop 1 alone (H = 1).
        const murre_retriever one(index, emb, rw, {.beam = 5, .hops = 1});
        CHECK(ids(out[0]) == ids(one.retrieve(qs, {10, 0})[0]));
    }
    SECTION("some beams stop: a stopped path is never asked again, nor extended") {
        // Stop every path that holds the city table.
        counting_llm llm{[](const std::string& p) {
            const auto block = p.substr(p.rfind("Retrieved tables:"));
            return block.find("world.city(") != std::string::npos ? std::string("None")
                                                                  : std::string("world.city(id)");
        }};
        const murre_rewriter rw(cat, llm.fn(), prompts);
        const murre_retriever murre(index, emb, rw);
        const auto r = murre.retrieve(std::vector<std::string>{city_question}, {10, 0})[0];
        REQUIRE(llm.batches->size() == 2);
        const auto& hop2 = (*llm.batches)[0];
        const auto& hop3 = (*llm.batches)[1];
        const auto with_city = [](const std::string& p) {
            return p.substr(p.rfind("Retrieved tables:")).find("world.city(") != std::string::npos;
        };
        const auto stops = std::count_if(hop2.begin(), hop2.end(), with_city);
        CHECK(stops >= 1);
        CHECK(hop2.size() == 5);
        CHECK(hop3.size() < 5);  // fewer when beams stop
        CHECK(llm.prompts() < 10);
        // At hop 3, every prompt is for a live path of two tables, none extends the stopped
        // path [city] (a path lists its tables in hop order).
        for (const auto& p : hop3) {
            const auto block = p.substr(p.rfind("Retrieved tables:"));
            CHECK(std::count(block.begin(), block.end(), '(') == 2);
            CHECK_FALSE(block.starts_with("Retrieved tables:\nworld.city("));
        }
        std::size_t stop_entries = 0;
        for (const auto& e : r.trace)
            if (e.step.ends_with(" stop")) {
                ++stop_entries;
                CHECK(e.query.empty());
            }
        CHECK(stop_entries >= static_cast<std::size_t>(stops));
    }
    SECTION("identical prompts are sent once") {
        counting_llm llm{[](const std::string&) { return "world.country(code, name)"; }};
        const murre_rewriter rw(cat, llm.fn(), prompts);
        const counting_embedder ce;
        const murre_retriever murre(index, ce, rw);
        const std::vector<std::string> twice = {city_question, city_question};
        const auto out = murre.retrieve(twice, {10, 0});
        CHECK(llm.prompts() == 5 * 2);  // as for one question
        CHECK(out[0] == out[1]);
    }
    SECTION("any-beam stop (reference) stops the whole question") {
        counting_llm llm{[](const std::string& p) {
            const auto block = p.substr(p.rfind("Retrieved tables:"));
            return block.find("world.city(") != std::string::npos ? std::string("None")
                                                                  : std::string("world.city(id)");
        }};
        const murre_rewriter rw(cat, llm.fn(), prompts);
        auto o = murre_options::reference();
        const murre_retriever murre(index, emb, rw, o);
        (void)murre.retrieve(std::vector<std::string>{city_question}, {10, 0});
        CHECK(llm.batches->size() == 1);
        CHECK(llm.prompts() == 5);
    }
    SECTION("without early stop, a None does not stop; without removal and early stop, no call") {
        counting_llm llm{[](const std::string&) { return "None"; }};
        const murre_rewriter rw(cat, llm.fn(), prompts);
        murre_options o;
        o.early_stop = false;
        const murre_retriever murre(index, emb, rw, o);
        const auto r = murre.retrieve(std::vector<std::string>{city_question}, {10, 0})[0];
        CHECK(llm.prompts() == 10);
        CHECK_FALSE(steps(r, "hop 3 beam 1").empty());
        for (const auto& e : steps(r, "hop 2 beam 1")) CHECK(e.query == city_question);

        o.removal = false;
        const murre_retriever spliced(index, emb, rw, o);
        const auto s = spliced.retrieve(std::vector<std::string>{city_question}, {10, 0})[0];
        CHECK(llm.prompts() == 10);  // unchanged: no further call
        const auto hop2 = steps(s, "hop 2 beam 1");
        REQUIRE(hop2.size() == 2);
        CHECK(hop2[1].query ==
              city_question + "\n" + index.table_text(hop2[0].table));  // question + path
    }
}

TEST_CASE("reference options: top 3B per beam, hop-1 top N, per-line max", "[murre]") {
    const auto cat = world();
    const hashing_embedder emb;
    const auto index = table_index::build(cat, emb, emb.name());
    // Two lines per rewrite: the per-line max can reach both tables.
    const callback_rewriter two_lines(
        [](std::span<const rewrite_request> rs) {
            return std::vector<rewrite_result>(
                rs.size(), {false,
                            {"world.country language(country code, language)",
                             "geo.country border(country name, neighbour country, length)"}});
        },
        "two lines");
    auto o = murre_options::reference(2);
    o.rerank_top = 6;
    o.any_beam_stop = false;
    const murre_retriever murre(index, emb, two_lines, o);
    const auto r = murre.retrieve(std::vector<std::string>{city_question}, {20, 0})[0];
    CHECK(r.tables.size() <= 6);  // only the hop-1 top 6 are ever candidates
    std::set<std::string> queries;
    for (const auto& e : r.trace) queries.insert(e.query);
    CHECK(queries.contains(city_question));
    CHECK_FALSE(
        queries.contains("world.country language(country code, language)\n"
                         "geo.country border(country name, neighbour country, length)"));

    murre_options small;
    small.beam = 2;
    small.per_beam = 3;
    small.hops = 1;
    const murre_retriever narrow(index, emb, two_lines, small);
    CHECK(narrow.retrieve(std::vector<std::string>{city_question}, {20, 0})[0].tables.size() == 3);
}

TEST_CASE("murre rejects bad arguments and a misbehaving rewriter", "[murre][errors]") {
    const auto cat = world();
    const hashing_embedder emb;
    const auto index = table_index::build(cat, emb, emb.name());
    const lexical_removal_rewriter rw(cat);
    CHECK_THROWS_AS(murre_retriever(index, emb, rw, {.beam = 0}), error);
    CHECK_THROWS_AS(murre_retriever(index, emb, rw, {.hops = 0}), error);
    const murre_retriever murre(index, emb, rw);
    const std::vector<std::string> q = {city_question};
    CHECK_THROWS_WITH(murre.retrieve(q, {0, 0}), Catch::Contains("k must be positive"));
    CHECK_THROWS_WITH(murre.retrieve(q, {5, 3}), Catch::Contains("tables only"));
    CHECK(murre.retrieve(std::vector<std::string>{}, {5, 0}).empty());

    const callback_rewriter short_answer(
        [](std::span<const rewrite_request>) { return std::vector<rewrite_result>{}; }, "short");
    const murre_retriever bad(index, emb, short_answer);
    CHECK_THROWS_WITH(bad.retrieve(q, {5, 0}), Catch::Contains("returned 0 results for"));
    CHECK_THROWS_AS(callback_rewriter(rewrite_fn{}, "empty"), error);
}
