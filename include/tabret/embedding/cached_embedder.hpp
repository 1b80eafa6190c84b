#pragma once
/// @file embedding/cached_embedder.hpp
/// @brief An embedding cache keyed by text: a run never embeds the same text twice.

#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tabret/embedding/embedder.hpp"

namespace tabret {

/// Counters of a cached_embedder.
struct cache_stats {
    std::size_t calls = 0;     ///< Calls made to the wrapped embedder.
    std::size_t embedded = 0;  ///< Texts sent to it (each distinct text once).
    std::size_t hits = 0;      ///< Texts answered from the cache.
};

/**
 * @brief Wraps an embedder (held by reference: it must outlive this object). A call sends only
 * the distinct texts not seen before, in one batch, and checks what comes back (shape, finite
 * values, same dimension as earlier answers). Thread-safe: one lock guards the cache and the
 * wrapped call, so concurrent callers never embed the same text twice.
 */
template <Embedder E>
class cached_embedder {
  public:
    explicit cached_embedder(const E& inner) : inner_(inner) {}
    /// As the wrapped embedder (see embedder_allows_zero_rows).
    [[nodiscard]] bool allows_zero_rows() const { return embedder_allows_zero_rows(inner_); }
    /// A temporary embedder is refused (it would dangle).
    explicit cached_embedder(const E&&) = delete;

    /** @throws embedding_error when the wrapped embedder answers with a bad matrix. */
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const {
        std::lock_guard lock(mutex_);
        std::vector<std::string> misses;
        std::unordered_map<std::string, std::size_t> pending;
        for (const auto& t : texts)
            if (!rows_.contains(t) && pending.emplace(t, misses.size()).second) misses.push_back(t);
        if (!misses.empty()) store(misses);
        stats_.hits += texts.size() - misses.size();
        matrix out(static_cast<Eigen::Index>(texts.size()), static_cast<Eigen::Index>(dim_));
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto& row = rows_.at(texts[i]);
            out.row(static_cast<Eigen::Index>(i)) =
                Eigen::Map<const Eigen::RowVectorXf>(row.data(), static_cast<Eigen::Index>(dim_));
        }
        return out;
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
    void store(const std::vector<std::string>& misses) const {
        const matrix m = inner_.embed(misses);
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
    mutable std::unordered_map<std::string, std::vector<float>> rows_;
    mutable std::size_t dim_ = 0;
    mutable cache_stats stats_;
};

}  // namespace tabret
