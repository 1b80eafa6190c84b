#include <tabret/index/bm25_index.hpp>
#include <tabret/index/exact_index.hpp>
#include <tabret/index/fusion.hpp>
#include <tabret/index/hnsw_index.hpp>
#include <tabret/index/sparse_index.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/file.hpp>
#include <tabret/text/tokenize.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

// hnswlib itself, as the reference for tabret's restated insertion (a clean header without its
// SIMD code, as src/tabret/index/hnsw_index.cpp includes it).
#define NO_MANUAL_VECTORIZATION
#include <hnswlib/hnswlib.h>
#undef NO_MANUAL_VECTORIZATION
#include <tabret/index/dot.hpp>

#include "test_support.hpp"

using namespace tabret;
using tabret::test::demo;
using tabret::test::demo_index;
using tabret::test::temp_dir;

namespace {

/// Rows (1,0), (0,1), (.6,.8), (.8,.6), (1,0): row 4 ties with row 0.
matrix plane() {
    matrix m(5, 2);
    m << 1.0f, 0.0f, 0.0f, 1.0f, 0.6f, 0.8f, 0.8f, 0.6f, 1.0f, 0.0f;
    return m;
}

matrix rows(std::initializer_list<std::initializer_list<float>> values) {
    matrix m(static_cast<Eigen::Index>(values.size()),
             static_cast<Eigen::Index>(values.begin()->size()));
    Eigen::Index r = 0;
    for (const auto& row : values) {
        Eigen::Index c = 0;
        for (const float v : row) m(r, c++) = v;
        ++r;
    }
    return m;
}

std::vector<item_id> ids_of(const hits& h) {
    std::vector<item_id> ids;
    for (const auto& x : h) ids.push_back(x.id);
    return ids;
}

/// n unit vectors of dimension d from a seeded normal distribution.
matrix random_unit(std::size_t n, std::size_t d, unsigned seed) {
    matrix m = tabret::test::random_rows(n, d, seed);
    normalize_rows(m);
    return m;
}

/// Same ids in the same order, scores equal up to float rounding (different summation orders).
void check_same_ranking(const std::vector<hits>& a, const std::vector<hits>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t q = 0; q < a.size(); ++q) {
        CHECK(ids_of(a[q]) == ids_of(b[q]));
        for (std::size_t i = 0; i < std::min(a[q].size(), b[q].size()); ++i)
            CHECK(a[q][i].score == Approx(b[q][i].score).margin(1e-5));
    }
}

double recall_at(const std::vector<hits>& found, const std::vector<hits>& truth) {
    std::size_t hit_count = 0, total = 0;
    for (std::size_t q = 0; q < truth.size(); ++q) {
        const auto expected = ids_of(truth[q]);
        const std::set<item_id> want(expected.begin(), expected.end());
        for (const auto& h : found[q]) hit_count += want.count(h.id);
        total += want.size();
    }
    return static_cast<double>(hit_count) / static_cast<double>(total);
}

