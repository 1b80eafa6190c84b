#pragma once
/// @file rewriting/callback_rewriter.hpp
/// @brief A QueryRewriter that calls a function: the type-erased rewriter that Python and
/// other bindings hand to generic retrievers.

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/error.hpp"
#include "tabret/rewriting/rewriter.hpp"

namespace tabret {

/// A batch rewrite function: requests in, one result per request out, in order.
using rewrite_fn = std::function<std::vector<rewrite_result>(std::span<const rewrite_request>)>;

/**
 * @brief Wraps a rewrite_fn with a name (used in error messages). Never calls it with an empty
 * batch; checks that it answers once per request. Thread-safety is that of the function.
 */
class callback_rewriter {
  public:
    /** @throws error for an empty function. */
    callback_rewriter(rewrite_fn fn, std::string name)
        : fn_(std::move(fn)), name_(std::move(name)) {
        if (!fn_) throw error("callback_rewriter: empty function");
    }

    /** @throws error when the function returns the wrong number of results. */
    [[nodiscard]] std::vector<rewrite_result> rewrite(
        std::span<const rewrite_request> requests) const {
        if (requests.empty()) return {};
        auto out = fn_(requests);
        if (out.size() != requests.size())
            throw error(fmt::format("rewriter '{}' returned {} results for {} requests", name_,
                                    out.size(), requests.size()));
        return out;
    }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }

  private:
    rewrite_fn fn_;
    std::string name_;
};

static_assert(QueryRewriter<callback_rewriter>);

}  // namespace tabret
