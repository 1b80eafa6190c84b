#include <tabret/index/exact_index.hpp>
#include <tabret/index/pca_index.hpp>
#include <tabret/index/scan.hpp>
#include <tabret/index/table_index.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace tabret;
using tabret::test::random_rows;

namespace {

/// Unit rows in tight near-duplicate families around a few directions that dominate the
/// variance (the shape of a warehouse's column vectors: templated texts, date shards).
matrix family_rows(std::size_t n, std::size_t d, unsigned seed) {
    const matrix centres = random_rows(40, d, seed);
    const matrix noise = random_rows(n, d, seed + 1);
    matrix out(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
    for (Eigen::Index r = 0; r < out.rows(); ++r) {
        out.row(r) = centres.row(r % centres.rows()) + 0.3f * noise.row(r);
        out.row(r).normalize();
    }
    return out;
}

/// Share of @p exact's top k that @p approx matches by score (ties count).
double recall_by_score(const hits& approx, const hits& exact) {
    std::size_t found = 0;
    for (const hit& h : approx) found += h.score >= exact.back().score - 1e-6f ? 1 : 0;
    return static_cast<double>(found) / static_cast<double>(exact.size());
}

}  // namespace

TEST_CASE("packed scans: integer code products, 2 and 4 bits, every chunk count and row tail",
          "[index][scan][pca]") {
    std::mt19937 gen(5);
    std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127);
    for (const unsigned bits : {2u, 4u})
        for (const std::size_t chunks : {1u, 2u, 3u})
            for (const std::size_t n : {1u, 8u, 21u}) {
                const std::size_t per_chunk = 256 / bits;  // components a 32-byte chunk holds
                std::vector<std::uint8_t> codes(n * chunks * 32);
                for (auto& c : codes) c = static_cast<std::uint8_t>(byte(gen));
                std::vector<std::int8_t> query(chunks * per_chunk);
                for (auto& q : query) q = static_cast<std::int8_t>(weight(gen));
                // The extreme weight against the largest code of every slot fits the 16-bit
                // sums.
                for (std::size_t slot = 0; slot < 8 / bits; ++slot) query[slot * 32] = -128;
                codes[0] = 0xFF;
                std::vector<float> scales(n), out(n);
                for (std::size_t r = 0; r < n; ++r) scales[r] = 0.25f + static_cast<float>(r);
                const float bias = 7.5f;
                detail::packed_inner_products(bits, codes.data(), scales.data(), n, query.data(),
                                              chunks, bias, out.data());
                for (std::size_t r = 0; r < n; ++r) {
                    std::int64_t sum = 0;  // component 32 · s + i of a chunk: slot s of byte i
                    for (std::size_t c = 0; c < chunks; ++c)
                        for (std::size_t i = 0; i < 32; ++i)
                            for (std::size_t slot = 0; slot < 8 / bits; ++slot) {
                                const unsigned b = codes[(r * chunks + c) * 32 + i];
                                const unsigned code = (b >> (bits * slot)) & ((1u << bits) - 1);
                                sum +=
                                    static_cast<int>(code) * query[c * per_chunk + slot * 32 + i];
                            }
                    CHECK(out[r] == scales[r] * (static_cast<float>(sum) - bias));
                }
            }
    std::vector<float> out(1);
    CHECK_THROWS_AS(
        detail::packed_inner_products(3, nullptr, nullptr, 0, nullptr, 1, 0.0f, out.data()), error);
}

TEST_CASE("pca index: exact scores, most of the exact top 10, exact when it re-scores all",
          "[index][pca]") {
    const std::size_t n = 3000, d = 96;
    const exact_index exact(family_rows(n, d, 11));
    const pca_index pca(exact, {.dims = 48, .rescore = 100});
    CHECK(pca.size() == n);
    CHECK(pca.dim() == d);
    CHECK(pca.code_dims() == 64);        // 48 components padded to one chunk of 4-bit codes
    CHECK(pca.scan_code_dims() == 128);  // and to one of 2-bit codes
    CHECK(pca.bytes() == n * (32 + 32 + 2 * 4));  // two chunks of codes and two scales a row
    const matrix queries = random_rows(30, d, 12);
    double recall = 0;
    for (Eigen::Index q = 0; q < queries.rows(); ++q) {
        const matrix one = queries.row(q);
        const auto got = pca.search(one, 10).front();
        const auto want = exact.search(one, 10).front();
        REQUIRE(got.size() == 10);
        CHECK(std::is_sorted(got.begin(), got.end(), detail::better_hit));
        for (const hit& h : got) {  // every returned score is the exact inner product
            const std::vector<item_id> id{h.id};
            CHECK(h.score == exact.search_within(one, id, 1).front().front().score);
        }
        recall += recall_by_score(got, want);
    }
    CHECK(recall / static_cast<double>(queries.rows()) >= 0.9);
    // 100 of 3,000 re-scored from 48 of 96 components: not always the exact top 10, which a
    // search that re-scores every row is.
    const pca_index all(exact, {.dims = 48, .rescore = n});
    CHECK(all.search(queries, 10) == exact.search(queries, 10));
    CHECK(pca.search(queries, 10) == pca.search(queries, 10));  // deterministic
    const pca_index again(exact, {.dims = 48, .rescore = 100});
    CHECK(again.search(queries, 10) == pca.search(queries, 10));  // the build is too
}