/// Runs @p search on 8 threads at once; every result must equal @p serial.
template <class F>
void check_concurrent(const F& search, const std::vector<hits>& serial) {
    std::vector<std::vector<hits>> results(8);
    {
        std::vector<std::jthread> threads;
        for (std::size_t t = 0; t < results.size(); ++t)
            threads.emplace_back([&, t] { results[t] = search(); });
    }
    for (const auto& r : results) CHECK(r == serial);
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The seeded random set shared by the HNSW tests, and its exact top-10.
struct random_set {
    matrix data = random_unit(2000, 32, 7);
    matrix queries = random_unit(100, 32, 11);
    std::vector<hits> truth = exact_index(data).search(queries, 10);
};

const random_set& shared_random_set() {
    static const random_set set;
    return set;
}

const hnsw_index& shared_hnsw() {
    static const hnsw_index index(shared_random_set().data, {.m = 16, .ef_construction = 100});
    return index;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// exact_index

TEST_CASE("exact index ranks a hand-made set by inner product, ties by id", "[index]") {
    const exact_index index(plane());
    CHECK(index.size() == 5);
    CHECK(index.dim() == 2);
    const auto result = index.search(rows({{1, 0}, {0, 1}}), 5);
    REQUIRE(result.size() == 2);
    CHECK(ids_of(result[0]) == std::vector<item_id>{0, 4, 3, 2, 1});
    CHECK(ids_of(result[1]) == std::vector<item_id>{1, 2, 3, 0, 4});
    CHECK(result[0][0].score == 1.0f);
    CHECK(result[0][2].score == Approx(0.8f));
    CHECK(result[0][3].score == Approx(0.6f));
    CHECK(result[0][4].score == 0.0f);
    CHECK(result[1][1].score == Approx(0.8f));
}

TEST_CASE("exact index search_within restricts to deduplicated candidates", "[index]") {
    const exact_index index(plane());
    const std::vector<item_id> candidates{4, 1, 2, 4};
    const auto result = index.search_within(rows({{1, 0}}), candidates, 2);
    REQUIRE(result.size() == 1);
    CHECK(result[0] == hits{{4, 1.0f}, {2, result[0][1].score}});
    CHECK(result[0][1].score == Approx(0.6f));
    CHECK(index.search_within(rows({{1, 0}}), candidates, 10)[0].size() == 3);
    CHECK(index.search_within(rows({{1, 0}}), std::vector<item_id>{}, 3)[0].empty());
}

TEST_CASE("exact index: k above n, k == 0, wrong dimension, bad candidate", "[index]") {
    const exact_index index(plane());
    CHECK(index.search(rows({{0, 1}}), 50)[0].size() == 5);
    CHECK_THROWS_WITH(index.search(rows({{0, 1}}), 0), "k must be positive");
    CHECK_THROWS_AS(index.search(rows({{0, 1}}), 0), tabret::error);
    CHECK_THROWS_AS(index.search(rows({{0, 1, 0}}), 1), embedding_error);
    CHECK_THROWS_AS(index.search(rows({{NAN, 1}}), 1), embedding_error);
    const std::vector<item_id> bad{1, 5};
    CHECK_THROWS_AS(index.search_within(rows({{0, 1}}), bad, 1), tabret::error);
    CHECK_THROWS_WITH(index.search_within(rows({{0, 1}}), bad, 1), Catch::Contains("id 5"));
    CHECK(index.search(matrix(0, 2), 3).empty());
    CHECK_THROWS_AS(exact_index(rows({{1, NAN}})), embedding_error);
}

TEST_CASE("exact index gives the same results in small score blocks", "[index]") {
    const auto data = random_unit(300, 8, 1);
    const auto queries = random_unit(7, 8, 2);
    const exact_index whole(data);
    const exact_index blocked(data, 7 * 10 * sizeof(float));  // 10 rows per block
    check_same_ranking(blocked.search(queries, 12), whole.search(queries, 12));
    std::vector<item_id> candidates;
    for (item_id i = 0; i < 300; i += 3) candidates.push_back(i);
    check_same_ranking(blocked.search_within(queries, candidates, 5),
                       whole.search_within(queries, candidates, 5));
    const auto within = whole.search_within(queries, candidates, 5);
    for (const auto& h : within[0]) CHECK(h.id % 3 == 0);
}

// ---------------------------------------------------------------------------------------------
// hnsw_index

TEST_CASE("hnsw index is exact on a hand-made set and shares the conventions", "[index][hnsw]") {
    const hnsw_index index(plane(), {.threads = 1});
    CHECK(index.size() == 5);
    CHECK(index.dim() == 2);
    const auto queries = rows({{1, 0}, {0, 1}});
    CHECK(index.search(queries, 5) == exact_index(plane()).search(queries, 5));
    CHECK(index.search(queries, 50)[0].size() == 5);
    const std::vector<item_id> candidates{4, 1, 2, 4};
    const auto within = index.search_within(queries, candidates, 2);
    CHECK(ids_of(within[0]) == std::vector<item_id>{4, 2});
    CHECK_THROWS_WITH(index.search(queries, 0), "k must be positive");
    CHECK_THROWS_AS(index.search(rows({{0, 1, 0}}), 1), embedding_error);
    const std::vector<item_id> bad{7};
    CHECK_THROWS_WITH(index.search_within(queries, bad, 1), Catch::Contains("id 7"));
    CHECK_THROWS_AS(hnsw_index(plane(), {.m = 1}), tabret::error);
}

TEST_CASE("hnsw index agrees with exact search on a seeded random set", "[index][hnsw]") {
    const auto& set = shared_random_set();
    const auto& index = shared_hnsw();
    const auto found = index.search(set.queries, 10);
    const double recall = recall_at(found, set.truth);
    INFO("recall@10 = " << recall);
    CHECK(recall >= 0.99);
    // Scores are exact inner products of the items found.
    for (const auto& h : found[0])
        CHECK(h.score == Approx(set.queries.row(0).dot(set.data.row(h.id))).margin(1e-5));
    // search_within is exact: it equals the exact index on the same candidates.
    std::vector<item_id> candidates;
    for (item_id i = 0; i < 2000; i += 7) candidates.push_back(i);
    check_same_ranking(index.search_within(set.queries, candidates, 10),
                       exact_index(set.data).search_within(set.queries, candidates, 10));
}

TEST_CASE("hnsw index saves and loads with identical results", "[index][hnsw]") {
    test::temp_dir dir;
    const auto& set = shared_random_set();
    const auto& index = shared_hnsw();
    const auto path = dir.path() / "graph.hnsw";
    index.save(path);
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                        std::filesystem::directory_iterator{}) == 1);  // no temp file left
    const auto loaded = hnsw_index::load(path, 32);
    CHECK(loaded.size() == 2000);
    CHECK(loaded.dim() == 32);
    CHECK(loaded.params().m == 16);
    CHECK(loaded.params().ef_construction == 100);
    CHECK(loaded.search(set.queries, 10) == index.search(set.queries, 10));
    const std::vector<item_id> candidates{3, 99, 1999};
    CHECK(loaded.search_within(set.queries, candidates, 2) ==
          index.search_within(set.queries, candidates, 2));
    CHECK_THROWS_AS(index.save(dir.path() / "missing" / "graph.hnsw"), io_error);
}

