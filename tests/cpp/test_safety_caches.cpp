// Issue 18, items 6, 14 and 15: the response cache is a SQLite store (no lost entries, exact
// keys, damaged or foreign files refused untouched); the cached embedder is re-entrant; long
// searches call the interrupt hook; DDL and catalog JSON are linear in foreign keys.
#include <tabret/catalog.hpp>
#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/bm25_index.hpp>
#include <tabret/index/exact_index.hpp>
#include <tabret/interrupt.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/rewriting/response_cache.hpp>
#include <tabret/serialize.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "test_support.hpp"

using namespace tabret;

namespace {

std::string read_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& p, const std::string& data) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << data;
}

bool names(const std::exception& e, const std::filesystem::path& p) {
    return std::string(e.what()).find(p.string()) != std::string::npos;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Item 6: the response cache.

TEST_CASE("response cache: two writers on a file whose last write was cut lose nothing",
          "[safety_caches][cache]") {
    test::temp_dir dir;
    const auto file = dir.path() / "answers.cache";
    { response_cache(file).put("m", "seed", "S"); }
    // A crash cut the last write short: the file loses its tail.
    const auto whole = read_bytes(file);
    REQUIRE(whole.size() > 10);
    const auto cut = whole.substr(0, whole.size() - 10);
    write_bytes(file, cut);

    std::unique_ptr<response_cache> a, b;
    try {
        a = std::make_unique<response_cache>(file);
        b = std::make_unique<response_cache>(file);
    } catch (const io_error& e) {
        // Refusing the damaged file is fine, as long as it names it and leaves it as it was.
        CHECK(names(e, file));
        CHECK(read_bytes(file) == cut);
        return;
    }
    for (int i = 0; i < 5; ++i) {
        a->put("m", fmt::format("a{}", i), "A");
        b->put("m", fmt::format("b{}", i), "B");
    }
    a.reset();
    b.reset();
    const response_cache again(file);
    for (int i = 0; i < 5; ++i) {
        CHECK(again.find("m", fmt::format("a{}", i)) == "A");
        CHECK(again.find("m", fmt::format("b{}", i)) == "B");
    }
}

TEST_CASE("response cache: two caches on one file see each other's entries",
          "[safety_caches][cache]") {
    test::temp_dir dir;
    const auto file = dir.path() / "answers.cache";
    response_cache a(file), b(file);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&, t] {
            auto& c = t == 0 ? a : b;
            for (int i = 0; i < 100; ++i) c.put("m", fmt::format("{}-{}", t, i), "x");
        });
    for (auto& th : threads) th.join();
    CHECK(a.size() == 200);
    CHECK(b.find("m", "0-99") == "x");
    CHECK(a.find("m", "1-99") == "x");
}

TEST_CASE("response cache: keys are exact bytes, NULs included, after reopening",
          "[safety_caches][cache]") {
    test::temp_dir dir;
    const auto file = dir.path() / "answers.cache";
    const std::string a = "a", a0("a\0", 2), m0("m\0", 2);
    {
        response_cache cache(file);
        cache.put("m", a, "plain");
        cache.put("m", a0, std::string("nul\0end", 7));
        cache.put(m0, a, "other model");
        cache.put("m", "", "empty prompt");
    }
    const response_cache again(file);
    CHECK(again.size() == 4);
    CHECK(again.find("m", a) == "plain");
    CHECK(again.find("m", a0) == std::string("nul\0end", 7));
    CHECK(again.find(m0, a) == "other model");
    CHECK(again.find("m", "") == "empty prompt");
    CHECK_FALSE(again.find("m", std::string("a\0\0", 3)));
}

