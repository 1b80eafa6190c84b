#pragma once
// What the rewriting layer's register_rewriting_*.cpp files share: the native LLM type, the
// repr of a str, the snapshot of recorded answers and the completion form choice.

#include <tabret/rewriting/llm.hpp>
#include <tabret/rewriting/parsers.hpp>
#include <tabret/rewriting/replay_llm.hpp>

#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "callbacks.hpp"
#include "choices.hpp"

namespace tabret::bindings {

/// A C++ LLM callback with a name (a replay, a cached LLM), callable from Python and used by the
/// rewriters without the GIL (whatever Python it wraps takes the GIL itself).
struct native_llm {
    llm_fn fn;
    std::string name;
};

/// The Python repr of @p s (bytes that are not UTF-8 shown as U+FFFD).
inline std::string quoted(const std::string& s) {
    return pybind11::repr(lenient_str(s)).cast<std::string>();
}

/// A copy of @p source that recorded answers can share, whatever Python does to its own.
inline std::shared_ptr<const replay_source> snapshot(const replay_source& source) {
    return std::make_shared<const replay_source>(source);
}

/// `==` and a hash of @p key's tuple (the fields `==` compares) on a bound value type.
template <class T, class Key>
void def_eq_hash(pybind11::class_<T>& c, Key key) {
    c.def(
        "__eq__", [](const T& a, const T& b) { return a == b; }, pybind11::is_operator());
    c.def("__hash__", [key](const T& v) { return pybind11::hash(key(v)); });
}

inline completion_form to_form(const std::string& s) {
    return choice<completion_form>(
        "form", s, {{"tables", completion_form::tables}, {"question", completion_form::question}});
}

}  // namespace tabret::bindings
