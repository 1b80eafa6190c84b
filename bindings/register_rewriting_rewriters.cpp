// Query rewriters: RewriteRequest and RewriteResult, the built-in rewriters and question
// generators, and to_rewriter, which turns a built-in or Python rewriter into one
// callback_rewriter.
#include <tabret/rewriting/callback_rewriter.hpp>
#include <tabret/rewriting/llm_rewriters.hpp>
#include <tabret/rewriting/offline.hpp>
#include <tabret/rewriting/replay_llm.hpp>
#include <tabret/rewriting/rewriter.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "callbacks.hpp"
#include "choices.hpp"
#include "defaults.hpp"
#include "owner.hpp"
#include "register.hpp"
#include "rewriting.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

on_parse_failure to_policy(const std::string& s) {
    return choice<on_parse_failure>(
        "on_parse_failure", s,
        {{"use_question", on_parse_failure::use_question}, {"raise", on_parse_failure::raise}});
}

removal_output to_output(const std::string& s) {
    return choice<removal_output>(
        "output", s, {{"tabulated", removal_output::tabulated}, {"terms", removal_output::terms}});
}

/// A list of RewriteRequest or str (a question with an empty path).
std::vector<rewrite_request> to_requests(const py::object& requests) {
    if (py::isinstance<py::str>(requests) || !py::isinstance<py::iterable>(requests))
        throw py::type_error(fmt::format("requests must be a list of RewriteRequest or str, got {}",
                                         type_name(requests)));
    std::vector<rewrite_request> out;
    for (const auto& h : requests) {
        if (py::isinstance<py::str>(h))
            out.push_back({h.cast<std::string>(), {}});
        else if (py::isinstance<rewrite_request>(h))
            out.push_back(h.cast<rewrite_request>());
        else
            throw py::type_error(fmt::format(
                "a rewrite request must be a RewriteRequest or a str, got {}", type_name(h)));
    }
    return out;
}

/// A ReplaySource of kind decomposition, or a Python callable `str -> list[SubQuery | str]`
/// (called once per question, under the GIL).
decomposition_fn to_decomposition_fn(const py::object& d) {
    if (py::isinstance<replay_source>(d))
        return recorded_decompositions(snapshot(d.cast<const replay_source&>()));
    if (!PyCallable_Check(d.ptr()))
        throw py::type_error(fmt::format(
            "decompositions must be a ReplaySource or a callable str -> list[SubQuery | str], "
            "got {}",
            type_name(d)));
    auto held = keep(d);
    return [held](std::string_view question) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        const py::object answer = (*held)(lenient_str(question));
        if (py::isinstance<py::str>(answer) || !py::isinstance<py::iterable>(answer))
            throw py::type_error(fmt::format(
                "a decomposition callable must return a list of SubQuery or str, got {}",
                type_name(answer)));
        std::vector<subquery> out;
        for (const auto& item : answer) {
            if (py::isinstance<subquery>(item)) {
                out.push_back(item.cast<subquery>());
            } else if (py::isinstance<py::str>(item)) {
                if (auto sq = detail::rw::to_subquery(item.cast<std::string>()))
                    out.push_back(std::move(*sq));
            } else {
                throw py::type_error(
                    fmt::format("a decomposition callable returned a {}, not a SubQuery or str",
                                type_name(item)));
            }
        }
        return out;
    };
}

/// Rewriters and generators that refer to a catalog hold a copy of it, so that Python can drop or
/// change its own.
using py_lexical_rewriter = owner<lexical_removal_rewriter, catalog>;
using py_coverage_rewriter = owner<coverage_removal_rewriter, catalog>;
using py_template_generator = owner<template_question_generator, catalog>;
using py_murre_rewriter = owner<murre_rewriter, catalog>;
using py_llm_generator = owner<llm_question_generator, catalog>;

/// The C++ rewriter or generator a bound object is, or holds.
template <class T>
const T& native(const T& r) {
    return r;
}
template <class T, class... Held>
const T& native(const owner<T, Held...>& r) {
    return r.get();
}

/// `rewrite(requests)` on a bound rewriter: requests converted under the GIL, rewritten without.
template <class R>
void def_rewrite(py::class_<R, std::shared_ptr<R>>& c) {
    c.def(
        "rewrite",
        [](const R& r, const py::object& requests) {
            const auto reqs = to_requests(requests);
            py::gil_scoped_release release;
            return native(r).rewrite(reqs);
        },
        py::arg("requests"));
}

/// `generate(tables)` on a bound question generator, without the GIL.
template <class G>
void def_generate(py::class_<G, std::shared_ptr<G>>& c) {
    c.def(
        "generate",
        [](const G& g, const std::vector<table_id>& tables) { return g.get().generate(tables); },
        py::arg("tables"), py::call_guard<py::gil_scoped_release>());
}