TEST_CASE("response cache: an old JSON-lines file is refused untouched, then imported",
          "[safety_caches][cache]") {
    test::temp_dir dir;
    const auto old = dir.path() / "answers.jsonl";
    const std::string text = test::two_cached_answers();
    write_bytes(old, text);
    try {
        const response_cache cache(old);
        FAIL("expected io_error");
    } catch (const io_error& e) {
        CHECK(names(e, old));
        CHECK(std::string(e.what()).find("import_jsonl") != std::string::npos);
    }
    CHECK(read_bytes(old) == text);
    response_cache cache(dir.path() / "answers.cache");
    CHECK(cache.import_jsonl(old) == 2);
    CHECK(cache.find("m", "p2") == "a2");
    CHECK(read_bytes(old) == text);
}

TEST_CASE("response cache: files that are not its database are refused untouched",
          "[safety_caches][cache]") {
    test::temp_dir dir;
    const auto thesis = dir.path() / "thesis.tex";
    write_bytes(thesis, "\\documentclass{article}\n");
    CHECK_THROWS_AS(response_cache(thesis), io_error);
    CHECK(read_bytes(thesis) == "\\documentclass{article}\n");

    // Another application's SQLite database.
    const auto other = dir.path() / "other.db";
    {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(other.c_str(), &db) == SQLITE_OK);
        REQUIRE(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr,
                             nullptr) == SQLITE_OK);
        sqlite3_close(db);
    }
    const auto before = read_bytes(other);
    try {
        const response_cache cache(other);
        FAIL("expected io_error");
    } catch (const io_error& e) {
        CHECK(names(e, other));
    }
    CHECK(read_bytes(other) == before);
}

