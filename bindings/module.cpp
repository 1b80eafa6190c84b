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
    tabret::bindings::register_errors(m);
    tabret::bindings::register_catalog(m);
    tabret::bindings::register_io(m);
    tabret::bindings::register_index(m);
    tabret::bindings::register_retrieval(m);
    tabret::bindings::register_rewriting(m);
    tabret::bindings::register_reverse(m);
    tabret::bindings::register_crush(m);
    tabret::bindings::register_adaptive(m);
    tabret::bindings::register_join(m);
    tabret::bindings::register_murre(m);
    tabret::bindings::register_native_methods(m);
}
