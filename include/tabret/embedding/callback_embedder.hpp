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
    /// @param allows_zero_rows whether a zero vector is a legitimate answer of @p fn (see
    /// embedder_allows_zero_rows); otherwise a zero row is an embedding_error.
    callback_embedder(embed_fn fn, std::string name, bool allows_zero_rows = false)
        : fn_(std::move(fn)), name_(std::move(name)), allows_zero_rows_(allows_zero_rows) {
        if (!fn_) throw error("callback_embedder: empty function");
    }
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const { return fn_(texts); }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] bool allows_zero_rows() const noexcept { return allows_zero_rows_; }

  private:
    embed_fn fn_;
    std::string name_;
    bool allows_zero_rows_ = false;
};

}  // namespace tabret