TEST_CASE("hnsw index shares its vectors and checks them on load", "[index][hnsw]") {
    test::temp_dir dir;
    const exact_index exact(random_unit(300, 16, 9));
    const auto shared = exact.shared_vectors();
    const hnsw_index index(shared, {.threads = 1});
    // One copy: the graph's vectors are the exact index's rows, not a copy of them.
    CHECK(index.vector(7).data() == exact.vectors().row(7).data());
    CHECK(shared.use_count() == 3);  // exact, the local and the graph
    const auto queries = random_unit(5, 16, 10);
    const auto found = index.search(queries, 10);
    CHECK(recall_at(found, exact.search(queries, 10)) >= 0.99);

    // The file is hnswlib's format, rows inline: loading it alone gives the same graph.
    const auto bytes = index.to_bytes();
    const auto alone = hnsw_index::from_bytes(bytes, 16, "alone.hnsw");
    CHECK(alone.search(queries, 10) == found);
    CHECK(alone.vector(7).data() != exact.vectors().row(7).data());
    CHECK(
        std::equal(alone.vector(7).begin(), alone.vector(7).end(), exact.vectors().row(7).data()));
    // Loading over the vectors saved beside it shares them; other vectors are refused.
    const auto beside = hnsw_index::from_bytes(bytes, shared, "beside.hnsw");
    CHECK(beside.search(queries, 10) == found);
    CHECK(beside.vector(299).data() == exact.vectors().row(299).data());
    auto changed = std::make_shared<matrix>(*shared);
    (*changed)(123, 4) = std::nextafter((*changed)(123, 4), 2.0f);
    CHECK_THROWS_WITH(hnsw_index::from_bytes(bytes, changed, "beside.hnsw"),
                      Catch::Contains("beside.hnsw") && Catch::Contains("item 123") &&
                          Catch::Contains("differs"));
    const auto fewer = std::make_shared<const matrix>(shared->topRows(299));
    CHECK_THROWS_WITH(hnsw_index::from_bytes(bytes, fewer, "beside.hnsw"),
                      Catch::Contains("holds 300 items"));
    CHECK_THROWS_AS(hnsw_index::from_bytes(bytes, std::shared_ptr<const matrix>{}, "x"),
                    tabret::error);
    CHECK_THROWS_AS(hnsw_index(std::shared_ptr<const matrix>{}), tabret::error);
}

namespace {

/// hnswlib's inner-product space with rows inline and tabret's dot product, so that distances
/// are bit for bit those tabret's graph computes.
class inline_rows_space final : public hnswlib::SpaceInterface<float> {
  public:
    explicit inline_rows_space(std::size_t dim) : dim_(dim) {}
    std::size_t get_data_size() override { return dim_ * sizeof(float); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return &distance; }
    void* get_dist_func_param() override { return &dim_; }

  private:
    static float distance(const void* a, const void* b, const void* dim) {
        return 1.0f - detail::dot(static_cast<const float*>(a), static_cast<const float*>(b),
                                  *static_cast<const std::size_t*>(dim));
    }
    std::size_t dim_;
};

}  // namespace

