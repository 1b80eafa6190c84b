// A saved index directory is one artifact (io/artifact.hpp): a save replaces only what tabret
// wrote, keeps the join graph and questions saved with the index, takes turns with concurrent
// saves, and a load racing saves sees the old artifact or the new one, never a mix.

#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/question_index.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/artifact.hpp>
#include <tabret/io/file.hpp>
#include <tabret/join/join_graph.hpp>
#include <tabret/rewriting/offline.hpp>
#include <tabret/saved_index.hpp>

#include <atomic>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "test_support.hpp"

namespace {

using namespace tabret;
namespace fs = std::filesystem;

catalog shop(int tables) {
    catalog c;
    const auto db = c.add_database("shop");
    for (int i = 0; i < tables; ++i) {
        const auto t = c.add_table(db, fmt::format("t{}", i), fmt::format("table {}", i));
        c.add_column(t, "id", "INT");
        c.add_column(t, fmt::format("name{}", i), "TEXT");
    }
    return c;
}

table_index index_of(const catalog& c, index_kind kind = index_kind::exact) {
    table_index_options o;
    o.kind = kind;
    o.hnsw.threads = 1;
    return table_index::build(c, hashing_embedder(hashing_params{.dim = 16}), "h16", o);
}

std::set<std::string> entries(const fs::path& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a save never replaces a directory tabret did not write", "[artifact][safety]") {
    test::temp_dir tmp;
    const auto d = tmp.path() / "d";
    const auto index = index_of(shop(3));
    SECTION("a look-alike manifest.json beside a user's file") {
        fs::create_directory(d);
        write_file_atomic(d / "manifest.json", R"({"manifest_version": 3})");
        write_file_atomic(d / "thesis.tex", "x");
        CHECK_THROWS_AS(index.save(d), io_error);
        CHECK(message_of([&] { index.save(d); }).find("not a saved tabret index") !=
              std::string::npos);
        CHECK(read_text_file(d / "thesis.tex") == "x");
    }
    SECTION("a user's file added to a saved index") {
        index.save(d);
        write_file_atomic(d / "notes.txt", "mine");
        const auto msg = message_of([&] { index.save(d); });
        CHECK(msg.find("tabret did not write ('notes.txt')") != std::string::npos);
        CHECK(read_text_file(d / "notes.txt") == "mine");
        CHECK(table_index::load(d).catalog().tables().size() == 3);
    }
    SECTION("a file, a symbolic link") {
        write_file_atomic(d, "a file");
        CHECK_THROWS_AS(index.save(d), io_error);
        CHECK(read_text_file(d) == "a file");
        fs::remove(d);
        fs::create_directory(tmp.path() / "real");
        write_file_atomic(tmp.path() / "real" / "keep", "k");
        fs::create_directory_symlink(tmp.path() / "real", d);
        CHECK(message_of([&] { index.save(d); }).find("symbolic link") != std::string::npos);
        CHECK(entries(tmp.path() / "real") == std::set<std::string>{"keep"});
    }
    SECTION("an empty directory is taken") {
        fs::create_directory(d);
        index.save(d);
        CHECK(table_index::load(d).catalog().tables().size() == 3);
    }
    CHECK(entries(tmp.path()).size() <= 2);  // no temporaries left beside it
}

TEST_CASE("a save and a load touch no sibling a user named like a backup", "[artifact][safety]") {
    test::temp_dir tmp;
    const auto d = tmp.path() / "prod";
    // Names the old convention treated as its own (`<dir>.old-<digits>`, `<dir>.tmp-<digits>`)
    // with a pid that no process has, and one that looks like a tabret backup but has no marker.
    for (const auto* name : {"prod.old-20240101", "prod.tmp-999999", ".prod.tabret-old-1-2-3"}) {
        fs::create_directory(tmp.path() / name);
        write_file_atomic(tmp.path() / name / "manifest.json", "{}");
    }
    CHECK_THROWS_AS(table_index::load(d), io_error);  // missing: nothing is renamed to it
    CHECK_FALSE(fs::exists(d));
    index_of(shop(2)).save(d);
    index_of(shop(3)).save(d);
    CHECK(entries(tmp.path()) == std::set<std::string>{"prod", "prod.old-20240101",
                                                       "prod.tmp-999999",
                                                       ".prod.tabret-old-1-2-3"});
}

TEST_CASE("the index, its join graph and its questions are one artifact", "[artifact][safety]") {
    test::temp_dir tmp;
    const auto d = tmp.path() / "idx";
    const auto cat = shop(4);
    const auto index = index_of(cat);
    const auto graph = join_graph::build(cat, hashing_embedder(hashing_params{.dim = 16}), "h16");
    const auto questions =
        question_index::build(index, template_question_generator(cat), "template",
                              hashing_embedder(hashing_params{.dim = 16}));
    save_index(d, index, &graph, &questions);
    CHECK(entries(d).contains("join_graph.tjg"));
    index.save(d);  // re-saving the index keeps what was saved with it
    auto saved = load_index(d);
    REQUIRE(saved.graph);
    REQUIRE(saved.questions);
    CHECK(saved.graph->edges() == graph.edges());
    CHECK(saved.questions->questions() == questions.questions());

    // An index of another catalog would orphan them: refused, unless replace.
    const auto other = index_of(shop(5));
    CHECK(message_of([&] { other.save(d); }).find("another catalog or embedder") !=
          std::string::npos);
    CHECK(load_index(d).graph);
    other.save(d, true);
    saved = load_index(d);
    CHECK(saved.index.catalog().tables().size() == 5);
    CHECK_FALSE(saved.graph);
    CHECK_FALSE(saved.questions);
    CHECK(entries(d) == std::set<std::string>{"manifest.json", "catalog.json", "tables.f32",
                                              "columns.f32", "bm25.json"});
    // A join graph of another catalog is not saved into it.
    CHECK_THROWS_AS(graph.save(d), io_error);
}

TEST_CASE("an index keeps the ids a save and a load give, whatever order columns came in",
          "[artifact]") {
    catalog cat;
    const auto db = cat.add_database("shop");
    const auto customer = cat.add_table(db, "customer");
    const auto orders = cat.add_table(db, "orders");
    cat.add_column(customer, "id");
    const auto customer_id = cat.add_column(orders, "customer_id");
    cat.add_column(customer, "name");  // after a later table's column: ALTER TABLE … ADD COLUMN
    cat.add_foreign_key(customer_id, 0);
    const auto index = index_of(cat);
    CHECK(index.catalog().column(1).name == "name");  // numbered as catalog.json nests them
    CHECK(index.catalog().column(2).name == "customer_id");
    CHECK(index.catalog().foreign_keys().size() == 1);
    test::temp_dir tmp;
    index.save(tmp.path() / "idx");
    const auto loaded = table_index::load(tmp.path() / "idx");
    for (column_id c = 0; c < 3; ++c) {
        CHECK(loaded.catalog().column(c).name == index.catalog().column(c).name);
        CHECK(loaded.catalog().column(c).table == index.catalog().column(c).table);
    }
    CHECK(loaded.columns().vectors() == index.columns().vectors());
    CHECK(loaded.catalog_fingerprint() == index.catalog_fingerprint());
}

TEST_CASE("a tuned pipeline is a part of the artifact, kept as the others are",
          "[artifact][safety]") {
    test::temp_dir tmp;
    const auto d = tmp.path() / "idx";
    const auto cat = shop(4);
    const auto index = index_of(cat);
    const nlohmann::json choice = {{"pipeline", "hybrid > greedy-join"}, {"k", 5}};
    // Only into a directory that holds this index.
    CHECK(message_of([&] { save_tuning(d, index, choice); }).find("holds no table index") !=
          std::string::npos);
    index.save(d);
    CHECK_FALSE(load_index(d).tuning);
    save_tuning(d, index, choice);
    REQUIRE(load_index(d).tuning);
    CHECK(*load_index(d).tuning == choice);
    CHECK(entries(d) == std::set<std::string>{"manifest.json", "catalog.json", "tables.f32",
                                              "columns.f32", "bm25.json"});
    index.save(d);  // re-saving the index keeps it
    CHECK(load_index(d).tuning == choice);
    const auto other = index_of(shop(5));
    CHECK(message_of([&] { save_tuning(d, other, choice); }).find("another catalog") !=
          std::string::npos);
    CHECK(message_of([&] { other.save(d); }).find("tuned pipeline made for another catalog") !=
          std::string::npos);
    other.save(d, true);
    CHECK_FALSE(load_index(d).tuning);
}

TEST_CASE("concurrent saves to one directory take turns", "[artifact][safety][concurrency]") {
    test::temp_dir tmp;
    const auto d = tmp.path() / "idx";
    const auto a = index_of(shop(3));
    const auto b = index_of(shop(6));
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 10; ++i) try {
                    (t % 2 ? a : b).save(d, true);
                } catch (const std::exception&) {
                    ++failures;
                }
        });
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
    const auto n = table_index::load(d).catalog().tables().size();
    CHECK((n == 3 || n == 6));
    CHECK(entries(tmp.path()) == std::set<std::string>{"idx"});
}

