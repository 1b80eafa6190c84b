// Join-aware retrieval: value statistics, the join graph, greedy and exact JAR selection, and
// the join-closure post-step.
#include <tabret/join/bridges.hpp>
#include <tabret/join/column_stats.hpp>
#include <tabret/join/join_graph.hpp>
#include <tabret/retrieval/first_stage.hpp>
#include <tabret/retrieval/first_stage/database_router.hpp>
#include <tabret/retrieval/first_stage/fused_retriever.hpp>
#include <tabret/retrieval/post/join_closure.hpp>
#include <tabret/retrieval/select/greedy_join_retriever.hpp>
#include <tabret/retrieval/select/jar_exact.hpp>
#include <tabret/rewriting/callback_rewriter.hpp>
#include <tabret/rewriting/llm_rewriters.hpp>
#include <tabret/rewriting/replay_llm.hpp>
#include <tabret/saved_index.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/eigen.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "callbacks.hpp"
#include "choices.hpp"
#include "defaults.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

/// A decomposition rewriter from Python: a native DecompositionRewriter or RecordedRewriter
/// (called without the GIL), as to_rewriter makes it.
callback_rewriter to_decomposition_rewriter(const py::object& obj) {
    if (!py::isinstance<decomposition_rewriter>(obj) && !py::isinstance<recorded_rewriter>(obj))
        throw py::type_error(
            fmt::format("rewriter must be a DecompositionRewriter or a RecordedRewriter, got {}",
                        type_name(obj)));
    return to_rewriter(obj);
}

/// JAR's five weights as Python sees them, [w1..w5].
std::vector<float> to_vector(const jar_weights& w) {
    return {w.fine, w.coverage, w.join, w.coarse, w.assignments};
}

connectivity to_connectivity(const std::string& s) {
    return choice<connectivity>("connectivity", s,
                                {{"soft", connectivity::soft}, {"strict", connectivity::strict}});
}

closure_mode to_mode(const std::string& s) {
    return choice<closure_mode>(
        "mode", s, {{"append", closure_mode::append}, {"within_k", closure_mode::within_k}});
}

/// The first stage of a join retriever: dense for None, else the stage given (stage_of).
any_first_stage to_first_stage(const py::object& first) {
    if (first.is_none()) return {};
    return retriever_first_stage<any_retriever>(stage_of(first));
}

/// A join retriever with the index, graph, embedder and rewriter it refers to.
template <template <class, class, class> class Retriever>
using py_join_retriever =
    owner<Retriever<callback_embedder, callback_rewriter, any_first_stage>,
          std::shared_ptr<const table_index>, std::shared_ptr<const join_graph>, callback_embedder,
          callback_rewriter>;

using py_greedy = py_join_retriever<greedy_join_retriever>;
using py_exact = py_join_retriever<jar_exact_retriever>;

/// A py_join_retriever<Retriever> over what Python passed, with @p options.
template <template <class, class, class> class Retriever, class Options>
std::shared_ptr<py_join_retriever<Retriever>> make_join_retriever(
    std::shared_ptr<const table_index> index, std::shared_ptr<const join_graph> graph,
    const py::object& embed, const std::string& name, const py::object& rewriter,
    const Options& options, const py::object& first) {
    return std::make_shared<py_join_retriever<Retriever>>(
        [&, stage = to_first_stage(first)](const auto& i, const auto& g, const auto& e,
                                           const auto& r) mutable {
            return Retriever<callback_embedder, callback_rewriter, any_first_stage>(
                *i, *g, e, r, options, std::move(stage));
        },
        std::move(index), std::move(graph), to_embedder(embed, name),
        to_decomposition_rewriter(rewriter));
}

/// Database routing over a Python first stage, with the index whose catalog it reads.
using py_router = owner<database_router<any_retriever>, std::shared_ptr<const table_index>>;

/// Two Python first stages fused.
using py_fused = owner<fused_retriever<any_retriever, any_retriever>>;

/// The closure post-step: the FK graph of the index's catalog, with the index and the options.
using py_closure = owner<fk_graph, std::shared_ptr<const table_index>, closure_options>;

