#pragma once
/// @file index/hnsw_index.hpp
/// @brief Approximate inner-product search on hnswlib's HNSW graph, with checked save and load.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tabret/embedding/matrix.hpp"
#include "tabret/index/vector_index.hpp"

namespace tabret {

/// Parameters of an HNSW graph (hnswlib's names: M, ef_construction, ef).
struct hnsw_params {
    std::size_t m = 16;                 ///< links per node and layer (2m on the base layer), >= 2
    std::size_t ef_construction = 200;  ///< candidate list while building, >= 1
    std::size_t ef_search = 64;         ///< candidate list while searching (raised to k), >= 1
    std::size_t seed = 100;             ///< seed of the level generator
    std::size_t threads = 0;            ///< build threads; 0 = std::thread::hardware_concurrency
};

namespace detail {
class hnsw_space;  // hnswlib's space for inner products (index/hnsw_index.cpp)
class hnsw_graph;  // hnswlib's graph (index/hnsw_index.cpp)
}  // namespace detail

/**
 * @brief Approximate top-k inner-product search over n vectors of dimension d (hnswlib HNSW).
 *
 * Rows are expected to be L2-normalised (then scores are cosines). hnswlib ranks by the
 * distance 1 − inner product; returned scores are inner products recomputed from the vectors,
 * so they are exact for the items found and equal to search_within()'s.
 *
 * One copy of the vectors: the graph stores, for each item, a pointer to its row of a matrix
 * the index shares (with an exact_index over the same vectors, say), not the row itself, so
 * the index holds the vectors once plus the links and hnswlib's bookkeeping (~260 bytes per
 * item at M 16: docs/benchmarks.md §8). Item i is graph element i, so a distance computes the
 * row's address instead of reading the element (a file saved with other element ids loads
 * with a table of those pointers, 8 bytes an item more). The build is hnswlib's insertion
 * with a bounds-checked prefetch of the next candidate's row; one thread builds the graph
 * hnswlib's addPoint builds. Files keep hnswlib 0.6.2's format, vectors inline.
 *
 * Search width: hnswlib 0.6.2 searches with ef = max(ef_, k) inside searchKnn. ef_ is set to
 * `ef_search` once, when the index is built or loaded, and never changed afterwards, so a k
 * above ef_search widens the search by itself and concurrent searches need no lock.
 *
 * A built index is immutable: every const method is thread-safe. A moved-from index may only
 * be destroyed or assigned to; its other methods throw tabret::error.
 */
class hnsw_index {
  public:
    /// Called while building with the number of items inserted so far (see the constructor).
    using build_progress_fn = std::function<void(std::size_t done)>;

    /**
     * @brief Builds the graph over the rows of @p vectors (row i gets item id i), inserting in
     * parallel on `params.threads` threads. With more than one thread the graph depends on
     * thread timing; use threads = 1 for a reproducible graph.
     * @param progress if set, called on the calling thread about every 1,024 insertions and
     * once at the end; an exception it throws (a Ctrl-C, a cancel) stops the build and is
     * rethrown unchanged.
     * @throws embedding_error if a row has NaN or infinity or the dimension is 0.
     * @throws tabret::error if a parameter is invalid or hnswlib fails (e.g. out of memory).
     * Not thread-safe with respect to @p vectors being modified concurrently.
     */
    explicit hnsw_index(const matrix& vectors, hnsw_params params = {},
                        const build_progress_fn& progress = {});

    /**
     * @brief As above over vectors the index shares instead of copying (exact_index's
     * shared_vectors()); they must not change while the index lives.
     * @throws tabret::error if @p vectors is null; otherwise as above.
     */
    explicit hnsw_index(std::shared_ptr<const matrix> vectors, hnsw_params params = {},
                        const build_progress_fn& progress = {});

    hnsw_index(hnsw_index&&) noexcept;
    hnsw_index& operator=(hnsw_index&&) noexcept;
    hnsw_index(const hnsw_index&) = delete;
    hnsw_index& operator=(const hnsw_index&) = delete;
    ~hnsw_index();

    /** @brief Number of indexed vectors. Thread-safe. */
    [[nodiscard]] std::size_t size() const noexcept {
        return vectors_ ? static_cast<std::size_t>(vectors_->rows()) : 0;
    }

    /** @brief Dimension of the indexed vectors. Thread-safe. */
    [[nodiscard]] std::size_t dim() const noexcept;

