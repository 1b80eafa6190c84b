#pragma once
/// @file scoring/callback_window_scorer.hpp
/// @brief A WindowScorer that calls a function: the bridge to Python cross-encoders.

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tabret/scoring/window_scorer.hpp"

namespace tabret {

/// A batch-shaped window scoring function: windows in, one answer per window out.
using window_score_fn = std::function<std::vector<window_scores>(std::span<const window_request>)>;

/**
 * @brief Wraps a window_score_fn with a name (used in error messages). Thread-safety is that of
 * the function; a Python callable is entered once per batch with the GIL held.
 */
class callback_window_scorer {
  public:
    callback_window_scorer(window_score_fn fn, std::string name)
        : fn_(std::move(fn)), name_(std::move(name)) {
        if (!fn_) throw error("callback_window_scorer: empty function");
    }
    [[nodiscard]] std::vector<window_scores> score(std::span<const window_request> windows) const {
        return fn_(windows);
    }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

  private:
    window_score_fn fn_;
    std::string name_;
};

}  // namespace tabret
