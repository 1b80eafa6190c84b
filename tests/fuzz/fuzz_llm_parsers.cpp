// libFuzzer target: every parser of LLM text. The first byte picks the entry point, the rest is
// the answer (or prompt, template, recording, cache file):
//   0 parse_hallucinated_schema (whole-answer fallback)   1 parse_hallucinated_schema (fail)
//   2 parse_completion (tables)                            3 parse_completion (question)
//   4 parse_question                                       5 parse_decomposition
//   6 extract_question (replay by prompt)                  7 the LLM rewriters (CRUSH, MURRE
//     both forms, JAR, RE question generator) over an LLM that answers with the input
//   8 recorded_rewriter over the input as recorded items   9 prompt_template parse + render
//  10 response_cache importing the input as a JSON-lines file
// Successful results must satisfy the parsers' documented contracts (non-empty results).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "tabret/catalog.hpp"
#include "tabret/rewriting/llm_rewriters.hpp"
#include "tabret/rewriting/parsers.hpp"
#include "tabret/rewriting/prompts.hpp"
#include "tabret/rewriting/replay_llm.hpp"
#include "tabret/rewriting/response_cache.hpp"
#include "tabret/rewriting/text.hpp"

namespace {

using namespace tabret;
using tabret::fuzz::require;

constexpr std::size_t mode_count = 11;

const catalog& tiny_catalog() {
    static const catalog cat = [] {
        catalog c;
        const auto db = c.add_database("school");
        const auto student = c.add_table(db, "student", "student");
        c.add_column(student, "id", "INT");
        c.add_column(student, "name", "TEXT");
        const auto club = c.add_table(db, "club", "club");
        c.add_column(club, "club_id", "INT");
        return c;
    }();
    return cat;
}

const prompt_set& prompts() {
    static const prompt_set set = prompt_set::from_directory(TABRET_FUZZ_PROMPTS_DIR);
    return set;
}

void check_probes(const std::vector<probe>& probes) {
    require(!probes.empty());
    for (const auto& p : probes) require(!p.text().empty());
}

void check_queries(const std::vector<rewrite_result>& results, std::size_t n) {
    require(results.size() == n);
    for (const auto& r : results) {
        require(!r.stop || r.queries.empty());
        for (const auto& q : r.queries) require(!q.empty());
    }
}

void run_rewriters(const std::string& answer, std::uint8_t selector) {
    const llm_fn llm = [&answer](std::span<const std::string> batch) {
        return std::vector<std::string>(batch.size(), answer);
    };
    const auto policy = selector & 1 ? on_parse_failure::raise : on_parse_failure::use_question;
    const std::vector<rewrite_request> requests = {{"How many students?", {}},
                                                   {"Which club has most students?", {0}},
                                                   {"Names of club members?", {0, 1}}};
    check_queries(crush_rewriter(llm, prompts(), "crush_spider", policy).rewrite(requests),
                  requests.size());
    for (const auto form : {completion_form::tables, completion_form::question})
        check_queries(
            murre_rewriter(tiny_catalog(), llm, prompts(), form, policy).rewrite(requests),
            requests.size());
    check_queries(decomposition_rewriter(llm, prompts(), policy).rewrite(requests),
                  requests.size());
    const std::vector<table_id> tables = {0, 1};
    const auto questions = llm_question_generator(tiny_catalog(), llm, prompts()).generate(tables);
    require(questions.size() == tables.size());
    for (const auto& q : questions) require(!q.empty());
}

void run_recorded(std::string_view text, std::uint8_t selector) {
    const auto kind =
        selector & 1 ? recording_kind::decomposition : recording_kind::hallucinated_schema;
    replay_source source("fuzz", kind);
    source.add("How many students?", detail::rw::split_lines(text));
    const std::vector<rewrite_request> requests = {{"How many students?", {}}};
    const auto results = recorded_rewriter(std::move(source)).rewrite(requests);
    require(results.size() == 1);
    for (const auto& q : results[0].queries) require(!q.empty());
}

void run_template(std::string_view text) {
    const prompt_template t("fuzz", std::string(text));
    prompt_values values;
    for (const auto& name : t.placeholders()) values[name] = "value";
    (void)t.render(values);
    if (!t.placeholders().empty()) {
        bool threw = false;
        try {
            (void)t.render({});
        } catch (const template_error&) {
            threw = true;
        }
        require(threw);
    }
}

void run_cache(std::string_view text) {
    const auto file = fuzz::scratch_dir() / "cache.jsonl";
    fuzz::write_file(file, text);
    response_cache cache;
    (void)cache.import_jsonl(file);
    (void)cache.size();
}

void run(std::uint8_t mode, std::string_view text) {
    const std::string answer(text);
    switch (mode % mode_count) {
        case 0:
            check_probes(parse_hallucinated_schema(text, schema_fallback::whole_answer));
            break;
        case 1:
            check_probes(parse_hallucinated_schema(text, schema_fallback::fail));
            break;
        case 2:
        case 3: {
            const auto c = parse_completion(
                text, mode % mode_count == 2 ? completion_form::tables : completion_form::question);
            require(c.stop ? c.lines.empty() : !c.lines.empty());
            for (const auto& l : c.lines) require(!l.empty());
            break;
        }
        case 4:
            require(!parse_question(text).empty());
            break;
        case 5: {
            const auto subqueries = parse_decomposition(text);
            require(!subqueries.empty());
            for (const auto& s : subqueries) require(!s.concept_name.empty());
            break;
        }
        case 6:
            (void)extract_question(text);
            break;
        case 7:
            run_rewriters(answer, mode / mode_count);
            break;
        case 8:
            run_recorded(text, mode / mode_count);
            break;
        case 9:
            run_template(text);
            break;
        default:
            run_cache(text);
            break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    tabret::fuzz::run_with_mode(data, size, run);
    return 0;
}
