// expand: the stage before's top tables followed by their foreign-key neighbours that the
// question's cosine earns a place (retrieval/post/expansion.hpp).
#include <tabret/retrieval/post/expansion.hpp>

#include <utility>

#include "../native_method.hpp"

namespace tabret::bindings {
namespace {

const registration expand{method<expansion_options>(
    {.name = "expand",
     .kind = "post",
     .description = "the hubs and satellites of the stage before's top table (its declared "
                    "foreign-key neighbours, either direction) moved up right after it when "
                    "their cosine with the question is at least ratio times its own, within k",
     .score = "the stage before's score; a moved-up neighbour gets the score of the table it "
              "joins"},
    {field("seeds", &expansion_options::seeds), field("ratio", &expansion_options::ratio)},
    [](const method_inputs& in, const expansion_options& o) {
        if (!in.first) throw error("expand needs a stage before it");
        return owned<expansion_retriever<any_retriever, callback_embedder>>(
            [&](const auto& index, const auto& embedder, const auto& first) {
                return expansion_retriever<any_retriever, callback_embedder>(*index, embedder,
                                                                             first, o);
            },
            in.index, in.embedder, *in.first);
    })};

}  // namespace
}  // namespace tabret::bindings
