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

/**
 * @brief `out[r] = scales[r] * (Σ_j query[j] · code_rj − bias)` for @p n rows of 4-bit codes,
 * @p chunks × 32 bytes a row: in each 32-byte chunk, byte i holds the code of the chunk's
 * component i in its low nibble and of component 32 + i in its high nibble; @p query holds
 * chunks × 64 int8 weights in component order. The pre-scan of pca_index (index/pca_index.hpp);
 * an AVX2 kernel where the CPU has AVX2, else portable code with the same (integer) sums.
 */
void nibble_inner_products(const std::uint8_t* codes, const float* scales, std::size_t n,
                           const std::int8_t* query, std::size_t chunks, float bias, float* out);

/// From this many queries on, inner_products() runs the packed micro-kernel.
inline constexpr std::size_t scan_batch_min = 7;

}  // namespace tabret::detail
