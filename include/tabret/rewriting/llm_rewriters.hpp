#pragma once
/// @file rewriting/llm_rewriters.hpp
/// @brief Rewriters that ask an LLM: render a prompt per request, make one deduplicated batch
/// call, parse each answer. CRUSH (hallucinated schema), MURRE (completion, with or without
/// tabulation), JAR (decomposition) and RE's table → question generator.

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tabret/catalog.hpp"
#include "tabret/rewriting/llm.hpp"
#include "tabret/rewriting/offline.hpp"
#include "tabret/rewriting/parsers.hpp"
#include "tabret/rewriting/prompts.hpp"
#include "tabret/rewriting/replay_llm.hpp"
#include "tabret/rewriting/rewriter.hpp"
#include "tabret/serialize.hpp"

namespace tabret {

/** @brief What an LLM rewriter does with an answer that does not parse. */
enum class on_parse_failure {
    use_question,  ///< Fall back to the (normalised) question as the only query; no stop.
    raise,         ///< Let the llm_parse_error propagate.
};

namespace detail::rw {

/// Renders one prompt per request, calls @p llm once with the distinct prompts, and maps
/// (answer, request) → result with @p parse, applying the failure policy.
template <class Parse>
std::vector<rewrite_result> ask_and_parse(const llm_fn& llm,
                                          std::span<const rewrite_request> requests,
                                          const std::vector<std::string>& prompts,
                                          on_parse_failure policy, Parse&& parse) {
    const auto answers = dedup_call(llm, prompts);
    std::vector<rewrite_result> out;
    out.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        try {
            out.push_back(parse(answers[i], requests[i]));
        } catch (const llm_parse_error&) {
            if (policy == on_parse_failure::raise) throw;
            out.push_back({false, {normalize_question(requests[i].question)}});
        }
    }
    return out;
}

/// One prompt per question from @p t; each parsed item's text() becomes a query.
template <class Parse>
std::vector<rewrite_result> ask_per_question(const llm_fn& llm, const prompt_template& t,
                                             std::span<const rewrite_request> requests,
                                             on_parse_failure policy, Parse parse) {
    std::vector<std::string> prompts;
    for (const auto& r : requests)
        prompts.push_back(t.render({{"question", normalize_question(r.question)}}));
    return ask_and_parse(llm, requests, prompts, policy,
                         [&](const std::string& answer, const rewrite_request&) {
                             rewrite_result res;
                             for (const auto& item : parse(answer))
                                 res.queries.push_back(item.text());
                             return res;
                         });
}

}  // namespace detail::rw

/**
 * @brief CRUSH4SQL: one prompt per question (`crush_spider` or `crush_bird`), the answer parsed
 * into probes; queries = the probes' `table.column` texts (the path is ignored; never stops).
 * Embedding a probe alone or in the question's context is the retriever's choice.
 * Thread-safe if the LLM is.
 */
class crush_rewriter {
  public:
    crush_rewriter(llm_fn llm, const prompt_set& prompts,
                   std::string_view template_name = "crush_bird",
                   on_parse_failure policy = on_parse_failure::use_question)
        : llm_(std::move(llm)), template_(prompts.at(template_name)), policy_(policy) {}

    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        return detail::rw::ask_per_question(
            llm_, template_, requests, policy_,
            [](const std::string& answer) { return parse_hallucinated_schema(answer); });
    }

  private:
    llm_fn llm_;
    prompt_template template_;
    on_parse_failure policy_;
};

/**
 * @brief MURRE: for a non-empty path, asks for the missing tables (`murre_tabulated`) or for a
 * rewritten question (`murre_question`, completion_form::question), given the question and the
 * path's tables as `db.table(cols)` lines (natural-language names); `None` → stop. An empty path
 * makes no call: the query is the question itself (hop 1). Stopped beams are simply not asked
 * again by the caller; identical prompts in a batch are sent once. Thread-safe if the LLM is.
 *
 * Holds a reference to the catalog, which must outlive it.
 */
