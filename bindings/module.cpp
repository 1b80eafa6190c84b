// The private extension tabret._core; the public API is the typed package python/tabret.
#include <tabret/version.hpp>

#include "callbacks.hpp"
#include "register.hpp"

PYBIND11_MODULE(_core, m, pybind11::mod_gil_not_used()) {
    m.doc() = "tabret native core (private: use the tabret package)";
    m.attr("__version__") = tabret::version_string;
    tabret::bindings::python_main_thread = pybind11::module_::import("threading")
                                               .attr("main_thread")()
                                               .attr("ident")
                                               .cast<unsigned long>();
    // In dependency order: later families use the classes of earlier ones in their signatures.
    namespace b = tabret::bindings;
    constexpr void (*families[])(pybind11::module_&) = {
        b::register_errors,    b::register_catalog,        b::register_io,
        b::register_index,     b::register_values,         b::register_retrieval,
        b::register_rewriting, b::register_reverse,        b::register_crush,
        b::register_adaptive,  b::register_join,           b::register_key_discovery,
        b::register_murre,     b::register_native_methods,
    };
    for (auto* family : families) family(m);
}
