// Google Benchmark micro-benchmarks of tabret's hot loops on synthetic inputs (issue 11):
// top-k selection, exact and HNSW search, BM25, CRUSH selection, greedy join, exact JAR, the ATR
// sliding window, the hashing embedder and the LLM-answer parser. Run:
// build/bench/bench/cpp/tabret_bench.

#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <xtensor/xtensor.hpp>

#include "tabret/tabret.hpp"

namespace {

using namespace tabret;

/// n random unit rows of dimension d.
matrix random_unit_rows(std::size_t n, std::size_t d, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g;
    matrix m(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = g(rng);
    m.rowwise().normalize();
    return m;
}

void BM_TopK(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u;
    hits all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = {static_cast<item_id>(i), u(rng)};
    for (auto _ : state) benchmark::DoNotOptimize(detail::select_top_k(all, 10));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_TopK)->Arg(1000)->Arg(100000);

/// Args: items, dimension, queries per batch. Time per batch.
void BM_ExactSearch(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto d = static_cast<std::size_t>(state.range(1));
    const auto q = static_cast<std::size_t>(state.range(2));
    const exact_index index(random_unit_rows(n, d, 2));
    const matrix queries = random_unit_rows(q, d, 3);
    for (auto _ : state) benchmark::DoNotOptimize(index.search(queries, 10));
    state.SetItemsProcessed(state.iterations() * state.range(2));
}
BENCHMARK(BM_ExactSearch)
    ->Args({876, 1024, 1})
    ->Args({876, 1024, 64})
    ->Args({4503, 1024, 64})
    ->Args({20000, 256, 1})
    ->Args({100000, 1024, 1})
    ->Unit(benchmark::kMicrosecond);

/// HNSW over 20,000 vectors of dimension 256 (built once), one query per iteration.
void BM_HnswSearch(benchmark::State& state) {
    static const auto index = std::make_unique<hnsw_index>(random_unit_rows(20000, 256, 2));
    const matrix queries = random_unit_rows(1, 256, 3);
    for (auto _ : state) benchmark::DoNotOptimize(index->search(queries, 10));
}
BENCHMARK(BM_HnswSearch)->Unit(benchmark::kMicrosecond);

std::vector<std::string> random_texts(std::size_t n, std::size_t words, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> word(0, 1999);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) {
        std::string s;
        for (std::size_t w = 0; w < words; ++w) s += fmt::format("w{} ", word(rng));
        out.push_back(s);
    }
    return out;
}

/// BM25 over documents of 12 words from a 2,000-word vocabulary; queries of 8 words.
void BM_Bm25Search(benchmark::State& state) {
    const bm25_index index(random_texts(static_cast<std::size_t>(state.range(0)), 12, 4));
    const auto queries = random_texts(1, 8, 5);
    for (auto _ : state) benchmark::DoNotOptimize(index.search(queries, 10));
}
BENCHMARK(BM_Bm25Search)->Arg(876)->Arg(18891)->Unit(benchmark::kMicrosecond);

void BM_HashingEmbed(benchmark::State& state) {
    const hashing_embedder embedder;
    const auto texts = random_texts(static_cast<std::size_t>(state.range(0)), 15, 6);
    for (auto _ : state) benchmark::DoNotOptimize(embedder.embed(texts));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_HashingEmbed)->Arg(1)->Arg(512)->Unit(benchmark::kMicrosecond);

/// 5 probes × n candidates of entropy-weighted probabilities, ~3 links per candidate.
struct crush_input {
    xt::xtensor<float, 2> s;
    xt::xtensor<std::uint8_t, 2> linked;
};

crush_input random_crush(std::size_t n) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> cos(-0.2f, 0.9f);
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    crush_input in{xt::xtensor<float, 2>::from_shape({5, n}), xt::zeros<std::uint8_t>({n, n})};
    for (auto& x : in.s) x = cos_probability(cos(rng));
    for (std::size_t i = 0; i < 3 * n; ++i) in.linked(pick(rng), pick(rng)) = 1;
    in.s = entropy_weighted(in.s);
    return in;
}

