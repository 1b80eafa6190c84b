// Embedders and the table index.
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/hnsw_index.hpp>
#include <tabret/index/table_index.hpp>

#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl/filesystem.h>

#include "callbacks.hpp"
#include "choices.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

index_kind to_kind(const std::string& s) {
    return choice<index_kind>("kind", s,
                              {{"exact", index_kind::exact},
                               {"hnsw", index_kind::hnsw},
                               {"sparse", index_kind::sparse},
                               {"pca", index_kind::pca},
                               {"int8", index_kind::int8},
                               {"auto", index_kind::automatic}});
}

/// An index's search (exact_index, hnsw_index) as two arrays (ids, scores), one row per query
/// of min(k, size) entries; where an approximate search found fewer, id -1 and score -inf.
template <class Index>
std::pair<py::array_t<std::int64_t>, py::array_t<float>> search_arrays(const Index& index,
                                                                       const matrix& queries,
                                                                       std::size_t k) {
    std::vector<hits> found;
    {
        const py::gil_scoped_release release;
        found = index.search(queries, k);
    }
    const auto rows = static_cast<py::ssize_t>(found.size());
    const auto cols = static_cast<py::ssize_t>(std::min(k, index.size()));
    py::array_t<std::int64_t> ids({rows, cols});
    py::array_t<float> scores({rows, cols});
    auto id = ids.mutable_unchecked<2>();
    auto score = scores.mutable_unchecked<2>();
    for (py::ssize_t q = 0; q < rows; ++q) {
        const auto& row = found[static_cast<std::size_t>(q)];
        for (py::ssize_t j = 0; j < cols; ++j) {
            const bool hit = static_cast<std::size_t>(j) < row.size();  // an HNSW row may be short
            id(q, j) = hit ? static_cast<std::int64_t>(row[static_cast<std::size_t>(j)].id) : -1;
            score(q, j) = hit ? row[static_cast<std::size_t>(j)].score
                              : -std::numeric_limits<float>::infinity();
        }
    }
    return {ids, scores};
}

matrix embed_list(const hashing_embedder& e, const std::vector<std::string>& texts) {
    return e.embed(texts);
}

}  // namespace

callback_embedder to_embedder(const py::object& embed, const std::string& name) {
    if (py::isinstance<hashing_embedder>(embed)) {
        const auto h = embed.cast<hashing_embedder>();  // a copy: used without the GIL
        return {[h](std::span<const std::string> texts) { return h.embed(texts); }, name,
                hashing_embedder::allows_zero_rows()};
    }
    if (!PyCallable_Check(embed.ptr()))
        throw py::type_error("embedder must be a HashingEmbedder or a callable list[str] -> array");
    // A callable, or the object whose bound method it is, may declare `allows_zero_rows = True`
    // (a zero vector is a legitimate answer); otherwise a zero row is an EmbeddingError.
    const auto declares = [](const py::object& o) {
        return py::bool_(py::getattr(o, "allows_zero_rows", py::bool_(false))).cast<bool>();
    };
    const bool zero_ok = declares(embed) || declares(py::getattr(embed, "__self__", py::none()));
    return {python_embed_fn(embed, name), name, zero_ok};
}

