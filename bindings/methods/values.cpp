// values: tables ranked by the cell values the question names
// (retrieval/first_stage/value_retriever.hpp), over the index's value index.
#include <tabret/retrieval/first_stage/value_retriever.hpp>

#include "../native_method.hpp"

namespace tabret::bindings {
namespace {

struct values_options {};

const registration values{method<values_options>(
    {.name = "values",
     .kind = "first",
     .description = "the tables whose columns hold values the question names (exact match after "
                    "case, accent and punctuation folding); none for a question naming no value",
     .score = "the summed specificity ln(1 + columns with values / columns holding it) of the "
              "values matched in its columns",
     .columns = true,
     .needs = {"values"}},
    {}, [](const method_inputs& in, const values_options&) {
        if (!in.values)
            throw error(
                "values needs an index with cell values: build it with `tabret index … --values` "
                "or TableIndex.build(…, values=…)");
        return owned<value_retriever>(
            [](const auto& index, const auto& v) { return value_retriever(*index, *v); }, in.index,
            in.values);
    })};

}  // namespace
}  // namespace tabret::bindings
