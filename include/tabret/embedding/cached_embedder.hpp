#pragma once
/// @file embedding/cached_embedder.hpp
/// @brief An embedding cache keyed by text: a run never embeds the same text twice.

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/embedding/embedder.hpp"

namespace tabret {

namespace detail {

/// Runs a function when the scope ends (also during stack unwinding).
template <class F>
class scope_exit_guard {
  public:
    explicit scope_exit_guard(F f) : f_(std::move(f)) {}
    scope_exit_guard(const scope_exit_guard&) = delete;
    scope_exit_guard& operator=(const scope_exit_guard&) = delete;
    ~scope_exit_guard() { f_(); }

  private:
    F f_;
};
template <class F>
[[nodiscard]] scope_exit_guard<F> scope_exit(F f) {
    return scope_exit_guard<F>(std::move(f));
}

/// The first 60 bytes of @p text, for a message.
inline std::string snippet(std::string_view text) {
    return text.size() <= 60 ? std::string(text) : std::string(text.substr(0, 60)) + "...";
}

}  // namespace detail

/// Counters of a cached_embedder.
struct cache_stats {
    std::size_t calls = 0;     ///< Calls made to the wrapped embedder.
    std::size_t embedded = 0;  ///< Texts sent to it (each distinct text once).
    std::size_t hits = 0;      ///< Texts answered from the cache.
};

/**
 * @brief Wraps an embedder (held by reference: it must outlive this object). A call sends only
 * the distinct texts not seen before, in one batch, and checks what comes back (shape, finite
 * values, same dimension as earlier answers).
 *
 * Thread-safe and re-entrant. The cache lock is never held while the wrapped embedder runs, so
 * the wrapped embedder may itself call this cache (a Python callback that embeds the parts of
 * a text through the same cache). Calls into the wrapped embedder are serialised (one at a time,
 * re-entrant on the calling thread). A text that another thread is embedding is waited for, so
 * concurrent callers never embed the same text twice; a re-entrant call never waits (it embeds
 * such a text itself, even one its outer call is embedding), and calls nested deeper than
 * max_depth on one thread (an endless recursion) are an error, never a deadlock.
 */
template <Embedder E>
class cached_embedder {
  public:
    /// How deep calls may nest on one thread (the wrapped embedder calling this cache).
    static constexpr std::size_t max_depth = 64;

    explicit cached_embedder(const E& inner) : inner_(inner) {}
    /// As the wrapped embedder (see embedder_allows_zero_rows).
    [[nodiscard]] bool allows_zero_rows() const { return embedder_allows_zero_rows(inner_); }
    /// A temporary embedder is refused (it would dangle).
    explicit cached_embedder(const E&&) = delete;

    /**
     * @throws embedding_error when the wrapped embedder answers with a bad matrix; error when
     * calls nest deeper than max_depth on one thread.
     */
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const {
        std::unique_lock lock(mutex_);
        const auto me = std::this_thread::get_id();
        const std::size_t depth = active_[me]++;
        const auto leave = detail::scope_exit([&] {
            if (--active_[me] == 0) active_.erase(me);
        });
        if (depth >= max_depth)
            throw error(fmt::format(
                "cached_embedder: calls nested {} deep on one thread (does the wrapped embedder "
                "ask the cache for the texts it is embedding?)",
                depth + 1));
        std::size_t embedded = 0;
        for (;;) {
            std::vector<std::string> mine, awaited;
            std::unordered_set<std::string_view> seen;
            for (const auto& t : texts) {
                if (rows_.contains(t) || !seen.insert(t).second) continue;
                // A re-entrant call (depth > 0) never waits: it embeds such a text itself.
                if (depth == 0 && in_flight_.contains(t))
                    awaited.push_back(t);
                else
                    mine.push_back(t);
            }
            if (!mine.empty()) {
                store(mine, lock);
                embedded += mine.size();
            }
            if (awaited.empty()) break;
            cv_.wait(lock, [&] {
                return std::ranges::all_of(awaited, [&](const std::string& t) {
                    return rows_.contains(t) || !in_flight_.contains(t);
                });
            });
        }
        stats_.hits += texts.size() - embedded;
        matrix out(static_cast<Eigen::Index>(texts.size()), static_cast<Eigen::Index>(dim_));
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto& row = rows_.at(texts[i]);
            out.row(static_cast<Eigen::Index>(i)) =
                Eigen::Map<const Eigen::RowVectorXf>(row.data(), static_cast<Eigen::Index>(dim_));
        }
        return out;
    }

    /**
     * @brief Stores row i of @p vectors as the vector of @p texts[i], as if embedded (a text
     * already stored keeps its row): vectors computed before, e.g. a saved index's.
     * @throws error for another number of rows than texts, or another width than the rows
     * already stored.
     */
    void seed(std::span<const std::string> texts, const matrix& vectors) const {
        std::lock_guard lock(mutex_);
        if (static_cast<std::size_t>(vectors.rows()) != texts.size())
            throw error(fmt::format("cached_embedder: {} vectors for {} texts", vectors.rows(),
                                    texts.size()));
        if (texts.empty()) return;
        const auto width = static_cast<std::size_t>(vectors.cols());
        if (dim_ != 0 && width != dim_)
            throw error(fmt::format("cached_embedder: vectors of {} dimensions, the cache holds {}",
                                    width, dim_));
        dim_ = width;
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto r = vectors.row(static_cast<Eigen::Index>(i));
            rows_.try_emplace(texts[i], r.data(), r.data() + r.size());
        }
    }

    [[nodiscard]] cache_stats stats() const {
        std::lock_guard lock(mutex_);
        return stats_;
    }
    [[nodiscard]] std::size_t size() const {
        std::lock_guard lock(mutex_);
        return rows_.size();
    }

  private:
    /// Embeds @p misses without holding @p lock, then stores them. The misses that no other call
    /// was embedding are marked in flight meanwhile; whatever happens, they are unmarked and
    /// waiters are woken.
    void store(const std::vector<std::string>& misses, std::unique_lock<std::mutex>& lock) const {
        std::vector<const std::string*> marked;
        const auto land = detail::scope_exit([&] {
            for (const auto* t : marked) in_flight_.erase(*t);
            cv_.notify_all();
        });
        for (const auto& t : misses)
            if (in_flight_.insert(t).second) marked.push_back(&t);
        matrix m;
        {
            lock.unlock();
            const auto relock = detail::scope_exit([&] { lock.lock(); });
            std::lock_guard call(call_mutex_);
            m = inner_.embed(misses);
        }
        check_embeddings(m, misses.size(), dim_, embedder_label(inner_));
        dim_ = static_cast<std::size_t>(m.cols());
        ++stats_.calls;
        stats_.embedded += misses.size();
        for (std::size_t i = 0; i < misses.size(); ++i) {
            const auto r = m.row(static_cast<Eigen::Index>(i));
            rows_.emplace(misses[i], std::vector<float>(r.data(), r.data() + r.size()));
        }
    }

    const E& inner_;
    mutable std::mutex mutex_;
    mutable std::recursive_mutex call_mutex_;
    mutable std::condition_variable cv_;
    mutable std::unordered_map<std::string, std::vector<float>> rows_;
    mutable std::unordered_set<std::string> in_flight_;
    mutable std::unordered_map<std::thread::id, std::size_t> active_;
    mutable std::size_t dim_ = 0;
    mutable cache_stats stats_;
};

}  // namespace tabret
