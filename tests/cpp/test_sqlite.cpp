#include <tabret/io/file.hpp>
#include <tabret/io/sqlite.hpp>

#include <sqlite3.h>

#include <fstream>

#include "test_support.hpp"

using namespace tabret;

namespace {

void exec(const std::filesystem::path& path, const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    INFO(msg);
    REQUIRE(rc == SQLITE_OK);
}

/// The catalog the file above must produce, built by hand.
catalog expected_school() {
    catalog cat;
    const auto db = cat.add_database("school");
    const auto s = cat.add_table(db, "Student");
    const auto sid = cat.add_column(s, "student_id", "INTEGER");
    cat.set_constraints(cat.add_column(s, "full name", "TEXT"), {true, false, ""});
    cat.set_primary_key(s, {sid});
    const auto c = cat.add_table(db, "course");
    const auto dept = cat.add_column(c, "dept", "TEXT");
    const auto num = cat.add_column(c, "num", "INTEGER");
    cat.add_column(c, "title", "VARCHAR(80)");
    cat.set_primary_key(c, {dept, num});
    const auto e = cat.add_table(db, "enrolment");
    const auto esid = cat.add_column(e, "student_id", "INTEGER");
    const auto edept = cat.add_column(e, "dept", "TEXT");
    const auto enum_ = cat.add_column(e, "num", "INTEGER");
    cat.add_column(e, "grade", "REAL");
    cat.set_primary_key(e, {esid, edept, enum_});
    cat.add_foreign_key(esid, sid);
    cat.add_foreign_key(edept, dept);
    cat.add_foreign_key(enum_, num);
    const auto h = cat.add_table(db, "honours");  // a view: its columns as SQLite names them
    cat.add_column(h, "student_id", "INTEGER");
    cat.add_column(h, "dept", "TEXT");
    cat.add_column(h, "num", "INTEGER");
    cat.add_column(h, "grade", "REAL");
    return cat;
}

}  // namespace

TEST_CASE("a SQLite file with foreign keys round-trips into the catalog exactly", "[sqlite]") {
    test::temp_dir dir;
    const auto path = dir.path() / "school.db";
    exec(path, read_text_file(test::fixture("sqlite/school.sql")).c_str());
    const auto cat = load_sqlite(path);
    CHECK(cat == expected_school());
    CHECK(load_sqlite(path, "campus").database(0).name == "campus");
}

TEST_CASE("SQLite columns keep NOT NULL, DEFAULT and one-column UNIQUE constraints and indexes",
          "[sqlite]") {
    test::temp_dir dir;
    const auto path = dir.path() / "shop.db";
    exec(path, R"sql(
        CREATE TABLE customer (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE,
                               status TEXT DEFAULT 'active', code TEXT, region TEXT, zip TEXT,
                               UNIQUE (region, zip));
        CREATE UNIQUE INDEX customer_code ON customer (code);
        CREATE UNIQUE INDEX customer_zip ON customer (zip) WHERE zip IS NOT NULL;
        CREATE UNIQUE INDEX customer_lower ON customer (lower(region));
    )sql");
    const auto cat = load_sqlite(path);
    const auto of = [&](const char* name) {
        return cat.column(*cat.find_column(0, name)).constraints;
    };
    CHECK(of("id") == column_constraints{});  // the primary key is not a UNIQUE constraint
    CHECK(of("email") == column_constraints{true, true, ""});
    CHECK(of("status") == column_constraints{false, false, "'active'"});
    CHECK(of("code").unique);          // a unique index on one column
    CHECK_FALSE(of("zip").unique);     // partial index
    CHECK_FALSE(of("region").unique);  // two-column constraint, expression index
}

TEST_CASE("SQLite loader errors name the file", "[sqlite][errors]") {
    test::temp_dir dir;
    CHECK_THROWS_WITH(load_sqlite(dir.path() / "missing.db"), Catch::Contains("no such file"));
    const auto text = dir.path() / "notes.db";
    std::ofstream(text) << "this is not a database, just some text that is long enough";
    CHECK_THROWS_AS(load_sqlite(text), io_error);
    CHECK_THROWS_WITH(load_sqlite(text), Catch::Contains("notes.db: not a SQLite database"));
    const auto dangling = dir.path() / "dangling.db";
    exec(dangling, "CREATE TABLE a (x INTEGER REFERENCES ghost(id));");
    CHECK_THROWS_AS(load_sqlite(dangling), schema_error);
    CHECK_THROWS_WITH(load_sqlite(dangling),
                      Catch::Contains("dangling.db: foreign key a.x references missing table "
                                      "'ghost'"));
    const auto badcol = dir.path() / "badcol.db";
    exec(badcol,
         "CREATE TABLE b (id INTEGER PRIMARY KEY); "
         "CREATE TABLE a (x INTEGER REFERENCES b(nope));");
    CHECK_THROWS_WITH(load_sqlite(badcol), Catch::Contains("table 'b' has no column 'nope'"));
}

TEST_CASE("add_sqlite is all or nothing", "[sqlite][errors]") {
    test::temp_dir dir;
    const auto dangling = dir.path() / "dangling.db";
    exec(dangling, "CREATE TABLE a (x INTEGER REFERENCES ghost(id));");
    catalog cat = expected_school();
    const auto before = cat;
    CHECK_THROWS(add_sqlite(cat, dangling));
    CHECK(cat == before);
    const auto again = dir.path() / "school.db";
    exec(again, "CREATE TABLE t (x INTEGER);");
    CHECK_THROWS_WITH(add_sqlite(cat, again), Catch::Contains("duplicate database 'school'"));
    CHECK(cat == before);
}
