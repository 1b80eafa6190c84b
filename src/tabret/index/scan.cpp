#include "tabret/index/scan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "clones.hpp"

// Kernels written with GCC/Clang vector extensions (8 floats) so that every clone keeps its
// accumulators in registers: one AVX register per vector under x86-64-v3 and v4, two SSE ones
// for the baseline. Built with -ffp-contract=fast (CMakeLists.txt), so the clones with FMA fuse
// each multiply-add.

namespace tabret::detail {
namespace {

using v8 = float __attribute__((vector_size(32), aligned(4)));

// The helpers below pass v8 by value, which GCC warns changes the ABI without AVX: they are
// internal and always inlined, so no call with that ABI exists.
#pragma GCC diagnostic ignored "-Wpsabi"

[[gnu::always_inline]] inline v8 load8(const float* p) noexcept {
    v8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

[[gnu::always_inline]] inline float sum8(v8 v) noexcept {
    float lanes[8];
    std::memcpy(lanes, &v, sizeof v);
    return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
           ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

/// One row against Q queries (Q < scan_batch_min): two 8-float partial sums per query (2Q + 2
/// registers).
template <std::size_t Q>
[[gnu::always_inline]] inline void stream_row(const float* row, const float* queries, std::size_t d,
                                              float* out, std::size_t ld) noexcept {
    v8 even[Q] = {};
    v8 odd[Q] = {};
    std::size_t i = 0;
    for (; i + 16 <= d; i += 16) {
        const v8 r0 = load8(row + i);
        const v8 r1 = load8(row + i + 8);
#pragma GCC unroll 8
        for (std::size_t q = 0; q < Q; ++q) {
            even[q] += r0 * load8(queries + q * d + i);
            odd[q] += r1 * load8(queries + q * d + i + 8);
        }
    }
#pragma GCC unroll 8
    for (std::size_t q = 0; q < Q; ++q) {
        float s = sum8(even[q] + odd[q]);
        for (std::size_t j = i; j < d; ++j) s += row[j] * queries[q * d + j];
        out[q * ld] = s;
    }
}

template <std::size_t Q>
[[gnu::always_inline]] inline void stream(const float* rows, std::size_t n, const float* queries,
                                          std::size_t d, float* scores) noexcept {
    for (std::size_t r = 0; r < n; ++r) stream_row<Q>(rows + r * d, queries, d, scores + r, n);
}

constexpr std::size_t panel_rows = 16;

/// Scores of MR queries against a packed panel (panel[k * 16 + j] = row j's entry k): 2 × MR
/// accumulators of 8 floats, each query entry broadcast once per k.
template <std::size_t MR>
[[gnu::always_inline]] inline void micro(const float* panel, const float* queries, std::size_t d,
                                         float* out, std::size_t ld, std::size_t cols) noexcept {
    v8 lo[MR] = {};
    v8 hi[MR] = {};
    for (std::size_t k = 0; k < d; ++k) {
        const v8 b0 = load8(panel + k * panel_rows);
        const v8 b1 = load8(panel + k * panel_rows + 8);
#pragma GCC unroll 8
        for (std::size_t q = 0; q < MR; ++q) {
            const float a = queries[q * d + k];
            lo[q] += b0 * a;
            hi[q] += b1 * a;
        }
    }
#pragma GCC unroll 8
    for (std::size_t q = 0; q < MR; ++q) {
        float tile[panel_rows];
        std::memcpy(tile, &lo[q], sizeof(v8));
        std::memcpy(tile + 8, &hi[q], sizeof(v8));
        std::memcpy(out + q * ld, tile, cols * sizeof(float));
    }
}

/// Rows [r0, r0 + cols) transposed into @p panel, zero-padded to 16 rows.
[[gnu::always_inline]] inline void pack(const float* rows, std::size_t cols, std::size_t d,
                                        float* panel) noexcept {
    for (std::size_t j = 0; j < panel_rows; ++j) {
        const float* row = rows + j * d;
        for (std::size_t k = 0; k < d; ++k) panel[k * panel_rows + j] = j < cols ? row[k] : 0.0f;
    }
}

template <std::size_t MR>
[[gnu::always_inline]] inline void micro_rest(std::size_t rest, const float* panel,
                                              const float* queries, std::size_t d, float* out,
                                              std::size_t ld, std::size_t cols) noexcept {
    if constexpr (MR > 0) {
        if (rest == MR) return micro<MR>(panel, queries, d, out, ld, cols);
        micro_rest<MR - 1>(rest, panel, queries, d, out, ld, cols);
    }
}

[[gnu::always_inline]] inline void packed(const float* rows, std::size_t n, const float* queries,
                                          std::size_t nq, std::size_t d, float* scores,
                                          float* panel) noexcept {
    constexpr std::size_t mr = 6;
    for (std::size_t r0 = 0; r0 < n; r0 += panel_rows) {
        const std::size_t cols = std::min(panel_rows, n - r0);
        pack(rows + r0 * d, cols, d, panel);
        std::size_t q = 0;
        for (; q + mr <= nq; q += mr)
            micro<mr>(panel, queries + q * d, d, scores + q * n + r0, n, cols);
        micro_rest<mr - 1>(nq - q, panel, queries + q * d, d, scores + q * n + r0, n, cols);
    }
}

TABRET_CLONES void scan(const float* rows, std::size_t n, const float* queries, std::size_t nq,
                        std::size_t d, float* scores, float* panel) noexcept {
    switch (nq) {
        case 1:
            return stream<1>(rows, n, queries, d, scores);
        case 2:
            return stream<2>(rows, n, queries, d, scores);
        case 3:
            return stream<3>(rows, n, queries, d, scores);
        case 4:
            return stream<4>(rows, n, queries, d, scores);
        case 5:
            return stream<5>(rows, n, queries, d, scores);
        case 6:
            return stream<6>(rows, n, queries, d, scores);
        default:
            return packed(rows, n, queries, nq, d, scores, panel);
    }
}

/// Rows of int8 codes against one query: 32 float partial sums, a plain loop that the
/// vectoriser widens (int8 to int32 to float, then a multiply-add) at each clone's width.
[[gnu::always_inline]] inline void int8_rows(const std::int8_t* codes, const float* scales,
                                             std::size_t n, const float* query, std::size_t d,
                                             float* out) noexcept {
    constexpr std::size_t lanes = 32;
    for (std::size_t r = 0; r < n; ++r) {
        const std::int8_t* row = codes + r * d;
        float acc[lanes] = {};
        std::size_t i = 0;
        for (; i + lanes <= d; i += lanes)
            for (std::size_t j = 0; j < lanes; ++j)
                acc[j] += static_cast<float>(row[i + j]) * query[i + j];
        for (std::size_t width = lanes / 2; width > 0; width /= 2)
            for (std::size_t j = 0; j < width; ++j) acc[j] += acc[j + width];
        float s = acc[0];
        for (; i < d; ++i) s += static_cast<float>(row[i]) * query[i];
        out[r] = scales[r] * s;
    }
}

TABRET_CLONES void int8_scan(const std::int8_t* codes, const float* scales, std::size_t n,
                             const float* query, std::size_t d, float* out) noexcept {
    int8_rows(codes, scales, n, query, d, out);
}

static_assert(scan_batch_min == 7, "scan() streams 1 to 6 queries");

}  // namespace

void inner_products(const float* rows, std::size_t n, const float* queries, std::size_t nq,
                    std::size_t d, float* scores) {
    if (n == 0 || nq == 0) return;
    std::vector<float> panel(nq >= scan_batch_min ? d * panel_rows : 0);
    scan(rows, n, queries, nq, d, scores, panel.data());
}

void int8_inner_products(const std::int8_t* codes, const float* scales, std::size_t n,
                         const float* query, std::size_t d, float* out) {
    int8_scan(codes, scales, n, query, d, out);
}

}  // namespace tabret::detail
