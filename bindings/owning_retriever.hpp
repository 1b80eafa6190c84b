// A retriever bundled with the index, embedder and rewriter it refers to, so Python can hold it
// alone (crush_retriever, murre_retriever).
#pragma once

#include <tabret/index/table_index.hpp>
#include <tabret/rewriting/callback_rewriter.hpp>

#include <memory>
#include <utility>

#include "callbacks.hpp"

namespace tabret::bindings {

template <template <class, class> class Retriever, class Options>
struct owning_retriever {
    owning_retriever(std::shared_ptr<const table_index> i, callback_embedder e, callback_rewriter r,
                     const Options& o)
        : index(std::move(i)),
          embedder(std::move(e)),
          rewriter(std::move(r)),
          retriever(*index, embedder, rewriter, o) {}
    std::shared_ptr<const table_index> index;
    callback_embedder embedder;
    callback_rewriter rewriter;
    Retriever<callback_embedder, callback_rewriter> retriever;
};

}  // namespace tabret::bindings