TEST_CASE("response cache: a damaged file is an io_error naming it, never a silent loss",
          "[safety_caches][cache]") {
    test::temp_dir dir;
    const auto file = dir.path() / "answers.cache";
    {
        response_cache cache(file);
        for (int i = 0; i < 50; ++i) cache.put("m", fmt::format("p{}", i), std::string(40, 'x'));
    }
    const auto whole = read_bytes(file);
    for (const std::size_t cut : {std::size_t{1}, std::size_t{100}, whole.size() / 2}) {
        INFO("cut " << cut);
        write_bytes(file, whole.substr(0, whole.size() - cut));
        try {
            const response_cache cache(file);
            // Not found at open: every entry must read back intact or fail naming the file.
            for (int i = 0; i < 50; ++i) {
                const auto got = cache.find("m", fmt::format("p{}", i));
                CHECK((!got || *got == std::string(40, 'x')));
            }
            CHECK(cache.size() == 50);
        } catch (const io_error& e) {
            CHECK(names(e, file));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Item 15a: the cached embedder is re-entrant.

namespace {

/// Embeds a text with spaces as the sum of its words' vectors, each through @p cache (set
/// after construction): the wrapped embedder calls the cache that wraps it.
struct compositional_embedder {
    const hashing_embedder base;
    std::function<matrix(std::span<const std::string>)> cache;  // the cache's embed
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const {
        matrix out = base.embed(texts);
        for (std::size_t i = 0; i < texts.size(); ++i) {
            if (texts[i].find(' ') == std::string::npos) continue;
            std::vector<std::string> words;
            std::istringstream in(texts[i]);
            for (std::string w; in >> w;) words.push_back(w);
            const matrix parts = cache(words);
            out.row(static_cast<Eigen::Index>(i)) = parts.colwise().sum();
        }
        return out;
    }
    [[nodiscard]] std::string name() const { return "compositional"; }
};

}  // namespace

TEST_CASE("cached embedder: a wrapped embedder may call the same cache (no deadlock)",
          "[safety_caches][cached_embedder]") {
    // Held by shared_ptr and run on a detached thread: a deadlock fails the test, not the run.
    auto inner = std::make_shared<compositional_embedder>();
    auto cache = std::make_shared<cached_embedder<compositional_embedder>>(*inner);
    inner->cache = [c = cache.get()](std::span<const std::string> t) { return c->embed(t); };
    auto task = std::make_shared<std::packaged_task<matrix()>>([inner, cache] {
        const std::vector<std::string> texts = {"red apple", "apple", "green apple", "red"};
        return cache->embed(texts);
    });
    auto result = task->get_future();
    std::thread([task] { (*task)(); }).detach();
    REQUIRE(result.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    const matrix m = result.get();
    const std::vector<std::string> words = {"red", "apple"};
    const matrix parts = cache->embed(words);
    CHECK(m.row(0).isApprox(parts.row(0) + parts.row(1)));
    CHECK(m.row(1).isApprox(parts.row(1)));
    CHECK(cache->size() == 5);  // red apple, apple, green apple, red, green
}

namespace {

/// Asks its cache for the very text it is embedding: an endless recursion.
struct self_asking_embedder {
    const hashing_embedder base;
    std::function<matrix(std::span<const std::string>)> cache;  // the cache's embed
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const {
        (void)cache(texts);
        return base.embed(texts);
    }
    [[nodiscard]] std::string name() const { return "self-asking"; }
};

}  // namespace

TEST_CASE("cached embedder: endless recursion through the cache is an error, not a hang",
          "[safety_caches][cached_embedder]") {
    auto inner = std::make_shared<self_asking_embedder>();
    auto cache = std::make_shared<cached_embedder<self_asking_embedder>>(*inner);
    inner->cache = [c = cache.get()](std::span<const std::string> t) { return c->embed(t); };
    auto task = std::make_shared<std::packaged_task<std::string()>>([inner, cache] {
        try {
            (void)cache->embed(std::vector<std::string>{"loop"});
        } catch (const error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    });
    auto result = task->get_future();
    std::thread([task] { (*task)(); }).detach();
    REQUIRE(result.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    CHECK(result.get().find("nested 65 deep") != std::string::npos);
    CHECK(cache->size() == 0);
}

TEST_CASE("cached embedder: concurrent callers embed each text once",
          "[safety_caches][cached_embedder]") {
    struct counting {
        const hashing_embedder base;
        mutable std::atomic<std::size_t> texts{0};
        [[nodiscard]] matrix embed(std::span<const std::string> t) const {
            texts += t.size();
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return base.embed(t);
        }
        [[nodiscard]] std::string name() const { return "counting"; }
    };
    const counting inner;
    const cached_embedder cache(inner);
    std::vector<std::string> texts;
    for (int i = 0; i < 40; ++i) texts.push_back(fmt::format("text {}", i));
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            for (int r = 0; r < 5; ++r) (void)cache.embed(texts);
        });
    for (auto& th : threads) th.join();
    CHECK(inner.texts == 40);
    CHECK(cache.stats().embedded == 40);
}

// ---------------------------------------------------------------------------------------------
// Item 15b: long searches call the interrupt hook on the calling thread.

namespace {

struct stop_requested : std::runtime_error {
    stop_requested() : std::runtime_error("stop") {}
};

}  // namespace

TEST_CASE("exact and BM25 searches stop when the interrupt hook throws",
          "[safety_caches][interrupt]") {
    const hashing_embedder embedder({.dim = 64});
    std::vector<std::string> docs, queries;
    for (int i = 0; i < 3000; ++i) docs.push_back(fmt::format("table t{} column c{}", i, i % 7));
    for (int i = 0; i < 3000; ++i) queries.push_back(fmt::format("question about t{}", i));
    matrix vectors = embedder.embed(docs);
    vectors.rowwise().normalize();
    matrix q = embedder.embed(queries);
    q.rowwise().normalize();
    const exact_index exact(vectors, 64 * 1024);  // small blocks: many hook calls
    const bm25_index bm25(docs);

    std::size_t calls = 0;
    const interrupt_fn hook = [&] {
        if (++calls == 3) throw stop_requested();
    };
    {
        const interrupt_scope scope(hook);
        CHECK_THROWS_AS(exact.search(q, 5), stop_requested);
        calls = 0;
        CHECK_THROWS_AS(bm25.search(queries, 5), stop_requested);
    }
    // Outside the scope no hook runs, and the answers are those of an uninterrupted search.
    calls = 0;
    const auto a = exact.search(q, 5);
    const auto b = bm25.search(queries, 5);
    CHECK(calls == 0);
    std::size_t counted = 0;
    const interrupt_fn count = [&] { ++counted; };
    {
        const interrupt_scope scope(count);
        CHECK(exact.search(q, 5) == a);
        CHECK(bm25.search(queries, 5) == b);
    }
    CHECK(counted > 2);
}

// ---------------------------------------------------------------------------------------------
// Item 14: DDL and catalog JSON over many foreign keys (linear; times are in bench/).

TEST_CASE("database DDL and catalog JSON of 20k FK-chained tables are correct",
          "[safety_caches][catalog]") {
    constexpr std::size_t n = 20'000;
    catalog cat;
    const auto db = cat.add_database("chain");
    column_id prev = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto t = cat.add_table(db, fmt::format("t{}", i));
        const auto id = cat.add_column(t, "id", "int");
        const auto ref = cat.add_column(t, "prev_id", "int");
        cat.set_primary_key(t, {id});
        if (i > 0) cat.add_foreign_key(ref, prev);
        prev = id;
    }
    REQUIRE(cat.foreign_keys().size() == n - 1);
    CHECK(cat.foreign_keys_from(0).empty());
    REQUIRE(cat.foreign_keys_from(12'345).size() == 1);
    CHECK(cat.foreign_keys_from(12'345)[0].to == cat.table(12'344).columns[0]);

    const auto ddl = serialize_database_ddl(cat, db);
    std::size_t count = 0;
    for (auto p = ddl.find("FOREIGN KEY"); p != std::string::npos;
         p = ddl.find("FOREIGN KEY", p + 1))
        ++count;
    CHECK(count == n - 1);
    CHECK(ddl.find("CREATE TABLE t19999 (\n  id int,\n  prev_id int,\n  PRIMARY KEY (id),\n  "
                   "FOREIGN KEY (prev_id) REFERENCES t19998 (id)\n);") != std::string::npos);
    CHECK(ddl.find("CREATE TABLE t0 (\n  id int,\n  prev_id int,\n  PRIMARY KEY (id)\n);") !=
          std::string::npos);

    const auto doc = catalog_to_json(cat);
    const auto& t7 = doc["databases"][0]["tables"][7];
    CHECK(t7["foreign_keys"].size() == 1);
    CHECK(t7["foreign_keys"][0]["ref_table"] == "t6");
    CHECK(catalog_from_json(doc, "memory") == cat);
}

TEST_CASE("foreign keys from a table keep declaration order across tables",
          "[safety_caches][catalog]") {
    catalog cat;
    const auto db = cat.add_database("d");
    const auto a = cat.add_table(db, "a"), b = cat.add_table(db, "b");
    const auto a1 = cat.add_column(a, "x"), a2 = cat.add_column(a, "y");
    const auto b1 = cat.add_column(b, "x"), b2 = cat.add_column(b, "y");
    cat.add_foreign_key(a2, b1);
    cat.add_foreign_key(b1, a1);
    cat.add_foreign_key(a1, b2);
    const auto c = cat.add_table(db, "c");  // added after foreign keys exist
    const auto c1 = cat.add_column(c, "x");
    cat.add_foreign_key(c1, a1);
    const auto from_a = cat.foreign_keys_from(a);
    REQUIRE(from_a.size() == 2);
    CHECK(from_a[0] == foreign_key{a2, b1});
    CHECK(from_a[1] == foreign_key{a1, b2});
    CHECK(cat.foreign_keys_from(b) == std::vector<foreign_key>{{b1, a1}});
    CHECK(cat.foreign_keys_from(c) == std::vector<foreign_key>{{c1, a1}});
    catalog copy = cat;
    CHECK(copy.foreign_keys_from(a) == from_a);
}
