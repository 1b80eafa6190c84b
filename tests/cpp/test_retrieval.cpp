#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/eval/metrics.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/io/file.hpp>
#include <tabret/retrieval/first_stage/dense_retriever.hpp>

#include <fstream>
#include <limits>

#include "test_support.hpp"

using namespace tabret;

using test::demo;
using test::demo_index;

TEST_CASE("hashing embedder is deterministic and lexical", "[embedding]") {
    const hashing_embedder e;
    const std::vector<std::string> texts = {"singer name", "singer name", "SingerName",
                                            "concert stadium capacity"};
    matrix m = embed_normalized(e, texts);
    REQUIRE(m.rows() == 4);
    REQUIRE(m.cols() == 1024);
    CHECK(m.row(0) == m.row(1));
    CHECK(m.row(0).dot(m.row(2)) == Approx(1.0f));  // identifier splitting
    CHECK(m.row(0).dot(m.row(3)) < 0.3f);
    CHECK(m.row(0).norm() == Approx(1.0f));
    CHECK_THROWS_AS(hashing_embedder(hashing_params{0}), error);
}

TEST_CASE("the embedding cache sends each distinct text once", "[embedding]") {
    std::size_t calls = 0, texts_seen = 0;
    const callback_embedder inner(
        [&](std::span<const std::string> texts) {
            ++calls;
            texts_seen += texts.size();
            return hashing_embedder{}.embed(texts);
        },
        "counting");
    const cached_embedder cache(inner);
    const std::vector<std::string> a = {"x", "y", "x"};
    const std::vector<std::string> b = {"y", "z"};
    const auto first = cache.embed(a);
    CHECK(first.row(0) == first.row(2));
    CHECK(cache.embed(b).rows() == 2);
    CHECK(cache.embed(a).rows() == 3);
    CHECK(calls == 2);
    CHECK(texts_seen == 3);
    CHECK(cache.stats().hits == 5);
    CHECK(cache.size() == 3);
}

TEST_CASE("an index built through a cache seeded with another's vectors embeds what changed",
          "[embedding]") {
    const auto& before = demo_index();
    std::size_t texts_seen = 0;
    const callback_embedder inner(
        [&](std::span<const std::string> texts) {
            texts_seen += texts.size();
            return hashing_embedder{}.embed(texts);
        },
        before.embedder_name());
    const cached_embedder cache(inner);
    cache.seed(before.texts_of_tables(), before.tables().vectors());
    cache.seed(before.texts_of_columns(), before.columns().vectors());
    const auto again = table_index::build(before.catalog(), cache, before.embedder_name());
    CHECK(texts_seen == 0);
    CHECK((again.tables().vectors() - before.tables().vectors()).cwiseAbs().maxCoeff() < 1e-6f);
    CHECK_THROWS_WITH(cache.seed(before.texts_of_tables(), matrix(1, 4)),
                      Catch::Contains("1 vectors for"));
    const std::vector<std::string> one = {"x"};
    CHECK_THROWS_WITH(cache.seed(one, matrix::Ones(1, 4)), Catch::Contains("4 dimensions"));
}

TEST_CASE("bad embedder answers give embedding_error", "[embedding][errors]") {
    const std::vector<std::string> texts = {"a", "b"};
    const callback_embedder short_rows([](auto) { return matrix(1, 4); }, "short");
    CHECK_THROWS_WITH(embed_normalized(short_rows, texts),
                      Catch::Contains("returned 1 rows for 2 texts"));
    const callback_embedder nan(
        [](auto) {
            matrix m = matrix::Ones(2, 3);
            m(1, 2) = std::numeric_limits<float>::quiet_NaN();
            return m;
        },
        "nan");
    CHECK_THROWS_WITH(embed_normalized(nan, texts), Catch::Contains("NaN or infinity in row 1"));
    CHECK_THROWS_WITH(embed_normalized(hashing_embedder{}, texts, 7),
                      Catch::Contains("dimension 1024, expected 7"));
}

