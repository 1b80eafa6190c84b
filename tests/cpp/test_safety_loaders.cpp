// Regression tests of issue 18, loader items: SQLite file names read as URIs (8), DDL dialect
// string and comment rules (9), embeddings of extreme magnitude (11), text that is not UTF-8
// (12), FIFOs and endless files given as input (15).
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <tabret/embedding/cached_embedder.hpp>
#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/embedding/embedder.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/io/ddl.hpp>
#include <tabret/io/file.hpp>
#include <tabret/io/spider_json.hpp>
#include <tabret/io/sqlite.hpp>

#include "test_support.hpp"

using namespace tabret;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

void make_sqlite(const fs::path& path, const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    if (err) sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

std::vector<std::string> table_names(const catalog& cat) {
    std::vector<std::string> names;
    for (const auto& t : cat.tables()) names.push_back(t.name);
    return names;
}

/// Runs @p body in a child process (so that a hang or runaway read cannot take the test run
/// with it) and returns its exit code. A hang guard, not a speed bound: the child has an alarm
/// of @p hang_guard_seconds, and a child that never returns dies by SIGALRM (128 + 14).
int run_in_child(const std::function<int()>& body, unsigned hang_guard_seconds = 120) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__)
        const rlimit limit{rlim_t{1} << 30, rlim_t{1} << 30};  // 1 GiB: a runaway read
        ::setrlimit(RLIMIT_AS, &limit);                        // fails fast
#endif
        ::alarm(hang_guard_seconds);
        int code = 3;
        try {
            code = body();
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// 0 when load_ddl(@p path) throws io_error whose message contains @p expected; else 1 or 2.
int expect_ddl_io_error(const fs::path& path, const std::string& expected) {
    try {
        (void)load_ddl(path, "x");
    } catch (const io_error& e) {
        return std::string(e.what()).find(expected) != std::string::npos ? 0 : 1;
    } catch (...) {
        return 2;
    }
    return 1;
}

/// Changes the working directory for one scope.
struct in_directory {
    fs::path previous = fs::current_path();
    explicit in_directory(const fs::path& dir) { fs::current_path(dir); }
    ~in_directory() { fs::current_path(previous); }
};

}  // namespace

// --- item 8: a SQLite file is opened by exactly the name given ------------------------------

TEST_CASE("from_sqlite opens the file named file:other.db, not other.db",
          "[safety-loaders][sqlite]") {
    const test::temp_dir dir;
    make_sqlite(dir.path() / "file:other.db", "CREATE TABLE literal (a INTEGER PRIMARY KEY);");
    make_sqlite(dir.path() / "other.db", "CREATE TABLE impostor (b INTEGER PRIMARY KEY);");
    {
        const in_directory here(dir.path());
        CHECK(table_names(load_sqlite("file:other.db")) == std::vector<std::string>{"literal"});
        CHECK(table_names(load_sqlite("./file:other.db")) == std::vector<std::string>{"literal"});
    }
    CHECK(table_names(load_sqlite(dir.path() / "file:other.db")) ==
          std::vector<std::string>{"literal"});
    // A name with URI syntax that is not a file must not open anything else.
    const in_directory here(dir.path());
    CHECK_THROWS_AS(load_sqlite("file:other.db?mode=ro"), io_error);
}

TEST_CASE("from_sqlite refuses a FIFO without hanging", "[safety-loaders][sqlite][fifo]") {
    const test::temp_dir dir;
    const auto fifo = dir.path() / "db.sqlite";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const int code = run_in_child([&] {
        try {
            (void)load_sqlite(fifo);
        } catch (const io_error& e) {
            return std::string(e.what()).find("not a regular file") != std::string::npos ? 0 : 1;
        }
        return 1;
    });
    CHECK(code == 0);
}

// --- item 15: loaders open only regular files and check sizes before reading ---------------

