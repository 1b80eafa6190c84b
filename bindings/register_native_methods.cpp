// The native methods (bindings/methods/*.cpp, native_method.hpp) as _core.native_methods().
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "callbacks.hpp"
#include "native_method.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

std::vector<native_method>& native_methods() {
    static std::vector<native_method> methods;
    return methods;
}

void register_native_methods(py::module_& m) {
    py::class_<any_retriever, std::shared_ptr<any_retriever>> retriever(
        m, "NativeRetriever", "A native method's retriever (NativeMethod.build).");
    def_retrieve(retriever);

    py::class_<native_method>(m, "NativeMethod",
                              "A retrieval method defined in C++ (bindings/methods/).")
        .def_property_readonly("name", [](const native_method& nm) { return nm.info.name; })
        .def_property_readonly("kind", [](const native_method& nm) { return nm.info.kind; })
        .def_property_readonly("description",
                               [](const native_method& nm) { return nm.info.description; })
        .def_property_readonly("score", [](const native_method& nm) { return nm.info.score; })
        .def_property_readonly("columns", [](const native_method& nm) { return nm.info.columns; })
        .def_property_readonly("column_index",
                               [](const native_method& nm) { return nm.info.column_index; })
        .def_property_readonly("needs", [](const native_method& nm) { return nm.info.needs; })
        .def(
            "defaults", [](const native_method& nm) { return nm.defaults(); },
            "The options with their defaults (from the C++ options struct).")
        .def(
            "build",
            [](const native_method& nm, std::shared_ptr<const table_index> index,
               const py::object& embed, const std::string& embedder_name, const py::object& first,
               const py::dict& options, std::shared_ptr<const value_index> values) {
                method_inputs in{std::move(index), to_embedder(embed, embedder_name), std::nullopt,
                                 std::move(values)};
                if (!first.is_none()) in.first = stage_of(first);
                return std::make_shared<any_retriever>(nm.build(in, options));
            },
            py::arg("index"), py::arg("embed"), py::arg("embedder_name"), py::arg("first"),
            py::arg("options"), py::arg("values") = nullptr);

    m.def(
        "native_methods", [] { return native_methods(); },
        "Every method registered in C++, in registration order.");
}

}  // namespace tabret::bindings