TEST_CASE("one-thread hnsw build is the graph hnswlib's addPoint builds, byte for byte",
          "[index][hnsw]") {
    // Near-duplicate families (as Spider 2.0-lite's shards) and exact duplicates, so that the
    // neighbour heuristic prunes, full lists are rewired and upper levels are used.
    matrix data = random_unit(1500, 16, 21);
    const matrix noise = random_unit(1500, 16, 22);
    for (Eigen::Index i = 300; i < data.rows(); ++i)
        data.row(i) = data.row(i % 300) + 0.05f * noise.row(i);
    normalize_rows(data);
    data.row(7) = data.row(3);
    const hnsw_params params{.m = 6, .ef_construction = 40, .seed = 5, .threads = 1};
    const hnsw_index index(data, params);

    inline_rows_space space(16);
    hnswlib::HierarchicalNSW<float> reference(&space, static_cast<std::size_t>(data.rows()),
                                              params.m, params.ef_construction, params.seed);
    for (Eigen::Index i = 0; i < data.rows(); ++i)
        reference.addPoint(data.row(i).data(), static_cast<hnswlib::labeltype>(i));
    CHECK(reference.maxlevel_ > 1);
    test::temp_dir dir;
    const auto path = dir.path() / "reference.hnsw";
    reference.saveIndex(path.string());
    std::ifstream in(path, std::ios::binary);
    const std::string expected{std::istreambuf_iterator<char>(in), {}};
    const auto bytes = index.to_bytes();
    REQUIRE(bytes.size() == expected.size());
    CHECK(bytes == expected);

    // A file whose element ids are not its labels (hnswlib inserting the rows last first, as a
    // multi-threaded build does in any order) loads and searches as hnswlib searches it.
    hnswlib::HierarchicalNSW<float> reversed(&space, static_cast<std::size_t>(data.rows()),
                                             params.m, params.ef_construction, params.seed);
    for (Eigen::Index i = data.rows() - 1; i >= 0; --i)
        reversed.addPoint(data.row(i).data(), static_cast<hnswlib::labeltype>(i));
    reversed.setEf(64);
    reversed.saveIndex(path.string());
    std::ifstream again(path, std::ios::binary);
    const std::string file{std::istreambuf_iterator<char>(again), {}};
    const auto loaded = hnsw_index::from_bytes(file, 16, "reversed.hnsw", {.ef_search = 64});
    const auto queries = random_unit(20, 16, 23);
    const auto found = loaded.search(queries, 10);
    for (Eigen::Index q = 0; q < queries.rows(); ++q) {
        auto expected_ids = std::vector<item_id>{};
        for (auto top = reversed.searchKnn(queries.row(q).data(), 10); !top.empty(); top.pop())
            expected_ids.push_back(static_cast<item_id>(top.top().second));
        auto ids = ids_of(found[static_cast<std::size_t>(q)]);
        std::sort(expected_ids.begin(), expected_ids.end());
        std::sort(ids.begin(), ids.end());
        CHECK(ids == expected_ids);
    }
    CHECK(loaded.to_bytes() == file);
}

TEST_CASE("hnsw load rejects truncated, garbage and mismatched files", "[index][hnsw]") {
    test::temp_dir dir;
    const auto good = dir.path() / "good.hnsw";
    const hnsw_index small(random_unit(200, 16, 3), {.threads = 2});
    small.save(good);
    const std::string bytes = read_text_file(good);
    const auto bad = dir.path() / "bad.hnsw";

    for (const std::size_t size :
         {std::size_t{0}, std::size_t{40}, std::size_t{96}, bytes.size() / 2, bytes.size() - 1}) {
        write_bytes(bad, bytes.substr(0, size));
        INFO("truncated to " << size << " bytes");
        CHECK_THROWS_AS(hnsw_index::load(bad, 16), io_error);
    }
    write_bytes(bad, bytes + "x");
    CHECK_THROWS_AS(hnsw_index::load(bad, 16), io_error);

    std::mt19937 gen(5);
    std::string garbage(bytes.size(), '\0');
    for (auto& c : garbage) c = static_cast<char>(gen());
    write_bytes(bad, garbage);
    CHECK_THROWS_AS(hnsw_index::load(bad, 16), io_error);

    std::string bad_link = bytes;  // first base-layer link of element 0 -> element 0xffffffff
    bad_link.replace(96 + 4, 4, std::string(4, '\xff'));
    write_bytes(bad, bad_link);
    CHECK_THROWS_WITH(hnsw_index::load(bad, 16), Catch::Contains("bad.hnsw"));

    std::string huge_count = bytes;  // element count 2^40
    huge_count.replace(16, 8, std::string("\0\0\0\0\0\1\0\0", 8));
    write_bytes(bad, huge_count);
    CHECK_THROWS_AS(hnsw_index::load(bad, 16), io_error);

    CHECK_THROWS_WITH(hnsw_index::load(good, 32), Catch::Contains("dimension 32"));
    CHECK_THROWS_AS(hnsw_index::load(dir.path() / "absent.hnsw", 16), io_error);
    CHECK(hnsw_index::load(good, 16).size() == 200);
}

TEST_CASE("hnsw build reports progress and stops when progress throws", "[index][hnsw]") {
    const auto data = random_unit(3000, 8, 5);
    for (const std::size_t threads : {1, 2}) {
        INFO("threads " << threads);
        std::vector<std::size_t> seen;
        const hnsw_index index(data, {.threads = threads},
                               [&](std::size_t done) { seen.push_back(done); });
        REQUIRE(seen.size() >= 2);  // during the build and once at the end
        CHECK(std::is_sorted(seen.begin(), seen.end()));
        CHECK(seen.back() == 3000);
        CHECK(index.size() == 3000);
        struct cancelled {};  // not a std::exception: rethrown as it is, not wrapped
        std::size_t calls = 0;
        CHECK_THROWS_AS(hnsw_index(data, {.threads = threads},
                                   [&](std::size_t) {
                                       ++calls;
                                       throw cancelled{};
                                   }),
                        cancelled);
        CHECK(calls == 1);  // the first report stops the build
    }
}

TEST_CASE("hnsw index of no vectors searches to nothing and round-trips", "[index][hnsw]") {
    test::temp_dir dir;
    const hnsw_index empty(matrix(0, 4));
    CHECK(empty.size() == 0);
    CHECK(empty.search(random_unit(2, 4, 1), 3) == std::vector<hits>(2));
    empty.save(dir.path() / "empty.hnsw");
    CHECK(hnsw_index::load(dir.path() / "empty.hnsw", 4).size() == 0);
}

