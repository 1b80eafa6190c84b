// column-max: tables ranked by the best of their own and their columns' cosines
// (retrieval/first_stage/column_max_retriever.hpp), the example of docs/write-your-own-method.md.
#include <tabret/retrieval/first_stage/column_max_retriever.hpp>

#include "../native_method.hpp"

namespace tabret::bindings {
namespace {

const registration column_max{method<column_max_options>(
    {.name = "column-max",
     .kind = "first",
     .description = "dense cosine of each table and of its columns; a table scores its best "
                    "(a question that names one column finds its table)",
     .score = "the best cosine with the question of the table and its columns",
     .columns = true,
     .column_index = true},
    {field("depth", &column_max_options::depth)},
    [](const method_inputs& in, const column_max_options& o) {
        return owned<column_max_retriever<callback_embedder>>(
            [&](const auto& index, const auto& embedder) {
                return column_max_retriever<callback_embedder>(*index, embedder, o);
            },
            in.index, in.embedder);
    })};

}  // namespace
}  // namespace tabret::bindings
