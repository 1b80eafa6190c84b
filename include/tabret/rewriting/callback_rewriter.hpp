#pragma once
/// @file rewriting/callback_rewriter.hpp
/// @brief A QueryRewriter made from a function: one type for rewriters chosen at run time
/// (bindings, a Python rewriter, a lambda in a test).

#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tabret/error.hpp"
#include "tabret/rewriting/rewriter.hpp"

namespace tabret {

/// A batch of requests in, one result per request out, in order.
using rewrite_fn =
    std::function<std::vector<rewrite_result>(std::span<const rewrite_request> requests)>;

/** @brief Wraps a rewrite_fn as a QueryRewriter. Thread-safe if the function is. */
class callback_rewriter {
  public:
    /** @throws error for an empty function. */
    explicit callback_rewriter(rewrite_fn fn) : fn_(std::move(fn)) {
        if (!fn_) throw error("callback_rewriter: empty function");
    }

    /** @brief Wraps any QueryRewriter, held by shared pointer. */
    template <QueryRewriter R>
    static callback_rewriter of(std::shared_ptr<const R> rewriter) {
        if (!rewriter) throw error("callback_rewriter: null rewriter");
        return callback_rewriter([r = std::move(rewriter)](std::span<const rewrite_request> q) {
            return r->rewrite(q);
        });
    }

    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        return fn_(requests);
    }

  private:
    rewrite_fn fn_;
};

static_assert(QueryRewriter<callback_rewriter>);

}  // namespace tabret
