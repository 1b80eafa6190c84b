#pragma once
// A bound class's constructor defaults, written once: the py::arg_v list given to py::init also
// makes the class attribute `defaults` (keyword -> default), which Python wrappers read instead of
// repeating the values. The values themselves come from the C++ options structs.

#include <charconv>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <pybind11/pybind11.h>

namespace tabret::bindings {

/// @p a with a float default that a C++ float holds exactly (an options struct's `float`) as
/// the shortest decimal of that float: `gamma = 0.01`, not `0.009999999776482582`. The
/// constructor converts either to the same float.
inline pybind11::arg_v shortest(pybind11::arg_v a) {
    if (!PyFloat_Check(a.value.ptr())) return a;
    const double d = PyFloat_AsDouble(a.value.ptr());
    const auto f = static_cast<float>(d);
    if (static_cast<double>(f) != d) return a;
    const auto text = fmt::format("{}", f);
    double shortest = d;
    if (std::from_chars(text.data(), text.data() + text.size(), shortest).ec != std::errc{})
        return a;
    a.value = pybind11::float_(shortest);
    return a;
}

/// Anything else passed to `def` (an argument without a default, a call guard, a doc string).
template <class Extra>
const Extra& shortest(const Extra& extra) {
    return extra;
}

/// A keyword argument with a default: its entry (a list as a tuple, so that changing the dict
/// cannot change the default the function uses).
inline void add_default(pybind11::dict& defaults, const pybind11::arg_v& a) {
    defaults[a.name] = pybind11::isinstance<pybind11::list>(a.value)
                           ? pybind11::object(pybind11::tuple(a.value))
                           : a.value;
}

/// Anything else.
template <class Extra>
void add_default(pybind11::dict& /*defaults*/, const Extra& /*extra*/) {}

/// The name and value of every argument in @p extra that has a default, in order (floats as
/// `shortest` makes them).
template <class... Extra>
pybind11::dict defaults_of(const Extra&... extra) {
    pybind11::dict defaults;
    (add_default(defaults, shortest(extra)), ...);
    return defaults;
}

/// `c.def(init, extra...)` for the class's one constructor, and `c.defaults`: its defaults.
template <class Class, class Init, class... Extra>
Class& def_init(Class& c, Init&& init, const Extra&... extra) {
    c.def(std::forward<Init>(init), shortest(extra)...);
    c.attr("defaults") = defaults_of(extra...);
    return c;
}

/// `c.def_static(name, f, extra...)`, and `c.<name>_defaults`: its defaults.
template <class Class, class F, class... Extra>
Class& def_static_with_defaults(Class& c, const char* name, F&& f, const Extra&... extra) {
    c.def_static(name, std::forward<F>(f), shortest(extra)...);
    c.attr((std::string(name) + "_defaults").c_str()) = defaults_of(extra...);
    return c;
}

}  // namespace tabret::bindings
