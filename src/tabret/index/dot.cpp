#include "tabret/index/dot.hpp"

// dot() is cloned for AVX-512, AVX2 + FMA and the baseline; the loader picks the clone
// for the CPU (GCC/Clang function multi-versioning, an ifunc), so a binary built for any x86-64
// runs every kernel at the width the machine has. Elsewhere, and under the sanitizers (whose
// runtimes are not set up yet when the loader runs an ifunc resolver), one portable version.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TABRET_NO_TARGET_CLONES
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TABRET_NO_TARGET_CLONES
#endif
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(TABRET_NO_TARGET_CLONES)
#define TABRET_CLONES __attribute__((target_clones("avx512f", "avx2,fma", "default")))
#else
#define TABRET_CLONES
#endif

namespace tabret::detail {

/// 32 independent partial sums: two AVX-512 registers, four AVX2 ones, eight SSE ones; the
/// compiler vectorises the inner loop at the width of the clone being compiled.
TABRET_CLONES float dot(const float* a, const float* b, std::size_t d) noexcept {
    constexpr std::size_t lanes = 32;
    float acc[lanes] = {};
    std::size_t i = 0;
    for (; i + lanes <= d; i += lanes)
        for (std::size_t j = 0; j < lanes; ++j) acc[j] += a[i + j] * b[i + j];
    for (std::size_t width = lanes / 2; width > 0; width /= 2)
        for (std::size_t j = 0; j < width; ++j) acc[j] += acc[j + width];
    float sum = acc[0];
    for (; i < d; ++i) sum += a[i] * b[i];
    return sum;
}

}  // namespace tabret::detail