void BM_CrushObjective(benchmark::State& state) {
    const auto in = random_crush(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(select_by_objective(in.s, in.linked, 20));
}
BENCHMARK(BM_CrushObjective)->Arg(100)->Arg(400)->Unit(benchmark::kMicrosecond);

void BM_CrushRoundRobin(benchmark::State& state) {
    const auto in = random_crush(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(select_round_robin(in.s, 20));
}
BENCHMARK(BM_CrushRoundRobin)->Arg(100)->Arg(400)->Unit(benchmark::kMicrosecond);

void BM_EntropyWeighted(benchmark::State& state) {
    const auto in = random_crush(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(entropy_weighted(in.s));
}
BENCHMARK(BM_EntropyWeighted)->Arg(400)->Unit(benchmark::kMicrosecond);

/// N candidates, 4 sub-queries, ω on ~30% of the pairs (as in tests/cpp/test_join.cpp).
join_problem random_join(std::size_t n, std::size_t m) {
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> coarse(-0.2f, 0.8f), fine(-0.2f, 0.95f), w(0.05f, 1.0f);
    std::bernoulli_distribution edge(0.3);
    join_problem p;
    for (std::size_t i = 0; i < n; ++i) {
        p.tables.push_back(static_cast<table_id>(i));
        p.coarse.push_back(coarse(rng));
    }
    for (std::size_t j = 0; j < m; ++j) p.subqueries.push_back(fmt::format("q{}", j));
    for (std::size_t i = 0; i < n * m; ++i) p.fine.push_back(fine(rng));
    p.join.assign(n * n, 0.0f);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = a + 1; b < n; ++b)
            if (edge(rng)) p.join[a * n + b] = p.join[b * n + a] = w(rng);
    return p;
}

void BM_GreedyJoin(benchmark::State& state) {
    const auto p = random_join(20, 4);
    const auto k = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) benchmark::DoNotOptimize(greedy_select(p, k));
}
BENCHMARK(BM_GreedyJoin)->Arg(5)->Arg(10)->Unit(benchmark::kMicrosecond);

void BM_JarExact(benchmark::State& state) {
    const auto p = random_join(20, 4);
    const auto k = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) benchmark::DoNotOptimize(jar_exact_select(p, k, jar_weights::spider()));
}
BENCHMARK(BM_JarExact)->Arg(2)->Arg(3)->Arg(5)->Unit(benchmark::kMicrosecond);

/// ATR's walk over 50 candidates, window 20, retain 15, random logits and threshold.
void BM_SlidingWindow(benchmark::State& state) {
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> u;
    std::vector<scored_table> list;
    for (table_id t = 0; t < 50; ++t) list.push_back({t, u(rng)});
    std::vector<float> logit(50);
    for (auto& l : logit) l = u(rng);
    const adaptive_options o{50, 20, 15};
    std::size_t cuts = 0;
    for (auto _ : state) {
        detail::window_walk walk(list, o);
        while (!walk.finished()) {
            window_scores s;
            for (const auto t : walk.window()) s.logits.push_back(logit[t]);
            s.threshold = 0.8f;
            walk.apply(s);
        }
        cuts += walk.list().size();
        benchmark::DoNotOptimize(cuts);
    }
}
BENCHMARK(BM_SlidingWindow)->Unit(benchmark::kMicrosecond);

}  // namespace

// A hallucinated schema of n lines, each item written twice: the parser keeps each once (one
// hash look-up per item, so the time grows linearly with n).
void BM_ParseLongAnswer(benchmark::State& state) {
    std::string answer;
    const auto n = static_cast<std::size_t>(state.range(0));
    for (std::size_t i = 0; i < n; ++i) answer += fmt::format("table_{}(a, b, c)\n", i % (n / 2));
    for (auto _ : state) benchmark::DoNotOptimize(parse_hallucinated_schema(answer));
    state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_ParseLongAnswer)->Arg(2000)->Arg(20000)->Complexity()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