TEST_CASE("concurrent searches equal serial results", "[index][hnsw][concurrency]") {
    const auto& set = shared_random_set();
    const matrix queries = set.queries.topRows(25);
    const exact_index exact(set.data);
    const auto& hnsw = shared_hnsw();
    std::vector<item_id> candidates;
    for (item_id i = 0; i < 2000; i += 11) candidates.push_back(i);
    check_concurrent([&] { return exact.search(queries, 10); }, exact.search(queries, 10));
    check_concurrent([&] { return exact.search_within(queries, candidates, 5); },
                     exact.search_within(queries, candidates, 5));
    check_concurrent([&] { return hnsw.search(queries, 10); }, hnsw.search(queries, 10));
    check_concurrent([&] { return hnsw.search(queries, 100); }, hnsw.search(queries, 100));
    check_concurrent([&] { return hnsw.search_within(queries, candidates, 5); },
                     hnsw.search_within(queries, candidates, 5));
}

// ---------------------------------------------------------------------------------------------
// bm25_index

TEST_CASE("schema tokens split snake_case, CamelCase, digits and punctuation", "[index][bm25]") {
    using v = std::vector<std::string>;
    CHECK(schema_tokens("CustomerID") == v{"customer", "id"});
    CHECK(schema_tokens("gasStations") == v{"gas", "stations"});
    CHECK(schema_tokens("customer_id") == v{"customer", "id"});
    CHECK(schema_tokens("XMLHttpRequest2") == v{"xml", "http", "request", "2"});
    CHECK(schema_tokens("  T1.name, address2line ") == v{"t", "1", "name", "address", "2", "line"});
    CHECK(schema_tokens("singer(Singer_ID, Song_release_year)") ==
          v{"singer", "singer", "id", "song", "release", "year"});
    CHECK(schema_tokens("café_Name") == v{"café", "name"});
    CHECK(schema_tokens("").empty());
    CHECK(schema_tokens("__ -- ..").empty());
}

namespace {

const std::vector<std::string> bm25_docs{
    "singer name country",     // 3 tokens
    "concert singer_id year",  // concert singer id year: 4 tokens
    "stadium name capacity",   // 3 tokens
};

}  // namespace

TEST_CASE("bm25 scores hand-made documents as computed by hand", "[index][bm25]") {
    const bm25_index index(bm25_docs);
    CHECK(index.size() == 3);
    CHECK(index.vocabulary_size() == 8);
    CHECK(index.document_length(1) == 4);
    // singer: df = 2, N = 3, idf = ln(1 + 1.5 / 2.5) = ln 1.6; avgdl = 10/3.
    // doc 0: tf 1, |d| 3: norm = 0.25 + 0.75 * 0.9 = 0.925 -> ln1.6 * 2.2 / (1 + 1.2 * 0.925).
    const double idf = std::log(1.6);
    const double doc0 = idf * 2.2 / 2.11;  // 0.4900512...
    const double doc1 = idf * 2.2 / 2.38;  // norm 1.15
    const std::vector<std::string> queries{"Singer", "singer name", "stadium", "zebra", ""};
    const auto result = index.search(queries, 10);
    REQUIRE(result.size() == 5);
    REQUIRE(ids_of(result[0]) == std::vector<item_id>{0, 1});
    CHECK(std::abs(result[0][0].score - 0.4900512) < 1e-5);
    CHECK(result[0][0].score == Approx(doc0).epsilon(1e-6));
    CHECK(result[0][1].score == Approx(doc1).epsilon(1e-6));
    // "singer name": doc 0 has both (2 * doc0); doc 2 has name (same df, same length: doc0).
    CHECK(ids_of(result[1]) == std::vector<item_id>{0, 2, 1});
    CHECK(result[1][0].score == Approx(2 * doc0).epsilon(1e-6));
    CHECK(result[1][1].score == Approx(doc0).epsilon(1e-6));
    CHECK(ids_of(result[2]) == std::vector<item_id>{2});  // score-0 items are not returned
    CHECK(result[3].empty());
    CHECK(result[4].empty());
    CHECK(index.search(queries, 1)[1] == hits{result[1][0]});
}

TEST_CASE("bm25 search_within, k == 0 and bad candidates", "[index][bm25]") {
    const bm25_index index(bm25_docs);
    const std::vector<std::string> queries{"singer name"};
    const std::vector<item_id> candidates{2, 1, 2};
    CHECK(ids_of(index.search_within(queries, candidates, 5)[0]) == std::vector<item_id>{2, 1});
    CHECK(ids_of(index.search_within(queries, candidates, 1)[0]) == std::vector<item_id>{2});
    CHECK_THROWS_WITH(index.search(queries, 0), "k must be positive");
    const std::vector<item_id> bad{3};
    CHECK_THROWS_WITH(index.search_within(queries, bad, 1), Catch::Contains("id 3"));
    CHECK_THROWS_AS(bm25_index(bm25_docs, {.k1 = -1.0}), tabret::error);
    CHECK_THROWS_AS(bm25_index(bm25_docs, {.b = 1.5}), tabret::error);
    CHECK(bm25_index().search(queries, 3) == std::vector<hits>(1));
}

