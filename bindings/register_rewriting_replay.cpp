// Recorded LLM answers: ReplaySource, the loaders of the published recordings, and replay_llm.
#include <tabret/rewriting/replay_llm.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

}  // namespace

void register_rewriting_replay(py::module_& m) {
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
            return fmt::format("ReplaySource({}, {}, {} questions)", quoted(s.name()),
                               kind_name(s.kind()), s.size());
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

}  // namespace tabret::bindings
