// The rewriting layer: LLM callbacks, the response cache, prompts, parsers, recorded answers and
// query rewriters. Enumerations are strings; every rewriter has the one call shape
// `rewrite(requests) -> results` and runs without the GIL (a Python LLM takes it once per batch).
#include <tabret/rewriting/callback_rewriter.hpp>
#include <tabret/rewriting/llm.hpp>
#include <tabret/rewriting/llm_rewriters.hpp>
#include <tabret/rewriting/offline.hpp>
#include <tabret/rewriting/parsers.hpp>
#include <tabret/rewriting/prompts.hpp>
#include <tabret/rewriting/replay_llm.hpp>
#include <tabret/rewriting/response_cache.hpp>
#include <tabret/rewriting/rewriter.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "callbacks.hpp"
#include "choices.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

/// A C++ LLM callback with a name (a replay, a cached LLM), callable from Python and used by the
/// rewriters without the GIL (whatever Python it wraps takes the GIL itself).
struct native_llm {
    llm_fn fn;
    std::string name;
};

std::string type_name(const py::handle& h) {
    return py::type::of(h).attr("__name__").cast<std::string>();
}

/// The `name` attribute of an LLM object if it is a str, else its (qualified) name.
std::string object_name(const py::object& obj) {
    if (py::hasattr(obj, "name")) {
        const py::object n = obj.attr("name");
        if (py::isinstance<py::str>(n)) return n.cast<std::string>();
    }
    if (py::hasattr(obj, "__qualname__")) return py::str(obj.attr("__qualname__"));
    return py::type::of(obj).attr("__qualname__").cast<std::string>();
}

schema_fallback to_fallback(const std::string& s) {
    return choice<schema_fallback>(
        "fallback", s,
        {{"whole_answer", schema_fallback::whole_answer}, {"fail", schema_fallback::fail}});
}

completion_form to_form(const std::string& s) {
    return choice<completion_form>(
        "form", s, {{"tables", completion_form::tables}, {"question", completion_form::question}});
}

on_parse_failure to_policy(const std::string& s) {
    return choice<on_parse_failure>(
        "on_parse_failure", s,
        {{"use_question", on_parse_failure::use_question}, {"raise", on_parse_failure::raise}});
}

removal_output to_output(const std::string& s) {
    return choice<removal_output>(
        "output", s, {{"tabulated", removal_output::tabulated}, {"terms", removal_output::terms}});
}

recording_kind to_recording_kind(const std::string& s) {
    return choice<recording_kind>("kind", s,
                                  {{"hallucinated_schema", recording_kind::hallucinated_schema},
                                   {"decomposition", recording_kind::decomposition}});
}

const char* kind_name(recording_kind k) {
    return k == recording_kind::decomposition ? "decomposition" : "hallucinated_schema";
}

const char* match_name(question_match m) {
    switch (m) {
        case question_match::exact:
            return "exact";
        case question_match::loose:
            return "loose";
        case question_match::none:
            break;
    }
    return "none";
}

/// A list of RewriteRequest or str (a question with an empty path).
std::vector<rewrite_request> to_requests(const py::object& requests) {
    if (py::isinstance<py::str>(requests) || !py::isinstance<py::iterable>(requests))
        throw py::type_error("requests must be a list of RewriteRequest or str, got " +
                             type_name(requests));
    std::vector<rewrite_request> out;
    for (const auto& h : requests) {
        if (py::isinstance<py::str>(h))
            out.push_back({h.cast<std::string>(), {}});
        else if (py::isinstance<rewrite_request>(h))
            out.push_back(h.cast<rewrite_request>());
        else
            throw py::type_error("a rewrite request must be a RewriteRequest or a str, got " +
                                 type_name(h));
    }
    return out;
}

std::shared_ptr<const replay_source> snapshot(const replay_source& source) {
    return std::make_shared<const replay_source>(source);
}

