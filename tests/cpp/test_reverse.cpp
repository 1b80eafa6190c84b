#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/question_index.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/retrieval/first_stage/reverse_retriever.hpp>
#include <tabret/rewriting/response_cache.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

// A three-table catalog whose texts a fake embedder maps to hand-chosen 2-D vectors.
catalog zoo() {
    catalog cat;
    const auto db = cat.add_database("zoo");
    for (const auto* name : {"animal", "keeper", "feeding"}) {
        const auto t = cat.add_table(db, name);
        cat.add_column(t, std::string(name) + "_id");
    }
    return cat;
}

const std::vector<std::string> zoo_questions = {"qo animal", "qo keeper", "qo feeding"};

/// Embeds the zoo's table texts, generated questions and question "Q" as fixed vectors.
callback_embedder zoo_embedder(const catalog& cat, int* calls = nullptr) {
    std::map<std::string, std::vector<float>> v = {
        {serialize_table(cat, 0), {1.0f, 0.0f}},
        {serialize_table(cat, 1), {0.0f, 1.0f}},
        {serialize_table(cat, 2), {0.6f, 0.8f}},
        {zoo_questions[0], {0.0f, 1.0f}},
        {zoo_questions[1], {1.0f, 0.0f}},
        {zoo_questions[2], {0.6f, -0.8f}},
        {"Q", {0.6f, 0.8f}},
    };
    return {[v, calls](std::span<const std::string> texts) {
                if (calls) ++*calls;
                matrix m(static_cast<Eigen::Index>(texts.size()), 2);
                for (std::size_t i = 0; i < texts.size(); ++i) {
                    const auto& row = v.at(texts[i]);
                    m(static_cast<Eigen::Index>(i), 0) = row[0];
                    m(static_cast<Eigen::Index>(i), 1) = row[1];
                }
                return m;
            },
            "zoo"};
}

struct zoo_fixture {
    catalog cat = zoo();
    int embed_calls = 0;
    callback_embedder embedder = zoo_embedder(cat, &embed_calls);
    table_index index = table_index::build(cat, embedder, "zoo", {.columns = false});
    question_index questions =
        question_index::from_questions(index, zoo_questions, "fixed", embedder);
};

using test::demo;
using test::demo_index;

std::filesystem::path prompts_dir() {
    return std::filesystem::path(TABRET_DEMO_DIR).parent_path() / "prompts";
}

/// A fake LLM counting calls; answers each prompt with a question naming the table line.
struct counting_llm {
    std::shared_ptr<int> calls = std::make_shared<int>(0);
    std::shared_ptr<std::size_t> prompts = std::make_shared<std::size_t>(0);
    llm_fn fn() const {
        return [calls = calls, prompts = prompts](std::span<const std::string> batch) {
            ++*calls;
            *prompts += batch.size();
            std::vector<std::string> out;
            for (const auto& p : batch) {
                const auto at = p.rfind("Table: ");
                out.push_back("Which rows does " + p.substr(at + 7, p.find('\n', at) - at - 7) +
                              " hold?");
            }
            return out;
        };
    }
};

void flip_byte(const std::filesystem::path& file, std::size_t at) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x20));
}

}  // namespace

TEST_CASE("reverse fusion arithmetic on hand-computed values", "[reverse]") {
    // q = (0.6, 0.8), E_s = (1, 0), E_qo = (0, 1): r = 0.6, ř = 0.8, ‖E_s + E_qo‖ = √2.
    auto s = reverse_fuse(0.6f, 0.8f, std::sqrt(2.0f));
    CHECK(s.r_c == Approx(1.4 / std::sqrt(2.0)));
    CHECK(s.alpha == Approx(0.989949));
    CHECK(s.fused == Approx(0.989949 * 0.6 + 0.010051 * 0.8).epsilon(1e-5));
    // r_c < 0.5 picks α = 1 − r_c: q = (0, 1), E_s = (1, 0), E_qo = (0.6, −0.8).
    s = reverse_fuse(0.0f, -0.8f, std::sqrt(3.2f));
    CHECK(s.r_c == Approx(-0.447214));
    CHECK(s.alpha == Approx(1.447214));
    CHECK(s.fused == Approx(0.357771));  // (1 − α)·ř = (−0.447)(−0.8)
    // r_c = 0.5 exactly gives α = 0.5, the plain mean.
    s = reverse_fuse(0.2f, 0.3f, 1.0f);
    CHECK(s.alpha == Approx(0.5));
    CHECK(s.fused == Approx(0.25));
    // E_qo = −E_s: the sum has no direction, r_c = 0, α = 1, R = r.
    s = reverse_fuse(0.4f, -0.4f, 0.0f);
    CHECK(s.r_c == 0.0f);
    CHECK(s.alpha == 1.0f);
    CHECK(s.fused == Approx(0.4));
}