void register_graph(py::module_& m) {
    py::class_<column_stats_table>(m, "ColumnStats",
                                   "Value statistics per column id: uniqueness, sample values.")
        .def(py::init<std::size_t>(), py::arg("columns") = 0)
        .def(
            "set",
            [](column_stats_table& t, column_id c, std::optional<double> uniqueness,
               std::vector<std::string> values) {
                t.set(c, {uniqueness, std::move(values)});
            },
            py::arg("column"), py::arg("uniqueness") = py::none(),
            py::arg("values") = std::vector<std::string>{})
        .def(
            "uniqueness",
            [](const column_stats_table& t, column_id c) { return t.at(c).uniqueness; },
            py::arg("column"))
        .def(
            "values", [](const column_stats_table& t, column_id c) { return t.at(c).values; },
            py::arg("column"))
        .def("__len__", &column_stats_table::size)
        .def_property_readonly("known", &column_stats_table::known);

    py::class_<join_edge>(m, "JoinEdge")
        .def_readonly("a", &join_edge::a)
        .def_readonly("b", &join_edge::b)
        .def_readonly("weight", &join_edge::weight)
        .def_readonly("from_column", &join_edge::from)
        .def_readonly("to_column", &join_edge::to)
        .def_readonly("declared", &join_edge::declared);

    py::class_<join_graph, std::shared_ptr<join_graph>> graph(m, "JoinGraph");
    def_static_with_defaults(
        graph, "build",
        [](const std::shared_ptr<const table_index>& index, const py::object& embed,
           const std::string& name, const std::optional<column_stats_table>& stats,
           const std::string& names, double default_uniqueness, std::size_t batch_size,
           std::size_t exhaustive_max_tables, std::size_t max_block_tables,
           std::size_t max_edges_per_table, bool infer_compatibility, const py::object& progress) {
            join_graph_options o;
            o.names = to_name_style(names);
            o.compatibility.default_uniqueness = default_uniqueness;
            o.batch_size = batch_size;
            o.exhaustive_max_tables = exhaustive_max_tables;
            o.max_block_tables = max_block_tables;
            o.max_edges_per_table = max_edges_per_table;
            o.infer_compatibility = infer_compatibility;
            auto embedder = to_embedder(embed, name);
            auto report = python_progress_fn(progress);
            const column_stats_table none;
            py::gil_scoped_release release;
            const interrupt_scope interruptible(python_interrupt());
            return std::make_shared<join_graph>(join_graph::build(
                index->catalog(), embedder, name, stats ? *stats : none, o, report));
        },
        py::arg("index"), py::arg("embed"), py::arg("embedder_name"), py::arg("stats") = py::none(),
        py::arg("names") = "natural",
        py::arg("default_uniqueness") = join_graph_options{}.compatibility.default_uniqueness,
        py::arg("batch_size") = join_graph_options{}.batch_size,
        py::arg("exhaustive_max_tables") = join_graph_options{}.exhaustive_max_tables,
        py::arg("max_block_tables") = join_graph_options{}.max_block_tables,
        py::arg("max_edges_per_table") = join_graph_options{}.max_edges_per_table,
        py::arg("infer_compatibility") = join_graph_options{}.infer_compatibility,
        py::arg("progress") = py::none());
    graph
        .def_static(
            "load",
            [](const std::filesystem::path& path, const std::shared_ptr<const table_index>& index) {
                py::gil_scoped_release release;
                return std::make_shared<join_graph>(join_graph::load(path, index->catalog()));
            },
            py::arg("path"), py::arg("index"))
        .def("save", &join_graph::save, py::arg("path"), py::call_guard<py::gil_scoped_release>())
        .def("weight", &join_graph::weight, py::arg("a"), py::arg("b"))
        .def_property_readonly("edges", &join_graph::edges)
        .def_property_readonly("embedder_name", &join_graph::embedder_name)
        .def_property_readonly("column_vectors", &join_graph::column_vectors)
        .def(
            "column_texts",
            [](const join_graph& g, const std::shared_ptr<const table_index>& index) {
                const auto& cat = index->catalog();
                std::vector<std::string> out;
                out.reserve(cat.columns().size());
                for (column_id c = 0; c < cat.columns().size(); ++c)
                    out.push_back(join_graph::column_text(cat, c, g.names()));
                return out;
            },
            py::arg("index"))
        .def("__len__", [](const join_graph& g) { return g.edges().size(); });
}

