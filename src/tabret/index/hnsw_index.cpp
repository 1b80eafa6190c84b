/// @file index/hnsw_index.cpp
/// @brief hnsw_index (include/tabret/index/hnsw_index.hpp) on hnswlib: the only translation
/// unit that includes hnswlib.

#include "tabret/index/hnsw_index.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

// Debian's hnswlib 0.6.2 defines non-inline functions and globals (cpuid, AVXCapable, the SIMD
// distance pointers) when its SIMD code is on, which breaks linking as soon as two translation
// units include it. With NO_MANUAL_VECTORIZATION it is a clean header; tabret supplies its own
// inner-product space (below), whose dot product is index/dot.hpp's, compiled for AVX-512,
// AVX2 + FMA and the baseline and chosen at load time.
#ifndef NO_MANUAL_VECTORIZATION
#define NO_MANUAL_VECTORIZATION
#define TABRET_HNSW_DEFINED_NO_MANUAL_VECTORIZATION
#endif
#include <hnswlib/hnswlib.h>
#ifdef TABRET_HNSW_DEFINED_NO_MANUAL_VECTORIZATION
#undef NO_MANUAL_VECTORIZATION
#undef TABRET_HNSW_DEFINED_NO_MANUAL_VECTORIZATION
#endif

#include "tabret/embedding/matrix.hpp"
#include "tabret/error.hpp"
#include "tabret/index/dot.hpp"
#include "tabret/index/top_k.hpp"
#include "tabret/index/vector_index.hpp"
#include "tabret/interrupt.hpp"
#include "tabret/io/file.hpp"

#include "tabret/io/text_file.hpp"

namespace tabret {

namespace detail {

static_assert(std::is_same_v<hnswlib::tableint, std::uint32_t>);

/**
 * @brief hnswlib space with distance 1 − inner product (as hnswlib's InnerProductSpace) whose
 * stored data is a pointer to the vector, not the vector: hnswlib copies get_data_size() bytes
 * of what addPoint is given into the graph, so the graph keeps the pointer and searchKnn gets
 * the address of a `const float*` (one copy of the vectors, in the matrix).
 *
 * Reading that pointer from a neighbour's element would cost a cache miss before the vector's
 * own, which hnswlib's layout (the vector inside the element) does not pay. So the space finds
 * an element's row without touching the element: element e's row is `matrix + e × dim` in a
 * graph hnsw_graph::insert built (element id = item id = row), and in a loaded graph whose
 * elements all point there; a file saved with other element ids gets a table of each
 * element's pointer (8 bytes an element). hnswlib hands the distance an element's data at
 * `data_level0_memory_ + e × size_data_per_element_ + offsetData_`, so the address gives e
 * (a multiplication, not a division).
 */
class hnsw_space final : public hnswlib::SpaceInterface<float> {
  public:
    explicit hnsw_space(std::size_t dim) { rows_.dim = dim; }
    std::size_t get_data_size() override { return sizeof(const float*); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return &distance; }
    void* get_dist_func_param() override { return &rows_; }
    [[nodiscard]] std::size_t dim() const noexcept { return rows_.dim; }

    /**
     * @brief Where @p graph keeps its elements and where their rows are (@p matrix, row-major,
     * or the pointers a loaded graph's elements hold): once, before the first insert or
     * search.
     * @throws std::length_error if the graph is too large for the id computation (it is not
     * below 2^64 / stride² elements, ~10^14 at M 16).
     */
    void bind(const hnswlib::HierarchicalNSW<float>& graph, const float* matrix) {
        const std::size_t stride = graph.size_data_per_element_;
        if (stride < 2 || graph.max_elements_ > UINT64_MAX / stride / stride)
            throw std::length_error("HNSW graph too large");
        rows_.first = reinterpret_cast<std::uintptr_t>(graph.data_level0_memory_);
        rows_.bytes = graph.max_elements_ * stride;
        rows_.inverse = UINT64_MAX / stride + 1;
        rows_.matrix = matrix;
        rows_.by_element.clear();
        const auto held = [&](std::size_t e) {
            return stored(graph.getDataByInternalId(static_cast<hnswlib::tableint>(e)));
        };
        for (std::size_t e = 0; e < graph.cur_element_count; ++e) {
            if (held(e) == matrix + e * rows_.dim) continue;
            rows_.matrix = nullptr;
            rows_.by_element.resize(graph.cur_element_count);
            for (std::size_t i = 0; i < graph.cur_element_count; ++i) rows_.by_element[i] = held(i);
            return;
        }
    }
    /// The row of graph element @p element.
    [[nodiscard]] const float* row_of(std::size_t element) const { return rows_.row_of(element); }
    /// The distance from @p query to the row of graph element @p element.
    [[nodiscard]] float distance(const float* query, std::size_t element) const {
        return 1.0f - dot(query, row_of(element), rows_.dim);
    }

