/// @file src/tabret/index/packed_scan.cpp
/// @brief detail::packed_inner_products: pca_index's scans of 2- and 4-bit codes
/// (index/scan.hpp).

#include <cstddef>
#include <cstdint>

#include "tabret/error.hpp"
#include "tabret/index/scan.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TABRET_PACKED_AVX2 1
#endif

namespace tabret::detail {
namespace {

/// One row's integer sum Σ_j query[j] · code_j (the reference the AVX2 kernel must equal):
/// code j of a chunk is bits [Bits · (j / 32), +Bits) of the chunk's byte j % 32.
template <unsigned Bits>
std::int32_t row_sum(const std::uint8_t* row, const std::int8_t* query, std::size_t chunks) {
    constexpr std::size_t slots = 8 / Bits, dims = packed_chunk_bytes * slots;
    constexpr unsigned mask = (1u << Bits) - 1;
    std::int32_t s = 0;
    for (std::size_t c = 0; c < chunks; ++c)
        for (std::size_t i = 0; i < packed_chunk_bytes; ++i)
            for (std::size_t slot = 0; slot < slots; ++slot) {
                const unsigned code = (row[c * packed_chunk_bytes + i] >> (Bits * slot)) & mask;
                s += static_cast<std::int32_t>(code) *
                     query[c * dims + slot * packed_chunk_bytes + i];
            }
    return s;
}

template <unsigned Bits>
void portable_rows(const std::uint8_t* codes, const float* scales, std::size_t begin, std::size_t n,
                   const std::int8_t* query, std::size_t chunks, float bias, float* out) {
    for (std::size_t r = begin; r < n; ++r)
        out[r] = scales[r] * (static_cast<float>(row_sum<Bits>(
                                  codes + r * chunks * packed_chunk_bytes, query, chunks)) -
                              bias);
}

#ifdef TABRET_PACKED_AVX2
/// A 32-byte chunk's products (each slot of Bits bits against its 32 weights), as
/// 8 int32 partial sums. A 16-bit lane adds, per slot, two products of a code (at most 15)
/// and a weight (at least −128): at most 2 · 15 · 128 · 2 (4-bit) or 2 · 3 · 128 · 4 (2-bit),
/// below 2^15.
template <unsigned Bits>
[[gnu::target("avx2")]] inline __m256i chunk_sums(const std::uint8_t* chunk,
                                                  const __m256i* weights) {
    constexpr unsigned slots = 8 / Bits;
    const __m256i mask = _mm256_set1_epi8(static_cast<char>((1u << Bits) - 1));
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunk));
    __m256i sum = _mm256_maddubs_epi16(_mm256_and_si256(v, mask), weights[0]);
    for (unsigned slot = 1; slot < slots; ++slot)
        sum = _mm256_add_epi16(
            sum, _mm256_maddubs_epi16(
                     _mm256_and_si256(_mm256_srli_epi16(v, static_cast<int>(Bits * slot)), mask),
                     weights[slot]));
    return _mm256_madd_epi16(sum, _mm256_set1_epi16(1));
}

/// Eight rows at a time: each row's 8 partial sums, then one horizontal reduction for all
/// eight (hadd tree), scaled and stored together.
template <unsigned Bits>
[[gnu::target("avx2")]] void avx2_rows(const std::uint8_t* codes, const float* scales,
                                       std::size_t n, const std::int8_t* query, std::size_t chunks,
                                       float bias, float* out) {
    constexpr unsigned slots = 8 / Bits;
    const std::size_t row_bytes = chunks * packed_chunk_bytes;
    std::size_t r = 0;
    for (; r + 8 <= n; r += 8) {
        __m256i sums[8];
        for (std::size_t i = 0; i < 8; ++i) sums[i] = _mm256_setzero_si256();
        for (std::size_t c = 0; c < chunks; ++c) {
            __m256i weights[slots];
            for (unsigned slot = 0; slot < slots; ++slot)
                weights[slot] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                    query + (c * slots + slot) * packed_chunk_bytes));
            for (std::size_t i = 0; i < 8; ++i)
                sums[i] = _mm256_add_epi32(
                    sums[i], chunk_sums<Bits>(codes + (r + i) * row_bytes + c * packed_chunk_bytes,
                                              weights));
        }
        const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(sums[0], sums[1]),
                                            _mm256_hadd_epi32(sums[2], sums[3]));
        const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(sums[4], sums[5]),
                                            _mm256_hadd_epi32(sums[6], sums[7]));
        // a = [rows 0-3 of the low 128 bits | rows 0-3 of the high], b the same for rows 4-7.
        const __m256i total = _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                                               _mm256_permute2x128_si256(a, b, 0x31));
        const __m256 value = _mm256_sub_ps(_mm256_cvtepi32_ps(total), _mm256_set1_ps(bias));
        _mm256_storeu_ps(out + r, _mm256_mul_ps(value, _mm256_loadu_ps(scales + r)));
    }
    portable_rows<Bits>(codes, scales, r, n, query, chunks, bias, out);
}
#endif

template <unsigned Bits>
void rows(const std::uint8_t* codes, const float* scales, std::size_t n, const std::int8_t* query,
          std::size_t chunks, float bias, float* out) {
#ifdef TABRET_PACKED_AVX2
    if (__builtin_cpu_supports("avx2"))
        return avx2_rows<Bits>(codes, scales, n, query, chunks, bias, out);
#endif
    portable_rows<Bits>(codes, scales, 0, n, query, chunks, bias, out);
}

}  // namespace

void packed_inner_products(unsigned bits, const std::uint8_t* codes, const float* scales,
                           std::size_t n, const std::int8_t* query, std::size_t chunks, float bias,
                           float* out) {
    switch (bits) {
        case 2:
            return rows<2>(codes, scales, n, query, chunks, bias, out);
        case 4:
            return rows<4>(codes, scales, n, query, chunks, bias, out);
        default:
            throw error("packed_inner_products: codes must be 2 or 4 bits");
    }
}

}  // namespace tabret::detail
