// Prompts and parsers: PromptSet and the built-in templates; Probe, SubQuery and Completion, and
// the parsers of LLM answers into them.
#include <tabret/rewriting/llm_rewriters.hpp>
#include <tabret/rewriting/parsers.hpp>
#include <tabret/rewriting/prompts.hpp>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "choices.hpp"
#include "register.hpp"
#include "rewriting.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

schema_fallback to_fallback(const std::string& s) {
    return choice<schema_fallback>(
        "fallback", s,
        {{"whole_answer", schema_fallback::whole_answer}, {"fail", schema_fallback::fail}});
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
            return fmt::format("PromptSet({} templates)", s.names().size());
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
    py::class_<probe> probe_class(m, "Probe", "A hallucinated schema element: table and column.");
    probe_class
        .def(py::init([](std::string table, std::string column) {
                 return probe{std::move(table), std::move(column)};
             }),
             py::arg("table") = "", py::arg("column") = "")
        .def_readonly("table", &probe::table)
        .def_readonly("column", &probe::column)
        .def_property_readonly("text", &probe::text)
        .def("__repr__", [](const probe& p) {
            return fmt::format("Probe({}, {})", quoted(p.table), quoted(p.column));
        });
    def_eq_hash(probe_class, [](const probe& p) { return py::make_tuple(p.table, p.column); });

    py::class_<subquery> subquery_class(m, "SubQuery",
                                        "A `concept:attribute` sub-query; attribute may be empty.");
    subquery_class
        .def(py::init([](std::string concept_name, std::string attribute) {
                 return subquery{std::move(concept_name), std::move(attribute)};
             }),
             py::arg("concept"), py::arg("attribute") = "")
        .def_readonly("concept", &subquery::concept_name)
        .def_readonly("attribute", &subquery::attribute)
        .def_property_readonly("text", &subquery::text)
        .def("__repr__", [](const subquery& s) {
            return fmt::format("SubQuery({}, {})", quoted(s.concept_name), quoted(s.attribute));
        });
    def_eq_hash(subquery_class,
                [](const subquery& s) { return py::make_tuple(s.concept_name, s.attribute); });

    py::class_<completion> completion_class(m, "Completion",
                                            "A MURRE completion: stop, or one query per line.");
    completion_class
        .def(py::init([](bool stop, std::vector<std::string> lines) {
                 return completion{stop, std::move(lines)};
             }),
             py::arg("stop") = false, py::arg("lines") = std::vector<std::string>{})
        .def_readonly("stop", &completion::stop)
        .def_readonly("lines", &completion::lines)
        .def("__repr__", [](const completion& c) {
            return fmt::format("Completion(stop={}, lines={})", c.stop ? "True" : "False",
                               py::repr(py::cast(c.lines)).cast<std::string>());
        });
    def_eq_hash(completion_class, [](const completion& c) {
        return py::make_tuple(c.stop, py::tuple(py::cast(c.lines)));
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

}  // namespace

void register_rewriting_prompts(py::module_& m) {
    register_prompts(m);
    register_parsers(m);
}

}  // namespace tabret::bindings
