// CRUSH4SQL: the crush_retriever over any rewriter. A rewriter from _core (CrushRewriter,
// DecompositionRewriter, RecordedRewriter) runs without the GIL; any other object with
// `rewrite(list[RewriteRequest]) -> list[RewriteResult]` is called once per batch under the GIL.
#include <tabret/retrieval/first_stage/crush_retriever.hpp>
#include <tabret/rewriting/callback_rewriter.hpp>
#include <tabret/rewriting/llm_rewriters.hpp>
#include <tabret/rewriting/replay_llm.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "callbacks.hpp"
#include "choices.hpp"
#include "defaults.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

using py_crush_retriever =
    owner<crush_retriever<callback_embedder, callback_rewriter>, std::shared_ptr<const table_index>,
          callback_embedder, callback_rewriter>;

}  // namespace

void register_crush(py::module_& m) {
    py::class_<py_crush_retriever, std::shared_ptr<py_crush_retriever>> crush(m, "CrushRetriever");
    def_init(
        crush,
        py::init([](std::shared_ptr<const table_index> index, const py::object& embed,
                    const std::string& name, const py::object& rewriter, const std::string& probe,
                    const std::string& candidates, std::size_t candidate_depth,
                    const std::string& objective, bool entropy, bool connectivity, float lam,
                    float gamma) {
            crush_options o;
            o.context = choice<probe_context>(
                "probe", probe,
                {{"question", probe_context::question}, {"alone", probe_context::alone}});
            o.candidates = choice<crush_candidates>("candidates", candidates,
                                                    {{"union", crush_candidates::per_probe_union},
                                                     {"global", crush_candidates::global_top}});
            o.candidate_depth = candidate_depth;
            o.objective = choice<crush_objective>(
                "objective", objective,
                {{"paper", crush_objective::paper}, {"round_robin", crush_objective::round_robin}});
            o.entropy = entropy;
            o.connectivity = connectivity;
            o.edges = {lam, gamma};
            return std::make_shared<py_crush_retriever>(
                [&](const auto& i, const auto& e, const auto& r) {
                    return crush_retriever<callback_embedder, callback_rewriter>(*i, e, r, o);
                },
                std::move(index), to_embedder(embed, name), to_rewriter(rewriter));
        }),
        py::arg("index"), py::arg("embed"), py::arg("embedder_name"), py::arg("rewriter"),
        py::arg("probe") = "question", py::arg("candidates") = "union",
        py::arg("candidate_depth") = crush_options{}.candidate_depth,
        py::arg("objective") = "paper", py::arg("entropy") = crush_options{}.entropy,
        py::arg("connectivity") = crush_options{}.connectivity,
        py::arg("lam") = crush_options{}.edges.lambda,
        py::arg("gamma") = crush_options{}.edges.gamma);
    def_retrieve(crush);
}

}  // namespace tabret::bindings