    /** @brief The parameters (after load: M and ef_construction of the file). Thread-safe. */
    [[nodiscard]] const hnsw_params& params() const noexcept { return params_; }

    /**
     * @brief For each query row, up to min(k, size()) approximate nearest items (largest inner
     * product), best first (ties: smaller id first). Searches with ef = max(ef_search, k).
     * @throws tabret::error if k == 0.
     * @throws embedding_error if a query has the wrong dimension or a non-finite value.
     * Thread-safe.
     */
    [[nodiscard]] std::vector<hits> search(const matrix& queries, std::size_t k) const;

    /**
     * @brief Exact top-k among @p candidates (shared by all queries; duplicates count once):
     * hnswlib 0.6.2 cannot filter a graph search, so this scores every candidate against the
     * vectors stored in the graph. Cost: queries × candidates × dim.
     * @throws tabret::error if k == 0 or a candidate id is out of range (naming the id).
     * @throws embedding_error if a query has the wrong dimension or a non-finite value.
     * Thread-safe.
     */
    [[nodiscard]] std::vector<hits> search_within(const matrix& queries,
                                                  std::span<const item_id> candidates,
                                                  std::size_t k) const;

    /** @brief The vector of item @p id (dim() floats). Thread-safe. */
    [[nodiscard]] std::span<const float> vector(item_id id) const;

    /**
     * @brief The graph as hnswlib 0.6.2's file format (written through a private file, its
     * size checked: hnswlib reports no write errors). @throws io_error.
     * Thread-safe with searches.
     */
    [[nodiscard]] std::string to_bytes() const;

    /**
     * @brief Writes the graph to @p path atomically (write_file_atomic).
     * @throws io_error naming the path.
     * Thread-safe with searches.
     */
    void save(const std::filesystem::path& path) const;

    /**
     * @brief Loads a graph from the bytes of a file written by save() (or to_bytes()), named
     * @p source in messages. The bytes are checked structurally before hnswlib reads them
     * (sizes, links, labels, finite vectors), so a truncated or corrupt file gives an error,
     * not a crash, and hnswlib reads exactly the checked bytes (a private copy). `ef_search`
     * and `threads` come from @p params; M and ef_construction from the file.
     * @throws io_error naming @p source if it is corrupt or of another dimension than @p dim.
     * @throws tabret::error if @p params is invalid.
     * Thread-safe (touches no shared state).
     */
    static hnsw_index from_bytes(std::string_view bytes, std::size_t dim,
                                 const std::filesystem::path& source, hnsw_params params = {});

    /**
     * @brief As above, sharing @p vectors (the rows saved beside the graph, e.g. an
     * exact_index's) instead of keeping the file's copy: the file must hold exactly these
     * vectors, bit for bit, as many items as rows.
     * @throws io_error naming @p source if it is corrupt or holds other vectors or another
     * number of them; tabret::error if @p vectors is null or @p params is invalid.
     */
    static hnsw_index from_bytes(std::string_view bytes, std::shared_ptr<const matrix> vectors,
                                 const std::filesystem::path& source, hnsw_params params = {});

    /**
     * @brief Loads a graph file written by save(): reads it once (read_text_file), then
     * from_bytes. @throws io_error naming the path.
     */
    static hnsw_index load(const std::filesystem::path& path, std::size_t dim,
                           hnsw_params params = {});

  private:
    /// What hnswlib threw while building (out of memory, a bad parameter), as a tabret::error.
    [[noreturn]] static void build_failed(const std::exception& e);

    hnsw_index(std::shared_ptr<const matrix> vectors, std::unique_ptr<detail::hnsw_space> space,
               std::unique_ptr<detail::hnsw_graph> graph, hnsw_params params);

    /// The graph of a checked file (rows inline) over @p vectors, its rows. @throws io_error.
    static hnsw_index load_checked(std::string_view bytes, std::shared_ptr<const matrix> vectors,
                                   const std::filesystem::path& source, hnsw_params params);

    void check_usable() const;

    const float* vector_of(item_id id) const;

    std::shared_ptr<const matrix> vectors_;      // first: the graph points into its rows
    std::unique_ptr<detail::hnsw_space> space_;  // before the graph, which points into it
    std::unique_ptr<detail::hnsw_graph> index_;
    hnsw_params params_;
};

static_assert(VectorIndex<hnsw_index>);

}  // namespace tabret
