#pragma once
/// @file index/huge_pages.hpp
/// @brief A hint that a large, already written buffer be backed by transparent huge pages, so
/// that a scan over it misses the TLB far less (src/tabret/index/huge_pages.cpp).

#include <cstddef>

namespace tabret::detail {

/**
 * @brief Asks the kernel to move the 2 MiB-aligned part of [data, data + bytes) into huge pages
 * now (Linux 6.1+: `madvise(MADV_COLLAPSE)`), keeping its contents. Buffers under 8 MiB are
 * left alone.
 *
 * Only a hint: where the kernel refuses (an older kernel, no huge page free, another OS) the
 * memory stays as it was and nothing else changes; a scan is then ~10 % slower, never wrong.
 * Thread-safe.
 */
void back_with_huge_pages(const void* data, std::size_t bytes) noexcept;

}  // namespace tabret::detail
