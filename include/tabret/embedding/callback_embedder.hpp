#pragma once
/// @file embedding/callback_embedder.hpp
/// @brief An Embedder that calls a function: the bridge to Python models and remote services.

#include <functional>
#include <span>
#include <string>
#include <utility>

#include "tabret/embedding/matrix.hpp"

namespace tabret {

/// A batch-shaped embedding function: texts in, one row per text out.
using embed_fn = std::function<matrix(std::span<const std::string>)>;

/**
 * @brief Wraps an embed_fn with a name (stored in saved indexes). Thread-safety is that of the
 * function; a Python callable is entered once per batch with the GIL held.
 */
class callback_embedder {
  public:
    callback_embedder(embed_fn fn, std::string name) : fn_(std::move(fn)), name_(std::move(name)) {
        if (!fn_) throw error("callback_embedder: empty function");
    }
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const { return fn_(texts); }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

  private:
    embed_fn fn_;
    std::string name_;
};

}  // namespace tabret
