#pragma once
/// @file interrupt.hpp
/// @brief A per-thread hook that long native loops call now and then, so that a caller (the
/// Python bindings: Ctrl-C) can stop them by throwing from it.

#include <cstddef>
#include <functional>

namespace tabret {

/// Called on the calling thread by long loops; stops them by throwing (anything).
using interrupt_fn = std::function<void()>;

namespace detail {
inline thread_local const interrupt_fn* current_interrupt = nullptr;
}  // namespace detail

/**
 * @brief Installs @p hook for the calling thread while in scope (nested scopes stack; an empty
 * hook installs nothing). The loops of the searches (exact, HNSW, BM25) and of the retrievers
 * built on them call check_interrupt() between blocks of queries, on the thread that called
 * them; work handed to other threads is not interrupted that way.
 */
class interrupt_scope {
  public:
    explicit interrupt_scope(const interrupt_fn& hook) : previous_(detail::current_interrupt) {
        if (hook) detail::current_interrupt = &hook;
    }
    interrupt_scope(const interrupt_scope&) = delete;
    interrupt_scope& operator=(const interrupt_scope&) = delete;
    ~interrupt_scope() { detail::current_interrupt = previous_; }

  private:
    const interrupt_fn* previous_;
};

/// Calls the hook installed on this thread, if any; whatever it throws propagates.
inline void check_interrupt() {
    if (const auto* hook = detail::current_interrupt) (*hook)();
}

/// Calls check_interrupt() every @p every-th step (i % every == every - 1).
inline void check_interrupt_every(std::size_t i, std::size_t every) {
    if (i % every == every - 1) check_interrupt();
}

}  // namespace tabret
