#pragma once
/// @file retrieval/first_stage/fused_retriever.hpp
/// @brief Two first stages as one: their table rankings fused (reciprocal rank fusion by
/// default), e.g. hybrid and reverse before a join-aware selector.

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tabret/error.hpp"
#include "tabret/index/fusion.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

struct fused_options {
    fusion_params fusion{};   ///< How the two lists combine (rrf: rank offset 60).
    std::size_t depth = 100;  ///< Tables asked of each stage before fusing.
};

/**
 * @brief Asks @p A and @p B for `depth` tables each and returns the best k of their fusion;
 * columns come from @p A. Trace: a "fused" entry per table (its fused score), then both stages'
 * entries for it. Holds both by value; `retrieve` is as thread-safe as they are.
 */
template <Retriever A, Retriever B>
class fused_retriever {
  public:
    /** @throws error when depth is 0. */
    fused_retriever(A a, B b, fused_options options = {})
        : a_(std::move(a)), b_(std::move(b)), options_(options) {
        if (options_.depth == 0) throw error("depth must be positive");
    }

    /** @throws error for k == 0 or a stage answering the wrong number of questions. */
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& o) const {
        if (o.k == 0) throw error("k must be positive");
        const auto depth = std::max(o.k, options_.depth);
        auto ra = a_.retrieve(questions, {depth, o.k_columns});
        auto rb = b_.retrieve(questions, {depth, 0});
        if (ra.size() != questions.size() || rb.size() != questions.size())
            throw error("a fused stage returned a result count unlike the questions'");
        const auto fused = fuse_hits(as_hits(ra), as_hits(rb), options_.fusion, o.k);
        std::vector<retrieval> out(questions.size());
        for (std::size_t i = 0; i < questions.size(); ++i) {
            for (const auto& h : fused[i]) {
                out[i].tables.push_back({h.id, h.score});
                out[i].trace.push_back({h.id, "fused", questions[i], h.score});
            }
            for (auto* r : {&ra[i], &rb[i]})
                for (auto& e : r->trace)
                    if (std::any_of(fused[i].begin(), fused[i].end(),
                                    [&](const hit& h) { return h.id == e.table; }))
                        out[i].trace.push_back(std::move(e));
            out[i].columns = std::move(ra[i].columns);
        }
        return out;
    }

  private:
    static std::vector<hits> as_hits(const std::vector<retrieval>& rs) {
        std::vector<hits> out(rs.size());
        for (std::size_t i = 0; i < rs.size(); ++i)
            for (const auto& t : rs[i].tables) out[i].push_back({t.table, t.score});
        return out;
    }

    A a_;
    B b_;
    fused_options options_;
};

}  // namespace tabret
