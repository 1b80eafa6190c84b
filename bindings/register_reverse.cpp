// Reverse Engineering: the generated-question index (built from given texts, saved, loaded) and
// the fused retriever with its optional re-ranker callback.
#include <tabret/index/question_index.hpp>
#include <tabret/retrieval/first_stage/reverse_retriever.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "callbacks.hpp"
#include "defaults.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

/// A Python callable `list[tuple[str, str, str]] -> 1-D floats` as a rerank_fn: the GIL is
/// taken once per batch; TypeError for an answer that is not 1-D numeric, ValueError for the
/// wrong length (NaN is left to the retriever's check).
rerank_fn python_rerank_fn(py::object fn) {
    if (!PyCallable_Check(fn.ptr()))
        throw py::type_error(fmt::format(
            "reranker must be a callable list[tuple[str, str, str]] -> list[float], got {}",
            type_name(fn)));
    auto held = keep(std::move(fn));
    return [held](std::span<const rerank_input> inputs) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        py::list batch(inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i)
            batch[i] =
                py::make_tuple(inputs[i].question, inputs[i].schema, inputs[i].generated_question);
        const py::object answer = (*held)(batch);
        const auto arr = to_float_array(answer);
        if (!arr || arr.ndim() != 1)
            throw py::type_error(fmt::format(
                "the re-ranker must return a 1-D sequence of floats (one per candidate), got {}{}",
                py::repr(py::type::of(answer)).cast<std::string>(),
                arr ? fmt::format(" with {} dimensions", arr.ndim()) : ""));
        if (static_cast<std::size_t>(arr.shape(0)) != inputs.size())
            throw py::value_error(fmt::format("the re-ranker returned {} scores for {} candidates",
                                              arr.shape(0), inputs.size()));
        return std::vector<float>(arr.data(), arr.data() + arr.shape(0));
    };
}

using py_reverse_retriever =
    owner<reverse_retriever<callback_embedder>, std::shared_ptr<const table_index>,
          std::shared_ptr<const question_index>, callback_embedder>;

}  // namespace

void register_reverse(py::module_& m) {
    py::class_<question_index, std::shared_ptr<question_index>>(
        m, "QuestionIndex", "Reverse Engineering: one generated question per table, embedded.")
        .def_static(
            "from_questions",
            [](std::shared_ptr<const table_index> index, std::vector<std::string> questions,
               const py::object& embed, const std::string& embedder_name,
               const std::string& generator, std::size_t batch_size, const py::object& progress) {
                if (embedder_name != index->embedder_name())
                    throw py::value_error(
                        fmt::format("the index was built with embedder '{}', but '{}' was given",
                                    index->embedder_name(), embedder_name));
                auto embedder = to_embedder(embed, embedder_name);
                auto report = python_progress_fn(progress);
                py::gil_scoped_release release;
                return std::make_shared<question_index>(question_index::from_questions(
                    *index, std::move(questions), generator, embedder, batch_size, report));
            },
            py::arg("index"), py::arg("questions"), py::arg("embed"), py::arg("embedder_name"),
            py::arg("generator"), py::arg("batch_size") = 512, py::arg("progress") = py::none())
        .def_static(
            "load",
            [](const std::filesystem::path& path, std::shared_ptr<const table_index> index) {
                return std::make_shared<question_index>(question_index::load(path, *index));
            },
            py::arg("path"), py::arg("index"), py::call_guard<py::gil_scoped_release>())
        .def("save", &question_index::save, py::arg("path"),
             py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("questions", &question_index::questions)
        .def_property_readonly("generator", &question_index::generator)
        .def_property_readonly("embedder_name", &question_index::embedder_name)
        .def_property_readonly("dim", &question_index::dim)
        .def_property_readonly("vectors",
                               [](const question_index& q) { return q.vectors().vectors(); })
        .def("__len__", &question_index::size);

    py::class_<py_reverse_retriever, std::shared_ptr<py_reverse_retriever>> reverse(
        m, "ReverseRetriever");
    def_init(
        reverse,
        py::init([](std::shared_ptr<const table_index> index,
                    std::shared_ptr<const question_index> questions, const py::object& embed,
                    const std::string& name, const py::object& reranker, std::size_t candidates) {
            reverse_options o;
            o.candidates = candidates;
            if (!reranker.is_none()) o.reranker = python_rerank_fn(reranker);
            return std::make_shared<py_reverse_retriever>(
                [&](const auto& i, const auto& q, const auto& e) {
                    return reverse_retriever<callback_embedder>(*i, *q, e, std::move(o));
                },
                std::move(index), std::move(questions), to_embedder(embed, name));
        }),
        py::arg("index"), py::arg("questions"), py::arg("embed"), py::arg("embedder_name"),
        py::arg("reranker") = py::none(), py::arg("candidates") = reverse_options{}.candidates);
    def_retrieve(reverse);

    m.def(
        "reverse_fuse",
        [](float r, float r_hat, float sum_norm) {
            const auto s = reverse_fuse(r, r_hat, sum_norm);
            return py::make_tuple(s.r_c, s.alpha, s.fused);
        },
        py::arg("r"), py::arg("r_hat"), py::arg("sum_norm"),
        "(r_c, alpha, R) for r = cos(q, E_s), r_hat = cos(q, E_qo), sum_norm = |E_s + E_qo|.");
}

}  // namespace tabret::bindings