TEST_CASE("reverse retriever fuses schema and generated-question similarity", "[reverse]") {
    zoo_fixture z;
    const reverse_retriever retriever(z.index, z.questions, z.embedder);
    const std::vector<std::string> q = {"Q"};
    const int before = z.embed_calls;
    const auto res = retriever.retrieve(q, {3, 0});
    CHECK(z.embed_calls == before + 1);
    REQUIRE(res.size() == 1);
    // R: keeper 0.79799, animal 0.60201, feeding 0.488 — plain cosine would rank feeding first.
    REQUIRE(res[0].tables.size() == 3);
    CHECK(res[0].tables[0].table == 1);
    CHECK(res[0].tables[0].score == Approx(0.797990).epsilon(1e-5));
    CHECK(res[0].tables[1].table == 0);
    CHECK(res[0].tables[1].score == Approx(0.602010).epsilon(1e-5));
    CHECK(res[0].tables[2].table == 2);
    CHECK(res[0].tables[2].score == Approx(0.488).epsilon(1e-5));
    // feeding: r = 1, ř = −0.28, ‖(1.2, 0)‖ = 1.2, r_c = 0.6, α = 0.6.
    const auto parts = retriever.scores(embed_normalized(z.embedder, q), 0, 2);
    CHECK(parts.r == Approx(1.0));
    CHECK(parts.r_hat == Approx(-0.28));
    CHECK(parts.r_c == Approx(0.6));
    CHECK(parts.alpha == Approx(0.6));
    // The trace shows R (query = q_o), r (query = schema text), ř and α for every table.
    const auto& trace = res[0].trace;
    REQUIRE(trace.size() == 12);
    CHECK(trace[8] == trace_entry{2, "reverse", "qo feeding", res[0].tables[2].score});
    CHECK(trace[9].step == "reverse:schema");
    CHECK(trace[9].query == z.index.table_text(2));
    CHECK(trace[9].score == Approx(1.0));
    CHECK(trace[10].step == "reverse:question");
    CHECK(trace[10].score == Approx(-0.28));
    CHECK(trace[11].step == "reverse:alpha");
    CHECK(trace[11].score == Approx(0.6));
    // k cuts; a batch costs one embedder call; k == 0 is an error.
    const std::vector<std::string> batch = {"Q", "Q"};
    const auto two = retriever.retrieve(batch, {1, 0});
    CHECK(z.embed_calls == before + 3);
    CHECK(two[0].tables == std::vector<scored_table>{res[0].tables[0]});
    CHECK(two[1] == two[0]);
    CHECK(retriever.retrieve(std::vector<std::string>{}, {1, 0}).empty());
    CHECK_THROWS_AS(retriever.retrieve(q, {0, 0}), error);
}

TEST_CASE("the conditional re-ranker gets (question, schema, q_o) in one batch", "[reverse]") {
    zoo_fixture z;
    int calls = 0;
    std::vector<rerank_input> seen;
    reverse_options o;
    o.candidates = 2;
    o.reranker = [&](std::span<const rerank_input> inputs) {
        ++calls;
        seen.assign(inputs.begin(), inputs.end());
        std::vector<float> out;
        for (std::size_t i = 0; i < inputs.size(); ++i) out.push_back(static_cast<float>(i));
        return out;  // prefers the candidate R ranked last
    };
    const reverse_retriever retriever(z.index, z.questions, z.embedder, o);
    const std::vector<std::string> batch = {"Q", "Q"};
    const auto res = retriever.retrieve(batch, {1, 0});
    CHECK(calls == 1);
    REQUIRE(seen.size() == 4);  // max(k, K) = 2 candidates per question
    CHECK(seen[0] == rerank_input{"Q", z.index.table_text(1), "qo keeper"});
    CHECK(seen[1].generated_question == "qo animal");
    CHECK(seen[0].text() == "Q [SEP] " + z.index.table_text(1) + " [SEP] qo keeper");
    CHECK(res[0].tables == std::vector<scored_table>{{0, 1.0f}});
    CHECK(res[1].tables == std::vector<scored_table>{{0, 3.0f}});
    CHECK(res[0].trace.back() == trace_entry{0, "rerank", "Q", 1.0f});
    // k larger than K: every returned table is re-ranked.
    CHECK(retriever.retrieve(std::vector<std::string>{"Q"}, {3, 0})[0].tables.size() == 3);
    CHECK(seen.size() == 3);

    reverse_options bad;
    bad.reranker = [](std::span<const rerank_input>) { return std::vector<float>{1.0f}; };
    CHECK_THROWS_WITH(
        reverse_retriever(z.index, z.questions, z.embedder, bad).retrieve(batch, {3, 0}),
        Catch::Contains("returned 1 scores for 6 candidates"));
    bad.reranker = [](std::span<const rerank_input> in) {
        return std::vector<float>(in.size(), std::numeric_limits<float>::quiet_NaN());
    };
    CHECK_THROWS_WITH(
        reverse_retriever(z.index, z.questions, z.embedder, bad).retrieve(batch, {3, 0}),
        Catch::Contains("NaN or infinity for candidate 0"));
    reverse_options zero;
    zero.candidates = 0;
    CHECK_THROWS_AS(reverse_retriever(z.index, z.questions, z.embedder, zero), error);
}

