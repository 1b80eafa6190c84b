#pragma once
// GIL-aware adapters from Python callables to tabret's batch-shaped C++ callbacks. Each adapter
// is called from C++ with the GIL released: it takes the GIL once per batch, converts and checks
// the answer, and copies it out before releasing the GIL again. A Python exception propagates as
// py::error_already_set and reaches the caller with its original type.

#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/interrupt.hpp>
#include <tabret/retrieval/any_retriever.hpp>
#include <tabret/rewriting/llm.hpp>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace tabret::bindings {

/// Holds a Python object and drops its reference under the GIL, whichever thread ends it.
inline std::shared_ptr<pybind11::object> keep(pybind11::object obj) {
    return {new pybind11::object(std::move(obj)), [](pybind11::object* p) {
                pybind11::gil_scoped_acquire gil;
                delete p;
            }};
}

/// The name of @p h's type ("int", "list", "DenseRetriever"), for error messages.
inline std::string type_name(const pybind11::handle& h) {
    return pybind11::type::of(h).attr("__name__").cast<std::string>();
}

/// A str from bytes that may not be valid UTF-8: bad bytes become U+FFFD.
inline pybind11::str lenient_str(std::string_view s) {
    auto* obj = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    if (obj == nullptr) throw pybind11::error_already_set();
    return pybind11::reinterpret_steal<pybind11::str>(obj);
}

/// A C-contiguous float32 array.
using float_array = pybind11::array_t<float, pybind11::array::c_style | pybind11::array::forcecast>;

/// @p result as a float32 array, or an empty (false) one when it does not convert.
inline float_array to_float_array(const pybind11::handle& result) {
    try {
        return float_array::ensure(result);
    } catch (pybind11::error_already_set&) {
        return {};
    }
}

/// Converts a Python answer to an n×d float32 matrix; TypeError for anything not 2-D numeric.
inline matrix to_matrix(const pybind11::handle& result, const std::string& who) {
    namespace py = pybind11;
    const auto arr = to_float_array(result);
    if (!arr || arr.ndim() != 2)
        throw py::type_error(
            fmt::format("{} must return a 2-D array of floats (texts × dim), got {}{}", who,
                        py::repr(py::type::of(result)).cast<std::string>(),
                        arr ? fmt::format(" with {} dimensions", arr.ndim())
                            : std::string(" that does not convert to floats")));
    matrix m(arr.shape(0), arr.shape(1));
    if (m.size() > 0)
        std::memcpy(m.data(), arr.data(), sizeof(float) * static_cast<std::size_t>(m.size()));
    return m;
}

/// A Python callable `list[str] -> array` as an embed_fn; @p name labels its errors.
inline embed_fn python_embed_fn(pybind11::object fn, const std::string& name) {
    auto held = keep(std::move(fn));
    return [held, who = fmt::format("embedder '{}'", name)](std::span<const std::string> texts) {
        pybind11::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
        pybind11::list batch(texts.size());
        for (std::size_t i = 0; i < texts.size(); ++i) batch[i] = lenient_str(texts[i]);
        return to_matrix((*held)(batch), who);
    };
}

/// The thread identifier (PyThread_get_thread_ident) of Python's main thread, the only one
/// that runs signal handlers; set when the module is imported.
inline unsigned long python_main_thread = 0;

/// The interrupt hook of native loops called from Python. On the main thread, at most every
/// 20 ms, it takes the GIL and runs the pending signal handlers (PyErr_CheckSignals): a
/// KeyboardInterrupt (or whatever a handler raised) comes out as py::error_already_set. On any
/// other thread it does nothing (signals are handled on the main thread only), so a retrieve in
/// a worker thread never waits for the GIL.
inline const interrupt_fn& python_interrupt() {
    static const interrupt_fn hook = [] {
        if (PyThread_get_thread_ident() != python_main_thread) return;
        thread_local std::chrono::steady_clock::time_point last{};
        const auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::milliseconds(20)) return;
        last = now;
        pybind11::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
    };
    return hook;
}

