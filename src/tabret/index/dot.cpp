#include "tabret/index/dot.hpp"

#include <cstring>

#include "clones.hpp"

namespace tabret::detail {

namespace {
// GCC/Clang vector extensions: the compiler maps them onto the registers of the clone being
// compiled (one AVX-512 register for 16 floats, two AVX2 ones, four SSE ones).
using floats16 = float __attribute__((vector_size(64)));
using floats8 = float __attribute__((vector_size(32)));
using floats4 = float __attribute__((vector_size(16)));
}  // namespace

/// 32 independent partial sums in two 16-float vectors, then added pairwise in registers
/// (halves, quarters, …) until one is left: no trip through memory at the end.
TABRET_CLONES float dot(const float* a, const float* b, std::size_t d) noexcept {
    floats16 lo{}, hi{}, x, y;
    std::size_t i = 0;
    for (; i + 32 <= d; i += 32) {
        std::memcpy(&x, a + i, sizeof x);
        std::memcpy(&y, b + i, sizeof y);
        lo += x * y;
        std::memcpy(&x, a + i + 16, sizeof x);
        std::memcpy(&y, b + i + 16, sizeof y);
        hi += x * y;
    }
    lo += hi;
    floats8 h8, l8;
    std::memcpy(&l8, &lo, sizeof l8);
    std::memcpy(&h8, reinterpret_cast<const char*>(&lo) + sizeof l8, sizeof h8);
    l8 += h8;
    floats4 h4, l4;
    std::memcpy(&l4, &l8, sizeof l4);
    std::memcpy(&h4, reinterpret_cast<const char*>(&l8) + sizeof l4, sizeof h4);
    l4 += h4;
    float sum = (l4[0] + l4[2]) + (l4[1] + l4[3]);
    for (; i < d; ++i) sum += a[i] * b[i];
    return sum;
}

}  // namespace tabret::detail