  private:
    struct rows {
        std::size_t dim = 0;
        std::uintptr_t first = 0;   // the graph's first element
        std::size_t bytes = 0;      // its elements' extent
        std::uint64_t inverse = 0;  // ⌊2^64 / stride⌋ + 1: offset × inverse / 2^64 = element
        const float* matrix = nullptr;         // element e's row is matrix + e × dim, or
        std::vector<const float*> by_element;  // (matrix null) element e's row

        [[nodiscard]] const float* row_of(std::size_t element) const {
            return matrix != nullptr ? matrix + element * dim : by_element[element];
        }
    };

    /// The pointer stored at @p data (at any alignment: hnswlib packs it after the links).
    static const float* stored(const void* data) {
        const float* out = nullptr;
        std::memcpy(static_cast<void*>(&out), data, sizeof out);
        return out;
    }
    /**
     * @brief The row of @p data: a graph element's as bound, a query's as stored. An element's
     * offset is id × stride + offsetData_ with offsetData_ < stride, so the product with
     * `inverse` rounds down to id while offset × stride < 2^64, which bind() guarantees.
     */
    static const float* row(const void* data, const rows& r) {
        const auto at = reinterpret_cast<std::uintptr_t>(data) - r.first;
        if (at >= r.bytes) return stored(data);
        return r.row_of(static_cast<std::size_t>((static_cast<__uint128_t>(at) * r.inverse) >> 64));
    }
    static float distance(const void* a, const void* b, const void* param) {
        const auto& r = *static_cast<const rows*>(param);
        return 1.0f - dot(row(a, r), row(b, r), r.dim);
    }
    rows rows_;
};

/**
 * @brief hnswlib 0.6.2's graph with its insertion restated: `insert` is hnswalg.h's
 * addPoint(data, label, level) and `search_layer` its searchBaseLayer, step for step, except:
 *
 * - An item's element id is its label (its row of the matrix), not the next free id, so the
 *   space computes the row's address (hnsw_space). cur_element_count is one more than the
 *   largest id inserted; once every item is in, the ids are 0..n-1 as hnswlib's.
 * - The construction search prefetches the next link's visited mark and row while it scores
 *   the current one, as hnswlib does under USE_SSE, but only up to the end of the list: hnswlib
 *   reads the id one past the last link, which overflows a pointer on a loaded file and, when
 *   an element's top-level list is full, reads 3 bytes past its malloc'd link block.
 * - The level is drawn under the element-count lock: hnswlib draws it from the shared
 *   generator with no lock, a data race when threads insert at once.
 * - Nothing is ever deleted or inserted twice in tabret's graphs, so the update and deletion
 *   branches are gone; a label inserted twice is an error.
 *
 * A one-thread build inserting labels 0, 1, 2, … is therefore the graph hnswlib's addPoint
 * builds, byte for byte (tests/cpp/test_index.cpp). Search (searchKnn) and the neighbour
 * selection (mutuallyConnectNewElement) are hnswlib's.
 */
class hnsw_graph final : public hnswlib::HierarchicalNSW<float> {
  public:
    using hnswlib::HierarchicalNSW<float>::HierarchicalNSW;

    /// Inserts item @p label, whose row @p space knows, as element @p label (its pointer is
    /// stored); thread-safe against other inserts.
    void insert(hnswlib::labeltype label, const hnsw_space& space);

