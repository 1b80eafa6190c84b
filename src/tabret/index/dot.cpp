#include "tabret/index/dot.hpp"

#include "clones.hpp"

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