TEST_CASE("a FIFO given as a DDL or catalog file is refused, not waited on",
          "[safety-loaders][fifo]") {
    const test::temp_dir dir;
    const auto fifo = dir.path() / "schema.sql";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(run_in_child([&] { return expect_ddl_io_error(fifo, "not a regular file"); }) == 0);
    CHECK(run_in_child([&] {
              try {
                  (void)load_catalog_json(fifo);
              } catch (const io_error& e) {
                  return std::string(e.what()).find(fifo.string()) != std::string::npos ? 0 : 1;
              }
              return 1;
          }) == 0);
}

TEST_CASE("a symlink to an endless device is refused before reading", "[safety-loaders][endless]") {
    const test::temp_dir dir;
    for (const char* device : {"/dev/zero", "/dev/urandom"}) {
        if (!fs::exists(device)) continue;
        const auto link = dir.path() / (std::string("endless") + (device[5] == 'z' ? "0" : "1"));
        fs::create_symlink(device, link);
        INFO(device);
        CHECK(run_in_child([&] { return expect_ddl_io_error(link, "not a regular file"); }) == 0);
    }
}

TEST_CASE("read_regular_file_at refuses files above the limit before reading",
          "[safety-loaders][size]") {
    const test::temp_dir dir;
    write_file(dir.path() / "big.sql", std::string(100, 'x'));
    CHECK(read_regular_file_at(AT_FDCWD, dir.path() / "big.sql", "big.sql", 100).size() == 100);
    CHECK_THROWS_WITH(read_regular_file_at(AT_FDCWD, dir.path() / "big.sql", "big.sql", 99),
                      Catch::Contains("big.sql: is 100 bytes, more than the limit of 99 bytes"));
    CHECK_THROWS_WITH(read_text_file(dir.path()), Catch::Contains("is a directory"));
    CHECK_THROWS_WITH(read_text_file(dir.path() / "missing"), Catch::Contains("no such file"));
    // Relative to an open directory.
    const int dfd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(dfd >= 0);
    CHECK(read_regular_file_at(dfd, "big.sql", "big.sql").size() == 100);
    ::close(dfd);
}

// --- item 12: text must be UTF-8 --------------------------------------------------------------

TEST_CASE("a Latin-1 DDL file is a parse_error naming file, line and byte offset",
          "[safety-loaders][utf8]") {
    const test::temp_dir dir;
    const auto path = dir.path() / "latin1.sql";
    write_file(path, "CREATE TABLE a (x int);\nCREATE TABLE caf\xE9 (y int);\n");
    try {
        (void)load_ddl(path);
        FAIL("loaded a Latin-1 file");
    } catch (const parse_error& e) {
        CHECK(e.line() == 2);
        CHECK(e.source() == path.string());
        CHECK_THAT(e.what(), Catch::Contains("not valid UTF-8: byte 0xE9 at byte offset 40"));
        CHECK(!detail::first_invalid_utf8(e.what()));
    }
    // The same text given as a string.
    catalog cat;
    CHECK_THROWS_AS(add_ddl(cat, "CREATE TABLE caf\xE9 (y int);", "db"), parse_error);
    CHECK(cat.tables().empty());
}

TEST_CASE("Latin-1 JSON (tables.json, catalog JSON) is a parse_error with line and offset",
          "[safety-loaders][utf8]") {
    const test::temp_dir dir;
    const auto spider = dir.path() / "tables.json";
    write_file(spider,
               "[{\"db_id\": \"caf\xE9\", \"table_names_original\": [],\n"
               "\"column_names_original\": [], \"column_types\": []}]");
    CHECK_THROWS_WITH(load_spider_json(spider),
                      Catch::Contains(spider.string() + ":1: not valid UTF-8: byte 0xE9"));
    const auto json = dir.path() / "catalog.json";
    write_file(json, "{\n\"format\": \"tabret-catalog\", \"x\": \"\xFF\"}");
    CHECK_THROWS_WITH(load_catalog_json(json),
                      Catch::Contains(json.string() + ":2: not valid UTF-8: byte 0xFF"));
}

TEST_CASE("a UTF-8 byte order mark is skipped", "[safety-loaders][utf8]") {
    const test::temp_dir dir;
    const auto path = dir.path() / "bom.sql";
    write_file(path,
               "\xEF\xBB\xBF"
               "CREATE TABLE caf\xC3\xA9 (y int);\n");
    CHECK(table_names(load_ddl(path)) == std::vector<std::string>{"caf\xC3\xA9"});
}

