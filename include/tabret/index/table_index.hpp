#pragma once
/// @file index/table_index.hpp
/// @brief Catalog + table vectors + column vectors + BM25 (+ HNSW), built once, saved and loaded
/// as one versioned, checksummed directory.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/bm25_index.hpp"
#include "tabret/index/exact_index.hpp"
#include "tabret/index/hnsw_index.hpp"
#include "tabret/index/pca_index.hpp"
#include "tabret/index/sparse_index.hpp"
#include "tabret/io/artifact_version.hpp"
#include "tabret/progress.hpp"
#include "tabret/serialize.hpp"

namespace tabret {

/// Which vector index answers unrestricted searches: exact (dense scan), hnsw (approximate
/// graph, saved with the index), sparse (an inverted index over sparse vectors such as the
/// hashing embedder's, built from the vectors at build and at load; exact up to a budget of
/// postings per query, sparse_params), int8 (exact, a scan of
/// int8 codes then exact re-scoring of the rows that may reach the top k: exact_index::quantize,
/// codes built at build and at load), pca (approximate, for dense vectors: a scan of 2- and 4-bit
/// codes of the leading principal components, then exact re-scoring of the best rows: pca_index,
/// built from the vectors at build and at load; pca_params), automatic (the default: each of the
/// tables' and the columns' vectors gets the kind automatic_kind picks for them).
enum class index_kind { exact, hnsw, sparse, int8, pca, automatic };

/// index_kind::automatic scans vectors exactly up to this many bytes of float32 rows (8 MiB,
/// about a millisecond a query: 2,048 hashing or 5,461 MiniLM rows).
inline constexpr std::size_t automatic_exact_bytes = std::size_t{8} << 20;

/**
 * @brief The kind index_kind::automatic searches @p vectors with: exact up to
 * automatic_exact_bytes; above it sparse for sparse vectors (at most sparse_index::max_density
 * of the entries non-zero, as the hashing embedder's), pca for dense ones (docs/benchmarks.md
 * §2: over Spider 2.0-lite's 532,388 columns both answer in about 4–5 ms at 96–99 % recall@10
 * of exact search, where the exact scan takes 78–172 ms).
 */
[[nodiscard]] index_kind automatic_kind(const matrix& vectors);

struct table_index_options {
    table_format format = table_format::related;  ///< How a table is written for embedding.
    name_style names = name_style::natural;
    bool columns = true;  ///< Also embed one `db.table.column` per column (`: description`
                          ///< after it with table_format::described).
    index_kind kind = index_kind::automatic;
    hnsw_params hnsw{};            ///< Used when kind == hnsw.
    sparse_params sparse{};        ///< Used when kind == sparse.
    pca_params pca{};              ///< Used when kind == pca.
    std::size_t batch_size = 512;  ///< Texts per embedder call while building.
};

/// The version of the saved directory (the artifact, io/artifact.hpp) this tabret writes and reads.
inline constexpr int table_index_version = static_cast<int>(detail::artifact_version);

namespace detail {

class artifact;
struct artifact_part;

inline std::string_view to_string(index_kind k) {
    switch (k) {
        case index_kind::hnsw:
            return "hnsw";
        case index_kind::sparse:
            return "sparse";
        case index_kind::int8:
            return "int8";
        case index_kind::pca:
            return "pca";
        case index_kind::automatic:
            return "auto";
        case index_kind::exact:
            break;
    }
    return "exact";
}
inline std::string_view to_string(table_format f) {
    switch (f) {
        case table_format::words:
            return "words";
        case table_format::ddl:
            return "ddl";
        case table_format::described:
            return "described";
        case table_format::related:
            return "related";
        case table_format::signature:
            break;
    }
    return "signature";
}
inline std::string_view to_string(name_style s) {
    return s == name_style::original ? "original" : "natural";
}

}  // namespace detail

/**
 * @brief Everything a retriever searches, for one catalog and one embedder. Immutable once
 * built; every const method is thread-safe.
 */
class table_index {
  public:
    /**
     * @brief Embeds every table (and column) of @p cat with @p embedder, in batches of
     * options.batch_size, reporting progress after each batch. The index holds @p cat
     * numbered as catalog.json nests it (tables by database, columns by table): a catalog
     * whose columns were added out of that order (a column of an earlier table after a later
     * table's) gets new ids in catalog(), the ids every result and a reload use.
     * @param embedder_name stored in the index; a query embedder must match it.
     * @throws error for an empty catalog; embedding_error for a bad embedder answer; whatever
     * @p progress throws.
     */
    template <Embedder E>
    static table_index build(catalog cat, const E& embedder, std::string embedder_name,
                             table_index_options options = {}, const progress_fn& progress = {}) {
        if (cat.tables().empty())
            throw error("cannot build an index over a catalog with no tables");
        if (options.batch_size == 0) throw error("batch_size must be positive");
        table_index index(std::move(cat), std::move(embedder_name), options);
        const auto table_texts = index.texts_of_tables();
        index.tables_ =
            exact_index(embed_all(embedder, table_texts, 0, options, "tables", progress));
        index.dim_ = index.tables_.dim();
        if (options.columns && !index.catalog_.columns().empty())
            index.columns_ = exact_index(embed_all(embedder, index.texts_of_columns(), index.dim_,
                                                   options, "columns", progress));
        index.bm25_ = bm25_index(table_texts);
        if (options.kind == index_kind::hnsw) index.build_hnsw(progress);
        index.build_derived();
        return index;
    }

