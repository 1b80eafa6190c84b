// Retrievers shared between threads: 8 threads running the same questions get exactly the
// serial results. Tagged [concurrency]: `make tsan` runs these under ThreadSanitizer.
#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/exact_index.hpp>
#include <tabret/index/hnsw_index.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/retrieval/first_stage/bm25_retriever.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace tabret;

namespace {

/// Runs `retrieve` for every question on @p threads threads at once, each thread over all
/// questions in a different order, and returns each thread's results in question order.
template <class R>
std::vector<std::vector<retrieval>> run_threads(const R& retriever,
                                                const std::vector<std::string>& questions,
                                                const retrieve_options& o, std::size_t threads) {
    std::vector<std::vector<retrieval>> out(threads, std::vector<retrieval>(questions.size()));
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (std::size_t j = 0; j < questions.size(); ++j) {
                const std::size_t i = (j + t * 7) % questions.size();
                out[t][i] = retriever.retrieve(std::span(&questions[i], 1), o)[0];
            }
        });
    pool.clear();  // joins
    return out;
}

std::vector<std::string> questions() {
    return {"Which doctors treated patients in the cardiology ward?",
            "How many customers signed up in 2023?",
            "List the students enrolled in each course",
            "Which routes stop at the central station?",
            "Average loan duration per library branch",
            "Names of employees and their departments"};
}

}  // namespace

TEST_CASE("dense, hybrid and bm25 retrievers: 8 threads equal serial", "[concurrency]") {
    const catalog cat = load_catalog_json(test::demo_catalog_path());
    const hashing_embedder embedder;
    const cached_embedder cache(embedder);  // shared mutable state under a lock
    const auto index = table_index::build(cat, embedder, embedder.name());
    const auto qs = questions();
    const retrieve_options o{.k = 5, .k_columns = 5};

    const dense_retriever dense(index, cache);
    const dense_retriever hybrid(index, embedder, {.hybrid = true});
    const bm25_retriever bm25(index);
    const auto check = [&](const auto& r, const retrieve_options& opts) {
        // Serial: the same one-question calls on one thread (a batch may round differently).
        std::vector<retrieval> serial;
        for (const auto& q : qs) serial.push_back(r.retrieve(std::span(&q, 1), opts)[0]);
        for (const auto& per_thread : run_threads(r, qs, opts, 8)) CHECK(per_thread == serial);
    };
    check(dense, o);
    check(hybrid, o);
    check(bm25, retrieve_options{.k = 5});
}

TEST_CASE("hnsw build on 4 threads finds what exact search finds", "[concurrency]") {
    // Under TSan (make tsan) this is the check on hnsw_graph::insert's locking.
    matrix data = test::random_rows(3000, 24, 5);
    normalize_rows(data);
    const hnsw_index index(data, {.m = 8, .ef_construction = 80, .ef_search = 80, .threads = 4});
    const matrix queries = data.topRows(50);
    const auto found = index.search(queries, 1);
    std::size_t self = 0;
    for (std::size_t q = 0; q < found.size(); ++q) self += found[q].at(0).id == q;
    CHECK(self >= 48);  // each query is a row of the index: its own nearest neighbour
    const auto loaded = hnsw_index::from_bytes(index.to_bytes(), 24, "built.hnsw");
    CHECK(loaded.search(queries, 5) == index.search(queries, 5));
}
