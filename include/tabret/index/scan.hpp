#pragma once
/// @file index/scan.hpp
/// @brief The exact scan's kernel: inner products of a few or many queries with every row,
/// compiled for several instruction sets and chosen at load time (src/tabret/index/scan.cpp).

#include <cstddef>
#include <cstdint>

namespace tabret::detail {

/**
 * @brief `scores[q * n + r] = queries[q] · rows[r]` for @p nq queries and @p n rows, both
 * row-major with @p d floats a row.
 *
 * Fewer than scan_batch_min queries stream every row once, each row against each query (memory
 * bound: one pass over the rows' bytes). From scan_batch_min queries on, blocks of 16 rows are
 * packed and multiplied with 6 queries at a time in registers (a GEMM micro-kernel), so a row
 * is read from memory once per batch. A row's score depends only on the row, the query and
 * which of the two paths runs (each sums in its own fixed order), so identical rows score
 * identically within a search.
 */
void inner_products(const float* rows, std::size_t n, const float* queries, std::size_t nq,
                    std::size_t d, float* scores);

/**
 * @brief `out[r] = scales[r] * (codes[r] · query)` for @p n rows of @p d int8 codes: the pre-scan
 * of a quantised exact search (index/int8_codes.hpp), a quarter of the float rows' bytes.
 */
void int8_inner_products(const std::int8_t* codes, const float* scales, std::size_t n,
                         const float* query, std::size_t d, float* out);

/// Bytes of a chunk of packed codes (packed_inner_products).
inline constexpr std::size_t packed_chunk_bytes = 32;

/**
 * @brief `out[r] = scales[r] * (Σ_j query[j] · code_rj − bias)` for @p n rows of @p bits-bit
 * codes (2 or 4), @p chunks × 32 bytes a row. A chunk holds 32 · 8 / bits components: byte i
 * holds the code of the chunk's component 32 · s + i in its bits [bits · s, bits · (s + 1))
 * (4-bit: i in the low nibble, 32 + i in the high; 2-bit: i, 32 + i, 64 + i, 96 + i from the
 * low bits up). @p query holds chunks · 256 / bits int8 weights in component order. The scans
 * of pca_index (index/pca_index.hpp); an AVX2 kernel where the CPU has AVX2, else portable code
 * with the same (integer) sums.
 * @throws tabret::error for @p bits other than 2 or 4.
 */
void packed_inner_products(unsigned bits, const std::uint8_t* codes, const float* scales,
                           std::size_t n, const std::int8_t* query, std::size_t chunks, float bias,
                           float* out);

/// From this many queries on, inner_products() runs the packed micro-kernel.
inline constexpr std::size_t scan_batch_min = 7;

}  // namespace tabret::detail