/// A rewriter held by Python (holder type H), called without the GIL.
template <class H>
std::optional<callback_rewriter> native_rewriter(const py::object& r) {
    if (!py::isinstance<H>(r)) return std::nullopt;
    auto held = r.cast<std::shared_ptr<H>>();
    return callback_rewriter(
        [held](std::span<const rewrite_request> requests) {
            return native(*held).rewrite(requests);
        },
        type_name(r));
}

/// A Python object with `rewrite(list[RewriteRequest]) -> list[RewriteResult]`, entered once
/// per batch with the GIL.
callback_rewriter python_rewriter(const py::object& r) {
    if (!py::hasattr(r, "rewrite"))
        throw py::type_error(fmt::format(
            "rewriter must have rewrite(requests) -> list[RewriteResult], got {}", type_name(r)));
    auto held = keep(r);
    auto name = type_name(r);
    return callback_rewriter(
        [held, name](std::span<const rewrite_request> requests) {
            py::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            py::list batch(requests.size());
            for (std::size_t i = 0; i < requests.size(); ++i) batch[i] = py::cast(requests[i]);
            const py::object answer = held->attr("rewrite")(batch);
            if (py::isinstance<py::str>(answer) || !py::isinstance<py::sequence>(answer))
                throw py::type_error(
                    fmt::format("rewriter '{}' must return a list of RewriteResult, got {}", name,
                                type_name(answer)));
            std::vector<rewrite_result> out;
            for (const auto& item : answer) {
                if (!py::isinstance<rewrite_result>(item))
                    throw py::type_error(fmt::format(
                        "rewriter '{}' returned a {}, not a RewriteResult", name, type_name(item)));
                out.push_back(item.cast<rewrite_result>());
            }
            return out;
        },
        name);
}

}  // namespace