TEST_CASE("a load racing saves sees one whole artifact", "[artifact][safety][concurrency]") {
    test::temp_dir tmp;
    const auto d = tmp.path() / "idx";
    const auto kind = GENERATE(index_kind::exact, index_kind::hnsw);
    const auto a = index_of(shop(3), kind);
    const auto b = index_of(shop(40), kind);
    a.save(d);
    std::atomic<bool> stop{false};
    std::atomic<int> save_errors{0};
    std::thread saver([&] {
        for (int i = 0; i < 60 && !stop; ++i) try {
                (i % 2 ? a : b).save(d, true);
            } catch (const std::exception&) {
                ++save_errors;
            }
        stop = true;
    });
    int loads = 0;
    std::vector<std::string> errors;
    while (!stop || loads < 10) {
        try {
            const auto loaded = table_index::load(d);
            const auto n = loaded.catalog().tables().size();
            // Everything loaded belongs to one index: vectors, BM25 and graph of n tables.
            if ((n != 3 && n != 40) ||
                static_cast<std::size_t>(loaded.tables().vectors().rows()) != n ||
                loaded.bm25().size() != n)
                errors.push_back("mixed");
            ++loads;
        } catch (const std::exception& e) {
            errors.push_back(e.what());
            if (errors.size() > 5) stop = true;
        }
    }
    saver.join();
    INFO((errors.empty() ? "" : errors.front()));
    CHECK(errors.empty());
    CHECK(save_errors == 0);
    CHECK(loads >= 10);
}
