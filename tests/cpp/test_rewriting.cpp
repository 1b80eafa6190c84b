#include <tabret/rewriting/llm.hpp>
#include <tabret/rewriting/llm_rewriters.hpp>
#include <tabret/rewriting/offline.hpp>
#include <tabret/rewriting/parsers.hpp>
#include <tabret/rewriting/prompts.hpp>
#include <tabret/rewriting/replay_llm.hpp>
#include <tabret/rewriting/response_cache.hpp>
#include <tabret/rewriting/rewriter.hpp>

#include <atomic>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace tabret;
using nlohmann::json;

namespace {

json load_cases(const std::string& name) {
    const auto path = test::fixture("llm/" + name);
    std::ifstream in(path);
    REQUIRE(in);
    return json::parse(in);
}

std::filesystem::path prompts_dir() {
    return std::filesystem::path(TABRET_DEMO_DIR).parent_path() / "prompts";
}

/// A fake LLM that counts its calls and the prompts it was sent; answers "echo: <prompt>".
struct counting_llm {
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> prompts = std::make_shared<std::atomic<int>>(0);
    llm_fn fn() const {
        return [calls = calls, prompts = prompts](std::span<const std::string> batch) {
            ++*calls;
            *prompts += static_cast<int>(batch.size());
            std::vector<std::string> out;
            for (const auto& p : batch) out.push_back("echo: " + p);
            return out;
        };
    }
};

/// A fake LLM that answers every prompt with the same text.
llm_fn constant_llm(std::string answer, std::shared_ptr<std::atomic<int>> calls = nullptr) {
    return [answer = std::move(answer), calls](std::span<const std::string> batch) {
        if (calls) ++*calls;
        return std::vector<std::string>(batch.size(), answer);
    };
}

void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

std::string slurp(const std::filesystem::path& p) { return read_text_file(p); }

/// school: student(student_id, name, age), course(course_id, title, teacher_id),
/// enrollment(student_id, course_id), teacher(teacher_id, name); shop: product(id, price).
catalog school() {
    catalog cat;
    const auto db = cat.add_database("school");
    const auto student = cat.add_table(db, "student");
    cat.add_column(student, "student_id", "int");
    cat.add_column(student, "name", "text");
    cat.add_column(student, "age", "int");
    const auto course = cat.add_table(db, "course");
    cat.add_column(course, "course_id", "int");
    cat.add_column(course, "title", "text");
    cat.add_column(course, "teacher_id", "int");
    const auto enrollment = cat.add_table(db, "enrollment");
    cat.add_column(enrollment, "student_id", "int");
    cat.add_column(enrollment, "course_id", "int");
    const auto teacher = cat.add_table(db, "teacher");
    cat.add_column(teacher, "teacher_id", "int");
    cat.add_column(teacher, "name", "text");
    const auto shop = cat.add_database("shop");
    const auto product = cat.add_table(shop, "product");
    cat.add_column(product, "id", "int");
    cat.add_column(product, "price", "real");
    return cat;
}

constexpr table_id student_t = 0, course_t = 1, enrollment_t = 2, teacher_t = 3, product_t = 4;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parsers over the messy-answer fixtures (tests/data/llm/*.json)

TEST_CASE("hallucinated-schema parser over messy answers", "[rewriting][parsers]") {
    const auto cases = load_cases("hallucinated_schema.json");
    REQUIRE(cases.size() >= 30);
    for (const auto& c : cases) {
        INFO("case: " << c["name"].get<std::string>());
        const auto answer = c["answer"].get<std::string>();
        if (c["expected"] == "error") {
            CHECK_THROWS_AS(parse_hallucinated_schema(answer), llm_parse_error);
            continue;
        }
        std::vector<probe> expected;
        for (const auto& p : c["expected"]) expected.push_back({p[0], p[1]});
        CHECK(parse_hallucinated_schema(answer) == expected);
    }
}

TEST_CASE("completion parser over messy answers", "[rewriting][parsers]") {
    const auto cases = load_cases("completion.json");
    REQUIRE(cases.size() >= 30);
    for (const auto& c : cases) {
        INFO("case: " << c["name"].get<std::string>());
        const auto answer = c["answer"].get<std::string>();
        const auto form = c.value("form", "tables") == "question" ? completion_form::question
                                                                  : completion_form::tables;
        if (c["expected"] == "error") {
            CHECK_THROWS_AS(parse_completion(answer, form), llm_parse_error);
            continue;
        }
        const completion expected{c["expected"]["stop"].get<bool>(),
                                  c["expected"]["lines"].get<std::vector<std::string>>()};
        const auto got = parse_completion(answer, form);
        CHECK(got.stop == expected.stop);
        CHECK(got.lines == expected.lines);
    }
}

TEST_CASE("decomposition parser over messy answers", "[rewriting][parsers]") {
    const auto cases = load_cases("decomposition.json");
    REQUIRE(cases.size() >= 30);
    for (const auto& c : cases) {
        INFO("case: " << c["name"].get<std::string>());
        const auto answer = c["answer"].get<std::string>();
        if (c["expected"] == "error") {
            CHECK_THROWS_AS(parse_decomposition(answer), llm_parse_error);
            continue;
        }
        std::vector<subquery> expected;
        for (const auto& p : c["expected"]) expected.push_back({p[0], p[1]});
        CHECK(parse_decomposition(answer) == expected);
    }
}

TEST_CASE("question parser over messy answers", "[rewriting][parsers]") {
    const auto cases = load_cases("question.json");
    REQUIRE(cases.size() >= 30);
    for (const auto& c : cases) {
        INFO("case: " << c["name"].get<std::string>());
        const auto answer = c["answer"].get<std::string>();
        if (c["expected"] == "error") {
            CHECK_THROWS_AS(parse_question(answer), llm_parse_error);
            continue;
        }
        CHECK(parse_question(answer) == c["expected"].get<std::string>());
    }
}

TEST_CASE("parse failures are typed, catchable as parse_error, and carry the answer",
          "[rewriting][parsers]") {
    try {
        (void)parse_hallucinated_schema("no tables here", schema_fallback::fail);
        FAIL("expected llm_parse_error");
    } catch (const llm_parse_error& e) {
        CHECK(e.parser() == "hallucinated schema");
        CHECK(e.answer() == "no tables here");
        CHECK(std::string(e.what()).find("no tables here") != std::string::npos);
    }
    CHECK_THROWS_AS(parse_decomposition(""), parse_error);
    CHECK_THROWS_AS(parse_completion("   "), tabret::error);
    CHECK(probe{"a", "b"}.text() == "a.b");
    CHECK(probe{"", "whole"}.text() == "whole");
    CHECK(probe{"t", ""}.text() == "t");
    CHECK(subquery{"singers", "age"}.text() == "singers:age");
    CHECK(subquery{"stock", ""}.text() == "stock");
}

// ---------------------------------------------------------------------------------------------
// LLM callback helpers, deduplication and the response cache

TEST_CASE("check_completions and call_llm report wrong counts", "[rewriting][llm]") {
    CHECK_NOTHROW(check_completions(2, {"a", "b"}));
    try {
        check_completions(3, {"a"}, "gpt-x");
        FAIL("expected llm_error");
    } catch (const llm_error& e) {
        CHECK(std::string(e.what()) == "gpt-x returned 1 completions for 3 prompts");
    }
    const llm_fn short_llm = [](std::span<const std::string>) {
        return std::vector<std::string>{"only one"};
    };
    const std::vector<std::string> two = {"p", "q"};
    CHECK_THROWS_AS(call_llm(short_llm, two), llm_error);
    CHECK_THROWS_AS(call_llm(llm_fn{}, two), llm_error);
    counting_llm counter;
    CHECK(call_llm(counter.fn(), std::span<const std::string>{}).empty());
    CHECK(*counter.calls == 0);
}

TEST_CASE("a batch of identical prompts costs one call with one prompt", "[rewriting][llm]") {
    counting_llm counter;
    const std::vector<std::string> prompts(50, "same prompt");
    const auto out = dedup_call(counter.fn(), prompts);
    CHECK(*counter.calls == 1);
    CHECK(*counter.prompts == 1);
    REQUIRE(out.size() == 50);
    CHECK(std::all_of(out.begin(), out.end(),
                      [](const auto& s) { return s == "echo: same prompt"; }));

    const std::vector<std::string> mixed = {"a", "b", "a", "c", "b"};
    const auto out2 = deduplicated(counter.fn())(mixed);
    CHECK(*counter.calls == 2);
    CHECK(*counter.prompts == 4);
    CHECK(out2 == std::vector<std::string>{"echo: a", "echo: b", "echo: a", "echo: c", "echo: b"});
}

TEST_CASE("cached LLM: misses in one deduplicated batch, reruns cost zero calls",
          "[rewriting][llm][cache]") {
    counting_llm counter;
    response_cache cache;
    const auto llm = cached_llm(counter.fn(), "model-a", cache);
    const std::vector<std::string> batch = {"x", "y", "x", "x"};
    CHECK(llm(batch) == std::vector<std::string>{"echo: x", "echo: y", "echo: x", "echo: x"});
    CHECK(*counter.calls == 1);
    CHECK(*counter.prompts == 2);
    CHECK(cache.size() == 2);

    CHECK(llm(batch) == std::vector<std::string>{"echo: x", "echo: y", "echo: x", "echo: x"});
    CHECK(*counter.calls == 1);  // rerun: all hits, no call

    const std::vector<std::string> partial = {"y", "z", "z"};
    CHECK(llm(partial) == std::vector<std::string>{"echo: y", "echo: z", "echo: z"});
    CHECK(*counter.calls == 2);
    CHECK(*counter.prompts == 3);  // only "z" was sent

    // The key includes the model: the same prompt under another model is a miss.
    const auto other = cached_llm(counter.fn(), "model-b", cache);
    (void)other(std::vector<std::string>{"x"});
    CHECK(*counter.calls == 3);
    CHECK(cache.find("model-a", "x") == "echo: x");
    CHECK(cache.find("model-b", "x") == "echo: x");
    CHECK_FALSE(cache.find("model-c", "x"));
}

TEST_CASE("response cache file round trip", "[rewriting][cache]") {
    test::temp_dir dir;
    const auto file = dir.path() / "llm.sqlite";
    {
        response_cache cache(file);
        CHECK(cache.size() == 0);
        cache.put("m", "prompt with \"quotes\"\nand a newline", "answer 1");
        const std::vector<std::string> ps = {"p2", "p3"}, cs = {"a2", "a3 \xE2\x9C\x93"};
        cache.put_many("m", ps, cs);
        cache.put("m", "p2", "a2 newer");
    }
    CHECK(slurp(file).starts_with(std::string("SQLite format 3\0", 16)));
    response_cache again(file);
    CHECK(again.size() == 3);
    CHECK(again.truncated_lines() == 0);
    CHECK(again.find("m", "prompt with \"quotes\"\nand a newline") == "answer 1");
    CHECK(again.find("m", "p2") == "a2 newer");  // a later put wins
    CHECK(again.find("m", "p3") == "a3 \xE2\x9C\x93");

    // A cached LLM over the reopened file makes no call for recorded prompts.
    counting_llm counter;
    const auto llm = cached_llm(counter.fn(), "m", again);
    CHECK(llm(std::vector<std::string>{"p3", "p2"}) ==
          std::vector<std::string>{"a3 \xE2\x9C\x93", "a2 newer"});
    CHECK(*counter.calls == 0);
}

TEST_CASE("response cache imports a JSON-lines cache, ignoring a truncated last line",
          "[rewriting][cache]") {
    test::temp_dir dir;
    const auto file = dir.path() / "llm.jsonl";
    const std::string good = test::two_cached_answers();
    write(file, good + R"({"model":"m","prompt":"p3","compl)");
    response_cache cache(dir.path() / "llm.sqlite");
    CHECK(cache.import_jsonl(file) == 2);
    CHECK(cache.size() == 2);
    CHECK(cache.truncated_lines() == 1);
    CHECK(cache.find("m", "p2") == "a2");
    CHECK_FALSE(cache.find("m", "p3"));
    CHECK(slurp(file) == good + R"({"model":"m","prompt":"p3","compl)");  // only read

    // A complete last line that only lacks its newline is kept; a later line wins.
    write(file, good + R"({"model":"m","prompt":"p2","completion":"a2 newer"})");
    CHECK(cache.import_jsonl(file) == 3);
    CHECK(cache.truncated_lines() == 0);
    CHECK(cache.find("m", "p2") == "a2 newer");
    CHECK(cache.size() == 2);
}

TEST_CASE("response cache import rejects corrupt lines naming file and line",
          "[rewriting][cache]") {
    test::temp_dir dir;
    const auto file = dir.path() / "bad.jsonl";
    response_cache cache;
    write(file, detail::rw::cache_line("m", "p1", "a1") + "this is not json\n" +
                    detail::rw::cache_line("m", "p2", "a2"));
    try {
        (void)cache.import_jsonl(file);
        FAIL("expected parse_error");
    } catch (const parse_error& e) {
        CHECK(e.line() == 2);
        CHECK(e.source() == file.string());
        CHECK(std::string(e.what()).find("bad.jsonl:2:") != std::string::npos);
    }
    CHECK(cache.size() == 0);  // all or nothing
    write(file, detail::rw::cache_line("m", "p1", "a1") + R"({"model":"m","prompt":"p2"})" + "\n");
    try {
        (void)cache.import_jsonl(file);
        FAIL("expected parse_error");
    } catch (const parse_error& e) {
        CHECK(e.line() == 2);
        CHECK(std::string(e.what()).find("completion") != std::string::npos);
    }
    write(file, "[1, 2]\n");
    CHECK_THROWS_AS(cache.import_jsonl(file), parse_error);
    write(file, "\n\n" + detail::rw::cache_line("m", "p", "a") + "\n");  // blank lines are fine
    CHECK(cache.import_jsonl(file) == 1);
    CHECK(cache.size() == 1);
    CHECK_THROWS_AS(response_cache(dir.path()), io_error);
    CHECK_THROWS_AS(cache.import_jsonl(dir.path() / "missing.jsonl"), io_error);
}

TEST_CASE("response cache is thread-safe", "[rewriting][cache][concurrency]") {
    test::temp_dir dir;
    const auto file = dir.path() / "mt.sqlite";
    {
        response_cache cache(file);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&cache, t] {
                for (int i = 0; i < 50; ++i) {
                    const auto p = fmt::format("t{}-{}", t, i);
                    cache.put("m", p, p + "!");
                    (void)cache.find("m", p);
                }
            });
        for (auto& th : threads) th.join();
        CHECK(cache.size() == 200);
    }
    response_cache again(file);
    CHECK(again.size() == 200);
    CHECK(again.find("m", "t3-49") == "t3-49!");
}

// ---------------------------------------------------------------------------------------------
// Prompt templates

TEST_CASE("prompt templates render placeholders and literal braces", "[rewriting][prompts]") {
    const prompt_template t("demo", "Q: {question}\n{{not a placeholder}} {tables}");
    CHECK(t.placeholders() == std::vector<std::string>{"question", "tables"});
    CHECK(t.render({{"question", "Why {x}?"}, {"tables", "a(b)"}, {"unused", "z"}}) ==
          "Q: Why {x}?\n{not a placeholder} a(b)");
    try {
        (void)t.render({{"question", "q"}});
        FAIL("expected template_error");
    } catch (const template_error& e) {
        CHECK(std::string(e.what()) == "prompt template 'demo': no value for placeholder {tables}");
    }
    CHECK_THROWS_AS(prompt_template("bad", "a { b"), template_error);
    CHECK_THROWS_AS(prompt_template("bad", "a } b"), template_error);
    CHECK_THROWS_AS(prompt_template("bad", "{1x}"), template_error);
    CHECK_THROWS_AS(prompt_template("bad", "{}"), template_error);
    try {
        prompt_template("bad", "line one\nline {two three}");
        FAIL("expected template_error");
    } catch (const template_error& e) {
        CHECK(std::string(e.what()).find("'bad', line 2, column 6") != std::string::npos);
    }
}

TEST_CASE("the shipped prompt set loads, renders and can be overridden", "[rewriting][prompts]") {
    auto set = prompt_set::from_directory(prompts_dir());
    CHECK_NOTHROW(set.require_builtins());
    CHECK(set.names() == std::vector<std::string>{"crush_bird", "crush_spider", "jar_decompose",
                                                  "murre_question", "murre_tabulated",
                                                  "reverse_question"});
    const std::string q = "Which pilots flew more than 100 hours?";
    for (const auto& name :
         {"crush_spider", "crush_bird", "jar_decompose", "murre_tabulated", "murre_question"}) {
        INFO(name);
        const auto p = set.render(name, {{"question", q}, {"tables", "air.pilot(pilot id, name)"}});
        CHECK(extract_question(p) == q);  // the replay marker is the last `Question: ` line
        CHECK(p.find('{') == std::string::npos);
    }
    const auto re = set.render("reverse_question", {{"table", "air.pilot(pilot id, name)"}});
    CHECK(re.find("Table: air.pilot(pilot id, name)\nUser question:") != std::string::npos);
    // CRUSH asks for six few-shot examples in both styles.
    for (const auto& name : {"crush_spider", "crush_bird"}) {
        const auto& text = set.at(name).text();
        CHECK(std::count(text.begin(), text.end(), '\n') > 12);
        std::size_t shots = 0;
        for (std::size_t pos = 0; (pos = text.find("\nSchema: ", pos)) != std::string::npos; ++pos)
            ++shots;
        CHECK(shots == 6);
    }

    // Override by name; a built-in keeps its placeholder contract.
    set.set("crush_bird", "Schema for: {question}\nQuestion: {question}");
    CHECK(set.render("crush_bird", {{"question", "q?"}}) == "Schema for: q?\nQuestion: q?");
    CHECK_THROWS_WITH(set.set("crush_bird", "no placeholder"),
                      Catch::Contains("missing required placeholder {question}"));
    CHECK_THROWS_WITH(set.set("murre_tabulated", "{question} {tables} {database}"),
                      Catch::Contains("unknown placeholder {database}"));
    set.set("my_prompt", "anything {goes}");
    CHECK(set.render("my_prompt", {{"goes", "here"}}) == "anything here");
    CHECK_THROWS_WITH(set.at("nope"), Catch::Contains("no prompt template 'nope'"));

    // Overrides from a user directory replace only the files it has.
    test::temp_dir dir;
    write(dir.path() / "jar_decompose.txt", "Decompose: {question}\nQuestion: {question}\n");
    write(dir.path() / "ignored.md", "not a template");
    auto user = prompt_set::from_directory(prompts_dir());
    user.load_directory(dir.path());
    CHECK(user.at("jar_decompose").text() == "Decompose: {question}\nQuestion: {question}\n");
    CHECK(user.at("crush_spider").text() == set.at("crush_spider").text());
    CHECK_FALSE(user.contains("ignored"));
    CHECK_THROWS_AS(prompt_set::from_directory(dir.path() / "missing"), io_error);
    CHECK_THROWS_AS(prompt_set{}.require_builtins(), template_error);
}

// ---------------------------------------------------------------------------------------------
// Offline rewriters

TEST_CASE("lexical removal drops covered terms, tabulates the rest, stops when empty",
          "[rewriting][offline]") {
    const auto cat = school();
    const lexical_removal_rewriter rw(cat);
    static_assert(QueryRewriter<lexical_removal_rewriter>);
    const std::string q = "What is the title of each course and the name of its teacher?";
    CHECK(lexical_removal_rewriter::content_terms(q) ==
          std::vector<std::string>{"title", "course", "name", "teacher"});
    CHECK(lexical_removal_rewriter::content_terms(
              "Which students took the course 'Data Mining' in 2019?") ==
          std::vector<std::string>{"students", "took", "course"});
    CHECK(lexical_removal_rewriter::content_terms("List the student's courses") ==
          std::vector<std::string>{"student", "courses"});

    const std::vector<rewrite_request> reqs = {
        {"  What is the title of each course\nand the name of its teacher? ", {}},
        {q, {course_t}},
        {q, {course_t, teacher_t}},
        {"How many courses does each teachers have?", {student_t}},  // plural stems match
    };
    const auto out = rw.rewrite(reqs);
    REQUIRE(out.size() == 4);
    CHECK(out[0] == rewrite_result{false, {q}});
    CHECK(out[1] == rewrite_result{false, {"school(name)"}});  // teacher_id covers "teacher"
    CHECK(out[2] == rewrite_result{true, {}});
    CHECK(out[3] == rewrite_result{false, {"school(courses, teachers)"}});

    const lexical_removal_rewriter terms(cat, removal_output::terms);
    CHECK(terms.rewrite(std::vector<rewrite_request>{{q, {course_t}}})[0].queries ==
          std::vector<std::string>{"name"});
    CHECK(terms.rewrite(std::vector<rewrite_request>{{"Show the courses", {course_t}}})[0].stop);
}

TEST_CASE("coverage removal drops covered sub-queries, tabulates by concept, stops",
          "[rewriting][offline]") {
    const auto cat = school();
    const std::map<std::string, std::vector<subquery>> decomps = {
        {"Which students take Physics?",
         {{"student", "name"}, {"course", "title"}, {"course", "teacher"}, {"enrollment", ""}}},
        {"What do products cost?", {{"products", "price"}}},
    };
    const decomposition_fn decompose = [&](std::string_view q) {
        const auto it = decomps.find(std::string(q));
        if (it == decomps.end()) throw llm_error("no decomposition");
        return it->second;
    };
    const coverage_removal_rewriter rw(cat, decompose);
    const std::string q = "Which students take Physics?";
    const auto out = rw.rewrite(std::vector<rewrite_request>{
        {q, {}},
        {q, {student_t}},
        {q, {student_t, course_t}},
        {q, {student_t, course_t, enrollment_t}},
        {"What do products cost?", {product_t}},
        {"What do products cost?", {student_t}},
    });
    CHECK(out[0] == rewrite_result{false, {q}});
    CHECK(out[1] == rewrite_result{false, {"school.course(title, teacher)", "school.enrollment"}});
    CHECK(out[2] == rewrite_result{false, {"school.enrollment"}});
    CHECK(out[3] == rewrite_result{true, {}});
    CHECK(out[4] == rewrite_result{true, {}});
    CHECK(out[5] == rewrite_result{false, {"school.products(price)"}});

    const coverage_removal_rewriter terms(cat, decompose, removal_output::terms);
    CHECK(terms.rewrite(std::vector<rewrite_request>{{q, {student_t}}})[0].queries ==
          std::vector<std::string>{"course title course teacher enrollment"});
    CHECK_THROWS_AS(rw.rewrite(std::vector<rewrite_request>{{"unknown?", {student_t}}}), llm_error);
}

TEST_CASE("template table-to-question generator is deterministic", "[rewriting][offline]") {
    const auto cat = school();
    const template_question_generator gen(cat);
    CHECK(gen.generate(student_t) == "What are the student id, name and age of each student?");
    CHECK(gen.generate(product_t) == "What are the id and price of each product?");
    const template_question_generator two(cat, 1);
    CHECK(two.generate(course_t) == "What is the course id of each course?");
    catalog empty_table;
    empty_table.add_table(empty_table.add_database("d"), "log_entries");
    CHECK(template_question_generator(empty_table).generate(0) ==
          "What is recorded in log entries?");
    const std::vector<table_id> ids = {teacher_t, product_t};
    CHECK(gen.generate(ids) ==
          std::vector<std::string>{gen.generate(teacher_t), gen.generate(product_t)});
    CHECK_THROWS_AS(gen.generate(99), schema_error);
}

// ---------------------------------------------------------------------------------------------
// Replay of recorded answers (synthetic files)

TEST_CASE("replay source matches normalised and loose question text", "[rewriting][replay]") {
    replay_source src("test", recording_kind::decomposition);
    CHECK(src.add("  How many   singers\tare there? ", {"singers"}));
    CHECK_FALSE(src.add("How many singers are there?", {"singers"}));
    CHECK_FALSE(src.add("How many singers are there?", {"other"}));
    CHECK(src.conflicts() == 1);
    CHECK(src.size() == 1);
    CHECK(src.match("How many singers are there?") == question_match::exact);
    CHECK(src.match("how many Singers are there\xEF\xBC\x9F") == question_match::loose);
    CHECK(src.at("HOW MANY SINGERS ARE THERE") == std::vector<std::string>{"singers"});
    CHECK(src.match("How many singers are here?") == question_match::none);
    try {
        (void)src.at("How many bands are there?");
        FAIL("expected missing_recording_error");
    } catch (const missing_recording_error& e) {
        CHECK(e.question() == "How many bands are there?");
        CHECK(std::string(e.what()) ==
              "test: no recorded answer for question \"How many bands are there?\"");
    }
    // Two different recordings with the same loose key are ambiguous: only exact text matches.
    src.add("Is it 'red'?", {"a"});
    src.add("Is it \"red\"?", {"b"});
    CHECK(src.match("is it red") == question_match::none);
    CHECK(src.at("Is it \"red\"?") == std::vector<std::string>{"b"});
}

TEST_CASE("JAR and CRUSH loaders check structure and alignment", "[rewriting][replay]") {
    test::temp_dir dir;
    const auto decomp = dir.path() / "decomp.json";
    const auto dev = dir.path() / "dev.json";
    write(decomp, R"([["singers:name", "singers:age"], ["concerts"]])");
    write(dev, R"([{"question": "Name and age of singers?"}, {"question": "How many concerts?"}])");
    const auto src = load_jar_decompositions(decomp, dev);
    CHECK(src.size() == 2);
    CHECK(src.kind() == recording_kind::decomposition);
    CHECK(src.completion("How many concerts?") == "concerts");
    CHECK(src.completion("Name and age of singers?") == "singers:name\nsingers:age");

    write(dev, R"([{"question": "Name and age of singers?"}])");
    CHECK_THROWS_WITH(load_jar_decompositions(decomp, dev),
                      Catch::Contains("2 decompositions") && Catch::Contains("1 questions"));
    write(dev, R"([{"question": "a"}, {"text": "b"}])");
    CHECK_THROWS_WITH(load_jar_decompositions(decomp, dev),
                      Catch::Contains("[1]: missing field 'question'"));
    write(decomp, R"([["a"], [1]])");
    write(dev, R"([{"question": "a"}, {"question": "b"}])");
    CHECK_THROWS_AS(load_jar_decompositions(decomp, dev), schema_error);
    write(decomp, "[[");
    CHECK_THROWS_AS(load_jar_decompositions(decomp, dev), parse_error);
    CHECK_THROWS_AS(load_jar_decompositions(dir.path() / "none.json", dev), io_error);

    const auto crush = dir.path() / "bird_dev.json";
    write(crush, R"js([{"question": "Top school?", "question_decomposition_hallucinate_schema_bird":
                     ["Schools(school_id, score)", "Scores(school_id, value)"]}])js");
    const auto cs = load_crush_recordings(crush);
    CHECK(cs.kind() == recording_kind::hallucinated_schema);
    CHECK(cs.completion("Top school?") == "Schools(school_id, score)\nScores(school_id, value)");
    write(crush, R"([{"question": "q", "question_decomposition_hallucinate_schema_bird": "x"}])");
    CHECK_THROWS_AS(load_crush_recordings(crush), schema_error);
}

TEST_CASE("replay LLM answers rendered prompts by their question line", "[rewriting][replay]") {
    replay_source src("rec", recording_kind::hallucinated_schema);
    src.add("Which pilots flew the most?", {"pilot(pilot_id, name)", "flight(pilot_id, hours)"});
    const auto llm = replay_llm(src);
    const auto prompts = prompt_set::from_directory(prompts_dir());
    const std::vector<std::string> batch = {
        prompts.render("crush_bird", {{"question", "Which pilots flew the most?"}}),
        "Question: an example\nQuestion:   Which pilots  flew the most?  \nSchema:"};
    const auto out = llm(batch);
    CHECK(out == std::vector<std::string>{"pilot(pilot_id, name)\nflight(pilot_id, hours)",
                                          "pilot(pilot_id, name)\nflight(pilot_id, hours)"});
    CHECK(extract_question("no marker") == std::nullopt);
    CHECK_THROWS_WITH(llm(std::vector<std::string>{"no marker here"}),
                      Catch::Contains("no 'Question:' line"));
    CHECK_THROWS_AS(llm(std::vector<std::string>{"Question: unknown?"}), missing_recording_error);

    // The same recording through the rewriters: prompt + replay + parser, or directly.
    const crush_rewriter via_llm(llm, prompts);
    const recorded_rewriter direct(src);
    const std::vector<rewrite_request> reqs = {{"Which pilots flew the most?", {}}};
    const rewrite_result expected{
        false, {"pilot.pilot_id", "pilot.name", "flight.pilot_id", "flight.hours"}};
    CHECK(via_llm.rewrite(reqs) == std::vector<rewrite_result>{expected});
    CHECK(direct.rewrite(reqs) == std::vector<rewrite_result>{expected});
}

// ---------------------------------------------------------------------------------------------
// LLM rewriters with fake LLMs

TEST_CASE("MURRE rewriter: no call for hop 1, one call per batch, None stops",
          "[rewriting][llm_rewriters]") {
    const auto cat = school();
    const auto prompts = prompt_set::from_directory(prompts_dir());
    auto calls = std::make_shared<std::atomic<int>>(0);
    const murre_rewriter rw(
        cat, constant_llm("Missing tables:\n- school.teacher(teacher id, name)", calls), prompts);
    const std::string q = "Who teaches Physics?";
    const auto p = rw.prompt({q, {course_t}});
    CHECK(p.find("Question: Who teaches Physics?\nRetrieved tables:\nschool.course(course id, "
                 "title, teacher id)\nMissing tables:") != std::string::npos);
    const auto out =
        rw.rewrite(std::vector<rewrite_request>{{q, {}}, {q, {course_t}}, {q, {course_t}}});
    CHECK(*calls == 1);
    CHECK(out[0] == rewrite_result{false, {q}});
    CHECK(out[1] == rewrite_result{false, {"school.teacher(teacher id, name)"}});
    CHECK(out[2] == out[1]);
    (void)rw.rewrite(std::vector<rewrite_request>{{q, {}}});
    CHECK(*calls == 1);  // hop 1 never asks

    const murre_rewriter stopper(cat, constant_llm("None."), prompts);
    CHECK(stopper.rewrite(std::vector<rewrite_request>{{q, {course_t, teacher_t}}})[0].stop);

    const murre_rewriter questions(cat,
                                   constant_llm("Remaining question: Which teacher teaches it?"),
                                   prompts, completion_form::question);
    CHECK(questions.rewrite(std::vector<rewrite_request>{{q, {course_t}}})[0] ==
          rewrite_result{false, {"Which teacher teaches it?"}});

    // Empty answers: fall back to the question, or raise on request.
    const murre_rewriter lenient(cat, constant_llm(""), prompts);
    CHECK(lenient.rewrite(std::vector<rewrite_request>{{q, {course_t}}})[0] ==
          rewrite_result{false, {q}});
    const murre_rewriter strict(cat, constant_llm(""), prompts, completion_form::tables,
                                on_parse_failure::raise);
    CHECK_THROWS_AS(strict.rewrite(std::vector<rewrite_request>{{q, {course_t}}}), llm_parse_error);
}

TEST_CASE("decomposition rewriter and LLM question generator", "[rewriting][llm_rewriters]") {
    const auto cat = school();
    const auto prompts = prompt_set::from_directory(prompts_dir());
    const decomposition_rewriter rw(constant_llm("1. student:name\n2. course:title"), prompts);
    CHECK(rw.rewrite(std::vector<rewrite_request>{{"q?", {}}})[0] ==
          rewrite_result{false, {"student:name", "course:title"}});

    int calls = 0;
    std::size_t sent = 0;
    const llm_fn llm = [&](std::span<const std::string> batch) {
        ++calls;
        sent += batch.size();
        std::vector<std::string> out;
        for (const auto& p : batch)
            out.push_back(p.find("Table: school.student(") != std::string::npos
                              ? "Sure! Here is a question:\n\"How old is each student?\""
                              : "What does each teacher teach?\nIt uses the name column.");
        return out;
    };
    const llm_question_generator gen(cat, llm, prompts);
    const std::vector<table_id> ids = {student_t, student_t, teacher_t};
    CHECK(gen.generate(ids) == std::vector<std::string>{"How old is each student?",
                                                        "How old is each student?",
                                                        "What does each teacher teach?"});
    CHECK(calls == 1);
    CHECK(sent == 2);  // the repeated table is asked once
    const llm_question_generator fallback(cat, constant_llm("   "), prompts);
    CHECK(fallback.generate(ids)[2] == template_question_generator(cat).generate(teacher_t));
}

// ---------------------------------------------------------------------------------------------
// Replay coverage against the real recorded outputs ($TABRET_DATA_DIR)

namespace {

struct coverage {
    std::size_t exact = 0, loose = 0, none = 0;
};

coverage count_matches(const replay_source& src, const json& questions, const char* field) {
    coverage c;
    for (const auto& q : questions) {
        switch (src.match(q[field].get<std::string>())) {
            case question_match::exact:
                ++c.exact;
                break;
            case question_match::loose:
                ++c.loose;
                break;
            case question_match::none:
                ++c.none;
                break;
        }
    }
    return c;
}

json read_json(const std::filesystem::path& p) { return json::parse(read_text_file(p)); }

}  // namespace

TEST_CASE("replay coverage: JAR decompositions for SpiderUnion and BirdUnion",
          "[rewriting][replay][data]") {
    const auto dir = test::data_dir();
    if (!dir) return;
    const auto spider = load_jar_decompositions(*dir / "jar/data/spider/decomp.json",
                                                *dir / "jar/data/spider/dev.json");
    CHECK(spider.size() == 1034);  // Spider dev has no repeated question
    const auto spider_union = read_json(*dir / "murre/dataset/spider/dev.json");
    REQUIRE(spider_union.size() == 658);
    const auto s = count_matches(spider, spider_union, "utterance");
    CHECK(s.exact == 658);  // every SpiderUnion question, verbatim after whitespace folding

    const auto bird = load_jar_decompositions(*dir / "jar/data/bird/decomp.json",
                                              *dir / "jar/data/bird/dev.json");
    CHECK(bird.size() == 1533);  // one question appears twice (same decomposition both times)
    CHECK(bird.conflicts() == 0);
    const auto bird_union = read_json(*dir / "bird/dev.json");  // newest revision, = JAR's
    REQUIRE(bird_union.size() == 1534);
    const auto b = count_matches(bird, bird_union, "question");
    CHECK(b.exact == 1534);

    // MURRE's BirdUnion file is an intermediate BIRD revision: 109 of its questions were edited
    // between it and the newest one; case/punctuation absorbs 4 of them, 105 stay unmatched.
    const auto murre_bird = read_json(*dir / "murre/dataset/bird/dev.json");
    const auto m = count_matches(bird, murre_bird, "utterance");
    CHECK(m.exact == 1425);
    CHECK(m.loose == 4);
    CHECK(m.none == 105);

    // Each recording survives the replay round trip through the decomposition parser.
    std::size_t differs = 0;
    for (const auto* src : {&spider, &bird}) {
        const auto fn = recorded_decompositions(std::make_shared<const replay_source>(*src));
        const auto& questions = src == &spider ? read_json(*dir / "jar/data/spider/dev.json")
                                               : read_json(*dir / "jar/data/bird/dev.json");
        for (const auto& q : questions) {
            const auto text = q["question"].get<std::string>();
            if (parse_decomposition(src->completion(text)) != fn(text)) ++differs;
        }
    }
    CHECK(differs == 0);
}

TEST_CASE("replay coverage: CRUSH hallucinated schemas for BirdUnion",
          "[rewriting][replay][data]") {
    const auto dir = test::data_dir();
    if (!dir) return;
    const auto crush = load_crush_recordings(*dir / "crush4sql/data/bird_dev.json");
    CHECK(crush.size() == 1533);  // one question appears twice (same schema both times)
    CHECK(crush.conflicts() == 0);
    const auto own = read_json(*dir / "crush4sql/data/bird_dev.json");  // oldest BIRD revision
    REQUIRE(own.size() == 1534);
    CHECK(count_matches(crush, own, "question").exact == 1534);

    // Against the newest revision (bird/dev.json, aligned by question_id with CRUSH's file):
    // 180 questions differ in text. 12 differ only in case, punctuation, quote style or
    // mis-decoded UTF-8 in CRUSH's copy ("cardsï¼Ÿ") and match loosely; 168 were edited in
    // content (other values, numbers, wording) and have no recording.
    const auto newest = read_json(*dir / "bird/dev.json");
    const auto n = count_matches(crush, newest, "question");
    CHECK(n.exact == 1354);
    CHECK(n.loose == 12);
    CHECK(n.none == 168);
    // Against MURRE's intermediate revision: 76 differ, 10 of them only loosely.
    const auto murre_bird = read_json(*dir / "murre/dataset/bird/dev.json");
    const auto m = count_matches(crush, murre_bird, "utterance");
    CHECK(m.exact == 1458);
    CHECK(m.loose == 10);
    CHECK(m.none == 66);

    // Every recorded schema parses into probes without the whole-answer fallback, one probe per
    // recorded column; the full batch through the crush_bird prompt and the replay LLM is one
    // call and agrees with the direct recorded rewriter.
    auto shared = std::make_shared<const replay_source>(
        load_crush_recordings(*dir / "crush4sql/data/bird_dev.json"));
    std::vector<rewrite_request> reqs;
    std::size_t columns = 0, probes = 0;
    for (const auto& q : own) {
        const auto text = q["question"].get<std::string>();
        reqs.push_back({text, {}});
        for (const auto& item : shared->at(text))
            columns += static_cast<std::size_t>(std::count(item.begin(), item.end(), ',')) + 1;
        probes += parse_hallucinated_schema(shared->completion(text), schema_fallback::fail).size();
    }
    CHECK(probes == columns);
    auto calls = std::make_shared<std::atomic<int>>(0);
    const llm_fn replay = replay_llm(shared);
    const llm_fn counted = [&](std::span<const std::string> batch) {
        ++*calls;
        return replay(batch);
    };
    const crush_rewriter via_llm(counted, prompt_set::from_directory(prompts_dir()), "crush_bird",
                                 on_parse_failure::raise);
    const auto a = via_llm.rewrite(reqs);
    CHECK(*calls == 1);
    CHECK(a == recorded_rewriter(shared).rewrite(reqs));
}