    [[nodiscard]] const class catalog& catalog() const noexcept { return catalog_; }
    /// The catalog's fingerprint (io/catalog_fingerprint.hpp), computed once: what saved join
    /// graphs and generated questions are checked against.
    [[nodiscard]] const std::string& catalog_fingerprint() const noexcept { return fingerprint_; }
    [[nodiscard]] const std::string& embedder_name() const noexcept { return embedder_name_; }
    [[nodiscard]] const table_index_options& options() const noexcept { return options_; }
    [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
    [[nodiscard]] const exact_index& tables() const noexcept { return tables_; }
    /// @throws error when the index was built without columns.
    [[nodiscard]] const exact_index& columns() const {
        if (!columns_) throw error("this index was built without column vectors");
        return *columns_;
    }
    [[nodiscard]] bool has_columns() const noexcept { return columns_.has_value(); }
    [[nodiscard]] const bm25_index& bm25() const noexcept { return bm25_; }
    /// The kind the tables' vectors are searched with (options().kind, or what
    /// index_kind::automatic picked for them).
    [[nodiscard]] index_kind table_search_kind() const noexcept { return tables_kind_; }
    /// The kind the columns' vectors are searched with (exact when there are none).
    [[nodiscard]] index_kind column_search_kind() const noexcept { return columns_kind_; }

    /// The text a table was embedded as.
    [[nodiscard]] std::string table_text(table_id t) const;
    /// The text embedded for each table, in table order (table_text of each).
    [[nodiscard]] std::vector<std::string> texts_of_tables() const;
    /// The text embedded for each column, in column order (whether or not columns are indexed).
    [[nodiscard]] std::vector<std::string> texts_of_columns() const;

    /** @brief Top-k tables per query row (by the index kind built). Thread-safe. */
    [[nodiscard]] std::vector<hits> search_tables(const matrix& queries, std::size_t k) const {
        if (tables_hnsw_) return tables_hnsw_->search(queries, k);
        if (tables_sparse_) return tables_sparse_->search(queries, k);
        if (tables_pca_) return tables_pca_->search(queries, k);
        return tables_.search(queries, k);
    }
    /** @brief Top-k columns per query row. Thread-safe. @throws error without columns. */
    [[nodiscard]] std::vector<hits> search_columns(const matrix& queries, std::size_t k) const {
        if (columns_hnsw_) return columns_hnsw_->search(queries, k);
        if (columns_sparse_) return columns_sparse_->search(queries, k);
        if (columns_pca_) return columns_pca_->search(queries, k);
        return columns().search(queries, k);
    }

    /**
     * @brief Writes the index into the artifact directory @p dir (io/artifact.hpp): manifest.json
     * (format, version, catalog fingerprint, per-part options and per-file size and checksum,
     * sealed by its own checksum), catalog.json, vector files, bm25.json and HNSW graphs. A join
     * graph or generated questions already saved there for the same catalog and embedder are
     * kept; ones made for another are refused unless @p replace. Written into a marked temporary
     * sibling and swapped in; an interrupted save leaves the previous directory intact; a
     * directory holding anything tabret did not write is never replaced. @throws io_error.
     */
    void save(const std::filesystem::path& dir, bool replace = false) const;

    /// The index as a part of an artifact (its files and options).
    [[nodiscard]] detail::artifact_part to_part() const;

    /**
     * @brief Loads the index saved in directory @p dir: one consistent read of the artifact
     * (detail::artifact::read), every file's size and checksum verified before it is parsed.
     * @throws io_error for a missing directory or file, another format version, a size or
     * checksum mismatch (corrupt or edited file); parse_error / schema_error for a bad manifest.
     */
    static table_index load(const std::filesystem::path& dir);

    /// Loads the index part of an artifact already read. @throws as load(dir).
    static table_index load(const detail::artifact& saved);

  private:
    table_index(class catalog cat, std::string embedder_name, table_index_options options);

    template <Embedder E>
    static matrix embed_all(const E& embedder, const std::vector<std::string>& texts,
                            std::size_t dim, const table_index_options& options,
                            std::string_view stage, const progress_fn& progress) {
        return embed_in_batches(embedder, texts, options.batch_size, dim, [&](std::size_t done) {
            if (progress) progress(stage, done, texts.size());
        });
    }

    /// HNSW graphs over the vectors; progress stages "hnsw tables" and "hnsw columns" count
    /// inserted items.
    void build_hnsw(const progress_fn& progress);
    /// What the kind builds from the vectors, at build and at load (sparse, int8 or pca
    /// structures), and which kind each part is searched with.
    void build_derived();

    class catalog catalog_;
    std::string fingerprint_;  ///< of catalog_, computed once
    std::string embedder_name_;
    table_index_options options_;
    std::size_t dim_ = 0;
    exact_index tables_{matrix(0, 0)};
    std::optional<exact_index> columns_;
    bm25_index bm25_;
    std::optional<hnsw_index> tables_hnsw_;
    std::optional<hnsw_index> columns_hnsw_;
    std::optional<sparse_index> tables_sparse_;
    std::optional<sparse_index> columns_sparse_;
    std::optional<pca_index> tables_pca_;
    std::optional<pca_index> columns_pca_;
    index_kind tables_kind_ = index_kind::exact;   ///< options_.kind, resolved
    index_kind columns_kind_ = index_kind::exact;  ///< options_.kind, resolved
};

}  // namespace tabret
