/// @file src/tabret/index/nibble_scan.cpp
/// @brief detail::nibble_inner_products: pca_index's scan of 4-bit codes (index/scan.hpp).

#include <cstddef>
#include <cstdint>

#include "tabret/index/scan.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TABRET_NIBBLE_AVX2 1
#endif

namespace tabret::detail {
namespace {

constexpr std::size_t chunk_bytes = 32;

/// One row's integer sum Σ_j query[j] · code_j (the reference the AVX2 kernel must equal).
std::int32_t row_sum(const std::uint8_t* row, const std::int8_t* query, std::size_t chunks) {
    std::int32_t s = 0;
    for (std::size_t c = 0; c < chunks; ++c)
        for (std::size_t i = 0; i < chunk_bytes; ++i) {
            const std::uint8_t byte = row[c * chunk_bytes + i];
            s += (byte & 0x0F) * query[c * 64 + i] + (byte >> 4) * query[c * 64 + 32 + i];
        }
    return s;
}

void portable_rows(const std::uint8_t* codes, const float* scales, std::size_t begin, std::size_t n,
                   const std::int8_t* query, std::size_t chunks, float bias, float* out) {
    for (std::size_t r = begin; r < n; ++r)
        out[r] =
            scales[r] *
            (static_cast<float>(row_sum(codes + r * chunks * chunk_bytes, query, chunks)) - bias);
}

#ifdef TABRET_NIBBLE_AVX2
/// 16 products of a 32-byte chunk (low and high nibbles against their 32 weights each), as
/// 8 int32 partial sums. Each 16-bit lane holds at most 2 · 15 · 128 · 2 < 2^15.
[[gnu::target("avx2")]] inline __m256i chunk_sums(const std::uint8_t* chunk, __m256i lo_weights,
                                                  __m256i hi_weights) {
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunk));
    const __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(v, nibble), lo_weights);
    const __m256i hi =
        _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), nibble), hi_weights);
    return _mm256_madd_epi16(_mm256_add_epi16(lo, hi), _mm256_set1_epi16(1));
}

/// Eight rows at a time: each row's 8 partial sums, then one horizontal reduction for all
/// eight (hadd tree), scaled and stored together.
[[gnu::target("avx2")]] void avx2_rows(const std::uint8_t* codes, const float* scales,
                                       std::size_t n, const std::int8_t* query, std::size_t chunks,
                                       float bias, float* out) {
    const std::size_t row_bytes = chunks * chunk_bytes;
    std::size_t r = 0;
    for (; r + 8 <= n; r += 8) {
        __m256i sums[8];
        for (std::size_t i = 0; i < 8; ++i) sums[i] = _mm256_setzero_si256();
        for (std::size_t c = 0; c < chunks; ++c) {
            const auto* w = reinterpret_cast<const __m256i*>(query + c * 64);
            const __m256i lo_weights = _mm256_loadu_si256(w);
            const __m256i hi_weights = _mm256_loadu_si256(w + 1);
            for (std::size_t i = 0; i < 8; ++i)
                sums[i] = _mm256_add_epi32(
                    sums[i], chunk_sums(codes + (r + i) * row_bytes + c * chunk_bytes, lo_weights,
                                        hi_weights));
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
    portable_rows(codes, scales, r, n, query, chunks, bias, out);
}
#endif

}  // namespace

void nibble_inner_products(const std::uint8_t* codes, const float* scales, std::size_t n,
                           const std::int8_t* query, std::size_t chunks, float bias, float* out) {
#ifdef TABRET_NIBBLE_AVX2
    if (__builtin_cpu_supports("avx2"))
        return avx2_rows(codes, scales, n, query, chunks, bias, out);
#endif
    portable_rows(codes, scales, 0, n, query, chunks, bias, out);
}

}  // namespace tabret::detail
