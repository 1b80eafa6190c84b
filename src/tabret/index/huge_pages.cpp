#include "tabret/index/huge_pages.hpp"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tabret::detail {

void back_with_huge_pages(const void* data, std::size_t bytes) noexcept {
#if defined(__linux__)
#ifndef MADV_COLLAPSE
    constexpr int MADV_COLLAPSE = 25;  // linux/mman.h since 6.1; glibc 2.36's headers lack it
#endif
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    if (bytes < 4 * huge) return;
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    const auto first = (begin + huge - 1) & ~(huge - 1);
    const auto last = (begin + bytes) & ~(huge - 1);
    if (last > first)
        // The answer is ignored on purpose: a refusal leaves the memory as it was (see header).
        (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_COLLAPSE);
#else
    (void)data;
    (void)bytes;
#endif
}

}  // namespace tabret::detail
