/// @file index/table_index.cpp
/// @brief table_index (include/tabret/index/table_index.hpp): everything but the build
/// template: texts, HNSW graphs, saving and loading the artifact.

#include "tabret/index/table_index.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/embedding/matrix_bytes.hpp"
#include "tabret/io/artifact.hpp"
#include "tabret/io/catalog_fingerprint.hpp"
#include "tabret/io/catalog_json.hpp"
#include "tabret/io/json_reader.hpp"

namespace tabret {

namespace {

/// The index part's options in the manifest.
nlohmann::json index_meta(const std::string& embedder_name, std::size_t dim,
                          const table_index_options& options) {
    return {{"embedder", embedder_name},
            {"dim", dim},
            {"table_format", detail::to_string(options.format)},
            {"names", detail::to_string(options.names)},
            {"kind", detail::to_string(options.kind)},
            {"hnsw",
             {{"m", options.hnsw.m},
              {"ef_construction", options.hnsw.ef_construction},
              {"ef_search", options.hnsw.ef_search},
              {"seed", options.hnsw.seed}}},
            {"sparse",
             {{"max_postings", options.sparse.max_postings}, {"rescore", options.sparse.rescore}}},
            {"pca",
             {{"dims", options.pca.dims},
              {"scan_dims", options.pca.scan_dims},
              {"shortlist", options.pca.shortlist},
              {"rescore", options.pca.rescore}}}};
}

table_index_options options_from(const detail::json_reader& r) {
    table_index_options o;
    constexpr table_format formats[] = {table_format::signature, table_format::words,
                                        table_format::ddl, table_format::described,
                                        table_format::related};
    o.format =
        formats[r.one_of("table_format", {"signature", "words", "ddl", "described", "related"})];
    o.names = r.one_of("names", {"natural", "original"}) == 0 ? name_style::natural
                                                              : name_style::original;
    constexpr index_kind kinds[] = {index_kind::exact, index_kind::hnsw, index_kind::sparse,
                                    index_kind::int8,  index_kind::pca,  index_kind::automatic};
    o.kind = kinds[r.one_of("kind", {"exact", "hnsw", "sparse", "int8", "pca", "auto"})];
    const detail::json_reader h(r.get("hnsw", nlohmann::json::value_t::object), r.source(),
                                "manifest.hnsw");
    o.hnsw.m = h.count("m");
    o.hnsw.ef_construction = h.count("ef_construction");
    o.hnsw.ef_search = h.count("ef_search");
    o.hnsw.seed = h.count("seed");
    if (r.has("sparse")) {  // absent from indexes saved before the budget existed: exact
        const detail::json_reader sp(r.get("sparse", nlohmann::json::value_t::object), r.source(),
                                     "manifest.sparse");
        o.sparse.max_postings = sp.count("max_postings");
        o.sparse.rescore = sp.count("rescore");
    } else {
        o.sparse.max_postings = 0;
    }
    if (r.has("pca")) {  // absent from indexes saved before the pca kind existed
        const detail::json_reader p(r.get("pca", nlohmann::json::value_t::object), r.source(),
                                    "manifest.pca");
        o.pca.dims = p.count("dims");
        o.pca.scan_dims = p.count("scan_dims");
        o.pca.shortlist = p.count("shortlist");
        o.pca.rescore = p.count("rescore");
    }
    return o;
}

/// @throws io_error when a file holds another number of items than the catalog has.
void check_items(std::string_view path, std::size_t got, std::size_t expected,
                 std::string_view what) {
    if (got != expected)
        throw io_error(
            fmt::format("{}: holds {} items, the catalog has {} {}", path, got, expected, what));
}

/// The graph saved as @p name over the vectors loaded beside it (which it shares, checking that
/// the file holds the same ones).
hnsw_index load_hnsw(const detail::artifact& saved, const std::string& name,
                     const exact_index& vectors, const hnsw_params& params) {
    return hnsw_index::from_bytes(saved.file("index", name), vectors.shared_vectors(),
                                  saved.path_of(name), params);
}

}  // namespace

index_kind automatic_kind(const matrix& vectors) {
    const auto entries = static_cast<std::size_t>(vectors.size());
    if (entries * sizeof(float) <= automatic_exact_bytes) return index_kind::exact;
    const auto nonzeros = static_cast<std::size_t>((vectors.array() != 0.0f).count());
    return sparse_index::sparse_enough(nonzeros, entries) ? index_kind::sparse : index_kind::pca;
}

namespace {

/// @p cat as catalog.json nests it (tables by database, columns by table): itself when its
/// tables and columns already come in that order, else renumbered, so that the table and column
/// ids an index stores (its vectors' rows, the join graph's) survive a save and a load.
catalog in_saved_order(catalog cat) {
    const auto& tables = cat.tables();
    const auto& columns = cat.columns();
    bool ordered = true;
    for (std::size_t t = 1; t < tables.size() && ordered; ++t)
        ordered = tables[t - 1].database <= tables[t].database;
    for (std::size_t c = 1; c < columns.size() && ordered; ++c)
        ordered = columns[c - 1].table <= columns[c].table;
    if (ordered) return cat;
    return catalog_from_json(catalog_to_json(cat), "<catalog>");
}

}  // namespace

table_index::table_index(class catalog cat, std::string embedder_name, table_index_options options)
    : catalog_(in_saved_order(std::move(cat))),
      fingerprint_(detail::catalog_fingerprint(catalog_)),
      embedder_name_(std::move(embedder_name)),
      options_(options) {}

std::string table_index::table_text(table_id t) const {
    return serialize_table(catalog_, t, options_.format, options_.names);
}

void table_index::save(const std::filesystem::path& dir, bool replace) const {
    detail::save_artifact(dir, fingerprint_, {{"index", to_part()}}, replace);
}

detail::artifact_part table_index::to_part() const {
    detail::artifact_part part;
    part.meta = index_meta(embedder_name_, dim_, options_);
    part.files["catalog.json"] = detail::dump_json(catalog_to_json(catalog_), 1, "catalog.json");
    part.files["tables.f32"] = detail::matrix_bytes(tables_.vectors());
    if (columns_) part.files["columns.f32"] = detail::matrix_bytes(columns_->vectors());
    part.files["bm25.json"] = detail::dump_json(bm25_.to_json(), -1, "bm25.json");
    if (tables_hnsw_) part.files["tables.hnsw"] = tables_hnsw_->to_bytes();
    if (columns_hnsw_) part.files["columns.hnsw"] = columns_hnsw_->to_bytes();
    return part;
}

table_index table_index::load(const std::filesystem::path& dir) {
    return load(detail::artifact::read(dir));
}

table_index table_index::load(const detail::artifact& saved) {
    const auto& part = saved.part("index");
    const detail::json_reader r(part.meta, saved.manifest_path(), "manifest.parts.index.meta");
    auto read_json = [&](const std::string& name) {
        return detail::parse_json(saved.file("index", name), saved.path_of(name));
    };
    table_index index(catalog_from_json(read_json("catalog.json"), saved.path_of("catalog.json")),
                      r.str("embedder"), options_from(r));
    if (index.fingerprint_ != saved.catalog_fingerprint())
        throw io_error(fmt::format("{}: catalog.json is not the catalog the manifest names",
                                   saved.path_of("catalog.json")));
    auto matrix_of = [&](const std::string& name, std::size_t rows) {
        return exact_index(
            detail::read_matrix(saved.path_of(name), saved.file("index", name), rows, index.dim_));
    };
    index.dim_ = r.count("dim");
    index.tables_ = matrix_of("tables.f32", index.catalog_.tables().size());
    if (part.files.contains("columns.f32"))
        index.columns_ = matrix_of("columns.f32", index.catalog_.columns().size());
    index.bm25_ = bm25_index::from_json(read_json("bm25.json"), saved.path_of("bm25.json"));
    check_items(saved.path_of("bm25.json"), index.bm25_.size(), index.catalog_.tables().size(),
                "tables");
    if (part.files.contains("tables.hnsw"))
        index.tables_hnsw_ = load_hnsw(saved, "tables.hnsw", index.tables_, index.options_.hnsw);
    if (part.files.contains("columns.hnsw")) {
        if (!index.columns_)
            throw io_error(fmt::format("{}: a column graph without column vectors (columns.f32)",
                                       saved.path_of("columns.hnsw")));
        index.columns_hnsw_ =
            load_hnsw(saved, "columns.hnsw", *index.columns_, index.options_.hnsw);
    }
    index.build_derived();
    return index;
}

std::vector<std::string> table_index::texts_of_tables() const {
    std::vector<std::string> out;
    out.reserve(catalog_.tables().size());
    for (table_id t = 0; t < catalog_.tables().size(); ++t) out.push_back(table_text(t));
    return out;
}

std::vector<std::string> table_index::texts_of_columns() const {
    std::vector<std::string> out;
    out.reserve(catalog_.columns().size());
    for (column_id c = 0; c < catalog_.columns().size(); ++c)
        out.push_back(serialize_column(catalog_, c, options_.names,
                                       options_.format == table_format::described));
    return out;
}

void table_index::build_derived() {
    const auto derive = [&](exact_index& vectors, std::optional<sparse_index>& sparse,
                            std::optional<pca_index>& pca) {
        const auto kind = options_.kind == index_kind::automatic ? automatic_kind(vectors.vectors())
                                                                 : options_.kind;
        if (kind == index_kind::sparse) sparse.emplace(vectors.vectors(), options_.sparse);
        if (kind == index_kind::int8) vectors.quantize();
        if (kind == index_kind::pca) pca.emplace(vectors, options_.pca);
        return kind;
    };
    tables_kind_ = derive(tables_, tables_sparse_, tables_pca_);
    if (columns_) columns_kind_ = derive(*columns_, columns_sparse_, columns_pca_);
}

void table_index::build_hnsw(const progress_fn& progress) {
    const auto graph = [&](const exact_index& vectors, std::string_view stage) {
        const auto total = vectors.size();
        hnsw_index::build_progress_fn report;
        if (progress) report = [&](std::size_t done) { progress(stage, done, total); };
        return hnsw_index(vectors.shared_vectors(), options_.hnsw, report);
    };
    tables_hnsw_.emplace(graph(tables_, "hnsw tables"));
    if (columns_) columns_hnsw_.emplace(graph(*columns_, "hnsw columns"));
}

}  // namespace tabret
