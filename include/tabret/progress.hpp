#pragma once
/// @file progress.hpp
/// @brief The progress callback of long builds (indexes, join graphs, generated questions).

#include <cstddef>
#include <functional>
#include <string_view>

namespace tabret {

/// Progress while building: stage (e.g. "tables", "columns", "hnsw tables", "join graph
/// columns", "generated questions"), items done, items in stage. It may throw (e.g. a Python
/// KeyboardInterrupt) to abandon the build.
using progress_fn =
    std::function<void(std::string_view stage, std::size_t done, std::size_t total)>;

}  // namespace tabret
