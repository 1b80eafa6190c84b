#include <tabret/index/exact_index.hpp>
#include <tabret/index/huge_pages.hpp>
#include <tabret/index/int8_codes.hpp>
#include <tabret/index/scan.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/index/top_k.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace tabret;
using tabret::test::random_rows;

namespace {

/// The inner product in double precision: the kernel must agree within float rounding.
double reference_dot(const matrix& a, Eigen::Index i, const matrix& b, Eigen::Index j) {
    double s = 0;
    for (Eigen::Index c = 0; c < a.cols(); ++c)
        s += static_cast<double>(a(i, c)) * static_cast<double>(b(j, c));
    return s;
}

}  // namespace

TEST_CASE("scan kernel: every query count and shape against double-precision products",
          "[index][scan]") {
    // Row counts around the 16-row panels, dimensions around the 8- and 16-float steps, query
    // counts through both paths (streamed below scan_batch_min, packed from it on, with every
    // remainder of the 6-query micro-kernel).
    for (const std::size_t d : {1u, 7u, 8u, 17u, 33u, 384u}) {
        for (const std::size_t n : {1u, 15u, 16u, 33u}) {
            const matrix rows = random_rows(n, d, static_cast<unsigned>(n * 131 + d));
            for (std::size_t nq = 1; nq <= 14; ++nq) {
                const matrix queries = random_rows(nq, d, static_cast<unsigned>(nq + 7 * d));
                std::vector<float> scores(nq * n, -1.0f);
                detail::inner_products(rows.data(), n, queries.data(), nq, d, scores.data());
                for (std::size_t q = 0; q < nq; ++q)
                    for (std::size_t r = 0; r < n; ++r) {
                        const double want = reference_dot(queries, static_cast<Eigen::Index>(q),
                                                          rows, static_cast<Eigen::Index>(r));
                        INFO("d " << d << " n " << n << " nq " << nq << " q " << q << " r " << r);
                        CHECK(std::abs(scores[q * n + r] - want) <=
                              1e-5 * static_cast<double>(d) + 1e-6 * std::abs(want));
                    }
            }
        }
    }
}

TEST_CASE("scan kernel: identical rows score identically wherever they sit", "[index][scan]") {
    const std::size_t d = 37;
    matrix rows = random_rows(40, d, 5);
    for (const Eigen::Index r : {3, 16, 17, 31, 39}) rows.row(r) = rows.row(0);
    for (const std::size_t nq :
         {std::size_t{1}, std::size_t{3}, detail::scan_batch_min, std::size_t{13}}) {
        const matrix queries = random_rows(nq, d, 11);
        std::vector<float> scores(nq * 40);
        detail::inner_products(rows.data(), 40, queries.data(), nq, d, scores.data());
        for (std::size_t q = 0; q < nq; ++q)
            for (const std::size_t r : {3u, 16u, 17u, 31u, 39u})
                CHECK(scores[q * 40 + r] == scores[q * 40]);
    }
}

TEST_CASE("streaming top-k equals sorting every hit, ties by id", "[index][scan]") {
    std::mt19937 gen(3);
    std::uniform_int_distribution<int> level(0, 9);  // few distinct scores: many ties
    for (const std::size_t n : {0u, 1u, 5u, 100u, 1000u}) {
        std::vector<float> scores(n);
        std::vector<item_id> ids(n);
        for (std::size_t j = 0; j < n; ++j) {
            scores[j] = static_cast<float>(level(gen)) / 10.0f;
            ids[j] = static_cast<item_id>((j * 7919) % 10007);  // not in id order
        }
        for (const std::size_t k : {1u, 3u, 10u, 2000u}) {
            hits all;
            for (std::size_t j = 0; j < n; ++j) all.push_back({ids[j], scores[j]});
            const hits want = detail::select_top_k(all, k);
            CHECK(detail::top_k_of_row(scores, ids, 0, k) == want);
            hits by_position;
            for (std::size_t j = 0; j < n; ++j)
                by_position.push_back({static_cast<item_id>(100 + j), scores[j]});
            CHECK(detail::top_k_of_row(scores, {}, 100, k) == detail::select_top_k(by_position, k));
        }
    }
}