TEST_CASE("an LLM question index asks once per build, never at query time or after load",
          "[reverse]") {
    test::temp_dir dir;
    const auto prompts = prompt_set::from_directory(prompts_dir());
    const counting_llm llm;
    response_cache cache;
    const llm_question_generator gen(demo(), cached_llm(llm.fn(), "fake", cache), prompts);
    const auto built = question_index::build(demo_index(), gen, "llm:fake", hashing_embedder{});
    CHECK(*llm.calls == 1);
    CHECK(*llm.prompts == demo().tables().size());
    CHECK(built.question(0).starts_with("Which rows does "));
    CHECK(built.generator() == "llm:fake");

    const hashing_embedder embedder;  // the retriever holds it by reference
    const reverse_retriever retriever(demo_index(), built, embedder);
    const std::vector<std::string> qs = {"How many patients are in each ward?",
                                         "List the courses."};
    const auto before = retriever.retrieve(qs, {5, 3});
    CHECK(before[0].columns.size() == 3);
    CHECK(*llm.calls == 1);

    demo_index().save(dir.path() / "q");  // questions are saved with their index
    built.save(dir.path() / "q");
    const auto loaded = question_index::load(dir.path() / "q", demo_index());
    CHECK(loaded.questions() == built.questions());
    CHECK(loaded.vectors().vectors() == built.vectors().vectors());
    CHECK(loaded.generator() == "llm:fake");
    CHECK(reverse_retriever(demo_index(), loaded, embedder).retrieve(qs, {5, 3}) == before);
    CHECK(*llm.calls == 1);

    // A rebuild through the same response cache is free.
    question_index::build(demo_index(), gen, "llm:fake", hashing_embedder{});
    CHECK(*llm.calls == 1);
}

TEST_CASE("saved questions are verified on load", "[reverse][errors]") {
    test::temp_dir dir;
    const template_question_generator gen(demo());
    const auto q = question_index::build(demo_index(), gen, "template", hashing_embedder{}, 4);
    CHECK(q.question(0) == gen.generate(table_id{0}));
    CHECK(q.size() == demo().tables().size());
    const auto path = dir.path() / "q";
    CHECK_THROWS_WITH(q.save(path), Catch::Contains("save the index there first"));
    demo_index().save(path);
    q.save(path);
    q.save(path);             // overwriting keeps one valid directory
    demo_index().save(path);  // re-saving the index keeps its questions
    CHECK(question_index::load(path, demo_index()).questions() == q.questions());
    CHECK(question_index::load(path, demo_index()).questions() == q.questions());

    SECTION("a corrupt question file") {
        flip_byte(path / "questions.json", 5);
        CHECK_THROWS_WITH(question_index::load(path, demo_index()),
                          Catch::Contains("questions.json: checksum mismatch"));
        CHECK_THROWS_AS(question_index::load(path, demo_index()), io_error);
    }
    SECTION("a truncated vector file") {
        std::filesystem::resize_file(path / "questions.f32", 12);
        CHECK_THROWS_AS(question_index::load(path, demo_index()), io_error);
    }
    SECTION("another version or format") {
        auto doc = nlohmann::json::parse(read_text_file(path / "manifest.json"));
        doc["version"] = 99;
        write_file_atomic(path / "manifest.json", doc.dump());
        CHECK_THROWS_WITH(question_index::load(path, demo_index()),
                          Catch::Contains("version 99 is not supported"));
        CHECK_THROWS_AS(question_index::load(dir.path() / "missing", demo_index()), io_error);
    }
    SECTION("another index") {
        zoo_fixture z;
        CHECK_THROWS_WITH(question_index::load(path, z.index),
                          Catch::Contains("cover 69 tables, the index has 3"));
        CHECK_THROWS_AS(reverse_retriever(z.index, q, z.embedder), error);
    }
    SECTION("a generator that misbehaves") {
        struct short_gen {
            std::vector<std::string> generate(std::span<const table_id>) const { return {"x"}; }
        };
        CHECK_THROWS_WITH(
            question_index::build(demo_index(), short_gen{}, "short", hashing_embedder{}),
            Catch::Contains("'short' returned 1 questions"));
    }
}