void register_index(py::module_& m) {
    py::class_<hashing_embedder>(m, "HashingEmbedder",
                                 "Model-free embedder: hashed words, word pairs, char n-grams.")
        .def(py::init([](std::size_t dim, std::size_t char_ngram, float word_weight,
                         float bigram_weight, float char_weight, bool stopwords) {
                 return hashing_embedder(
                     {dim, char_ngram, word_weight, bigram_weight, char_weight, stopwords});
             }),
             py::arg("dim") = 1024, py::arg("char_ngram") = 3, py::arg("word_weight") = 1.0f,
             py::arg("bigram_weight") = 0.25f, py::arg("char_weight") = 1.0f,
             py::arg("stopwords") = true)
        .def("embed", &embed_list, py::arg("texts"), py::call_guard<py::gil_scoped_release>())
        .def("__call__", &embed_list, py::arg("texts"), py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("dim", &hashing_embedder::dim)
        .def_property_readonly("name", &hashing_embedder::name)
        .def_property_readonly(
            "allows_zero_rows",
            [](const hashing_embedder&) { return hashing_embedder::allows_zero_rows(); },
            "A text with no features embeds as a zero vector (score 0), not an error.")
        .def("__repr__", [](const hashing_embedder& e) {
            return fmt::format("HashingEmbedder({})", e.name());
        });

    py::class_<table_index, std::shared_ptr<table_index>>(m, "TableIndex")
        .def_static(
            "build",
            [](const catalog& cat, const py::object& embed, const std::string& name,
               const std::string& format, const std::string& names, bool columns,
               const std::string& kind, std::size_t hnsw_m, std::size_t ef_construction,
               std::size_t ef_search, std::size_t sparse_max_postings, std::size_t sparse_rescore,
               std::size_t pca_dims, std::size_t pca_scan_dims, std::size_t pca_shortlist,
               std::size_t pca_rescore, std::size_t batch_size, const py::object& progress) {
                table_index_options o;
                o.format = to_table_format(format);
                o.names = to_name_style(names);
                o.columns = columns;
                o.kind = to_kind(kind);
                o.hnsw.m = hnsw_m;
                o.hnsw.ef_construction = ef_construction;
                o.hnsw.ef_search = ef_search;
                o.sparse.max_postings = sparse_max_postings;
                o.sparse.rescore = sparse_rescore;
                o.pca.dims = pca_dims;
                o.pca.scan_dims = pca_scan_dims;
                o.pca.shortlist = pca_shortlist;
                o.pca.rescore = pca_rescore;
                o.batch_size = batch_size;
                auto embedder = to_embedder(embed, name);
                auto report = python_progress_fn(progress);
                py::gil_scoped_release release;
                return std::make_shared<table_index>(
                    table_index::build(cat, embedder, name, o, report));
            },
            py::arg("catalog"), py::arg("embed"), py::arg("embedder_name"),
            py::arg("format") = "related", py::arg("names") = "natural", py::arg("columns") = true,
            py::arg("kind") = "auto", py::arg("hnsw_m") = 16, py::arg("ef_construction") = 200,
            py::arg("ef_search") = 64,
            py::arg("sparse_max_postings") = sparse_params{}.max_postings,
            py::arg("sparse_rescore") = sparse_params{}.rescore,
            py::arg("pca_dims") = pca_params{}.dims,
            py::arg("pca_scan_dims") = pca_params{}.scan_dims,
            py::arg("pca_shortlist") = pca_params{}.shortlist,
            py::arg("pca_rescore") = pca_params{}.rescore, py::arg("batch_size") = 512,
            py::arg("progress") = py::none())
        .def_static(
            "load",
            [](const std::filesystem::path& dir) {
                return std::make_shared<table_index>(table_index::load(dir));
            },
            py::arg("path"), py::call_guard<py::gil_scoped_release>())
        .def("save", &table_index::save, py::arg("path"), py::arg("replace") = false,
             py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("catalog", &table_index::catalog)
        .def_property_readonly("embedder_name", &table_index::embedder_name)
        .def_property_readonly("catalog_fingerprint", &table_index::catalog_fingerprint)
        .def_property_readonly("dim", &table_index::dim)
        .def_property_readonly("has_columns", &table_index::has_columns)
        .def_property_readonly(
            "kind",
            [](const table_index& i) { return std::string(detail::to_string(i.options().kind)); })
        .def_property_readonly(
            "search_kinds",
            [](const table_index& i) {
                py::dict kinds;
                kinds["tables"] = std::string(detail::to_string(i.table_search_kind()));
                if (i.has_columns())
                    kinds["columns"] = std::string(detail::to_string(i.column_search_kind()));
                return kinds;
            })
        .def_property_readonly(
            "format",
            [](const table_index& i) { return std::string(detail::to_string(i.options().format)); })
        .def_property_readonly(
            "names",
            [](const table_index& i) { return std::string(detail::to_string(i.options().names)); })
        .def("table_text", &table_index::table_text, py::arg("table"))
        .def("table_texts", &table_index::texts_of_tables)
        .def("column_texts", &table_index::texts_of_columns)
        .def_property_readonly("table_vectors",
                               [](const table_index& i) { return i.tables().vectors(); })
        .def_property_readonly("column_vectors",
                               [](const table_index& i) { return i.columns().vectors(); });

    py::class_<exact_index, std::shared_ptr<exact_index>>(
        m, "ExactIndex",
        "Exact inner-product search over your own float32 rows (expected L2-normalised): the "
        "scan TableIndex uses, with int8 codes scanned first when quantize=True.")
        .def(py::init([](matrix vectors, bool quantize) {
                 auto index = std::make_shared<exact_index>(std::move(vectors));
                 if (quantize) index->quantize();
                 return index;
             }),
             py::arg("vectors"), py::kw_only(), py::arg("quantize") = false,
             py::call_guard<py::gil_scoped_release>())
        .def("search", &search_arrays<exact_index>, py::arg("queries"), py::arg("k"),
             "(ids, scores): two (queries × min(k, size)) arrays, best first, ties by id.")
        .def_property_readonly("size", &exact_index::size)
        .def_property_readonly("dim", &exact_index::dim)
        .def_property_readonly("quantized", &exact_index::quantized)
        .def_property_readonly("bytes", &exact_index::bytes);

    py::class_<hnsw_index, std::shared_ptr<hnsw_index>>(
        m, "HnswIndex",
        "Approximate inner-product search (hnswlib's HNSW graph) over your own float32 rows "
        "(expected L2-normalised): the graph TableIndex builds for kind='hnsw', holding the "
        "rows once.")
        .def(py::init([](matrix vectors, std::size_t m, std::size_t ef_construction,
                         std::size_t ef_search, std::size_t threads, std::size_t seed) {
                 const hnsw_params params{.m = m,
                                          .ef_construction = ef_construction,
                                          .ef_search = ef_search,
                                          .seed = seed,
                                          .threads = threads};
                 auto rows = std::make_shared<const matrix>(std::move(vectors));
                 const auto total = static_cast<std::size_t>(rows->rows());
                 auto report = python_progress_fn(py::none());  // Ctrl-C stops the build
                 const py::gil_scoped_release release;
                 return std::make_shared<hnsw_index>(
                     std::move(rows), params,
                     [&](std::size_t done) { report("hnsw", done, total); });
             }),
             py::arg("vectors"), py::kw_only(), py::arg("m") = hnsw_params{}.m,
             py::arg("ef_construction") = hnsw_params{}.ef_construction,
             py::arg("ef_search") = hnsw_params{}.ef_search,
             py::arg("threads") = hnsw_params{}.threads, py::arg("seed") = hnsw_params{}.seed)
        .def("search", &search_arrays<hnsw_index>, py::arg("queries"), py::arg("k"),
             "(ids, scores): two (queries × min(k, size)) arrays, best first (approximate: "
             "searched with ef = max(ef_search, k); where fewer were found, id -1 and score "
             "-inf).")
        .def_property_readonly("size", &hnsw_index::size)
        .def_property_readonly("dim", &hnsw_index::dim);
}

}  // namespace tabret::bindings