void register_rewriting_rewriters(py::module_& m) {
    py::class_<rewrite_request> request(m, "RewriteRequest",
                                        "A question and the tables retrieved so far (hop order).");
    request
        .def(py::init([](std::string question, std::vector<table_id> path) {
                 return rewrite_request{std::move(question), std::move(path)};
             }),
             py::arg("question"), py::arg("path") = std::vector<table_id>{})
        .def_readonly("question", &rewrite_request::question)
        .def_readonly("path", &rewrite_request::path)
        .def("__repr__", [](const rewrite_request& r) {
            return fmt::format("RewriteRequest({}, path={})", quoted(r.question),
                               py::repr(py::cast(r.path)).cast<std::string>());
        });
    def_eq_hash(request, [](const rewrite_request& r) {
        return py::make_tuple(r.question, py::tuple(py::cast(r.path)));
    });

    py::class_<rewrite_result> result(m, "RewriteResult",
                                      "Search texts for the next hop, or stop.");
    result
        .def(py::init([](bool stop, std::vector<std::string> queries) {
                 return rewrite_result{stop, std::move(queries)};
             }),
             py::arg("stop") = false, py::arg("queries") = std::vector<std::string>{})
        .def_readonly("stop", &rewrite_result::stop)
        .def_readonly("queries", &rewrite_result::queries)
        .def("__repr__", [](const rewrite_result& r) {
            return fmt::format("RewriteResult(stop={}, queries={})", r.stop ? "True" : "False",
                               py::repr(py::cast(r.queries)).cast<std::string>());
        });
    def_eq_hash(result, [](const rewrite_result& r) {
        return py::make_tuple(r.stop, py::tuple(py::cast(r.queries)));
    });

    py::class_<py_lexical_rewriter, std::shared_ptr<py_lexical_rewriter>> lexical(
        m, "LexicalRemovalRewriter",
        "Drops the question's words the path covers, tabulates the rest, stops when none left.");
    def_init(lexical, py::init([](const catalog& c, const std::string& output) {
                 return std::make_shared<py_lexical_rewriter>(
                     [o = to_output(output)](const catalog& held) {
                         return lexical_removal_rewriter(held, o);
                     },
                     c);
             }),
             py::arg("catalog"), py::arg("output") = "tabulated")
        .def_static("content_terms", &lexical_removal_rewriter::content_terms, py::arg("question"))
        .def(
            "remaining_terms",
            [](const py_lexical_rewriter& r, const rewrite_request& req) {
                return r.get().remaining_terms(req);
            },
            py::arg("request"));
    def_rewrite(lexical);

    py::class_<py_coverage_rewriter, std::shared_ptr<py_coverage_rewriter>> coverage(
        m, "CoverageRemovalRewriter",
        "Drops the sub-queries the path covers, tabulates the rest, stops when none left.");
    def_init(
        coverage,
        py::init([](const catalog& c, const py::object& decompositions, const std::string& output) {
            return std::make_shared<py_coverage_rewriter>(
                [d = to_decomposition_fn(decompositions),
                 o = to_output(output)](const catalog& held) mutable {
                    return coverage_removal_rewriter(held, std::move(d), o);
                },
                c);
        }),
        py::arg("catalog"), py::arg("decompositions"), py::arg("output") = "tabulated")
        .def(
            "uncovered",
            [](const py_coverage_rewriter& r, const rewrite_request& req) {
                return r.get().uncovered(req);
            },
            py::arg("request"), py::call_guard<py::gil_scoped_release>());
    def_rewrite(coverage);

    py::class_<py_template_generator, std::shared_ptr<py_template_generator>> templated(
        m, "TemplateQuestionGenerator", "One template question per table (RE without an LLM).");
    templated.def(
        py::init([](const catalog& c, std::size_t max_columns) {
            return std::make_shared<py_template_generator>(
                [&](const catalog& held) { return template_question_generator(held, max_columns); },
                c);
        }),
        py::arg("catalog"), py::arg("max_columns") = 6);
    def_generate(templated);

    py::class_<recorded_rewriter, std::shared_ptr<recorded_rewriter>> recorded(
        m, "RecordedRewriter", "Answers from recordings by question directly, with no prompt.");
    recorded.def(py::init([](const replay_source& source) {
                     return std::make_shared<recorded_rewriter>(snapshot(source));
                 }),
                 py::arg("source"));
    def_rewrite(recorded);

    py::class_<crush_rewriter, std::shared_ptr<crush_rewriter>> crush(
        m, "CrushRewriter", "CRUSH4SQL: the question's hallucinated schema as probes.");
    crush.def(py::init([](const py::object& llm, const prompt_set& prompts,
                          const std::string& template_name, const std::string& policy) {
                  return std::make_shared<crush_rewriter>(to_llm(llm), prompts, template_name,
                                                          to_policy(policy));
              }),
              py::arg("llm"), py::arg("prompts"), py::arg("template") = "crush_bird",
              py::arg("on_parse_failure") = "use_question");
    def_rewrite(crush);

    py::class_<py_murre_rewriter, std::shared_ptr<py_murre_rewriter>> murre(
        m, "MurreRewriter", "MURRE: the missing tables (or a rewritten question) given the path.");
    murre
        .def(py::init([](const catalog& c, const py::object& llm, const prompt_set& prompts,
                         const std::string& form, const std::string& policy) {
                 return std::make_shared<py_murre_rewriter>(
                     [&, fn = to_llm(llm), f = to_form(form),
                      o = to_policy(policy)](const catalog& held) mutable {
                         return murre_rewriter(held, std::move(fn), prompts, f, o);
                     },
                     c);
             }),
             py::arg("catalog"), py::arg("llm"), py::arg("prompts"), py::arg("form") = "tables",
             py::arg("on_parse_failure") = "use_question")
        .def(
            "prompt",
            [](const py_murre_rewriter& r, const rewrite_request& req) {
                return r.get().prompt(req);
            },
            py::arg("request"));
    def_rewrite(murre);

    py::class_<decomposition_rewriter, std::shared_ptr<decomposition_rewriter>> decomposition(
        m, "DecompositionRewriter", "JAR-style decomposition into concept:attribute sub-queries.");
    decomposition.def(
        py::init([](const py::object& llm, const prompt_set& prompts, const std::string& policy) {
            return std::make_shared<decomposition_rewriter>(to_llm(llm), prompts,
                                                            to_policy(policy));
        }),
        py::arg("llm"), py::arg("prompts"), py::arg("on_parse_failure") = "use_question");
    def_rewrite(decomposition);

    py::class_<py_llm_generator, std::shared_ptr<py_llm_generator>> generator(
        m, "LLMQuestionGenerator", "Reverse Engineering: one LLM-written question per table.");
    generator.def(py::init([](const catalog& c, const py::object& llm, const prompt_set& prompts) {
                      return std::make_shared<py_llm_generator>(
                          [&, fn = to_llm(llm)](const catalog& held) mutable {
                              return llm_question_generator(held, std::move(fn), prompts);
                          },
                          c);
                  }),
                  py::arg("catalog"), py::arg("llm"), py::arg("prompts"));
    def_generate(generator);
}

callback_rewriter to_rewriter(const py::object& r) {
    if (auto c = native_rewriter<py_lexical_rewriter>(r)) return *c;
    if (auto c = native_rewriter<py_coverage_rewriter>(r)) return *c;
    if (auto c = native_rewriter<py_murre_rewriter>(r)) return *c;
    if (auto c = native_rewriter<recorded_rewriter>(r)) return *c;
    if (auto c = native_rewriter<crush_rewriter>(r)) return *c;
    if (auto c = native_rewriter<decomposition_rewriter>(r)) return *c;
    return python_rewriter(r);
}

}  // namespace tabret::bindings
