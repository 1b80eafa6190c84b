#pragma once
/// @file retrieval/any_retriever.hpp
/// @brief A type-erased Retriever, so that stages compose at run time (a first stage chosen by
/// name, a Python retriever, a pipeline held by value).

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

/**
 * @brief Any Retriever behind one type. Built from a retriever (owned, shared by copies) or from
 * `std::cref(r)` (borrowed: @p r must outlive it). Copies are cheap; `retrieve` is const and as
 * thread-safe as the retriever it holds.
 */
class any_retriever {
  public:
    using retrieve_fn = std::function<std::vector<retrieval>(std::span<const std::string>,
                                                             const retrieve_options&)>;

    /// Owns @p r (moved into shared storage).
    template <Retriever R>
    requires(!std::is_same_v<std::remove_cvref_t<R>, any_retriever>) explicit any_retriever(R r)
        : fn_([held = std::make_shared<const R>(std::move(r))](std::span<const std::string> q,
                                                               const retrieve_options& o) {
              return held->retrieve(q, o);
          }) {}

    /// Borrows `r.get()`, which must outlive this object.
    template <Retriever R>
    explicit any_retriever(std::reference_wrapper<const R> r)
        : fn_([&held = r.get()](std::span<const std::string> q, const retrieve_options& o) {
              return held.retrieve(q, o);
          }) {}

    /// A retriever made of a function (e.g. a callback into another language).
    explicit any_retriever(retrieve_fn fn) : fn_(std::move(fn)) {}

    /** @brief Whatever the held retriever returns or throws. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        return fn_(questions, o);
    }

  private:
    retrieve_fn fn_;
};

static_assert(Retriever<any_retriever>);

}  // namespace tabret
