// ATR: window scorers (the training-free similarity scorer, Python callables) and the adaptive
// re-ranker, exposed as a post-step over any first stage's results.
#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/retrieval/select/adaptive_reranker.hpp>
#include <tabret/scoring/callback_window_scorer.hpp>
#include <tabret/scoring/similarity_window_scorer.hpp>

#include <functional>
#include <memory>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "callbacks.hpp"
#include "choices.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

threshold_rule to_rule(const std::string& s) {
    return choice<threshold_rule>("threshold rule", s,
                                  {{"fixed", threshold_rule::fixed},
                                   {"relative", threshold_rule::relative},
                                   {"zscore", threshold_rule::zscore},
                                   {"gap", threshold_rule::gap}});
}

/// One window's answer `(logits, threshold)`: TypeError for anything else. Lengths and NaN are
/// checked afterwards by check_window_scores (ScoringError).
window_scores to_window_scores(const py::handle& item, std::size_t w, const std::string& who) {
    if (py::isinstance<py::str>(item) || !py::isinstance<py::sequence>(item) || py::len(item) != 2)
        throw py::type_error(
            fmt::format("window scorer '{}' must answer (logits, threshold) for each window; "
                        "window {} got a {}",
                        who, w, type_name(item)));
    const auto pair = py::reinterpret_borrow<py::sequence>(item);
    using floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
    floats logits;
    try {
        logits = floats::ensure(pair[0]);
    } catch (py::error_already_set&) {
        logits = {};
    }
    if (!logits || logits.ndim() != 1)
        throw py::type_error(
            fmt::format("window scorer '{}': the logits of window {} must be a 1-D sequence of "
                        "floats, got {}{}",
                        who, w, type_name(pair[0]),
                        logits ? fmt::format(" with {} dimensions", logits.ndim()) : ""));
    const py::object threshold = pair[1];
    if (!py::isinstance<py::float_>(threshold) && !py::isinstance<py::int_>(threshold) &&
        !py::hasattr(threshold, "__float__"))
        throw py::type_error(
            fmt::format("window scorer '{}': the threshold of window {} must be a float, got {}",
                        who, w, type_name(threshold)));
    window_scores s;
    s.logits.assign(logits.data(), logits.data() + logits.shape(0));
    s.threshold = threshold.cast<float>();
    return s;
}

/// A Python callable `(questions, windows) -> [(logits, threshold), ...]` as a window_score_fn:
/// the GIL is taken once per step, the answer converted and copied out; Ctrl-C is polled.
window_score_fn python_window_score_fn(py::object fn, std::string name) {
    auto held = keep(std::move(fn));
    return [held, name = std::move(name)](std::span<const window_request> windows) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        py::list questions(windows.size()), texts(windows.size());
        for (std::size_t w = 0; w < windows.size(); ++w) {
            questions[w] = py::str(std::string(windows[w].question));
            py::list window(windows[w].texts.size());
            for (std::size_t j = 0; j < windows[w].texts.size(); ++j)
                window[j] = py::str(windows[w].texts[j]);
            texts[w] = window;
        }
        const py::object answer = (*held)(questions, texts);
        if (py::isinstance<py::str>(answer) || !py::isinstance<py::sequence>(answer))
            throw py::type_error(fmt::format(
                "window scorer '{}' must return a list of (logits, threshold), one per window, "
                "got {}",
                name, type_name(answer)));
        std::vector<window_scores> out;
        const auto seq = py::reinterpret_borrow<py::sequence>(answer);
        for (std::size_t w = 0; w < seq.size(); ++w)
            out.push_back(to_window_scores(seq[w], w, name));
        return out;
    };
}

/// The window scorer of an adaptive re-ranking: a Python callable's, or the similarity scorer's
/// embedder and threshold (the scorer itself, with its question cache, lives for one rerank call).
using window_scorer_source =
    std::variant<callback_window_scorer, std::pair<callback_embedder, similarity_threshold>>;

using rerank_step =
    std::function<std::vector<retrieval>(const std::vector<std::string>&, std::vector<retrieval>)>;

/// Adaptive re-ranking over the held index, options and scorer.
using py_adaptive_reranker =
    owner<rerank_step, std::shared_ptr<const table_index>, adaptive_options, window_scorer_source>;

rerank_step adaptive_step(const std::shared_ptr<const table_index>& held_index,
                          const adaptive_options& options, const window_scorer_source& source) {
    return [&index = *held_index, &options, &source](const std::vector<std::string>& questions,
                                                     std::vector<retrieval> first) {
        if (const auto* callback = std::get_if<callback_window_scorer>(&source))
            return adaptive_rerank(index, questions, std::move(first), *callback, options);
        const auto& [embedder, threshold] =
            std::get<std::pair<callback_embedder, similarity_threshold>>(source);
        const cached_embedder cache(embedder);
        const similarity_window_scorer scorer(index, cache, threshold);
        return adaptive_rerank(index, questions, std::move(first), scorer, options);
    };
}