/// A ReplaySource of kind decomposition, or a Python callable `str -> list[SubQuery | str]`
/// (called once per question, under the GIL).
decomposition_fn to_decomposition_fn(const py::object& d) {
    if (py::isinstance<replay_source>(d))
        return recorded_decompositions(snapshot(d.cast<const replay_source&>()));
    if (!PyCallable_Check(d.ptr()))
        throw py::type_error(
            "decompositions must be a ReplaySource or a callable str -> list[SubQuery | str], "
            "got " +
            type_name(d));
    auto held = keep(d);
    return [held](std::string_view question) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        const py::object answer = (*held)(lenient_str(question));
        if (py::isinstance<py::str>(answer) || !py::isinstance<py::iterable>(answer))
            throw py::type_error(
                "a decomposition callable must return a list of SubQuery or str, "
                "got " +
                type_name(answer));
        std::vector<subquery> out;
        for (const auto& item : answer) {
            if (py::isinstance<subquery>(item)) {
                out.push_back(item.cast<subquery>());
            } else if (py::isinstance<py::str>(item)) {
                if (auto sq = detail::rw::to_subquery(item.cast<std::string>()))
                    out.push_back(std::move(*sq));
            } else {
                throw py::type_error("a decomposition callable returned a " + type_name(item) +
                                     ", not a SubQuery or str");
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

std::string quoted(const std::string& s) { return py::repr(lenient_str(s)).cast<std::string>(); }

void register_llm(py::module_& m) {
    py::class_<native_llm, std::shared_ptr<native_llm>>(
        m, "NativeLLM",
        "An LLM callback implemented in C++ (replay, cache); rewriters call it without the GIL.")
        .def(
            "__call__",
            [](const native_llm& l, const std::vector<std::string>& prompts) {
                py::gil_scoped_release release;
                return call_llm(l.fn, prompts, l.name);
            },
            py::arg("prompts"))
        .def_property_readonly("name", [](const native_llm& l) { return l.name; })
        .def("__repr__", [](const native_llm& l) { return "NativeLLM(" + quoted(l.name) + ")"; });

    m.def(
        "complete",
        [](const py::object& llm, const std::vector<std::string>& prompts) {
            const auto name = object_name(llm);
            const auto fn = to_llm(llm, name);
            py::gil_scoped_release release;
            return dedup_call(fn, prompts, name);
        },
        py::arg("llm"), py::arg("prompts"),
        "Sends each distinct prompt once, in one batch, and checks the answers.");

    py::class_<response_cache, std::shared_ptr<response_cache>>(
        m, "ResponseCache",
        "LLM answers by (model, prompt), in memory or in a SQLite database file (WAL, one "
        "transaction per put_many; safe for many threads and processes).")
        .def(py::init([](const std::optional<std::filesystem::path>& path) {
                 py::gil_scoped_release release;
                 return path ? std::make_shared<response_cache>(*path)
                             : std::make_shared<response_cache>();
             }),
             py::arg("path") = py::none())
        .def("find", &response_cache::find, py::arg("model"), py::arg("prompt"),
             py::call_guard<py::gil_scoped_release>())
        .def("put", &response_cache::put, py::arg("model"), py::arg("prompt"),
             py::arg("completion"), py::call_guard<py::gil_scoped_release>())
        .def(
            "put_many",
            [](response_cache& c, const std::string& model, const std::vector<std::string>& prompts,
               const std::vector<std::string>& completions) {
                py::gil_scoped_release release;
                c.put_many(model, prompts, completions);
            },
            py::arg("model"), py::arg("prompts"), py::arg("completions"))
        .def("import_jsonl", &response_cache::import_jsonl, py::arg("path"),
             py::call_guard<py::gil_scoped_release>(),
             "Copies the entries of a JSON-lines cache of earlier versions; returns their count.")
        .def("__len__", &response_cache::size, py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("truncated_lines", &response_cache::truncated_lines)
        .def_property_readonly("path", &response_cache::file)
        .def("__repr__", [](const response_cache& c) {
            return "ResponseCache(" +
                   (c.file() ? quoted(c.file()->string()) + ", " : std::string()) +
                   std::to_string(c.size()) + " entries)";
        });

    m.def(
        "cached_llm",
        [](const py::object& llm, const std::string& model, std::shared_ptr<response_cache> cache) {
            auto inner = cached_llm(to_llm(llm, model), model, *cache);
            auto fn = [inner = std::move(inner), cache](std::span<const std::string> prompts) {
                return inner(prompts);
            };
            return std::make_shared<native_llm>(native_llm{std::move(fn), model});
        },
        py::arg("llm"), py::arg("model"), py::arg("cache"),
        "Wraps llm with cache under the name model: hits are free, misses go in one batch.");
}

void register_prompts(py::module_& m) {
    py::class_<prompt_set>(m, "PromptSet", "Named prompt templates, `{placeholder}` syntax.")
        .def(py::init<>())
        .def_static("from_directory", &prompt_set::from_directory, py::arg("path"))
        .def("load_directory", &prompt_set::load_directory, py::arg("path"))
        .def("set", &prompt_set::set, py::arg("name"), py::arg("text"))
        .def("set_from_file", &prompt_set::set_from_file, py::arg("name"), py::arg("path"))
        .def("__contains__", &prompt_set::contains, py::arg("name"))
        .def("__len__", [](const prompt_set& s) { return s.names().size(); })
        .def("names", &prompt_set::names)
        .def(
            "text", [](const prompt_set& s, std::string_view name) { return s.at(name).text(); },
            py::arg("name"))
        .def(
            "placeholders",
            [](const prompt_set& s, std::string_view name) { return s.at(name).placeholders(); },
            py::arg("name"))
        .def("render", &prompt_set::render, py::arg("name"), py::arg("values"))
        .def("require_builtins", &prompt_set::require_builtins)
        .def("copy", [](const prompt_set& s) { return prompt_set(s); })
        .def("__repr__", [](const prompt_set& s) {
            return "PromptSet(" + std::to_string(s.names().size()) + " templates)";
        });

    m.def(
        "builtin_prompts",
        [] {
            std::map<std::string, std::vector<std::string>> out;
            for (const auto& spec : builtin_prompts())
                out[std::string(spec.name)] = {spec.required.begin(), spec.required.end()};
            return out;
        },
        "The built-in template names and the placeholders each must use.");
}

void register_parsers(py::module_& m) {
    py::class_<probe>(m, "Probe", "A hallucinated schema element: table and column.")
        .def(py::init([](std::string table, std::string column) {
                 return probe{std::move(table), std::move(column)};
             }),
             py::arg("table") = "", py::arg("column") = "")
        .def_readonly("table", &probe::table)
        .def_readonly("column", &probe::column)
        .def_property_readonly("text", &probe::text)
        .def(
            "__eq__", [](const probe& a, const probe& b) { return a == b; }, py::is_operator())
        .def("__hash__", [](const probe& p) { return py::hash(py::make_tuple(p.table, p.column)); })
        .def("__repr__", [](const probe& p) {
            return "Probe(" + quoted(p.table) + ", " + quoted(p.column) + ")";
        });

    py::class_<subquery>(m, "SubQuery", "A `concept:attribute` sub-query; attribute may be empty.")
        .def(py::init([](std::string concept_name, std::string attribute) {
                 return subquery{std::move(concept_name), std::move(attribute)};
             }),
             py::arg("concept"), py::arg("attribute") = "")
        .def_readonly("concept", &subquery::concept_name)
        .def_readonly("attribute", &subquery::attribute)
        .def_property_readonly("text", &subquery::text)
        .def(
            "__eq__", [](const subquery& a, const subquery& b) { return a == b; },
            py::is_operator())
        .def(
            "__hash__",
            [](const subquery& s) { return py::hash(py::make_tuple(s.concept_name, s.attribute)); })
        .def("__repr__", [](const subquery& s) {
            return "SubQuery(" + quoted(s.concept_name) + ", " + quoted(s.attribute) + ")";
        });

    py::class_<completion>(m, "Completion", "A MURRE completion: stop, or one query per line.")
        .def(py::init([](bool stop, std::vector<std::string> lines) {
                 return completion{stop, std::move(lines)};
             }),
             py::arg("stop") = false, py::arg("lines") = std::vector<std::string>{})
        .def_readonly("stop", &completion::stop)
        .def_readonly("lines", &completion::lines)
        .def(
            "__eq__", [](const completion& a, const completion& b) { return a == b; },
            py::is_operator())
        .def("__hash__",
             [](const completion& c) {
                 return py::hash(py::make_tuple(c.stop, py::tuple(py::cast(c.lines))));
             })
        .def("__repr__", [](const completion& c) {
            return "Completion(stop=" + std::string(c.stop ? "True" : "False") +
                   ", lines=" + py::repr(py::cast(c.lines)).cast<std::string>() + ")";
        });

    m.def(
        "parse_hallucinated_schema",
        [](const std::string& text, const std::string& fallback) {
            const auto f = to_fallback(fallback);
            py::gil_scoped_release release;
            return parse_hallucinated_schema(text, f);
        },
        py::arg("text"), py::arg("fallback") = "whole_answer");
    m.def(
        "parse_completion",
        [](const std::string& text, const std::string& form) {
            const auto f = to_form(form);
            py::gil_scoped_release release;
            return parse_completion(text, f);
        },
        py::arg("text"), py::arg("form") = "tables");
    m.def("parse_decomposition", &parse_decomposition, py::arg("text"),
          py::call_guard<py::gil_scoped_release>());
    m.def("parse_question", &parse_question, py::arg("text"),
          py::call_guard<py::gil_scoped_release>());
}

void register_replay(py::module_& m) {
    py::class_<replay_source, std::shared_ptr<replay_source>>(
        m, "ReplaySource", "Recorded LLM answers keyed by question text (exact, then loose).")
        .def(py::init([](std::string name, const std::string& kind) {
                 return std::make_shared<replay_source>(std::move(name), to_recording_kind(kind));
             }),
             py::arg("name"), py::arg("kind"))
        .def("add", &replay_source::add, py::arg("question"), py::arg("items"))
        .def(
            "match",
            [](const replay_source& s, std::string_view q) { return match_name(s.match(q)); },
            py::arg("question"))
        .def(
            "find",
            [](const replay_source& s,
               std::string_view q) -> std::optional<std::vector<std::string>> {
                if (const auto* items = s.find(q)) return *items;
                return std::nullopt;
            },
            py::arg("question"))
        .def("__getitem__", &replay_source::at, py::arg("question"))
        .def(
            "__contains__",
            [](const replay_source& s, std::string_view q) { return s.find(q) != nullptr; },
            py::arg("question"))
        .def("completion", &replay_source::completion, py::arg("question"))
        .def("__len__", &replay_source::size)
        .def_property_readonly("name", &replay_source::name)
        .def_property_readonly("kind", [](const replay_source& s) { return kind_name(s.kind()); })
        .def_property_readonly("conflicts", &replay_source::conflicts)
        .def("__repr__", [](const replay_source& s) {
            return "ReplaySource(" + quoted(s.name()) + ", " + kind_name(s.kind()) + ", " +
                   std::to_string(s.size()) + " questions)";
        });

    m.def(
        "load_crush_recordings",
        [](const std::filesystem::path& path) {
            py::gil_scoped_release release;
            return std::make_shared<replay_source>(load_crush_recordings(path));
        },
        py::arg("path"));
    m.def(
        "load_jar_decompositions",
        [](const std::filesystem::path& decomp, const std::filesystem::path& dev) {
            py::gil_scoped_release release;
            return std::make_shared<replay_source>(load_jar_decompositions(decomp, dev));
        },
        py::arg("decompositions"), py::arg("questions"));
    m.def(
        "replay_llm",
        [](const replay_source& source, const std::string& name) {
            return std::make_shared<native_llm>(
                native_llm{replay_llm(snapshot(source)), name.empty() ? source.name() : name});
        },
        py::arg("source"), py::arg("name") = "",
        "An LLM answering each prompt's last 'Question: ' line from a snapshot of source.");
    m.def("extract_question", &extract_question, py::arg("prompt"));
    m.def("normalize_question", &normalize_question, py::arg("question"));
    m.def("loose_question_key", &loose_question_key, py::arg("question"));
}

void register_rewriters(py::module_& m) {
    py::class_<rewrite_request>(m, "RewriteRequest",
                                "A question and the tables retrieved so far (hop order).")
        .def(py::init([](std::string question, std::vector<table_id> path) {
                 return rewrite_request{std::move(question), std::move(path)};
             }),
             py::arg("question"), py::arg("path") = std::vector<table_id>{})
        .def_readonly("question", &rewrite_request::question)
        .def_readonly("path", &rewrite_request::path)
        .def(
            "__eq__", [](const rewrite_request& a, const rewrite_request& b) { return a == b; },
            py::is_operator())
        .def("__hash__",
             [](const rewrite_request& r) {
                 return py::hash(py::make_tuple(r.question, py::tuple(py::cast(r.path))));
             })
        .def("__repr__", [](const rewrite_request& r) {
            return "RewriteRequest(" + quoted(r.question) +
                   ", path=" + py::repr(py::cast(r.path)).cast<std::string>() + ")";
        });

    py::class_<rewrite_result>(m, "RewriteResult", "Search texts for the next hop, or stop.")
        .def(py::init([](bool stop, std::vector<std::string> queries) {
                 return rewrite_result{stop, std::move(queries)};
             }),
             py::arg("stop") = false, py::arg("queries") = std::vector<std::string>{})
        .def_readonly("stop", &rewrite_result::stop)
        .def_readonly("queries", &rewrite_result::queries)
        .def(
            "__eq__", [](const rewrite_result& a, const rewrite_result& b) { return a == b; },
            py::is_operator())
        .def("__hash__",
             [](const rewrite_result& r) {
                 return py::hash(py::make_tuple(r.stop, py::tuple(py::cast(r.queries))));
             })
        .def("__repr__", [](const rewrite_result& r) {
            return "RewriteResult(stop=" + std::string(r.stop ? "True" : "False") +
                   ", queries=" + py::repr(py::cast(r.queries)).cast<std::string>() + ")";
        });

    py::class_<py_lexical_rewriter, std::shared_ptr<py_lexical_rewriter>> lexical(
        m, "LexicalRemovalRewriter",
        "Drops the question's words the path covers, tabulates the rest, stops when none left.");
    lexical
        .def(py::init([](const catalog& c, const std::string& output) {
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
    coverage
        .def(py::init(
                 [](const catalog& c, const py::object& decompositions, const std::string& output) {
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

}  // namespace

llm_fn to_llm(const py::object& llm, const std::string& name) {
    if (py::isinstance<native_llm>(llm)) return llm.cast<const native_llm&>().fn;
    if (py::hasattr(llm, "native")) {
        const py::object native = llm.attr("native");
        if (py::isinstance<native_llm>(native)) return native.cast<const native_llm&>().fn;
    }
    if (!PyCallable_Check(llm.ptr()))
        throw py::type_error("llm must be a callable list[str] -> list[str], got " +
                             type_name(llm));
    return python_llm_fn(llm, name.empty() ? object_name(llm) : name);
}

namespace {

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
        throw py::type_error("rewriter must have rewrite(requests) -> list[RewriteResult], got " +
                             type_name(r));
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
                throw py::type_error("rewriter '" + name +
                                     "' must return a list of RewriteResult, got " +
                                     type_name(answer));
            std::vector<rewrite_result> out;
            for (const auto& item : answer) {
                if (!py::isinstance<rewrite_result>(item))
                    throw py::type_error("rewriter '" + name + "' returned a " + type_name(item) +
                                         ", not a RewriteResult");
                out.push_back(item.cast<rewrite_result>());
            }
            return out;
        },
        name);
}

}  // namespace

callback_rewriter to_rewriter(const py::object& r) {
    if (auto c = native_rewriter<py_lexical_rewriter>(r)) return *c;
    if (auto c = native_rewriter<py_coverage_rewriter>(r)) return *c;
    if (auto c = native_rewriter<py_murre_rewriter>(r)) return *c;
    if (auto c = native_rewriter<recorded_rewriter>(r)) return *c;
    if (auto c = native_rewriter<crush_rewriter>(r)) return *c;
    if (auto c = native_rewriter<decomposition_rewriter>(r)) return *c;
    return python_rewriter(r);
}

void register_rewriting(py::module_& m) {
    register_llm(m);
    register_prompts(m);
    register_parsers(m);
    register_replay(m);
    register_rewriters(m);
}

}  // namespace tabret::bindings
