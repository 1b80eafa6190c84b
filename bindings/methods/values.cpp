// values: tables ranked by the cell values the question names
// (retrieval/first_stage/value_retriever.hpp), over the index's value index.
#include <tabret/retrieval/first_stage/value_retriever.hpp>

#include <string>

#include <fmt/format.h>

#include "../native_method.hpp"

namespace tabret::bindings {
namespace {

struct values_options {
    std::string one_word = "literal";  ///< one_word_values: "literal" or "unexplained".
};

one_word_values one_word_of(const std::string& name) {
    if (name == "literal") return one_word_values::literal;
    if (name == "unexplained") return one_word_values::unexplained;
    throw error(
        fmt::format("values option 'one_word': '{}' is not 'literal' or 'unexplained'", name));
}

const registration values{method<values_options>(
    {.name = "values",
     .kind = "first",
     .description = "the tables whose columns hold values the question names (exact match after "
                    "case, accent and punctuation folding); none for a question naming no value",
     .score = "the summed specificity ln(1 + columns with values / columns holding it) of the "
              "values matched in its columns",
     .columns = true,
     .needs = {"values"}},
    {field("one_word", &values_options::one_word)},
    [](const method_inputs& in, const values_options& o) {
        if (!in.values)
            throw error(
                "values needs an index with cell values: build it with `tabret index … --values` "
                "or TableIndex.build(…, values=…)");
        const auto one_word = one_word_of(o.one_word);
        return owned<value_retriever>(
            [one_word](const auto& index, const auto& v) {
                return value_retriever(*index, *v, one_word);
            },
            in.index, in.values);
    })};

}  // namespace
}  // namespace tabret::bindings