TEST_CASE("bm25 round-trips through JSON", "[index][bm25]") {
    const bm25_index index(bm25_docs, {.k1 = 1.5, .b = 0.5});
    const auto j = index.to_json();
    const auto back = bm25_index::from_json(nlohmann::json::parse(j.dump()), "bm25.json");
    CHECK(back.params() == index.params());
    CHECK(back.to_json() == j);
    const std::vector<std::string> queries{"singer", "name capacity", "concert year"};
    CHECK(back.search(queries, 3) == index.search(queries, 3));
}

TEST_CASE("bm25 from_json names the source and the bad field", "[index][bm25]") {
    const auto good = bm25_index(bm25_docs).to_json();
    const auto fails = [](const nlohmann::json& j, const std::string& part) {
        INFO(j.dump());
        CHECK_THROWS_AS(bm25_index::from_json(j, "idx.json"), schema_error);
        CHECK_THROWS_WITH(bm25_index::from_json(j, "idx.json"),
                          Catch::StartsWith("idx.json") && Catch::Contains(part));
    };
    fails(nlohmann::json::array(), "not an object");
    auto j = good;
    j["format"] = "other";
    fails(j, "format");
    j = good;
    j["version"] = 2;
    fails(j, "version 2");
    j = good;
    j.erase("k1");
    fails(j, "'k1'");
    j = good;
    j["b"] = 2.0;
    fails(j, "bm25_params.b");
    j = good;
    j["doc_lengths"] = "3";
    fails(j, "'doc_lengths'");
    j = good;
    j["doc_lengths"][1] = -4;
    fails(j, "doc_lengths[1]");
    j = good;
    j["postings"]["singer"] = {0, 1, 7, 1};
    fails(j, "postings.singer[2]");
    j = good;
    j["postings"]["singer"] = {1, 1, 0, 1};
    fails(j, "not increasing");
    j = good;
    j["postings"]["singer"] = {0, 0, 1, 1};
    fails(j, "postings.singer[1]");
    j = good;
    j["postings"]["singer"] = {0, 2, 1, 1};
    fails(j, "doc_lengths[0] is 3");
    j = good;
    j["postings"]["singer"] = {0, 1, 1};
    fails(j, "postings.singer");
}

TEST_CASE("bm25 concurrent searches equal serial results", "[index][bm25][concurrency]") {
    std::vector<std::string> docs;
    for (int i = 0; i < 500; ++i)
        docs.push_back("table_" + std::to_string(i % 37) + " colName" + std::to_string(i % 11) +
                       " shared");
    const bm25_index index(docs);
    const std::vector<std::string> queries{"table 3", "col name 7 shared", "TableName"};
    check_concurrent([&] { return index.search(queries, 20); }, index.search(queries, 20));
}

// ---------------------------------------------------------------------------------------------
// fusion

namespace {

const std::vector<hits> dense_lists{{{1, 1.0f}, {2, 0.75f}, {3, 0.25f}}};
const std::vector<hits> lexical_lists{{{3, 12.0f}, {4, 6.0f}, {1, 2.0f}}};

}  // namespace

TEST_CASE("reciprocal rank fusion orders by summed 1/(60 + rank)", "[index][fusion]") {
    const auto fused = fuse_hits(dense_lists, lexical_lists, {}, 10);
    REQUIRE(fused.size() == 1);
    // 1 and 3: 1/61 + 1/63 (tie -> smaller id); 2 and 4: 1/62.
    CHECK(ids_of(fused[0]) == std::vector<item_id>{1, 3, 2, 4});
    CHECK(fused[0][0].score == Approx(1.0 / 61 + 1.0 / 63));
    CHECK(fused[0][2].score == Approx(1.0 / 62));
    CHECK(ids_of(fuse_hits(dense_lists, lexical_lists, {}, 2)[0]) == std::vector<item_id>{1, 3});
}

TEST_CASE("weighted fusion of min-max scores follows alpha", "[index][fusion]") {
    // dense normalised: 1 -> 1, 2 -> 2/3, 3 -> 0; lexical: 3 -> 1, 4 -> 0.4, 1 -> 0.
    fusion_params p{.mode = fusion_mode::weighted, .alpha = 0.7};
    auto fused = fuse_hits(dense_lists, lexical_lists, p, 10);
    CHECK(ids_of(fused[0]) == std::vector<item_id>{1, 2, 3, 4});
    CHECK(fused[0][0].score == Approx(0.7));
    CHECK(fused[0][1].score == Approx(0.7 * 2 / 3));
    CHECK(fused[0][3].score == Approx(0.3 * 0.4));
    p.alpha = 0.2;
    fused = fuse_hits(dense_lists, lexical_lists, p, 10);
    CHECK(ids_of(fused[0]) == std::vector<item_id>{3, 4, 1, 2});
    CHECK(fused[0][0].score == Approx(0.8));
    // A single-item list normalises to 1.
    const std::vector<hits> one{{{9, 0.1f}}};
    const std::vector<hits> none{{}};
    CHECK(fuse_hits(one, none, p, 3)[0] == hits{{9, 0.2f}});
}