TEST_CASE("metrics on hand-made cases", "[metrics]") {
    const std::vector<int> ranked = {4, 2, 9, 7, 2};
    const std::vector<int> gold = {2, 7};
    CHECK(recall_at<int>(ranked, gold, 1) == 0.0);
    CHECK(recall_at<int>(ranked, gold, 2) == 0.5);
    CHECK(recall_at<int>(ranked, gold, 4) == 1.0);
    CHECK(complete_recall_at<int>(ranked, gold, 3) == 0.0);
    CHECK(complete_recall_at<int>(ranked, gold, 4) == 1.0);
    CHECK(recall_at<int>(ranked, std::vector<int>{}, 3) == 1.0);
    CHECK(recall_at<int>(std::vector<int>{}, gold, 3) == 0.0);
    CHECK_THROWS_AS(recall_at<int>(ranked, gold, 0), error);
    const std::vector<double> values = {1.0, 0.0, 0.5};
    CHECK(mean(values) == Approx(0.5));
}

TEST_CASE("dense retrieval over the demo catalog", "[retrieval]") {
    const hashing_embedder e;
    const dense_retriever r(demo_index(), e);
    const std::vector<std::string> qs = {"How many beds does each ward have?",
                                         "Which tracks are in each playlist?"};
    const auto res = r.retrieve(qs, {5, 3});
    REQUIRE(res.size() == 2);
    CHECK(res[0].tables.size() == 5);
    CHECK(res[0].columns.size() == 3);
    CHECK(demo().qualified_name(res[0].tables[0].table) == "hospital.ward");
    CHECK(res[0].tables[0].score >= res[0].tables[1].score);
    CHECK(res[0].trace.front().step == "dense");
    CHECK_THROWS_WITH(r.retrieve(qs, {0, 0}), Catch::Contains("k must be positive"));
    const dense_retriever hybrid(demo_index(), e, {true});
    CHECK(hybrid.retrieve(qs, {5, 0})[0].trace.front().step == "hybrid");
}

TEST_CASE("an empty catalog cannot be indexed", "[retrieval][errors]") {
    CHECK_THROWS_WITH(table_index::build(catalog{}, hashing_embedder{}, "h"),
                      Catch::Contains("no tables"));
}

TEST_CASE("index save/load round trip gives identical results", "[retrieval][io]") {
    test::temp_dir dir;
    const auto path = dir.path() / "idx";
    demo_index().save(path);
    demo_index().save(path);  // replacing an existing index
    const auto loaded = table_index::load(path);
    CHECK(loaded.catalog() == demo());
    CHECK(loaded.embedder_name() == demo_index().embedder_name());
    const hashing_embedder e;
    const std::vector<std::string> qs = {"songs by genre", "overdue library loans by patron"};
    const auto a = dense_retriever(demo_index(), e).retrieve(qs, {10, 5});
    const auto b = dense_retriever(loaded, e).retrieve(qs, {10, 5});
    CHECK(a == b);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& x : std::filesystem::directory_iterator(dir.path()))
        ++entries;
    CHECK(entries == 1);  // no temporary or old directory left behind
}

TEST_CASE("a corrupt or foreign index gives a typed error", "[retrieval][io][errors]") {
    test::temp_dir dir;
    const auto path = dir.path() / "idx";
    demo_index().save(path);
    {
        std::fstream f(path / "tables.f32", std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x7f');
    }
    CHECK_THROWS_WITH(table_index::load(path), Catch::Contains("tables.f32: checksum mismatch"));
    demo_index().save(path);
    std::filesystem::resize_file(path / "catalog.json", 10);
    CHECK_THROWS_WITH(table_index::load(path), Catch::Contains("catalog.json: size 10"));
    demo_index().save(path);
    auto manifest = read_text_file(path / "manifest.json");
    const auto original = manifest;
    manifest.replace(manifest.find("\"version\": 3"), 12, "\"version\": 9");
    write_file_atomic(path / "manifest.json", manifest);
    CHECK_THROWS_WITH(table_index::load(path), Catch::Contains("version 9 is not supported"));
    // A value that still parses and passes every field check is caught by the manifest's seal.
    manifest = original;
    manifest.replace(manifest.find("\"ef_search\": 64"), 15, "\"ef_search\": 65");
    write_file_atomic(path / "manifest.json", manifest);
    CHECK_THROWS_WITH(table_index::load(path),
                      Catch::Contains("manifest.json: checksum mismatch: the manifest was edited"));
    CHECK_THROWS_AS(table_index::load(dir.path() / "missing"), io_error);
}