TEST_CASE("best of a row is the streaming top-k's set, sampled or not", "[index][scan]") {
    std::mt19937 gen(7);
    std::uniform_int_distribution<int> level(0, 9);  // few distinct scores: ties at the m-th
    std::normal_distribution<float> spread(0.0f, 1.0f);
    for (const bool tied : {true, false})
        for (const std::size_t n : {0u, 1u, 100u, 5000u, 100000u}) {
            std::vector<float> scores(n);
            for (auto& s : scores) s = tied ? static_cast<float>(level(gen)) / 10.0f : spread(gen);
            for (const std::size_t m : {1u, 10u, 300u, 4000u, 200000u}) {
                auto got = detail::best_of_row(scores, 50, m);
                detail::sort_hits(got);
                CHECK(got == detail::top_k_of_row(scores, {}, 50, m));
            }
            // a count read from a file may be anything: every score, no overflow
            CHECK(detail::best_of_row(scores, 0, std::numeric_limits<std::size_t>::max()).size() ==
                  n);
        }
}

TEST_CASE("sorting hits by packed keys is better_hit's order", "[index][scan]") {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> special = {0.0f, -0.0f, inf, -inf, 1e-40f, -1e-40f, 0.25f, -0.25f};
    for (const std::size_t n : {0u, 1u, 2u, 63u, 64u, 900u}) {
        hits h;
        for (std::size_t i = 0; i < n; ++i) {
            const float s = i % 3 == 0 ? special[i % special.size()] : u(gen);
            h.push_back({static_cast<item_id>(gen() % 5000), s});  // repeated ids too
        }
        hits want = h;
        std::sort(want.begin(), want.end(), detail::better_hit);
        detail::sort_hits(h);
        REQUIRE(h.size() == want.size());
        for (std::size_t i = 0; i < h.size(); ++i) {
            CHECK(h[i].id == want[i].id);
            CHECK(h[i].score == want[i].score);  // -0 comes back as +0, which == counts equal
        }
    }
}

TEST_CASE("exact index: single queries and batches find the brute-force top k", "[index][scan]") {
    const std::size_t n = 300, d = 24;
    matrix data = random_rows(n, d, 17);
    for (Eigen::Index r = 0; r < data.rows(); ++r) data.row(r).normalize();
    const exact_index index(data);
    const matrix queries = random_rows(9, d, 23);
    const auto batch = index.search(queries, 10);
    for (Eigen::Index q = 0; q < queries.rows(); ++q) {
        std::vector<std::pair<double, item_id>> all;
        for (Eigen::Index r = 0; r < data.rows(); ++r)
            all.emplace_back(reference_dot(queries, q, data, r), static_cast<item_id>(r));
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
        });
        const auto single = index.search(queries.row(q), 10)[0];
        const auto& batched = batch[static_cast<std::size_t>(q)];
        REQUIRE(single.size() == 10);
        REQUIRE(batched.size() == 10);
        for (std::size_t i = 0; i < 10; ++i) {
            CHECK(single[i].id == all[i].second);
            CHECK(batched[i].id == all[i].second);
            CHECK(single[i].score == Approx(all[i].first).margin(1e-5));
        }
    }
}

TEST_CASE("int8 pre-scan: scaled code products against the float rows", "[index][scan][int8]") {
    for (const std::size_t d : {1u, 15u, 33u, 100u}) {
        const matrix rows = random_rows(20, d, static_cast<unsigned>(d));
        const matrix query = random_rows(1, d, 99);
        std::vector<std::int8_t> codes(20 * d);
        std::vector<float> scales(20), out(20);
        for (Eigen::Index r = 0; r < 20; ++r) {
            scales[static_cast<std::size_t>(r)] = 0.5f + static_cast<float>(r);
            for (Eigen::Index c = 0; c < static_cast<Eigen::Index>(d); ++c)
                codes[static_cast<std::size_t>(r) * d + static_cast<std::size_t>(c)] =
                    static_cast<std::int8_t>(std::lround(rows(r, c) * 40.0f));
        }
        detail::int8_inner_products(codes.data(), scales.data(), 20, query.data(), d, out.data());
        for (std::size_t r = 0; r < 20; ++r) {
            double want = 0;
            for (std::size_t c = 0; c < d; ++c)
                want +=
                    static_cast<double>(codes[r * d + c]) * query(0, static_cast<Eigen::Index>(c));
            CHECK(out[r] == Approx(want * scales[r]).margin(1e-3));
        }
    }
}