TEST_CASE("error messages escape bytes that are not UTF-8", "[safety-loaders][utf8]") {
    const test::temp_dir dir;
    const auto missing = dir.path() / "caf\xE9.sql";
    try {
        (void)load_ddl(missing);
        FAIL("loaded a missing file");
    } catch (const io_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("caf\\xE9.sql: no such file"));
        CHECK(!detail::first_invalid_utf8(e.what()));
    }
    // A file whose name is not UTF-8 loads, but cannot name the database by itself.
    write_file(missing, "CREATE TABLE t (x int);");
    CHECK_THROWS_WITH(load_ddl(missing), Catch::Contains("file name is not valid UTF-8"));
    CHECK(load_ddl(missing, "named").tables().size() == 1);
    const parse_error err("src\xFF", 3, "bad \xC3");
    CHECK(!detail::first_invalid_utf8(err.what()));
    CHECK(err.source() == "src\\xFF");
    CHECK(detail::escape_invalid_utf8("a\xC3\xA9\xC3z\xED\xA0\x80") ==
          "a\xC3\xA9\\xC3z\\xED\\xA0\\x80");
}

TEST_CASE("a SQLite schema with names that are not UTF-8 is a schema_error",
          "[safety-loaders][utf8][sqlite]") {
    const test::temp_dir dir;
    make_sqlite(dir.path() / "bad.db", "CREATE TABLE \"caf\xE9\" (a int);");
    try {
        (void)load_sqlite(dir.path() / "bad.db");
        FAIL("loaded a name that is not UTF-8");
    } catch (const schema_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("caf\\xE9"));
    }
}

// --- item 11: embeddings of any finite magnitude normalise; zero rows are refused -----------

TEST_CASE("rows of extreme magnitude normalise to unit length", "[safety-loaders][embedding]") {
    const std::vector<std::string> texts = {"huge", "tiny", "subnormal", "plain"};
    const callback_embedder extreme(
        [](std::span<const std::string> t) {
            matrix m(static_cast<Eigen::Index>(t.size()), 3);
            m.row(0) << 3e30f, 4e30f, 0.0f;
            m.row(1) << 3e-30f, 4e-30f, 0.0f;
            m.row(2) << std::ldexp(3.0f, -149), std::ldexp(4.0f, -149), 0.0f;  // subnormal
            m.row(3) << 3.0f, 4.0f, 0.0f;
            return m;
        },
        "extreme");
    const matrix m = embed_normalized(extreme, texts);
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
        INFO("row " << r);
        CHECK(m.row(r).norm() == Approx(1.0f));
        CHECK(m(r, 0) == Approx(0.6f));
        CHECK(m(r, 1) == Approx(0.8f));
    }
}

TEST_CASE("an all-zero row is an embedding_error naming the row and its text",
          "[safety-loaders][embedding]") {
    const std::vector<std::string> texts = {"singer", "the empty one"};
    const callback_embedder zero(
        [](std::span<const std::string> t) {
            matrix m = matrix::Zero(static_cast<Eigen::Index>(t.size()), 4);
            m(0, 1) = 1.0f;
            return m;
        },
        "zeros");
    CHECK_THROWS_WITH(embed_normalized(zero, texts), Catch::Contains("embedder 'zeros'") &&
                                                         Catch::Contains("in row 1") &&
                                                         Catch::Contains("the empty one"));
    CHECK_THROWS_AS(embed_normalized(zero, texts), embedding_error);
}

TEST_CASE("the hashing embedder's zero vector for a featureless text stays allowed",
          "[safety-loaders][embedding]") {
    const std::vector<std::string> texts = {"a", "singer name"};
    const matrix m = embed_normalized(hashing_embedder{}, texts);
    CHECK(m.row(0).isZero());
    CHECK(m.row(1).norm() == Approx(1.0f));
    const hashing_embedder inner;
    const cached_embedder cached(inner);
    CHECK(embed_normalized(cached, texts).row(0).isZero());
    const callback_embedder declared([](auto t) { return hashing_embedder{}.embed(t); }, "h", true);
    CHECK(embed_normalized(declared, texts).row(0).isZero());
}

