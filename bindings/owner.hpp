#pragma once
// What a bound object holds: a C++ value built from references into what it keeps alive.

#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tabret/retrieval/retrieval.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "callbacks.hpp"

namespace tabret::bindings {

/**
 * A @p T built by `make(held...)` from references to @p held, which live exactly as long as it.
 * C++ retrievers, re-rankers and rewriters hold their index, graph, embedder and rewriter by
 * reference; an owner keeps those alive beside the value, so Python can hold it alone. Neither
 * copied nor moved: the references into `held` stay valid.
 */
template <class T, class... Held>
class owner {
  public:
    template <class Make>
    explicit owner(Make&& make, Held... held)
        : held_(std::move(held)...), value_(std::apply(std::forward<Make>(make), held_)) {}
    owner(const owner&) = delete;
    owner& operator=(const owner&) = delete;

    [[nodiscard]] const T& get() const noexcept { return value_; }
    /// The held value of type @p H (one of Held..., named by its type).
    template <class H>
    [[nodiscard]] const H& held() const noexcept {
        return std::get<H>(held_);
    }

  private:
    std::tuple<Held...> held_;
    T value_;
};

/// The retriever a bound object answers with: an owner's value, or the object itself.
template <class T, class... Held>
const T& retriever_of(const owner<T, Held...>& o) {
    return o.get();
}
template <Retriever R>
const R& retriever_of(const R& r) {
    return r;
}

/// `retrieve(questions, k=10, k_columns=0)` on a bound Retriever or owner of one: without the
/// GIL, Ctrl-C honoured between questions. `as_stage()`: the same retriever as a NativeRetriever
/// sharing it, which a native stage built over it (stage_of) calls without going through Python.
template <class Bound>
void def_retrieve(pybind11::class_<Bound, std::shared_ptr<Bound>>& c) {
    namespace py = pybind11;
    c.def(
         "retrieve",
         [](const Bound& r, const std::vector<std::string>& questions, std::size_t k,
            std::size_t k_columns) {
             const interrupt_scope interruptible(python_interrupt());
             return retriever_of(r).retrieve(questions, {k, k_columns});
         },
         py::arg("questions"), py::arg("k") = 10, py::arg("k_columns") = 0,
         py::call_guard<py::gil_scoped_release>())
        .def("as_stage", [](std::shared_ptr<const Bound> self) {
            return std::make_shared<any_retriever>(
                [self = std::move(self)](std::span<const std::string> questions,
                                         const retrieve_options& o) {
                    return retriever_of(*self).retrieve(questions, o);
                });
        });
}

}  // namespace tabret::bindings
