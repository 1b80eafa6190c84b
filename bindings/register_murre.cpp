// MURRE: multi-hop beam retrieval with removal, over any rewriter; and the embedding cache that
// lets repeated evaluations (methods, ablations) embed each question and query once.
#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/retrieval/first_stage/murre_retriever.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "callbacks.hpp"
#include "choices.hpp"
#include "defaults.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

path_scoring to_scoring(const std::string& s) {
    return choice<path_scoring>(
        "scoring", s, {{"paper", path_scoring::paper}, {"reference", path_scoring::reference}});
}

using py_murre_retriever =
    owner<murre_retriever<callback_embedder, callback_rewriter>, std::shared_ptr<const table_index>,
          callback_embedder, callback_rewriter>;

/// A cached_embedder with the embedder it wraps.
using py_cached_embedder = owner<cached_embedder<callback_embedder>, callback_embedder>;

void register_cached_embedder(py::module_& m) {
    const auto embed = [](const py_cached_embedder& c, const std::vector<std::string>& texts) {
        return c.get().embed(texts);
    };
    py::class_<py_cached_embedder, std::shared_ptr<py_cached_embedder>>(
        m, "CachedEmbedder",
        "Wraps an embedder: each distinct text is embedded once, misses go in one batch.")
        .def(py::init([](const py::object& embed, const std::string& name) {
                 return std::make_shared<py_cached_embedder>(
                     [](const auto& e) { return cached_embedder<callback_embedder>(e); },
                     to_embedder(embed, name));
             }),
             py::arg("embed"), py::arg("name"))
        .def("embed", embed, py::arg("texts"), py::call_guard<py::gil_scoped_release>())
        .def("__call__", embed, py::arg("texts"), py::call_guard<py::gil_scoped_release>())
        .def(
            "seed",
            [](const py_cached_embedder& c, const std::vector<std::string>& texts,
               const matrix& vectors) { c.get().seed(texts, vectors); },
            py::arg("texts"), py::arg("vectors"))
        .def_property_readonly(
            "name", [](const py_cached_embedder& c) { return c.held<callback_embedder>().name(); })
        .def_property_readonly(
            "allows_zero_rows",
            [](const py_cached_embedder& c) { return c.get().allows_zero_rows(); })
        .def_property_readonly("calls",
                               [](const py_cached_embedder& c) { return c.get().stats().calls; })
        .def_property_readonly("embedded",
                               [](const py_cached_embedder& c) { return c.get().stats().embedded; })
        .def_property_readonly("hits",
                               [](const py_cached_embedder& c) { return c.get().stats().hits; })
        .def("__len__", [](const py_cached_embedder& c) { return c.get().size(); });
}

}  // namespace

void register_murre(py::module_& m) {
    register_cached_embedder(m);
    py::class_<py_murre_retriever, std::shared_ptr<py_murre_retriever>> murre(
        m, "MurreRetriever", "MURRE: multi-hop beam retrieval with removal, over any rewriter.");
    def_init(murre,
             py::init([](std::shared_ptr<const table_index> index, const py::object& embed,
                         const std::string& name, const py::object& rewriter, std::size_t beam,
                         std::size_t hops, std::size_t per_beam, std::size_t rerank_top,
                         bool per_line_max, bool any_beam_stop, bool early_stop, bool removal,
                         const std::string& scoring) {
                 murre_options o;
                 o.beam = beam;
                 o.hops = hops;
                 o.per_beam = per_beam;
                 o.rerank_top = rerank_top;
                 o.per_line_max = per_line_max;
                 o.any_beam_stop = any_beam_stop;
                 o.early_stop = early_stop;
                 o.removal = removal;
                 o.scoring = to_scoring(scoring);
                 return std::make_shared<py_murre_retriever>(
                     [&](const auto& i, const auto& e, const auto& r) {
                         return murre_retriever<callback_embedder, callback_rewriter>(*i, e, r, o);
                     },
                     std::move(index), to_embedder(embed, name), to_rewriter(rewriter));
             }),
             py::arg("index"), py::arg("embed"), py::arg("embedder_name"), py::arg("rewriter"),
             py::arg("beam") = murre_options{}.beam, py::arg("hops") = murre_options{}.hops,
             py::arg("per_beam") = murre_options{}.per_beam,
             py::arg("rerank_top") = murre_options{}.rerank_top,
             py::arg("per_line_max") = murre_options{}.per_line_max,
             py::arg("any_beam_stop") = murre_options{}.any_beam_stop,
             py::arg("early_stop") = murre_options{}.early_stop,
             py::arg("removal") = murre_options{}.removal, py::arg("scoring") = "paper");
    // MURRE ranks tables only: its retrieve raises for k_columns > 0.
    def_retrieve(murre);
    murre.def_property_readonly("rewriter_name", [](const py_murre_retriever& r) {
        return r.held<callback_rewriter>().name();
    });
}

}  // namespace tabret::bindings