/// ATR over @p first as one retriever: the first stage asked for the candidates, then re-ranked
/// (k is not a length here, as AdaptiveRetriever's); shares @p reranker.
any_retriever adaptive_stage(std::shared_ptr<const py_adaptive_reranker> reranker,
                             any_retriever first) {
    return any_retriever([reranker = std::move(reranker), first = std::move(first)](
                             std::span<const std::string> questions, const retrieve_options& o) {
        const auto& options = reranker->held<adaptive_options>();
        auto candidates = first.retrieve(questions, {options.candidates, o.k_columns});
        return reranker->get()({questions.begin(), questions.end()}, std::move(candidates));
    });
}

adaptive_options to_options(std::size_t candidates, std::size_t window, std::size_t retain) {
    adaptive_options o{candidates, window, retain};
    detail::check_adaptive_options(o);
    return o;
}

}  // namespace

void register_adaptive(py::module_& m) {
    py::class_<py_adaptive_reranker, std::shared_ptr<py_adaptive_reranker>>(m, "AdaptiveReranker")
        .def_static(
            "with_similarity",
            [](std::shared_ptr<const table_index> index, const py::object& embed,
               const std::string& embedder_name, const std::string& rule, float value,
               std::size_t depth, std::size_t candidates, std::size_t window, std::size_t retain) {
                const auto options = to_options(candidates, window, retain);
                const similarity_threshold threshold{to_rule(rule), value, depth};
                check_similarity_threshold(threshold);
                return std::make_shared<py_adaptive_reranker>(
                    adaptive_step, std::move(index), options,
                    window_scorer_source(std::in_place_index<1>, to_embedder(embed, embedder_name),
                                         threshold));
            },
            py::arg("index"), py::arg("embed"), py::arg("embedder_name"),
            py::arg("rule") = "relative", py::arg("value") = 0.1f, py::arg("depth") = 50,
            py::arg("candidates") = 50, py::arg("window") = 20, py::arg("retain") = 15)
        .def_static(
            "with_callable",
            [](std::shared_ptr<const table_index> index, py::object scorer, const std::string& name,
               std::size_t candidates, std::size_t window, std::size_t retain) {
                if (!PyCallable_Check(scorer.ptr()))
                    throw py::type_error(
                        fmt::format("window scorer must be callable, got {}", type_name(scorer)));
                const auto options = to_options(candidates, window, retain);
                return std::make_shared<py_adaptive_reranker>(
                    adaptive_step, std::move(index), options,
                    window_scorer_source(std::in_place_index<0>,
                                         python_window_score_fn(std::move(scorer), name), name));
            },
            py::arg("index"), py::arg("scorer"), py::arg("name"), py::arg("candidates") = 50,
            py::arg("window") = 20, py::arg("retain") = 15)
        .def(
            "rerank",
            [](const py_adaptive_reranker& r, const std::vector<std::string>& questions,
               std::vector<retrieval> first) { return r.get()(questions, std::move(first)); },
            py::arg("questions"), py::arg("first"), py::call_guard<py::gil_scoped_release>())
        .def(
            "retrieve",
            [](std::shared_ptr<const py_adaptive_reranker> r,
               const std::vector<std::string>& questions, const py::object& first,
               std::size_t k_columns) {
                const auto stage = adaptive_stage(std::move(r), stage_of(first));
                const py::gil_scoped_release release;
                const interrupt_scope interruptible(python_interrupt());
                return stage.retrieve(questions, {1, k_columns});
            },
            py::arg("questions"), py::arg("first"), py::arg("k_columns") = 0)
        .def(
            "as_stage",
            [](std::shared_ptr<const py_adaptive_reranker> r, const py::object& first) {
                return std::make_shared<any_retriever>(
                    adaptive_stage(std::move(r), stage_of(first)));
            },
            py::arg("first"),
            "ATR over `first` (a NativeRetriever or a Python stage) as one NativeRetriever, for "
            "a native stage built over it.")
        .def_property_readonly(
            "candidates",
            [](const py_adaptive_reranker& r) { return r.held<adaptive_options>().candidates; })
        .def_property_readonly(
            "window",
            [](const py_adaptive_reranker& r) { return r.held<adaptive_options>().window; })
        .def_property_readonly("retain", [](const py_adaptive_reranker& r) {
            return r.held<adaptive_options>().retain;
        });
}

}  // namespace tabret::bindings
