// The LLM response cache (in memory or SQLite) and cached_llm, a NativeLLM answering from it.
#include <tabret/rewriting/response_cache.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "register.hpp"
#include "rewriting.hpp"

namespace py = pybind11;

namespace tabret::bindings {

void register_rewriting_cache(py::module_& m) {
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
        .def_property_readonly("read_only", &response_cache::read_only,
                               "True for an existing cache this process cannot write (a "
                               "read-only file, directory or filesystem): it is only read.")
        .def("__repr__", [](const response_cache& c) {
            return fmt::format(
                "ResponseCache({}{} entries)",
                c.file() ? fmt::format("{}, ", quoted(c.file()->string())) : std::string(),
                c.size());
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

}  // namespace tabret::bindings