/// save_index / load_index: a table index with its join graph and questions, one directory.
void register_saved(py::module_& m) {
    m.def(
        "save_index",
        [](const std::filesystem::path& path, const std::shared_ptr<const table_index>& index,
           const std::shared_ptr<const join_graph>& graph,
           const std::shared_ptr<const question_index>& questions, bool replace,
           const std::shared_ptr<const value_index>& values) {
            save_index(path, *index, graph.get(), questions.get(), replace, values.get());
        },
        py::arg("path"), py::arg("index"), py::arg("join_graph") = nullptr,
        py::arg("questions") = nullptr, py::arg("replace") = false, py::arg("values") = nullptr,
        py::call_guard<py::gil_scoped_release>(),
        "Saves an index with its join graph, questions and values into one directory.");
    m.def(
        "load_index",
        [](const std::filesystem::path& path, bool graph, bool questions) {
            auto saved = [&] {
                py::gil_scoped_release release;
                return load_index(path, {graph, questions, true});
            }();
            std::shared_ptr<join_graph> g;
            std::shared_ptr<question_index> q;
            std::shared_ptr<value_index> v;
            if (saved.graph) g = std::make_shared<join_graph>(std::move(*saved.graph));
            if (saved.questions) q = std::make_shared<question_index>(std::move(*saved.questions));
            if (saved.values) v = std::make_shared<value_index>(std::move(*saved.values));
            const py::object tuning =
                saved.tuning ? py::object(py::str(saved.tuning->dump())) : py::object(py::none());
            return py::make_tuple(std::make_shared<table_index>(std::move(saved.index)), g, q, v,
                                  tuning);
        },
        py::arg("path"), py::arg("graph") = true, py::arg("questions") = true,
        "Loads an index directory in one consistent read: (index, join graph or None, "
        "questions or None, values or None, tuned pipeline as JSON text or None); "
        "graph/questions False skip those parts.");
    m.def(
        "save_tuning",
        [](const std::filesystem::path& path, const std::shared_ptr<const table_index>& index,
           const std::string& choice) {
            auto json = nlohmann::json::parse(choice, nullptr, false);
            if (json.is_discarded() || !json.is_object())
                throw py::value_error("save_tuning: the choice must be a JSON object");
            py::gil_scoped_release release;
            save_tuning(path, *index, json);
        },
        py::arg("path"), py::arg("index"), py::arg("choice"),
        "Saves the pipeline `tabret tune` chose (a JSON object) into the index directory that "
        "holds index, keeping its other parts.");
}