TEST_CASE("quantised exact search returns the exact top k, ties by id", "[index][scan][int8]") {
    // Near-duplicate families (rows a little apart) and exact duplicates: the shapes on which
    // the int8 scores' errors matter, and the ties that must still go to the smaller id.
    const std::size_t d = 64;
    matrix data = random_rows(500, d, 31);
    std::mt19937 gen(4);
    std::normal_distribution<float> noise(0.0f, 0.01f);
    for (Eigen::Index r = 100; r < 300; ++r) {
        data.row(r) = data.row(r % 10);
        if (r % 3 != 0)
            for (Eigen::Index c = 0; c < data.cols(); ++c) data(r, c) += noise(gen);
    }
    for (Eigen::Index r = 0; r < data.rows(); ++r) data.row(r).normalize();
    exact_index plain(data);
    exact_index quantised(data);
    quantised.quantize();
    CHECK(quantised.quantized());
    CHECK(quantised.bytes() > plain.bytes());
    matrix queries = random_rows(20, d, 77);
    for (Eigen::Index q = 10; q < 20; ++q) queries.row(q) = data.row(q * 7) + 0.1 * queries.row(q);
    for (const std::size_t k : {1u, 10u, 50u, 600u}) {
        for (Eigen::Index q = 0; q < queries.rows(); ++q) {
            const matrix one = queries.row(q);
            CHECK(quantised.search(one, k) == plain.search(one, k));  // ids and scores
        }
        CHECK(quantised.search(queries, k) == plain.search(queries, k));  // a batch: floats
    }
    const detail::int8_codes codes(data);
    const matrix one = queries.row(3);
    const auto few = codes.candidates(one.data(), 10);
    CHECK(few.size() < 500);  // the pre-scan prunes: most rows cannot reach the top 10
    CHECK(std::is_sorted(few.begin(), few.end()));
}

TEST_CASE("table index of kind int8 searches as exact and survives save and load",
          "[index][scan][int8]") {
    const hashing_embedder e;
    const auto int8 = table_index::build(test::demo(), e, e.name(), {.kind = index_kind::int8});
    const auto& exact = test::demo_index();
    const matrix queries = exact.tables().vectors().topRows(3);
    for (Eigen::Index q = 0; q < queries.rows(); ++q) {
        const matrix one = queries.row(q);
        CHECK(int8.search_tables(one, 5) == exact.search_tables(one, 5));
        CHECK(int8.search_columns(one, 8) == exact.search_columns(one, 8));
    }
    const test::temp_dir dir;
    int8.save(dir.path() / "idx");
    const auto loaded = table_index::load(dir.path() / "idx");
    CHECK(loaded.options().kind == index_kind::int8);
    CHECK(loaded.tables().quantized());
    CHECK(loaded.search_tables(queries, 5) == int8.search_tables(queries, 5));
    CHECK(loaded.search_columns(queries, 8) == int8.search_columns(queries, 8));
}

TEST_CASE("huge pages: the hint keeps every byte of the buffer", "[index][scan]") {
    // 20 MiB with an unaligned start: the 2 MiB-aligned middle may move into huge pages, the
    // contents must not change (and a small or empty buffer is left alone).
    std::vector<float> big((std::size_t{20} << 20) / sizeof(float) + 3);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 9973);
    detail::back_with_huge_pages(big.data() + 1, (big.size() - 1) * sizeof(float));
    bool same = true;
    for (std::size_t i = 0; i < big.size(); ++i)
        same = same && big[i] == static_cast<float>(i % 9973);
    CHECK(same);
    std::vector<float> small(16, 1.0f);
    detail::back_with_huge_pages(small.data(), small.size() * sizeof(float));
    detail::back_with_huge_pages(nullptr, 0);
    CHECK(small == std::vector<float>(16, 1.0f));
}