TEST_CASE("fusion rejects k == 0, mismatched batches and bad alpha", "[index][fusion]") {
    CHECK_THROWS_WITH(fuse_hits(dense_lists, lexical_lists, {}, 0), "k must be positive");
    const std::vector<hits> two(2);
    CHECK_THROWS_AS(fuse_hits(dense_lists, two, {}, 3), tabret::error);
    CHECK_THROWS_AS(
        fuse_hits(dense_lists, lexical_lists, {.mode = fusion_mode::weighted, .alpha = 1.5}, 3),
        tabret::error);
    CHECK(fuse_hits(std::vector<hits>{}, std::vector<hits>{}, {}, 3).empty());
}

namespace {

/// Same scores up to float rounding, position by position, and the same ids where the scores
/// are not (near-)tied.
void check_same_ranking(const hits& got, const hits& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].score == Approx(want[i].score).margin(1e-5));
        const bool tied = (i > 0 && want[i].score - want[i - 1].score > -1e-5f) ||
                          (i + 1 < want.size() && want[i].score - want[i + 1].score < 1e-5f);
        if (!tied) CHECK(got[i].id == want[i].id);
    }
}

}  // namespace

TEST_CASE("sparse index answers as exact search on the demo's hashing vectors", "[index][sparse]") {
    const auto& vectors = demo_index().columns().vectors();
    const sparse_index sparse(vectors);
    const exact_index exact(vectors);
    CHECK(sparse.size() == exact.size());
    CHECK(sparse.dim() == exact.dim());
    CHECK(sparse.nonzeros() < static_cast<std::size_t>(vectors.size()) / 4);
    const matrix queries = demo_index().tables().vectors().topRows(12);
    const auto got = sparse.search(queries, 10);
    const auto want = exact.search(queries, 10);
    for (std::size_t q = 0; q < got.size(); ++q) check_same_ranking(got[q], want[q]);

    const std::vector<item_id> candidates{7, 3, 300, 3, 41, 0};
    const auto within = sparse.search_within(queries, candidates, 3);
    const auto within_exact = exact.search_within(queries, candidates, 3);
    for (std::size_t q = 0; q < within.size(); ++q) check_same_ranking(within[q], within_exact[q]);
    // the two layouts sum in the same order: a candidate scores as in the full search
    const auto all = sparse.search(queries.topRows(1), sparse.size());
    for (const auto& h : within[0])
        CHECK(std::find(all[0].begin(), all[0].end(), h) != all[0].end());
}

TEST_CASE("sparse index: conventions, bad input and dense vectors", "[index][sparse]") {
    const sparse_index index(rows({{1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 0}}));
    const auto r = index.search(rows({{1, 0, 0, 0}}), 4);
    CHECK(ids_of(r[0]) == std::vector<item_id>{0, 2, 1, 3});  // ties by id, zeros last
    CHECK(index.search(rows({{0, 0, 1, 0}}), 2)[0] == hits{{0, 0.0f}, {1, 0.0f}});
    CHECK_THROWS_AS(index.search(rows({{1, 0, 0, 0}}), 0), tabret::error);
    CHECK_THROWS_AS(index.search(rows({{1, 0}}), 1), embedding_error);
    const std::vector<item_id> bad{1, 4};
    CHECK_THROWS_WITH(index.search_within(rows({{1, 0, 0, 0}}), bad, 1), Catch::Contains("4"));
    CHECK_THROWS_WITH(sparse_index(rows({{1, 1}, {1, 0}})),
                      Catch::Contains("these are 75% non-zero"));
    CHECK(sparse_index(matrix(0, 3)).search(rows({{1, 0, 0}}), 2)[0].empty());
}

