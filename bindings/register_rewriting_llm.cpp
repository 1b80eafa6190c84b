// LLM callbacks: NativeLLM (a C++ callback Python can call and pass on), complete, and to_llm,
// which turns whatever Python passes as an LLM into one llm_fn.
#include <tabret/rewriting/llm.hpp>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "callbacks.hpp"
#include "register.hpp"
#include "rewriting.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

/// The `name` attribute of an LLM object if it is a str, else its (qualified) name.
std::string object_name(const py::object& obj) {
    if (py::hasattr(obj, "name")) {
        const py::object n = obj.attr("name");
        if (py::isinstance<py::str>(n)) return n.cast<std::string>();
    }
    if (py::hasattr(obj, "__qualname__")) return py::str(obj.attr("__qualname__"));
    return py::type::of(obj).attr("__qualname__").cast<std::string>();
}

}  // namespace

void register_rewriting_llm(py::module_& m) {
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
        .def("__repr__",
             [](const native_llm& l) { return fmt::format("NativeLLM({})", quoted(l.name)); });

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
}

llm_fn to_llm(const py::object& llm, const std::string& name) {
    if (py::isinstance<native_llm>(llm)) return llm.cast<const native_llm&>().fn;
    if (py::hasattr(llm, "native")) {
        const py::object native = llm.attr("native");
        if (py::isinstance<native_llm>(native)) return native.cast<const native_llm&>().fn;
    }
    if (!PyCallable_Check(llm.ptr()))
        throw py::type_error(
            fmt::format("llm must be a callable list[str] -> list[str], got {}", type_name(llm)));
    return python_llm_fn(llm, name.empty() ? object_name(llm) : name);
}

}  // namespace tabret::bindings
