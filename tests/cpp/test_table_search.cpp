// table_search: the compiled entry point gives what the templates give, saves and loads, and
// refuses an index built with another embedder.
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/retrieval/any_retriever.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>
#include <tabret/table_search.hpp>

#include "test_support.hpp"

using namespace tabret;

static_assert(Retriever<table_search>);

namespace {

const std::vector<std::string> questions{"Which students enrolled in which courses?",
                                         "How many orders did each customer place?"};

/// The hashing embedder's rows, written through the plain-buffer interface.
text_embedder hashing_as_function(const hashing_params& params = {}) {
    return {"hashing via a function", params.dim,
            [params](std::span<const std::string> texts, std::span<float> out) {
                const matrix m = hashing_embedder(params).embed(texts);
                std::copy(m.data(), m.data() + m.size(), out.begin());
            }};
}

}  // namespace

TEST_CASE("table_search ranks as dense_retriever over the same embedder", "[table_search]") {
    const auto cat = test::school_and_shop();
    const hashing_embedder embedder;
    const auto index = table_index::build(cat, embedder, embedder.name());
    for (bool hybrid : {false, true}) {
        const table_search search(cat, hashing_params{}, {.hybrid = hybrid});
        const dense_retriever dense(index, embedder, {.hybrid = hybrid});
        const retrieve_options o{.k = 3, .k_columns = 4};
        CHECK(search.retrieve(questions, o) == dense.retrieve(questions, o));
        CHECK(search.embedder_name() == embedder.name());
    }
    const table_search by_function(cat, hashing_as_function());
    const auto got = by_function.retrieve(questions, {.k = 3});
    const auto want = dense_retriever(index, embedder).retrieve(questions, {.k = 3});
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i].tables == want[i].tables);
}

TEST_CASE("table_search composes as a Retriever", "[table_search]") {
    const table_search search(test::school_and_shop());
    const any_retriever any(search);
    CHECK(any.retrieve(questions, {.k = 2}) == search.retrieve(questions, {.k = 2}));
}

TEST_CASE("table_search saves and loads with the same answers", "[table_search]") {
    const test::temp_dir dir;
    const auto path = dir.path() / "index";
    const hashing_params params{.dim = 512};
    const table_search search(test::school_and_shop(), params);
    search.save(path);
    const auto loaded = table_search::load(path, params);
    CHECK(loaded.catalog() == search.catalog());
    CHECK(loaded.retrieve(questions, {.k = 3, .k_columns = 2}) ==
          search.retrieve(questions, {.k = 3, .k_columns = 2}));

    SECTION("another hashing configuration is refused, naming both embedders") {
        CHECK_THROWS_WITH(table_search::load(path), Catch::Matchers::Contains(path.string()) &&
                                                        Catch::Matchers::Contains("dim 512"));
    }
    SECTION("an embedding function with another name is refused") {
        CHECK_THROWS_AS(table_search::load(path, hashing_as_function(params)), error);
    }
}

TEST_CASE("table_search rejects bad input with typed errors", "[table_search]") {
    const auto cat = test::school_and_shop();
    CHECK_THROWS_WITH(table_search(catalog{}), Catch::Matchers::Contains("no tables"));
    CHECK_THROWS_WITH(table_search(cat, text_embedder{"m", 0, hashing_as_function().embed}),
                      Catch::Matchers::Contains("'m': dim must be positive"));
    CHECK_THROWS_WITH(table_search(cat, text_embedder{"m", 8, {}}),
                      Catch::Matchers::Contains("'m': no embed function"));
    const text_embedder nan{"nan", 4, [](std::span<const std::string>, std::span<float> out) {
                                out[0] = std::numeric_limits<float>::quiet_NaN();
                            }};
    CHECK_THROWS_AS(table_search(cat, nan), embedding_error);
    const text_embedder raising{"raising", 4, [](std::span<const std::string>, std::span<float>) {
                                    throw std::runtime_error("model offline");
                                }};
    CHECK_THROWS_WITH(table_search(cat, raising), "model offline");
    const table_search no_columns(cat, hashing_params{}, {.columns = false});
    CHECK_THROWS_WITH(no_columns.retrieve(questions, {.k = 2, .k_columns = 1}),
                      Catch::Matchers::Contains("without column vectors"));
    CHECK_THROWS_WITH(no_columns.retrieve(questions, {.k = 0}), "k must be positive");
}