TEST_CASE("sparse index beyond its budget reads the informative dimensions, re-scores exactly",
          "[index][sparse]") {
    // 100 items: dimension 0 in every item (no information), dimension 1 in item 7 alone, and
    // item 50 far ahead on dimension 0 (dimensions 2, 3 unused). A query on both has 101
    // postings.
    matrix v = matrix::Zero(100, 4);
    v.col(0).setConstant(0.1f);
    v(7, 1) = 1.0f;
    v(50, 0) = 5.0f;
    const matrix query = rows({{1, 1, 0, 0}});
    const sparse_index exact(v, {.max_postings = 0});
    CHECK(ids_of(exact.search(query, 2)[0]) == std::vector<item_id>{50, 7});
    CHECK(exact.search(query, 2) == sparse_index(v, {.max_postings = 101}).search(query, 2));

    // A budget of 50 reads dimension 1 (1 posting) but not dimension 0 (100 more): item 7 leads
    // the partial scores, the rest tie at 0, so the 3 re-scored are items 7, 0 and 1, each with
    // its exact score. Item 50 is missed: what a budget can cost.
    const sparse_index budgeted(v, {.max_postings = 50, .rescore = 3});
    CHECK(budgeted.search(query, 2)[0] == hits{{7, 1.1f}, {0, 0.1f}});
    CHECK(budgeted.search(query, 5)[0].size() == 5);  // k above rescore: k re-scored
    const std::vector<item_id> leaders{7, 0};
    CHECK(budgeted.search_within(query, leaders, 2) == budgeted.search(query, 2));

    // Over the demo's hashing vectors (340 columns, ~31 non-zero each), budgets below the
    // questions' postings: re-scoring a ninth of the columns finds nearly all of the exact top
    // 10; reading a single dimension and re-scoring 20 misses some, so the budget binds.
    const auto& demo = demo_index().columns().vectors();
    const matrix questions = demo_index().tables().vectors().topRows(12);
    const auto want = sparse_index(demo, {.max_postings = 0}).search(questions, 10);
    const auto found = [&](sparse_params params) {
        const auto got = sparse_index(demo, params).search(questions, 10);
        std::ptrdiff_t n = 0;
        for (std::size_t q = 0; q < got.size(); ++q)
            for (const auto& h : got[q]) n += std::count(want[q].begin(), want[q].end(), h);
        return n;
    };
    CHECK(found({.max_postings = 500, .rescore = 40}) >= 12 * 10 * 9 / 10);
    CHECK(found({.max_postings = 1, .rescore = 20}) < 12 * 10);
    CHECK_THROWS_WITH(sparse_index(v, {.rescore = 0}), Catch::Contains("rescore"));
}

TEST_CASE("table index of kind sparse searches as exact and survives save and load",
          "[index][sparse]") {
    const hashing_embedder e;
    const auto sparse = table_index::build(demo(), e, e.name(), {.kind = index_kind::sparse});
    const matrix queries = demo_index().tables().vectors().topRows(5);
    const auto got = sparse.search_tables(queries, 5);
    const auto want = demo_index().search_tables(queries, 5);
    for (std::size_t q = 0; q < got.size(); ++q) check_same_ranking(got[q], want[q]);
    const auto columns = sparse.search_columns(queries, 8);
    const auto columns_exact = demo_index().search_columns(queries, 8);
    for (std::size_t q = 0; q < columns.size(); ++q)
        check_same_ranking(columns[q], columns_exact[q]);

    const temp_dir dir;
    sparse.save(dir.path() / "idx");
    const auto loaded = table_index::load(dir.path() / "idx");
    CHECK(loaded.options().kind == index_kind::sparse);
    CHECK(loaded.options().sparse.max_postings == sparse_params{}.max_postings);
    CHECK(loaded.options().sparse.rescore == sparse_params{}.rescore);
    CHECK(loaded.search_tables(queries, 5) == got);
    CHECK(loaded.search_columns(queries, 8) == columns);
}

TEST_CASE("automatic kind: exact up to 8 MiB of vectors, then sparse or pca by density",
          "[index][auto]") {
    const auto rows_over =
        static_cast<Eigen::Index>(automatic_exact_bytes / sizeof(float) / 64 + 1);
    CHECK(automatic_kind(matrix::Ones(rows_over - 1, 64)) == index_kind::exact);
    CHECK(automatic_kind(matrix::Ones(rows_over, 64)) == index_kind::pca);
    matrix sparse = matrix::Zero(rows_over, 64);
    sparse.leftCols(32).setOnes();  // half the entries: sparse_index's limit, still accepted
    CHECK(automatic_kind(sparse) == index_kind::sparse);
    sparse(0, 40) = 1.0f;  // one entry over half
    CHECK(automatic_kind(sparse) == index_kind::pca);
}

TEST_CASE("the default kind is automatic, resolved per part and again at load", "[index][auto]") {
    const hashing_embedder e;
    const auto index = table_index::build(demo(), e, e.name());
    CHECK(index.options().kind == index_kind::automatic);
    CHECK(index.table_search_kind() == index_kind::exact);  // the demo's vectors are small
    CHECK(index.column_search_kind() == index_kind::exact);
    const matrix queries = demo_index().tables().vectors().topRows(5);
    CHECK(index.search_tables(queries, 5) == demo_index().search_tables(queries, 5));

    const temp_dir dir;
    index.save(dir.path() / "idx");
    const auto loaded = table_index::load(dir.path() / "idx");
    CHECK(loaded.options().kind == index_kind::automatic);
    CHECK(loaded.table_search_kind() == index_kind::exact);
    CHECK(loaded.search_tables(queries, 5) == index.search_tables(queries, 5));
}
