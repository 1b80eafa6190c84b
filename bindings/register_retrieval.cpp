// Retrieval results, retrievers and metrics.
#include <tabret/eval/metrics.hpp>
#include <tabret/retrieval/first_stage/bm25_retriever.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "callbacks.hpp"
#include "choices.hpp"
#include "defaults.hpp"
#include "owner.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

using py_dense_retriever = owner<dense_retriever<callback_embedder>,
                                 std::shared_ptr<const table_index>, callback_embedder>;
using py_bm25_retriever = owner<bm25_retriever, std::shared_ptr<const table_index>>;

}  // namespace

void register_retrieval(py::module_& m) {
    // Constructible, so that a stage written in Python returns what native stages return.
    py::class_<scored_table>(m, "ScoredTable")
        .def(py::init([](table_id table, float score) {
                 return scored_table{table, score};
             }),
             py::arg("table"), py::arg("score"))
        .def_readonly("table", &scored_table::table)
        .def_readonly("score", &scored_table::score);
    py::class_<scored_column>(m, "ScoredColumn")
        .def(py::init([](column_id column, float score) {
                 return scored_column{column, score};
             }),
             py::arg("column"), py::arg("score"))
        .def_readonly("column", &scored_column::column)
        .def_readonly("score", &scored_column::score);
    py::class_<trace_entry>(m, "TraceEntry")
        .def(py::init([](table_id table, std::string step, std::string query, float score,
                         std::string value) {
                 return trace_entry{table, std::move(step), std::move(query), score,
                                    std::move(value)};
             }),
             py::arg("table"), py::arg("step"), py::arg("query"), py::arg("score"),
             py::arg("value") = std::string())
        .def_readonly("table", &trace_entry::table)
        .def_readonly("step", &trace_entry::step)
        .def_readonly("query", &trace_entry::query)
        .def_readonly("score", &trace_entry::score)
        .def_readonly("value", &trace_entry::value);
    py::class_<retrieval>(m, "Retrieval")
        .def(py::init([](std::vector<scored_table> tables, std::vector<scored_column> columns,
                         std::optional<std::size_t> cut, std::vector<trace_entry> trace) {
                 if (cut && *cut > tables.size())
                     throw py::value_error(
                         fmt::format("cut {} is past the {} tables", *cut, tables.size()));
                 return retrieval{std::move(tables), std::move(columns), cut, std::move(trace)};
             }),
             py::arg("tables"), py::arg("columns") = std::vector<scored_column>{},
             py::arg("cut") = py::none(), py::arg("trace") = std::vector<trace_entry>{})
        .def_readonly("tables", &retrieval::tables)
        .def_readonly("columns", &retrieval::columns)
        .def_readonly("cut", &retrieval::cut)
        .def_readonly("trace", &retrieval::trace)
        .def(
            "with_columns",
            [](retrieval r, std::vector<scored_column> columns) {
                r.columns = std::move(columns);
                return r;
            },
            py::arg("columns"), "A copy with these columns (a stage merging two lists).");

    py::class_<py_dense_retriever, std::shared_ptr<py_dense_retriever>> dense(m, "DenseRetriever");
    def_init(dense,
             py::init([](std::shared_ptr<const table_index> index, const py::object& embed,
                         const std::string& name, bool hybrid, const std::string& fusion,
                         double alpha, std::size_t fusion_depth) {
                 dense_options o;
                 o.hybrid = hybrid;
                 o.fusion.mode = to_fusion(fusion);
                 o.fusion.alpha = alpha;
                 o.fusion_depth = fusion_depth;
                 return std::make_shared<py_dense_retriever>(
                     [&](const auto& i, const auto& e) {
                         return dense_retriever<callback_embedder>(*i, e, o);
                     },
                     std::move(index), to_embedder(embed, name));
             }),
             py::arg("index"), py::arg("embed"), py::arg("embedder_name"),
             py::arg("hybrid") = dense_options{}.hybrid, py::arg("fusion") = "rrf",
             py::arg("alpha") = dense_options{}.fusion.alpha,
             py::arg("fusion_depth") = dense_options{}.fusion_depth);
    def_retrieve(dense);

    py::class_<py_bm25_retriever, std::shared_ptr<py_bm25_retriever>> bm25(m, "BM25Retriever");
    bm25.def(py::init([](std::shared_ptr<const table_index> index) {
                 return std::make_shared<py_bm25_retriever>(
                     [](const auto& i) { return bm25_retriever(*i); }, std::move(index));
             }),
             py::arg("index"));
    def_retrieve(bm25);

    m.def(
        "recall_at",
        [](const std::vector<std::uint32_t>& ranked, const std::vector<std::uint32_t>& gold,
           std::size_t k) { return recall_at<std::uint32_t>(ranked, gold, k); },
        py::arg("ranked"), py::arg("gold"), py::arg("k"));
    m.def(
        "complete_recall_at",
        [](const std::vector<std::uint32_t>& ranked, const std::vector<std::uint32_t>& gold,
           std::size_t k) { return complete_recall_at<std::uint32_t>(ranked, gold, k); },
        py::arg("ranked"), py::arg("gold"), py::arg("k"));
}

}  // namespace tabret::bindings