/// A Python callable `(stage, done, total) -> None` as a progress_fn; also polls Ctrl-C.
inline progress_fn python_progress_fn(pybind11::object fn) {
    if (fn.is_none())
        return [](std::string_view, std::size_t, std::size_t) {
            pybind11::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
        };
    auto held = keep(std::move(fn));
    return [held](std::string_view stage, std::size_t done, std::size_t total) {
        pybind11::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
        (*held)(std::string(stage), done, total);
    };
}

/// Checks a Python LLM answer and copies it out: a sequence (not a str) of exactly @p expected
/// str. TypeError for anything else; tabret::llm_error (LLMError) for the wrong count.
inline std::vector<std::string> to_completions(const pybind11::handle& answer, std::size_t expected,
                                               const std::string& who) {
    namespace py = pybind11;
    if (py::isinstance<py::str>(answer) || py::isinstance<py::bytes>(answer) ||
        !py::isinstance<py::sequence>(answer))
        throw py::type_error(fmt::format(
            "LLM '{}' must return a list of str (one per prompt), got {}", who, type_name(answer)));
    const auto seq = py::reinterpret_borrow<py::sequence>(answer);
    std::vector<std::string> out;
    out.reserve(expected);
    const auto n = seq.size();
    if (n != expected)
        throw llm_error(
            fmt::format("LLM '{}' returned {} completions for {} prompts", who, n, expected));
    for (std::size_t i = 0; i < n; ++i) {
        const py::object item = seq[i];
        if (!py::isinstance<py::str>(item))
            throw py::type_error(fmt::format("LLM '{}' returned completion {} as a {}, not a str",
                                             who, i, type_name(item)));
        out.push_back(item.cast<std::string>());
    }
    return out;
}

/// A Python callable `list[str] -> list[str]` as an llm_fn: the GIL is taken once per batch, the
/// answer is checked (to_completions) and copied out; Ctrl-C is polled before the call.
inline llm_fn python_llm_fn(pybind11::object fn, std::string name) {
    auto held = keep(std::move(fn));
    return [held, name = std::move(name)](std::span<const std::string> prompts) {
        namespace py = pybind11;
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        py::list batch(prompts.size());
        for (std::size_t i = 0; i < prompts.size(); ++i) batch[i] = lenient_str(prompts[i]);
        return to_completions((*held)(batch), prompts.size(), name);
    };
}

/// A Python callable `(questions, k, k_columns) -> list[Retrieval]` as a C++ Retriever (a first
/// stage written in Python, or a native retriever reached through Python). TypeError for an
/// answer that is not a list of Retrieval; tabret::error for the wrong count.
inline any_retriever python_retriever(pybind11::object fn) {
    namespace py = pybind11;
    auto held = keep(std::move(fn));
    return any_retriever([held](std::span<const std::string> questions, const retrieve_options& o) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        py::list batch(questions.size());
        for (std::size_t i = 0; i < questions.size(); ++i) batch[i] = lenient_str(questions[i]);
        const py::object answer = (*held)(batch, o.k, o.k_columns);
        std::vector<retrieval> out;
        try {
            out = answer.cast<std::vector<retrieval>>();
        } catch (const py::cast_error&) {
            throw py::type_error(fmt::format(
                "a first stage must return a list of Retrieval, got {}", type_name(answer)));
        }
        if (out.size() != questions.size())
            throw error(fmt::format("the first stage returned {} results for {} questions",
                                    out.size(), questions.size()));
        return out;
    });
}

/// The stage before a native one: a NativeRetriever (a native retriever's `as_stage()`), called
/// directly, or a Python callable as python_retriever.
inline any_retriever stage_of(pybind11::object stage) {
    if (pybind11::isinstance<any_retriever>(stage)) return stage.cast<any_retriever>();
    return python_retriever(std::move(stage));
}

}  // namespace tabret::bindings