class murre_rewriter {
  public:
    murre_rewriter(const catalog& cat, llm_fn llm, const prompt_set& prompts,
                   completion_form form = completion_form::tables,
                   on_parse_failure policy = on_parse_failure::use_question)
        : cat_(&cat),
          llm_(std::move(llm)),
          template_(
              prompts.at(form == completion_form::tables ? "murre_tabulated" : "murre_question")),
          form_(form),
          policy_(policy) {}

    /** @brief The prompt for one request with a non-empty path. */
    [[nodiscard]] std::string prompt(const rewrite_request& r) const {
        std::vector<std::string> tables;
        for (auto t : r.path) tables.push_back(serialize_table(*cat_, t));
        return template_.render({{"question", normalize_question(r.question)},
                                 {"tables", fmt::format("{}", fmt::join(tables, "\n"))}});
    }

    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        std::vector<rewrite_result> out(requests.size());
        std::vector<rewrite_request> asked;
        std::vector<std::size_t> where;
        std::vector<std::string> prompts;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (requests[i].path.empty()) {
                out[i] = {false, {normalize_question(requests[i].question)}};
                continue;
            }
            asked.push_back(requests[i]);
            where.push_back(i);
            prompts.push_back(prompt(requests[i]));
        }
        const auto form = form_;
        auto results =
            detail::rw::ask_and_parse(llm_, asked, prompts, policy_,
                                      [form](const std::string& answer, const rewrite_request&) {
                                          auto c = parse_completion(answer, form);
                                          return rewrite_result{c.stop, std::move(c.lines)};
                                      });
        for (std::size_t k = 0; k < where.size(); ++k) out[where[k]] = std::move(results[k]);
        return out;
    }

  private:
    const catalog* cat_;
    llm_fn llm_;
    prompt_template template_;
    completion_form form_;
    on_parse_failure policy_;
};

/**
 * @brief JAR-style decomposition: one prompt per question (`jar_decompose`); queries = the
 * sub-queries as `concept:attribute` texts (path ignored; never stops). Thread-safe if the LLM is.
 */
class decomposition_rewriter {
  public:
    decomposition_rewriter(llm_fn llm, const prompt_set& prompts,
                           on_parse_failure policy = on_parse_failure::use_question)
        : llm_(std::move(llm)), template_(prompts.at("jar_decompose")), policy_(policy) {}

    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        return detail::rw::ask_per_question(
            llm_, template_, requests, policy_,
            [](const std::string& answer) { return parse_decomposition(answer); });
    }

  private:
    llm_fn llm_;
    prompt_template template_;
    on_parse_failure policy_;
};

/**
 * @brief Reverse Engineering at index time: one `reverse_question` prompt per table (the table
 * as `db.table(cols)`, natural-language names), one deduplicated batch call, each answer parsed
 * with parse_question. An answer that does not parse falls back to template_question_generator.
 * Holds a reference to the catalog, which must outlive it. Thread-safe if the LLM is.
 */
class llm_question_generator {
  public:
    llm_question_generator(const catalog& cat, llm_fn llm, const prompt_set& prompts)
        : cat_(&cat),
          llm_(std::move(llm)),
          template_(prompts.at("reverse_question")),
          fallback_(cat) {}

    [[nodiscard]] std::vector<std::string> generate(std::span<const table_id> tables) const {
        std::vector<std::string> prompts;
        for (auto t : tables)
            prompts.push_back(template_.render({{"table", serialize_table(*cat_, t)}}));
        const auto answers = dedup_call(llm_, prompts);
        std::vector<std::string> out;
        for (std::size_t i = 0; i < tables.size(); ++i) {
            try {
                out.push_back(parse_question(answers[i]));
            } catch (const llm_parse_error&) {
                out.push_back(fallback_.generate(tables[i]));
            }
        }
        return out;
    }

  private:
    const catalog* cat_;
    llm_fn llm_;
    prompt_template template_;
    template_question_generator fallback_;
};

static_assert(QueryRewriter<crush_rewriter>);
static_assert(QueryRewriter<murre_rewriter>);
static_assert(QueryRewriter<decomposition_rewriter>);

}  // namespace tabret