  private:
    using candidates =
        std::priority_queue<std::pair<float, hnswlib::tableint>,
                            std::vector<std::pair<float, hnswlib::tableint>>, CompareByFirst>;
    /// Greedy descent from @p entry through the levels above @p level.
    [[nodiscard]] hnswlib::tableint descend(hnswlib::tableint entry, const float* query, int top,
                                            int level, const hnsw_space& space);
    /// The ef_construction nearest elements to @p query on @p layer found from @p entry.
    [[nodiscard]] candidates search_layer(hnswlib::tableint entry, const float* query, int layer,
                                          const hnsw_space& space);
};

void hnsw_graph::insert(hnswlib::labeltype label, const hnsw_space& space) {
    if (label >= max_elements_)
        throw std::runtime_error("The number of elements exceeds the specified limit");
    const auto element = static_cast<hnswlib::tableint>(label);
    const float* row = space.row_of(element);
    int level = 0;
    {
        const std::lock_guard lock(cur_element_count_guard_);
        if (!label_lookup_.emplace(label, element).second)
            throw std::logic_error(fmt::format("label {} inserted twice", label));
        cur_element_count = std::max<std::size_t>(cur_element_count, element + std::size_t{1});
        level = getRandomLevel(mult_);
    }
    // The top level and entry point under `global`, held to the end by an element that raises
    // them, and taken before the element's own lock, as a search takes link locks under
    // `global` (hnswlib takes them the other way round and reads the entry unlocked).
    std::unique_lock top_lock(global);
    const int top = maxlevel_;
    const hnswlib::tableint entry = enterpoint_node_;
    if (level <= top) top_lock.unlock();
    const std::unique_lock element_lock(link_list_locks_[element]);
    element_levels_[element] = level;

    std::memset(data_level0_memory_ + element * size_data_per_element_ + offsetLevel0_, 0,
                size_data_per_element_);
    std::memcpy(getExternalLabeLp(element), &label, sizeof label);
    std::memcpy(getDataByInternalId(element), static_cast<const void*>(&row), data_size_);
    if (level > 0) {
        const std::size_t bytes = size_links_per_element_ * static_cast<std::size_t>(level) + 1;
        linkLists_[element] = static_cast<char*>(std::malloc(bytes));
        if (linkLists_[element] == nullptr)
            throw std::runtime_error("Not enough memory: addPoint failed to allocate linklist");
        std::memset(linkLists_[element], 0, bytes);
    }
    if (static_cast<int>(entry) == -1) {  // the first element
        enterpoint_node_ = 0;
        maxlevel_ = level;
        return;
    }
    hnswlib::tableint nearest = level < top ? descend(entry, row, top, level, space) : entry;
    for (int layer = std::min(level, top); layer >= 0; --layer) {
        auto found = search_layer(nearest, row, layer, space);
        nearest = mutuallyConnectNewElement(&row, element, found, layer, false);
    }
    if (level > top) {
        enterpoint_node_ = element;
        maxlevel_ = level;
    }
}

hnswlib::tableint hnsw_graph::descend(hnswlib::tableint entry, const float* query, int top,
                                      int level, const hnsw_space& space) {
    float best = space.distance(query, entry);
    for (int layer = top; layer > level; --layer) {
        for (bool changed = true; changed;) {
            changed = false;
            const std::lock_guard lock(link_list_locks_[entry]);
            hnswlib::linklistsizeint* list = get_linklist(entry, layer);
            const auto* links = reinterpret_cast<const hnswlib::tableint*>(list + 1);
            for (std::size_t j = 0, size = getListCount(list); j < size; ++j) {
                if (links[j] > max_elements_) throw std::runtime_error("cand error");
                if (const float d = space.distance(query, links[j]); d < best) {
                    best = d;
                    entry = links[j];
                    changed = true;
                }
            }
        }
    }
    return entry;
}

hnsw_graph::candidates hnsw_graph::search_layer(hnswlib::tableint entry, const float* query,
                                                int layer, const hnsw_space& space) {
    hnswlib::VisitedList* visited_list = visited_list_pool_->getFreeVisitedList();
    const struct release {
        hnswlib::VisitedListPool* pool;
        hnswlib::VisitedList* list;
        ~release() { pool->releaseVisitedList(list); }
    } release{visited_list_pool_, visited_list};
    hnswlib::vl_type* visited = visited_list->mass;
    const hnswlib::vl_type tag = visited_list->curV;

    candidates nearest;   // the best ef_construction so far, worst on top
    candidates frontier;  // to expand, nearest on top (negated distances)
    float bound = space.distance(query, entry);
    nearest.emplace(bound, entry);
    frontier.emplace(-bound, entry);
    visited[entry] = tag;
    while (!frontier.empty()) {
        const auto [negated, node] = frontier.top();
        if (-negated > bound && nearest.size() == ef_construction_) break;
        frontier.pop();
        const std::lock_guard lock(link_list_locks_[node]);
        hnswlib::linklistsizeint* list =
            layer == 0 ? get_linklist0(node) : get_linklist(node, layer);
        const auto* links = reinterpret_cast<const hnswlib::tableint*>(list + 1);
        const std::size_t size = getListCount(list);
        if (size > 0) __builtin_prefetch(space.row_of(links[0]));
        for (std::size_t j = 0; j < size; ++j) {
            const hnswlib::tableint candidate = links[j];
            if (j + 1 < size) {
                __builtin_prefetch(visited + links[j + 1]);
                __builtin_prefetch(space.row_of(links[j + 1]));
            }
            if (visited[candidate] == tag) continue;
            visited[candidate] = tag;
            const float d = space.distance(query, candidate);
            if (nearest.size() < ef_construction_ || bound > d) {
                frontier.emplace(-d, candidate);
                nearest.emplace(d, candidate);
                if (nearest.size() > ef_construction_) nearest.pop();
                bound = nearest.top().first;
            }
        }
    }
    return nearest;
}

/**
 * @brief Runs fn(i) for i in [begin, end) on @p threads threads (0 = hardware concurrency),
 * the calling thread included. The first exception stops the remaining work and is rethrown
 * after every thread has joined.
 */
template <class F>
void parallel_for(std::size_t begin, std::size_t end, std::size_t threads, const F& fn) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min(threads, end > begin ? end - begin : 0);
    if (threads <= 1) {
        for (std::size_t i = begin; i < end; ++i) fn(i);
        return;
    }
    std::atomic<std::size_t> next{begin};
    std::atomic<bool> failed{false};
    std::exception_ptr first_error;
    std::mutex error_mutex;
    auto worker = [&] {
        for (std::size_t i = next++; i < end && !failed; i = next++) {
            try {
                fn(i);
            } catch (...) {
                const std::lock_guard lock(error_mutex);
                if (!first_error) first_error = std::current_exception();
                failed = true;
            }
        }
    };
    {
        std::vector<std::jthread> pool;  // joins on scope exit, also if a thread fails to start
        pool.reserve(threads - 1);
        for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
        worker();
    }
    if (first_error) std::rethrow_exception(first_error);
}

/// Bytes of the header of an hnswlib 0.6.2 index file (13 fields).
constexpr std::size_t hnsw_header_bytes = 96;

template <class T>
T read_pod(std::string_view bytes, std::size_t offset) {
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

template <class T>
void append_pod(std::string& out, const T& value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

/**
 * @brief Where an hnswlib 0.6.2 file keeps each element (header fields 2 to 5): element i at
 * header + i × size_per_element, its links first, its data at offset_data, its label at
 * label_offset; the upper levels' link lists after the last element.
 */
struct hnsw_layout {
    std::size_t count, size_per_element, label_offset, offset_data;

    static hnsw_layout of(std::string_view bytes) {
        return {read_pod<std::size_t>(bytes, 16), read_pod<std::size_t>(bytes, 24),
                read_pod<std::size_t>(bytes, 32), read_pod<std::size_t>(bytes, 40)};
    }
    [[nodiscard]] std::size_t element(std::size_t i) const {
        return hnsw_header_bytes + i * size_per_element;
    }
    [[nodiscard]] hnswlib::labeltype label(std::string_view bytes, std::size_t i) const {
        return read_pod<hnswlib::labeltype>(bytes, element(i) + label_offset);
    }

    /**
     * @brief The file with each element's data replaced by data(label, old data) of @p size
     * bytes (appended to the output), everything else as it was.
     */
    template <class F>
    [[nodiscard]] std::string with_data(std::string_view bytes, std::size_t size,
                                        const F& data) const {
        const std::size_t per = offset_data + size + sizeof(hnswlib::labeltype);
        std::string out;
        out.reserve(hnsw_header_bytes + count * per + (bytes.size() - element(count)));
        out.append(bytes.substr(0, 24));
        append_pod(out, per);                 // size_data_per_element_
        append_pod(out, offset_data + size);  // label_offset_
        out.append(bytes.substr(40, hnsw_header_bytes - 40));
        for (std::size_t i = 0; i < count; ++i) {
            const auto label = this->label(bytes, i);
            out.append(bytes.substr(element(i), offset_data));
            data(out, label, bytes.substr(element(i) + offset_data, label_offset - offset_data));
            append_pod(out, label);
        }
        out.append(bytes.substr(element(count)));
        return out;
    }
};

/// Bytes of one row of @p vectors.
std::string_view row_bytes(const matrix& vectors, std::size_t row) {
    return {reinterpret_cast<const char*>(vectors.row(static_cast<Eigen::Index>(row)).data()),
            static_cast<std::size_t>(vectors.cols()) * sizeof(float)};
}

/// A file saved from the graph (row pointers) with the rows inline: hnswlib's own format.
std::string with_rows_inline(std::string_view saved, const matrix& vectors) {
    const auto size = static_cast<std::size_t>(vectors.cols()) * sizeof(float);
    return hnsw_layout::of(saved).with_data(
        saved, size, [&](std::string& out, std::size_t label, std::string_view) {
            out.append(row_bytes(vectors, label));
        });
}

/**
 * @brief A checked file (rows inline) with each row replaced by a pointer to the same row of
 * @p vectors, for the graph to load. @throws io_error naming @p source where a row differs.
 */
std::string with_row_pointers(std::string_view file, const matrix& vectors,
                              const std::filesystem::path& source) {
    return hnsw_layout::of(file).with_data(
        file, sizeof(const float*), [&](std::string& out, std::size_t label, std::string_view row) {
            if (row != row_bytes(vectors, label))
                throw io_error(fmt::format(
                    "{}: the vector of item {} in the graph differs from the index's vectors",
                    source.string(), label));
            append_pod(out, vectors.row(static_cast<Eigen::Index>(label)).data());
        });
}

/// Size of the file hnswlib 0.6.2's saveIndex writes for @p g.
std::size_t hnsw_file_size(const hnsw_graph& g) {
    std::size_t size = hnsw_header_bytes + g.cur_element_count * g.size_data_per_element_;
    for (std::size_t i = 0; i < g.cur_element_count; ++i)
        size +=
            sizeof(std::uint32_t) +
            static_cast<std::size_t>(std::max(0, g.element_levels_[i])) * g.size_links_per_element_;
    return size;
}

/**
 * @brief A file only this object can reach, for hnswlib, which reads and writes by path: an
 * anonymous memory file (memfd) named through /proc/self/fd, or else a temporary file removed
 * on destruction. Loading from one means hnswlib reads exactly the bytes that were verified.
 */
class private_file {
  public:
    private_file() {
#ifdef __linux__
        fd_ = ::memfd_create("tabret-hnsw", MFD_CLOEXEC);
        if (fd_ >= 0 && std::filesystem::exists(fmt::format("/proc/self/fd/{}", fd_))) {
            path_ = fmt::format("/proc/self/fd/{}", fd_);
            return;
        }
        if (fd_ >= 0) ::close(fd_);
#endif
        auto templ = (std::filesystem::temp_directory_path() / "tabret-hnsw-XXXXXX").string();
        fd_ = ::mkstemp(templ.data());
        if (fd_ < 0)
            throw io_error(
                fmt::format("{}: cannot create a temporary file: {}", templ, std::strerror(errno)));
        path_ = templ;
        unlink_ = true;
    }
    private_file(const private_file&) = delete;
    private_file& operator=(const private_file&) = delete;
    ~private_file() {
        if (unlink_) ::unlink(path_.c_str());
        ::close(fd_);
    }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    /// Replaces the contents with @p data. @throws io_error.
    void write(std::string_view data) const {
        if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0)
            throw io_error(fmt::format("{}: cannot reset: {}", path_, std::strerror(errno)));
        write_all(fd_, data, path_);
    }
    /// The whole contents. @throws io_error.
    [[nodiscard]] std::string read() const {
        std::string out;
        char buf[1 << 16];
        for (off_t at = 0;;) {
            const auto n = ::pread(fd_, buf, sizeof buf, at);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0)
                throw io_error(fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
            if (n == 0) return out;
            out.append(buf, static_cast<std::size_t>(n));
            at += n;
        }
    }

  private:
    int fd_ = -1;
    std::string path_;
    bool unlink_ = false;
};

/**
 * @brief Structural check of an hnswlib 0.6.2 index file before hnswlib reads it: header
 * fields against the expected dimension, every size against the file size, every link against
 * the element count and levels, labels a permutation of 0..n-1, vectors finite, nothing
 * deleted. A file that passes cannot make loadIndex or searchKnn read out of bounds.
 */
class hnsw_file_check {
  public:
    static constexpr std::size_t header_bytes = hnsw_header_bytes;

    hnsw_file_check(std::string_view bytes, std::size_t dim, const std::filesystem::path& path)
        : bytes_(bytes), dim_(dim), path_(path) {}

    /// Runs every check; returns where the file keeps its elements. @throws io_error naming
    /// the path.
    hnsw_layout run() {
        read_header();
        check_layout();
        walk_link_lists();
        if (count_ > 0) check_entry_point();
        std::vector<bool> seen(count_, false);
        for (std::size_t i = 0; i < count_; ++i) check_element(i, seen);
        return {count_, size_per_element_, label_offset_, offset_data_};
    }

  private:
    [[noreturn]] void fail(std::string_view what) const {
        throw io_error(fmt::format("{}: not a valid HNSW index: {}", path_.string(), what));
    }

    template <class T>
    T pod(std::size_t offset) const {
        return read_pod<T>(bytes_, offset);
    }

    void read_header() {
        if (bytes_.size() < header_bytes) fail("file shorter than the header");
        offset_level0_ = pod<std::size_t>(0);
        max_elements_ = pod<std::size_t>(8);
        count_ = pod<std::size_t>(16);
        size_per_element_ = pod<std::size_t>(24);
        label_offset_ = pod<std::size_t>(32);
        offset_data_ = pod<std::size_t>(40);
        max_level_ = pod<int>(48);
        enter_point_ = pod<std::uint32_t>(52);
        max_m_ = pod<std::size_t>(56);
        max_m0_ = pod<std::size_t>(64);
        m_ = pod<std::size_t>(72);
    }

    void check_layout() const {
        if (offset_level0_ != 0) fail("bad level-0 offset");
        if (m_ < 1 || m_ > 10000 || max_m_ != m_ || max_m0_ != 2 * m_)
            fail(fmt::format("bad graph degree M={}", m_));
        if (dim_ > (std::size_t{1} << 40)) fail(fmt::format("dimension {} too large", dim_));
        if (offset_data_ != links_bytes(max_m0_)) fail("bad data offset");
        if (label_offset_ < offset_data_ || (label_offset_ - offset_data_) % sizeof(float) != 0 ||
            label_offset_ - offset_data_ != dim_ * sizeof(float))
            fail(fmt::format("vectors of {} bytes, expected dimension {}",
                             label_offset_ - std::min(label_offset_, offset_data_), dim_));
        if (size_per_element_ != label_offset_ + sizeof(hnswlib::labeltype))
            fail("bad element size");
        if (count_ > max_elements_ || count_ > std::numeric_limits<item_id>::max())
            fail(fmt::format("bad element count {}", count_));
        if (count_ > (bytes_.size() - header_bytes) / size_per_element_)
            fail(fmt::format("{} elements do not fit in {} bytes", count_, bytes_.size()));
    }

    static std::size_t links_bytes(std::size_t max_links) {
        return max_links * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
    }

    void walk_link_lists() {
        const std::size_t per_level = links_bytes(max_m_);
        std::size_t pos = header_bytes + count_ * size_per_element_;
        levels_.resize(count_);
        link_offsets_.resize(count_);
        for (std::size_t i = 0; i < count_; ++i) {
            if (bytes_.size() - pos < sizeof(std::uint32_t)) fail("truncated link lists");
            const auto size = pod<std::uint32_t>(pos);
            pos += sizeof(std::uint32_t);
            if (size % per_level != 0 || size > bytes_.size() - pos)
                fail(fmt::format("bad link list size of element {}", i));
            levels_[i] = size / per_level;
            link_offsets_[i] = pos;
            pos += size;
        }
        if (pos != bytes_.size()) fail("trailing bytes after the link lists");
    }

    void check_entry_point() const {
        if (max_level_ < 0 || enter_point_ >= count_ ||
            levels_[enter_point_] != static_cast<std::size_t>(max_level_))
            fail("bad entry point");
        for (const auto level : levels_)
            if (level > static_cast<std::size_t>(max_level_)) fail("level above the top level");
    }

    /// One link list at @p offset: count <= max_links, each link an element of level >= level.
    void check_links(std::size_t offset, std::size_t max_links, std::size_t level,
                     std::size_t element) const {
        const auto n = pod<std::uint16_t>(offset);
        if (n > max_links) fail(fmt::format("element {} has {} links", element, n));
        for (std::size_t j = 0; j < n; ++j) {
            const auto to = pod<hnswlib::tableint>(offset + sizeof(hnswlib::linklistsizeint) +
                                                   j * sizeof(hnswlib::tableint));
            if (to >= count_ || levels_[to] < level)
                fail(fmt::format("element {} links to a bad element {}", element, to));
        }
    }

    void check_element(std::size_t i, std::vector<bool>& seen) const {
        const std::size_t base = header_bytes + i * size_per_element_;
        if (pod<std::uint8_t>(base + 2) != 0) fail(fmt::format("element {} is deleted", i));
        check_links(base, max_m0_, 0, i);
        for (std::size_t level = 1; level <= levels_[i]; ++level)
            check_links(link_offsets_[i] + (level - 1) * links_bytes(max_m_), max_m_, level, i);
        const auto label = pod<hnswlib::labeltype>(base + label_offset_);
        if (label >= count_ || seen[label]) fail(fmt::format("element {} has a bad label", i));
        seen[label] = true;
        for (std::size_t j = 0; j < dim_; ++j)
            if (!std::isfinite(pod<float>(base + offset_data_ + j * sizeof(float))))
                fail(fmt::format("element {} has NaN or infinity", i));
    }

    std::string_view bytes_;
    std::size_t dim_;
    const std::filesystem::path& path_;
    std::size_t offset_level0_ = 0, max_elements_ = 0, count_ = 0, size_per_element_ = 0;
    std::size_t label_offset_ = 0, offset_data_ = 0, max_m_ = 0, max_m0_ = 0, m_ = 0;
    int max_level_ = -1;
    std::uint32_t enter_point_ = 0;
    std::vector<std::size_t> levels_;
    std::vector<std::size_t> link_offsets_;
};

/** @brief @throws tabret::error naming the first invalid field of @p p. */
void check_hnsw_params(const hnsw_params& p) {
    if (p.m < 2 || p.m > 10000)
        throw error(fmt::format("hnsw_params.m must be in [2, 10000], got {}", p.m));
    if (p.ef_construction == 0) throw error("hnsw_params.ef_construction must be positive");
    if (p.ef_search == 0) throw error("hnsw_params.ef_search must be positive");
}

}  // namespace detail

hnsw_index::hnsw_index(hnsw_index&&) noexcept = default;
hnsw_index& hnsw_index::operator=(hnsw_index&&) noexcept = default;
hnsw_index::~hnsw_index() = default;

std::size_t hnsw_index::dim() const noexcept { return space_ ? space_->dim() : 0; }

void hnsw_index::save(const std::filesystem::path& path) const {
    write_file_atomic(path, to_bytes());
}

hnsw_index::hnsw_index(const matrix& vectors, hnsw_params params, const build_progress_fn& progress)
    : hnsw_index(std::make_shared<const matrix>(vectors), params, progress) {}

hnsw_index::hnsw_index(std::shared_ptr<const matrix> shared, hnsw_params params,
                       const build_progress_fn& progress)
    : vectors_(std::move(shared)), params_(params) {
    if (!vectors_) throw error("hnsw_index: no vectors (a null pointer)");
    detail::check_hnsw_params(params_);
    const auto& vectors = *vectors_;
    const auto n = static_cast<std::size_t>(vectors.rows());
    detail::check_item_count(n, "hnsw_index");
    check_embeddings(vectors, n, 0, "hnsw_index");
    if (vectors.cols() == 0) throw embedding_error("hnsw_index: vectors of dimension 0");
    space_ = std::make_unique<detail::hnsw_space>(static_cast<std::size_t>(vectors.cols()));
    const auto caller = std::this_thread::get_id();
    std::atomic<std::size_t> done{0};
    std::size_t reported = 0;  // touched by the calling thread only
    const auto add = [&](std::size_t i) {
        try {
            index_->insert(i, *space_);  // the graph keeps a pointer to row i (detail::hnsw_space)
        } catch (const std::exception& e) {
            build_failed(e);
        }
        const auto now = ++done;
        if (progress && std::this_thread::get_id() == caller && now - reported >= 1024)
            progress(reported = now);
    };
    try {
        index_ =
            std::make_unique<detail::hnsw_graph>(space_.get(), std::max<std::size_t>(n, 1),
                                                 params_.m, params_.ef_construction, params_.seed);
        space_->bind(*index_, vectors.data());
    } catch (const std::exception& e) {
        build_failed(e);
    }
    if (n > 0) add(0);  // the first point alone: it becomes the entry point
    detail::parallel_for(1, n, params_.threads, add);
    if (progress) progress(n);
    index_->setEf(params_.ef_search);
}

std::vector<hits> hnsw_index::search(const matrix& queries, std::size_t k) const {
    check_usable();
    detail::check_k(k);
    detail::check_queries(queries, dim(), "hnsw_index");
    std::vector<hits> result(static_cast<std::size_t>(queries.rows()));
    if (size() == 0) return result;
    for (std::size_t q = 0; q < result.size(); ++q) {
        check_interrupt_every(q, 16);
        const float* query = queries.row(static_cast<Eigen::Index>(q)).data();
        auto found = index_->searchKnn(&query, std::min(k, size()));
        hits& row = result[q];
        row.reserve(found.size());
        for (; !found.empty(); found.pop()) {
            const auto id = static_cast<item_id>(found.top().second);
            row.push_back({id, detail::dot(query, vector_of(id), dim())});
        }
        std::sort(row.begin(), row.end(), detail::better_hit);
    }
    return result;
}

std::vector<hits> hnsw_index::search_within(const matrix& queries,
                                            std::span<const item_id> candidates,
                                            std::size_t k) const {
    check_usable();
    detail::check_k(k);
    detail::check_queries(queries, dim(), "hnsw_index");
    const auto ids = detail::unique_candidates(candidates, size(), "hnsw_index");
    std::vector<hits> result(static_cast<std::size_t>(queries.rows()));
    for (std::size_t q = 0; q < result.size(); ++q) {
        check_interrupt_every(q, 16);
        const float* query = queries.row(static_cast<Eigen::Index>(q)).data();
        hits row(ids.size());
        for (std::size_t j = 0; j < ids.size(); ++j)
            row[j] = {ids[j], detail::dot(query, vector_of(ids[j]), dim())};
        result[q] = detail::select_top_k(std::move(row), k);
    }
    return result;
}

std::span<const float> hnsw_index::vector(item_id id) const {
    check_usable();
    if (id >= size())
        throw error(fmt::format("hnsw_index: item id {} out of range (the index has {} items)", id,
                                size()));
    return {vector_of(id), dim()};
}

std::string hnsw_index::to_bytes() const {
    check_usable();
    const detail::private_file file;
    try {
        index_->saveIndex(file.path());
    } catch (const std::exception& e) {
        throw io_error(fmt::format("cannot write the HNSW index: {}", e.what()));
    }
    const auto bytes = file.read();
    if (const auto expected = detail::hnsw_file_size(*index_); bytes.size() != expected)
        throw io_error(
            fmt::format("cannot write the HNSW index ({} of {} bytes)", bytes.size(), expected));
    return detail::with_rows_inline(bytes, *vectors_);
}

hnsw_index hnsw_index::from_bytes(std::string_view bytes, std::size_t dim,
                                  const std::filesystem::path& source, hnsw_params params) {
    detail::check_hnsw_params(params);
    if (dim == 0) throw embedding_error("hnsw_index: vectors of dimension 0");
    const auto layout = detail::hnsw_file_check(bytes, dim, source).run();
    const std::size_t n = layout.count;
    auto vectors =
        std::make_shared<matrix>(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(dim));
    for (std::size_t i = 0; i < n; ++i)
        std::memcpy(vectors->row(static_cast<Eigen::Index>(layout.label(bytes, i))).data(),
                    bytes.data() + layout.element(i) + layout.offset_data, dim * sizeof(float));
    return load_checked(bytes, std::move(vectors), source, params);
}

hnsw_index hnsw_index::from_bytes(std::string_view bytes, std::shared_ptr<const matrix> vectors,
                                  const std::filesystem::path& source, hnsw_params params) {
    if (!vectors) throw error("hnsw_index: no vectors (a null pointer)");
    detail::check_hnsw_params(params);
    const auto dim = static_cast<std::size_t>(vectors->cols());
    if (dim == 0) throw embedding_error("hnsw_index: vectors of dimension 0");
    if (const auto n = detail::hnsw_file_check(bytes, dim, source).run().count;
        n != static_cast<std::size_t>(vectors->rows()))
        throw io_error(fmt::format("{}: holds {} items, the vectors beside it {}", source.string(),
                                   n, vectors->rows()));
    return load_checked(bytes, std::move(vectors), source, params);
}

hnsw_index hnsw_index::load_checked(std::string_view bytes, std::shared_ptr<const matrix> vectors,
                                    const std::filesystem::path& source, hnsw_params params) {
    const auto n = static_cast<std::size_t>(vectors->rows());
    const auto dim = static_cast<std::size_t>(vectors->cols());
    const detail::private_file file;
    file.write(detail::with_row_pointers(bytes, *vectors, source));
    auto space = std::make_unique<detail::hnsw_space>(dim);
    std::unique_ptr<detail::hnsw_graph> graph;
    try {
        graph = std::make_unique<detail::hnsw_graph>(space.get(), file.path(), false,
                                                     std::max<std::size_t>(n, 1));
        space->bind(*graph, vectors->data());
    } catch (const std::exception& e) {
        throw io_error(
            fmt::format("{}: cannot load the HNSW index: {}", source.string(), e.what()));
    }
    if (graph->cur_element_count != n)
        throw io_error(fmt::format("{}: not a valid HNSW index", source.string()));
    graph->num_deleted_ = 0;  // loadIndex leaves these uninitialised
    graph->metric_distance_computations = 0;
    graph->metric_hops = 0;
    params.m = graph->M_;
    params.ef_construction = graph->ef_construction_;
    return hnsw_index(std::move(vectors), std::move(space), std::move(graph), params);
}

hnsw_index hnsw_index::load(const std::filesystem::path& path, std::size_t dim,
                            hnsw_params params) {
    detail::check_hnsw_params(params);
    return from_bytes(read_text_file(path), dim, path, params);
}

void hnsw_index::build_failed(const std::exception& e) {
    throw error(fmt::format("hnsw_index: building the graph failed: {}", e.what()));
}

hnsw_index::hnsw_index(std::shared_ptr<const matrix> vectors,
                       std::unique_ptr<detail::hnsw_space> space,
                       std::unique_ptr<detail::hnsw_graph> graph, hnsw_params params)
    : vectors_(std::move(vectors)),
      space_(std::move(space)),
      index_(std::move(graph)),
      params_(params) {
    index_->setEf(params_.ef_search);
}

void hnsw_index::check_usable() const {
    if (!index_) throw error("hnsw_index: used after move");
}

const float* hnsw_index::vector_of(item_id id) const {
    return vectors_->row(static_cast<Eigen::Index>(id)).data();
}

}  // namespace tabret