// --- item 9: each dialect's string and comment rules, or a parse_error naming the line -----

TEST_CASE("mysqldump: a backslash-escaped quote does not swallow the next table",
          "[safety-loaders][ddl]") {
    const std::string dump = R"(-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)
/*!40101 SET NAMES utf8mb4 */;
DROP TABLE IF EXISTS `a`;
CREATE TABLE `a` (
  `id` int NOT NULL,
  `note` varchar(20) DEFAULT NULL COMMENT 'the \'note\' # not a comment',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
LOCK TABLES `a` WRITE;
INSERT INTO `a` VALUES (1,'it\'s'),(2,'back\\slash'),(3,'dq \" x');
UNLOCK TABLES;
CREATE TABLE `b` (
  `id` int NOT NULL, # a MySQL comment
  `a_id` int DEFAULT NULL,
  PRIMARY KEY (`id`),
  CONSTRAINT `b_ibfk_1` FOREIGN KEY (`a_id`) REFERENCES `a` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
)";
    const auto cat = [&] {
        catalog c;
        add_ddl(c, dump, "shop", "dump.sql");
        return c;
    }();
    CHECK(table_names(cat) == std::vector<std::string>{"a", "b"});
    REQUIRE(cat.foreign_keys().size() == 1);
    CHECK(cat.column(*cat.find_column(0, "note")).description == "the 'note' # not a comment");
}

TEST_CASE("MySQL DDL without a dump header: the only reading that parses is taken",
          "[safety-loaders][ddl]") {
    catalog cat;
    add_ddl(cat,
            "CREATE TABLE a (id int PRIMARY KEY);\n"
            "INSERT INTO a VALUES (1,'it\\'s');\n"
            "CREATE TABLE b (id int, a_id int REFERENCES a(id));\n",
            "db");
    CHECK(table_names(cat) == std::vector<std::string>{"a", "b"});
    CHECK(cat.foreign_keys().size() == 1);
}

TEST_CASE("PostgreSQL nested comments neither drop a table nor invent one",
          "[safety-loaders][ddl]") {
    const std::string text =
        "/* a /* b */ CREATE TABLE ghost(q int); */ CREATE TABLE a(x int PRIMARY KEY);\n";
    catalog plain;
    add_ddl(plain, text, "db");
    CHECK(table_names(plain) == std::vector<std::string>{"a"});
    catalog dumped;
    add_ddl(dumped, "-- PostgreSQL database dump\n" + text, "db");
    CHECK(table_names(dumped) == std::vector<std::string>{"a"});
    catalog named;
    add_ddl(named, text, "db", "<string>", ddl_dialect::postgresql);
    CHECK(table_names(named) == std::vector<std::string>{"a"});
}

TEST_CASE("text that two dialects read as different tables fails naming the line",
          "[safety-loaders][ddl]") {
    catalog cat;
    // Standard SQL: t1 and t2; PostgreSQL (comments nest): t2 only.
    const std::string nested =
        "CREATE TABLE t0 (x int);\n"
        "/* outer /* inner */ CREATE TABLE t1 (x int); -- */\n"
        "CREATE TABLE t2 (y int);\n";
    try {
        add_ddl(cat, nested, "db", "nested.sql");
        FAIL("loaded an ambiguous text");
    } catch (const parse_error& e) {
        CHECK(e.line() == 2);
        CHECK_THAT(e.what(), Catch::Contains("nested.sql:2:") && Catch::Contains("PostgreSQL"));
    }
    // Standard: a's description is `x\`; MySQL: `x'); -- `.
    const std::string escaped =
        "CREATE TABLE t (a text COMMENT 'x\\'); -- ');\n"
        "CREATE TABLE u (b int);\n";
    CHECK_THROWS_WITH(add_ddl(cat, escaped, "db", "escaped.sql"),
                      Catch::Contains("escaped.sql:1:") && Catch::Contains("MySQL"));
    CHECK(cat.tables().empty());
    // Naming the dialect settles it.
    add_ddl(cat, escaped, "db", "escaped.sql", ddl_dialect::mysql);
    CHECK(cat.column(*cat.find_column(0, "a")).description == "x'); -- ");
}

TEST_CASE("a missing ';' before CREATE TABLE fails naming the line", "[safety-loaders][ddl]") {
    catalog cat;
    CHECK_THROWS_WITH(add_ddl(cat,
                              "CREATE TABLE a (x int);\n"
                              "CREATE INDEX i ON a (x)\n"
                              "CREATE TABLE b (y int);\n",
                              "db", "missing.sql"),
                      Catch::Contains("missing.sql:3: CREATE inside the statement that starts on "
                                      "line 2: a ';' is missing"));
    CHECK_THROWS_WITH(add_ddl(cat,
                              "CREATE TABLE a (x int);\n"
                              "INSERT INTO a VALUES (1)\n"
                              "ALTER TABLE a ADD COLUMN y int;\n",
                              "db", "missing.sql"),
                      Catch::Contains("missing.sql:3: ALTER inside the statement"));
    CHECK_THROWS_WITH(
        add_ddl(cat, "CREATE TABLE a (x int); INSERT INTO a VALUES (1) CREATE TABLE b (y int);",
                "db", "one-line.sql"),
        Catch::Contains("one-line.sql:1: CREATE inside"));
    CHECK(cat.tables().empty());
    // Compound statements keep their bodies: a trigger's BEGIN ... END.
    add_ddl(cat,
            "CREATE TABLE a (x int);\n"
            "CREATE TRIGGER tr AFTER INSERT ON a BEGIN\n"
            "  CREATE TEMP TABLE IF NOT EXISTS scratch (z int);\n"
            "END;\n",
            "db");
    CHECK(!cat.tables().empty());
}

// --- issue 47, item 13: a file given to the wrong loader names the loader to use ------------

TEST_CASE("a SQLite database or a Spider file given to another loader names the right one",
          "[safety-loaders][format]") {
    const test::temp_dir dir;
    const auto db = dir.path() / "x.db";
    make_sqlite(db, "CREATE TABLE t (id INTEGER PRIMARY KEY);");
    const auto sqlite_advice = [&](const std::string& not_what) {
        return db.string() + ": is a SQLite database, not " + not_what +
               ": use the sqlite loader (`tabret catalog sqlite " + db.string() +
               "`, `--catalog-format sqlite`, Python `Catalog.from_sqlite`, C++ `load_sqlite`)";
    };
    CHECK_THROWS_WITH(load_ddl(db), sqlite_advice("SQL DDL"));
    CHECK_THROWS_WITH(load_catalog_json(db), sqlite_advice("tabret catalog JSON"));
    CHECK_THROWS_WITH(load_spider_json(db), sqlite_advice("a Spider/BIRD tables.json"));
    CHECK_THROWS_AS(load_ddl(db), io_error);

    const auto spider = dir.path() / "tables.json";
    write_file(spider, R"([{"db_id": "d", "table_names_original": ["t"]}])");
    CHECK_THROWS_WITH(load_catalog_json(spider),
                      Catch::StartsWith(spider.string() +
                                        ": is a Spider/BIRD tables.json, not tabret catalog JSON: "
                                        "use the spider loader") &&
                          Catch::Contains("`--catalog-format spider`"));
    CHECK_THROWS_WITH(load_ddl(spider), Catch::Contains("is a Spider/BIRD tables.json, not SQL"));

    const auto own = dir.path() / "cat.json";
    save_catalog_json(load_sqlite(db), own);
    CHECK_THROWS_WITH(load_spider_json(own),
                      Catch::Contains("is tabret catalog JSON, not a Spider/BIRD tables.json: use "
                                      "the json loader"));
    CHECK_THROWS_WITH(load_ddl(own), Catch::Contains("is tabret catalog JSON, not SQL DDL"));
}

// --- issue 47, item 6: SQLite generated columns, shadow tables, errors naming the file ------

namespace {

std::vector<std::string> column_names(const catalog& cat, const std::string& table) {
    std::vector<std::string> names;
    for (const auto c : cat.table(*cat.find_table(cat.databases().front().name, table)).columns)
        names.push_back(cat.column(c).name);
    return names;
}

}  // namespace

TEST_CASE("SQLite generated columns are loaded", "[safety-loaders][sqlite]") {
    const test::temp_dir dir;
    make_sqlite(dir.path() / "g.db",
                "CREATE TABLE t (a INT PRIMARY KEY, b INT GENERATED ALWAYS AS (a * 2) VIRTUAL, "
                "c TEXT AS (a || 'x') STORED, d REAL);");
    const auto cat = load_sqlite(dir.path() / "g.db");
    CHECK(column_names(cat, "t") == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(cat.column(*cat.find_column(0, "c")).type == "TEXT");
}

TEST_CASE("SQLite shadow tables of FTS5 and R-tree tables are not user tables",
          "[safety-loaders][sqlite]") {
    const test::temp_dir dir;
    make_sqlite(dir.path() / "v.db",
                "CREATE TABLE t (id INT); CREATE VIRTUAL TABLE docs USING fts5(title, body); "
                "CREATE VIRTUAL TABLE geo USING rtree(id, x0, x1); CREATE TABLE docs_notes (n);");
    const auto cat = load_sqlite(dir.path() / "v.db");
    CHECK(table_names(cat) == std::vector<std::string>{"t", "docs", "geo", "docs_notes"});
    CHECK(column_names(cat, "docs") == std::vector<std::string>{"title", "body"});  // no rank
}

TEST_CASE("every add_sqlite schema error names the file", "[safety-loaders][sqlite]") {
    const test::temp_dir dir;
    const auto db = dir.path() / "e.db";
    make_sqlite(db, "CREATE TABLE t (\"\" INT);");
    CHECK_THROWS_WITH(load_sqlite(db), db.string() + ": empty column name in table 'e.t'");
    catalog cat;
    cat.add_database("e");
    make_sqlite(dir.path() / "ok.db", "CREATE TABLE t (x INT);");
    CHECK_THROWS_WITH(add_sqlite(cat, dir.path() / "ok.db", "e"),
                      (dir.path() / "ok.db").string() + ": duplicate database 'e'");
}

// --- issue 47, item 3: the DDL loader drops nothing in silence --------------------------------

TEST_CASE("a CREATE the DDL loader cannot read fails instead of vanishing",
          "[safety-loaders][ddl]") {
    catalog cat;
    const auto line_of = [&](const std::string& sql) {
        try {
            add_ddl(cat, sql, "db", "s.sql");
        } catch (const parse_error& e) {
            return e.line();
        }
        return std::size_t{0};
    };
    CHECK(line_of("CREATE TABLE a (id INT);\nCREATE TABEL b (id INT);\n") == 2);
    CHECK(line_of("CREATE TABLE a (id INT);\n\nCREATE TABLE b AS SELECT id FROM a;\n") == 3);
    CHECK(line_of("CREATE TABLE a (id INT);\nCREATE TABLE b LIKE a;\n") == 2);
    CHECK(line_of("CREATE TABLE a(x int);\\nCREATE TABLE b(z int);") == 1);
    CHECK(cat.tables().empty());
    CHECK_THROWS_WITH(add_ddl(cat, "CREATE TABEL b (id INT);", "db", "s.sql"),
                      Catch::Contains("s.sql:1: CREATE TABEL: not a kind of object"));
    // Views are tables; what it skips it can name: indexes, psql meta-commands.
    add_ddl(cat,
            "\\restrict k\nCREATE TABLE a (x int);\nCREATE OR REPLACE VIEW v AS SELECT x FROM a;\n"
            "CREATE ALGORITHM=UNDEFINED DEFINER=`u`@`h` SQL SECURITY DEFINER VIEW w AS SELECT 1;\n"
            "CREATE UNIQUE INDEX i ON a (x);\n\\unrestrict k\n",
            "db", "ok.sql");
    CHECK(table_names(cat) == std::vector<std::string>{"a", "v", "w"});
}

TEST_CASE("CR-only line endings count lines", "[safety-loaders][ddl]") {
    catalog cat;
    try {
        add_ddl(
            cat,
            "CREATE TABLE a (x int);\r-- note\rCREATE TABLE b (y int);\rCREATE TABLE c (z int\r",
            "db", "cr.sql");
        FAIL("loaded an unterminated table");
    } catch (const parse_error& e) {
        CHECK(e.line() == 4);
    }
    add_ddl(cat, "-- note\rCREATE TABLE a (x int);\r\nCREATE TABLE b (y int);\r", "db", "cr.sql");
    CHECK(table_names(cat) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("a backslash in a string that every dialect ends alike loads without markers",
          "[safety-loaders][ddl]") {
    catalog cat;
    add_ddl(cat, "CREATE TABLE t (p TEXT DEFAULT 'C:\\path', q INT);\nCREATE TABLE u (r INT);\n",
            "db", "win.sql");
    CHECK(table_names(cat) == std::vector<std::string>{"t", "u"});
    CHECK(cat.column(*cat.find_column(0, "p")).constraints.default_value == "'C:\\path'");
}

TEST_CASE("DDL views are loaded as tables, their columns named from the select list",
          "[safety-loaders][ddl][view]") {
    catalog cat;
    add_ddl(cat,
            "CREATE TABLE a (id INT, x TEXT);\n"
            "CREATE VIEW v AS SELECT a.id, x AS label, count(*) n FROM a GROUP BY a.id;\n"
            "CREATE OR REPLACE VIEW w (p, q) AS SELECT 1, 2;\n"
            "CREATE VIEW s AS SELECT * FROM main.a WHERE id > 1;\n"
            "CREATE VIEW d AS SELECT a.id, b.id FROM a, a AS b;\n"
            "CREATE ALGORITHM=UNDEFINED DEFINER=`u`@`h` SQL SECURITY DEFINER VIEW m AS SELECT "
            "`x` AS `y` FROM a;\n"
            "CREATE VIEW p AS (SELECT x FROM a);\n"
            "CREATE VIEW c AS WITH t AS (SELECT id FROM a) SELECT id AS k FROM t;\n",
            "db", "views.sql");
    CHECK(table_names(cat) == std::vector<std::string>{"a", "v", "w", "s", "d", "m", "p", "c"});
    CHECK(column_names(cat, "p") == std::vector<std::string>{"x"});
    CHECK(column_names(cat, "c") == std::vector<std::string>{"k"});
    CHECK(column_names(cat, "v") == std::vector<std::string>{"id", "label", "n"});
    CHECK(column_names(cat, "w") == std::vector<std::string>{"p", "q"});
    CHECK(column_names(cat, "s") == std::vector<std::string>{"id", "x"});
    CHECK(cat.column(cat.table(3).columns[1]).type == "TEXT");
    CHECK(column_names(cat, "d") == std::vector<std::string>{"id", "id:1"});
    CHECK(column_names(cat, "m") == std::vector<std::string>{"y"});
    catalog other;
    add_ddl(other, "CREATE TABLE a (id INT);\nCREATE VIEW e AS SELECT id + 1, count(*) FROM a;\n",
            "db", "e.sql");
    CHECK(column_names(other, "e") == std::vector<std::string>{"id + 1", "count(*)"});
    CHECK_THROWS_WITH(add_ddl(other,
                              "CREATE TABLE a (id INT);\nCREATE TABLE b (id INT);\n"
                              "CREATE VIEW j AS SELECT * FROM a JOIN b USING (id);\n",
                              "db3", "j.sql"),
                      Catch::Contains("j.sql:3: view j: SELECT * over several tables"));
}

TEST_CASE("SQLite views are loaded as tables", "[safety-loaders][sqlite][view]") {
    const test::temp_dir dir;
    make_sqlite(dir.path() / "w.db",
                "CREATE TABLE a (id INT, x TEXT); CREATE VIEW v AS SELECT id, x AS label FROM a;");
    const auto cat = load_sqlite(dir.path() / "w.db");
    CHECK(table_names(cat) == std::vector<std::string>{"a", "v"});
    CHECK(column_names(cat, "v") == std::vector<std::string>{"id", "label"});
}