TEST_CASE("pca index: more components find more of the exact top 10", "[index][pca]") {
    const std::size_t n = 3000, d = 128;
    const exact_index exact(family_rows(n, d, 21));
    const matrix queries = random_rows(40, d, 22);
    const auto recall_with = [&](std::size_t dims) {
        const pca_index pca(exact, {.dims = dims, .rescore = 30});
        double sum = 0;
        for (Eigen::Index q = 0; q < queries.rows(); ++q) {
            const matrix one = queries.row(q);
            sum += recall_by_score(pca.search(one, 10).front(), exact.search(one, 10).front());
        }
        return sum / static_cast<double>(queries.rows());
    };
    const double few = recall_with(2), many = recall_with(128);
    CHECK(few < many);
    CHECK(few < 0.9);  // the cost of re-scoring only 30 rows found from 2 components
}

TEST_CASE("pca index: a shortlist scored on 4-bit codes finds what the 2-bit scan alone misses",
          "[index][pca]") {
    const std::size_t n = 3000, d = 128;
    const exact_index exact(family_rows(n, d, 31));
    const matrix queries = random_rows(40, d, 32);
    const auto recall_with = [&](const pca_params& p) {
        const pca_index pca(exact, p);
        double sum = 0;
        for (Eigen::Index q = 0; q < queries.rows(); ++q) {
            const matrix one = queries.row(q);
            sum += recall_by_score(pca.search(one, 10).front(), exact.search(one, 10).front());
        }
        return sum / static_cast<double>(queries.rows());
    };
    // 30 re-scored straight from the scan of the 2-bit codes (a shortlist no longer than that),
    // or the best 30 of a shortlist of 600 scored on the 4-bit codes
    const double scan_only = recall_with({.dims = 128, .shortlist = 30, .rescore = 30});
    const double two_stage = recall_with({.dims = 128, .shortlist = 600, .rescore = 30});
    CHECK(scan_only < two_stage);
    CHECK(two_stage >= 0.9);
    const pca_index pca(exact, {.dims = 128, .scan_dims = 64, .shortlist = 600, .rescore = 30});
    CHECK(pca.code_dims() == 128);
    CHECK(pca.scan_code_dims() == 128);  // scan_dims rounded up to a chunk of 2-bit codes
    CHECK(pca.bytes() == n * (32 + 64 + 2 * 4));
}

TEST_CASE("pca index: conventions and bad input", "[index][pca]") {
    const exact_index exact(family_rows(50, 16, 3));
    CHECK_THROWS_AS(pca_index(exact, {.dims = 0}), error);
    CHECK_THROWS_AS(pca_index(exact, {.scan_dims = 0}), error);
    CHECK_THROWS_AS(pca_index(exact, {.rescore = 0}), error);
    const pca_index pca(exact, {.dims = 8, .rescore = 5});
    CHECK_THROWS_AS(pca.search(random_rows(1, 16, 1), 0), error);
    CHECK_THROWS_AS(pca.search(random_rows(1, 15, 1), 3), embedding_error);
    CHECK(pca.search(random_rows(1, 16, 1), 80).front().size() == 50);  // k above n: all rows
    const std::vector<item_id> ids{4, 2, 4};
    CHECK(pca.search_within(random_rows(1, 16, 1), ids, 5).front().size() == 2);
    const pca_index empty(exact_index(matrix(0, 16)));
    CHECK(empty.search(random_rows(1, 16, 1), 3).front().empty());
}

TEST_CASE("table index of kind pca re-scores exactly and survives save and load", "[index][pca]") {
    const hashing_embedder e;
    table_index_options o{.kind = index_kind::pca};
    o.pca = {
        .dims = 128, .scan_dims = 64, .shortlist = 12, .rescore = 6};  // below the demo's sizes
    const auto pca = table_index::build(test::demo(), e, e.name(), o);
    const auto& exact = test::demo_index();
    const matrix queries = exact.tables().vectors().topRows(3);
    for (Eigen::Index q = 0; q < queries.rows(); ++q) {
        const matrix one = queries.row(q);
        // A table's own vector is its best match, found through the codes.
        CHECK(pca.search_tables(one, 1).front().front().id == static_cast<item_id>(q));
        CHECK(pca.search_tables(one, 1) == exact.search_tables(one, 1));
    }
    const test::temp_dir dir;
    pca.save(dir.path() / "idx");
    const auto loaded = table_index::load(dir.path() / "idx");
    CHECK(loaded.options().kind == index_kind::pca);
    CHECK(loaded.options().pca.dims == 128);
    CHECK(loaded.options().pca.scan_dims == 64);
    CHECK(loaded.options().pca.shortlist == 12);
    CHECK(loaded.options().pca.rescore == 6);
    CHECK(loaded.search_tables(queries, 5) == pca.search_tables(queries, 5));
    CHECK(loaded.search_columns(queries, 8) == pca.search_columns(queries, 8));
}