void register_selectors(py::module_& m) {
    py::class_<py_greedy, std::shared_ptr<py_greedy>> greedy(m, "GreedyJoinRetriever");
    def_init(
        greedy,
        py::init([](std::shared_ptr<const table_index> index,
                    std::shared_ptr<const join_graph> graph, const py::object& embed,
                    const std::string& name, const py::object& rewriter, std::size_t candidates,
                    float coarse, float coverage, float join, const py::object& first) {
            return make_join_retriever<greedy_join_retriever>(
                std::move(index), std::move(graph), embed, name, rewriter,
                greedy_join_options{candidates, {coarse, coverage, join}}, first);
        }),
        py::arg("index"), py::arg("graph"), py::arg("embed"), py::arg("embedder_name"),
        py::arg("rewriter"), py::arg("candidates") = greedy_join_options{}.candidates,
        py::arg("coarse") = greedy_weights{}.coarse,
        py::arg("coverage") = greedy_weights{}.coverage, py::arg("join") = greedy_weights{}.join,
        py::arg("first") = py::none());
    def_retrieve(greedy);

    py::class_<py_exact, std::shared_ptr<py_exact>> exact(m, "JarExactRetriever");
    def_init(
        exact,
        py::init([](std::shared_ptr<const table_index> index,
                    std::shared_ptr<const join_graph> graph, const py::object& embed,
                    const std::string& name, const py::object& rewriter, std::size_t candidates,
                    const std::vector<float>& w, const std::string& connected,
                    const py::object& first, std::size_t max_nodes) {
            if (w.size() != 5)
                throw py::value_error(
                    fmt::format("weights must be five numbers [w1..w5], got {}", w.size()));
            return make_join_retriever<jar_exact_retriever>(
                std::move(index), std::move(graph), embed, name, rewriter,
                jar_exact_options{candidates,
                                  {w[0], w[1], w[2], w[3], w[4]},
                                  to_connectivity(connected),
                                  max_nodes},
                first);
        }),
        py::arg("index"), py::arg("graph"), py::arg("embed"), py::arg("embedder_name"),
        py::arg("rewriter"), py::arg("candidates") = jar_exact_options{}.candidates,
        py::arg("weights") = to_vector(jar_exact_options{}.weights),
        py::arg("connectivity") = "soft", py::arg("first") = py::none(),
        py::arg("max_nodes") = jar_exact_options{}.max_nodes);
    def_retrieve(exact);

    py::class_<routing_options>(m, "RoutingOptions", "Database routing's options (defaults).")
        .def(py::init<>())
        .def_readwrite("databases", &routing_options::databases)
        .def_readwrite("depth", &routing_options::depth)
        .def_readwrite("column_depth", &routing_options::column_depth)
        .def_readwrite("rank_constant", &routing_options::rank_constant)
        .def_readwrite("per_database", &routing_options::per_database)
        .def_readwrite("others", &routing_options::others);
    py::class_<py_router, std::shared_ptr<py_router>> router(m, "DatabaseRouter");
    router.def(py::init([](std::shared_ptr<const table_index> index, const py::object& first,
                           const routing_options& options) {
                   return std::make_shared<py_router>(
                       [&](const auto& i) {
                           return database_router<any_retriever>(i->catalog(), stage_of(first),
                                                                 options);
                       },
                       std::move(index));
               }),
               py::arg("index"), py::arg("first"), py::arg("options") = routing_options{});
    def_retrieve(router);

    py::class_<py_fused, std::shared_ptr<py_fused>> fused(m, "FusedRetriever");
    def_init(fused,
             py::init([](const py::object& a, const py::object& b, const std::string& mode,
                         double alpha, double rrf_k, std::size_t depth) {
                 fused_options o;
                 o.fusion.mode = to_fusion(mode);
                 o.fusion.alpha = alpha;
                 o.fusion.rrf_k = rrf_k;
                 o.depth = depth;
                 return std::make_shared<py_fused>(
                     [&] { return fused_retriever(stage_of(a), stage_of(b), o); });
             }),
             py::arg("a"), py::arg("b"), py::arg("mode") = "rrf",
             py::arg("alpha") = fusion_params{}.alpha, py::arg("rrf_k") = fusion_params{}.rrf_k,
             py::arg("depth") = fused_options{}.depth);
    def_retrieve(fused);

    py::class_<py_closure, std::shared_ptr<py_closure>> closure(m, "JoinClosure");
    def_init(closure,
             py::init([](std::shared_ptr<const table_index> index, std::size_t budget,
                         std::size_t max_between, const std::string& mode) {
                 return std::make_shared<py_closure>(
                     [](const auto& i, const auto&) { return fk_graph(i->catalog()); },
                     std::move(index), closure_options{budget, max_between, to_mode(mode)});
             }),
             py::arg("index"), py::arg("budget") = closure_options{}.budget,
             py::arg("max_between") = closure_options{}.max_between, py::arg("mode") = "append")
        .def(
            "apply",
            [](const py_closure& c, const std::vector<retrieval>& results, std::size_t k) {
                return join_closure(c.held<std::shared_ptr<const table_index>>()->catalog(),
                                    c.get(), results, k, c.held<closure_options>());
            },
            py::arg("results"), py::arg("k"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace

void register_join(py::module_& m) {
    register_saved(m);
    register_graph(m);
    register_selectors(m);
}

}  // namespace tabret::bindings
