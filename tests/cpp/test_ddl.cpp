#include <tabret/io/ddl.hpp>
#include <tabret/io/text_file.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace tabret;

namespace {

std::filesystem::path ddl_fixture(const std::string& name) {
    return std::filesystem::path(TABRET_TEST_DATA_DIR) / "ddl" / name;
}

/// Every foreign key as "db.table.column -> db.table.column".
std::set<std::string> fk_set(const catalog& cat) {
    std::set<std::string> out;
    for (const auto& fk : cat.foreign_keys())
        out.insert(cat.qualified_name_of_column(fk.from) + " -> " +
                   cat.qualified_name_of_column(fk.to));
    return out;
}

table_id table_of(const catalog& cat, const std::string& db, const std::string& name) {
    const auto t = cat.find_table(db, name);
    INFO("table " << db << "." << name);
    REQUIRE(t.has_value());
    return *t;
}

const column& column_of(const catalog& cat, const std::string& db, const std::string& table,
                        const std::string& name) {
    const auto c = cat.find_column(table_of(cat, db, table), name);
    INFO("column " << table << "." << name);
    REQUIRE(c.has_value());
    return cat.column(*c);
}

std::size_t column_count(const catalog& cat, const std::string& db, const std::string& table) {
    return cat.table(table_of(cat, db, table)).columns.size();
}

std::vector<std::string> primary_key_of(const catalog& cat, const std::string& db,
                                        const std::string& table) {
    std::vector<std::string> out;
    for (const auto c : cat.table(table_of(cat, db, table)).primary_key)
        out.push_back(cat.column(c).name);
    return out;
}

std::vector<std::string> table_names(const catalog& cat) {
    std::vector<std::string> out;
    for (const auto& t : cat.tables()) out.push_back(t.name);
    return out;
}

/// Loads @p sql into a fresh catalog as database "db".
catalog from_sql(std::string_view sql) {
    catalog cat;
    add_ddl(cat, sql, "db");
    return cat;
}

/// The parse_error that loading @p sql throws; fails the test if none is thrown.
parse_error error_of(std::string_view sql) {
    catalog cat;
    try {
        add_ddl(cat, sql, "db", "inline.sql");
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error thrown");
    throw std::logic_error("unreachable");
}

/// The parse_error that loading fixture @p name throws.
parse_error fixture_error(const std::string& name) {
    try {
        load_ddl(ddl_fixture(name));
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error thrown for " << name);
    throw std::logic_error("unreachable");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Fixtures in four dialects

TEST_CASE("ddl: SQLite shop fixture", "[ddl]") {
    const auto cat = load_ddl(ddl_fixture("sqlite_shop.sql"));
    const std::string db = "sqlite_shop";
    REQUIRE(cat.databases().size() == 1);
    CHECK(cat.databases()[0].name == db);
    CHECK(table_names(cat) == std::vector<std::string>{"customers", "products", "categories",
                                                       "orders", "order_items", "reviews",
                                                       "order_totals"});  // a view
    CHECK(cat.columns().size() == 29);
    CHECK(column_count(cat, db, "order_totals") == 2);
    CHECK(column_count(cat, db, "customers") == 4);
    CHECK(column_count(cat, db, "products") == 6);
    CHECK(column_count(cat, db, "categories") == 3);
    CHECK(column_count(cat, db, "orders") == 5);
    CHECK(column_count(cat, db, "order_items") == 4);
    CHECK(column_count(cat, db, "reviews") == 5);

    CHECK(fk_set(cat) == std::set<std::string>{
                             // forward reference, REFERENCES without columns
                             "sqlite_shop.products.category_id -> "
                             "sqlite_shop.categories.category_id",
                             "sqlite_shop.categories.parent_id -> "
                             "sqlite_shop.categories.category_id",
                             "sqlite_shop.orders.customer_id -> sqlite_shop.customers.customer_id",
                             "sqlite_shop.order_items.order_id -> sqlite_shop.orders.order_id",
                             "sqlite_shop.order_items.product_id -> "
                             "sqlite_shop.products.product_id",
                             "sqlite_shop.reviews.product_id -> sqlite_shop.products.product_id",
                             "sqlite_shop.reviews.customer_id -> "
                             "sqlite_shop.customers.customer_id",
                         });
    CHECK(cat.foreign_keys().size() == 7);

    CHECK(primary_key_of(cat, db, "order_items") ==
          std::vector<std::string>{"order_id", "product_id"});
    CHECK(primary_key_of(cat, db, "customers") == std::vector<std::string>{"customer_id"});
    CHECK(column_of(cat, db, "products", "sku").type == "VARCHAR(32)");
    CHECK(column_of(cat, db, "products", "price").type == "NUMERIC(10,2)");
    CHECK(column_of(cat, db, "order_items", "unit_price").type == "NUMERIC(10,2)");
    CHECK(column_of(cat, db, "products", "Unit Weight").type == "REAL");
    CHECK(column_of(cat, db, "products", "Unit Weight").nl_name == "unit weight");
    CHECK(column_of(cat, db, "orders", "note").type == "TEXT");
}

TEST_CASE("ddl: PostgreSQL HR fixture", "[ddl]") {
    const auto cat = load_ddl(ddl_fixture("postgres_hr.sql"));
    const std::string db = "postgres_hr";
    // The $$ function body mentions CREATE TABLE; it must not become a table.
    CHECK(table_names(cat) == std::vector<std::string>{"regions", "countries", "locations",
                                                       "departments", "jobs", "employees",
                                                       "job_history"});
    CHECK(cat.columns().size() == 34);
    CHECK(column_count(cat, db, "employees") == 12);
    CHECK(column_count(cat, db, "job_history") == 5);
    CHECK(column_count(cat, db, "departments") == 4);
    CHECK(cat.foreign_keys().size() == 10);

    const auto fks = fk_set(cat);
    CHECK(fks.count("postgres_hr.countries.region_id -> postgres_hr.regions.region_id") == 1);
    CHECK(fks.count("postgres_hr.departments.location_id -> postgres_hr.locations.location_id") ==
          1);
    CHECK(fks.count("postgres_hr.departments.manager_id -> postgres_hr.employees.employee_id") ==
          1);
    CHECK(fks.count("postgres_hr.employees.manager_id -> postgres_hr.employees.employee_id") == 1);
    CHECK(fks.count("postgres_hr.job_history.department_id -> "
                    "postgres_hr.departments.department_id") == 1);

    CHECK(primary_key_of(cat, db, "job_history") ==
          std::vector<std::string>{"employee_id", "start_date"});
    CHECK(primary_key_of(cat, db, "regions") == std::vector<std::string>{"region_id"});
    CHECK(primary_key_of(cat, db, "jobs") == std::vector<std::string>{"job_id"});

    CHECK(column_of(cat, db, "employees", "hire_date").type == "TIMESTAMP WITH TIME ZONE");
    CHECK(column_of(cat, db, "employees", "updated_at").type == "timestamp(3) without time zone");
    CHECK(column_of(cat, db, "employees", "bonus_rate").type == "double precision");
    CHECK(column_of(cat, db, "employees", "kind").type == "hr.employment_kind");
    CHECK(column_of(cat, db, "regions", "region_name").type == "character varying(50)");
    CHECK(column_of(cat, db, "jobs", "min_salary").type == "numeric(8,2)");
    CHECK(column_of(cat, db, "departments", "department_id").type == "SERIAL");

    CHECK(cat.table(table_of(cat, db, "employees")).description ==
          "People on the payroll; one row per person, 'current' only.");
    CHECK(column_of(cat, db, "employees", "salary").description == "Monthly salary in EUR");
    CHECK(column_of(cat, db, "job_history", "end_date").description ==
          "Last day in the job (inclusive)");
}

TEST_CASE("ddl: MySQL blog fixture", "[ddl]") {
    const auto cat = load_ddl(ddl_fixture("mysql_blog.sql"), "blog");
    const std::string db = "blog";
    CHECK(table_names(cat) == std::vector<std::string>{"users", "posts", "post_revisions",
                                                       "comments", "tags", "post_tags"});
    CHECK(cat.columns().size() == 29);
    CHECK(column_count(cat, db, "users") == 6);
    CHECK(column_count(cat, db, "posts") == 7);
    CHECK(column_count(cat, db, "comments") == 7);
    CHECK(cat.foreign_keys().size() == 9);

    // The composite foreign key keeps its column pairing.
    const auto comments = table_of(cat, db, "comments");
    std::vector<std::string> composite;
    for (const auto& fk : cat.foreign_keys_from(comments))
        composite.push_back(cat.qualified_name_of_column(fk.from) + " -> " +
                            cat.qualified_name_of_column(fk.to));
    CHECK(composite == std::vector<std::string>{
                           "blog.comments.post_id -> blog.post_revisions.post_id",
                           "blog.comments.post_revision -> blog.post_revisions.revision",
                           "blog.comments.user_id -> blog.users.id",
                           "blog.comments.parent_id -> blog.comments.id",
                       });
    CHECK(fk_set(cat).count("blog.post_tags.tag_id -> blog.tags.id") == 1);

    CHECK(primary_key_of(cat, db, "post_revisions") ==
          std::vector<std::string>{"post_id", "revision"});
    CHECK(column_of(cat, db, "users", "id").type == "int unsigned");
    CHECK(column_of(cat, db, "users", "email").type == "varchar(255)");
    CHECK(column_of(cat, db, "posts", "status").type == "enum('draft','published','archived')");
    CHECK(column_of(cat, db, "posts", "rating").type == "decimal(3,2)");
    CHECK(column_of(cat, db, "post_revisions", "edited_at").type == "datetime(3)");

    CHECK(cat.table(table_of(cat, db, "users")).description == "Registered accounts");
    CHECK(cat.table(table_of(cat, db, "posts")).description == "Blog posts; one row per post");
    CHECK(cat.table(table_of(cat, db, "tags")).description == "Free-form labels");
    CHECK(cat.table(table_of(cat, db, "post_tags")).description.empty());
    CHECK(column_of(cat, db, "users", "username").description == "Public handle, shown on posts");
    CHECK(column_of(cat, db, "comments", "post_revision").description ==
          "Revision the comment was written against");
}

TEST_CASE("ddl: Db2 warehouse fixture", "[ddl]") {
    const auto cat = load_ddl(ddl_fixture("db2_warehouse.sql"));
    const std::string db = "db2_warehouse";
    CHECK(table_names(cat) == std::vector<std::string>{"DIM_REGION", "DIM_STORE", "DIM_PRODUCT",
                                                       "DIM_DATE", "FACT_SALES"});
    CHECK(cat.columns().size() == 25);
    CHECK(column_count(cat, db, "FACT_SALES") == 7);
    CHECK(column_count(cat, db, "dim_product") == 6);  // lookups ignore case
    CHECK(fk_set(cat) == std::set<std::string>{
                             "db2_warehouse.DIM_STORE.REGION_KEY -> "
                             "db2_warehouse.DIM_REGION.REGION_KEY",
                             "db2_warehouse.FACT_SALES.DATE_KEY -> "
                             "db2_warehouse.DIM_DATE.DATE_KEY",
                             "db2_warehouse.FACT_SALES.STORE_KEY -> "
                             "db2_warehouse.DIM_STORE.STORE_KEY",
                             "db2_warehouse.FACT_SALES.PRODUCT_KEY -> "
                             "db2_warehouse.DIM_PRODUCT.PRODUCT_KEY",
                         });
    CHECK(primary_key_of(cat, db, "FACT_SALES") ==
          std::vector<std::string>{"DATE_KEY", "STORE_KEY", "RECEIPT_NO", "PRODUCT_KEY"});
    CHECK(primary_key_of(cat, db, "DIM_PRODUCT") == std::vector<std::string>{"PRODUCT_KEY"});
    CHECK(column_of(cat, db, "FACT_SALES", "NET_AMOUNT").type == "DECIMAL(12,2)");
    CHECK(column_of(cat, db, "DIM_REGION", "REGION_NAME").type == "VARCHAR(40 OCTETS)");
    CHECK(column_of(cat, db, "DIM_PRODUCT", "PRODUCT_GUID").type == "CHAR(16) FOR BIT DATA");
    CHECK(column_of(cat, db, "DIM_PRODUCT", "NOTES").type == "CLOB(1M)");
    CHECK(column_of(cat, db, "DIM_PRODUCT", "LOADED_AT").type == "TIMESTAMP");
    CHECK(cat.table(table_of(cat, db, "FACT_SALES")).description ==
          "One row per receipt line; amounts in EUR");
    CHECK(column_of(cat, db, "FACT_SALES", "NET_AMOUNT").description ==
          "Amount after discounts, before tax");
    CHECK(column_of(cat, db, "DIM_STORE", "STORE_CODE").description == "Internal store code");
    CHECK(column_of(cat, db, "DIM_STORE", "OPENED_ON").description == "First trading day");
}

// ---------------------------------------------------------------------------------------------
// Broken fixtures: file, line and the offending name

TEST_CASE("ddl: broken fixtures name file, line and culprit", "[ddl][errors]") {
    SECTION("missing ')'") {
        const auto e = fixture_error("bad_missing_paren.sql");
        CHECK(e.line() == 12);
        CHECK(contains(e.source(), "bad_missing_paren.sql"));
        CHECK(contains(e.what(), "bad_missing_paren.sql:12:"));
        CHECK(contains(e.what(), "'orders'"));
        CHECK(contains(e.what(), "found 'REFERENCES'"));
    }
    SECTION("foreign key to a missing table") {
        const auto e = fixture_error("bad_fk_table.sql");
        CHECK(e.line() == 14);
        CHECK(contains(e.what(), "bad_fk_table.sql:14:"));
        CHECK(contains(e.what(), "'customer'"));
        CHECK(contains(e.what(), "invoices(customer_id)"));
    }
    SECTION("foreign key to a missing column") {
        const auto e = fixture_error("bad_fk_column.sql");
        CHECK(e.line() == 23);
        CHECK(contains(e.what(), "'ticket_no'"));
        CHECK(contains(e.what(), "'tickets'"));
    }
    SECTION("unterminated string names the line where it starts") {
        const auto e = fixture_error("bad_unterminated_string.sql");
        CHECK(e.line() == 13);
        CHECK(contains(e.what(), "unterminated string"));
        CHECK(contains(e.what(), "Short blurb"));
    }
}

TEST_CASE("ddl: a failed load adds nothing to the catalog", "[ddl][errors]") {
    catalog cat;
    add_ddl(cat, "CREATE TABLE a (id INTEGER PRIMARY KEY);", "first");
    const catalog before = cat;
    const auto text = read_text_file(ddl_fixture("bad_fk_column.sql"));
    CHECK_THROWS_AS(add_ddl(cat, text, "second", "bad_fk_column.sql"), parse_error);
    CHECK(cat == before);
    CHECK_THROWS_AS(add_ddl(cat, "CREATE TABLE b (x int", "third"), parse_error);
    CHECK(cat == before);
    // A duplicate database name is a schema_error, also with nothing added.
    CHECK_THROWS_AS(add_ddl(cat, "CREATE TABLE b (x int);", "FIRST"), schema_error);
    CHECK_THROWS_AS(add_ddl(cat, "CREATE TABLE b (x int);", ""), schema_error);
    CHECK(cat == before);
    // And a good load afterwards gets the next ids.
    const auto db =
        add_ddl(cat, "CREATE TABLE b (x int PRIMARY KEY, y int REFERENCES b);", "fourth");
    CHECK(db == 1);
    CHECK(cat.tables().size() == 2);
}

TEST_CASE("ddl: load_ddl file handling", "[ddl][errors]") {
    const auto missing = ddl_fixture("no_such_schema.sql");
    REQUIRE_THROWS_AS(load_ddl(missing), io_error);
    REQUIRE_THROWS_WITH(load_ddl(missing), Catch::Matchers::Contains(missing.string()));
    REQUIRE_THROWS_AS(load_ddl(ddl_fixture("")), io_error);  // a directory
    const auto cat = load_ddl(ddl_fixture("sqlite_shop.sql"), "shop");
    CHECK(cat.find_database("shop").has_value());
    CHECK(cat.find_table("shop", "ORDERS").has_value());
}

// ---------------------------------------------------------------------------------------------
// Inline cases

TEST_CASE("ddl: quoted identifiers and schema qualifiers", "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE "main"."say ""hi""" (
            "a""b" INTEGER PRIMARY KEY,
            `x``y` TEXT,
            [p]]q] TEXT,
            "Mixed Case" REAL
        );
        CREATE TABLE [dbo].[child] (
            id int,
            parent int REFERENCES "say ""hi""" ("a""b")
        );
    )sql");
    CHECK(table_names(cat) == std::vector<std::string>{"say \"hi\"", "child"});
    const auto t = table_of(cat, "db", "SAY \"HI\"");
    std::vector<std::string> names;
    for (const auto c : cat.table(t).columns) names.push_back(cat.column(c).name);
    CHECK(names == std::vector<std::string>{"a\"b", "x`y", "p]q", "Mixed Case"});
    CHECK(fk_set(cat) == std::set<std::string>{"db.child.parent -> db.say \"hi\".a\"b"});
}

TEST_CASE("ddl: REFERENCES without columns means the primary key", "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE course (dept TEXT, num INTEGER, title TEXT, PRIMARY KEY (dept, num));
        CREATE TABLE section (
            dept TEXT, num INTEGER, term TEXT,
            FOREIGN KEY (dept, num) REFERENCES course
        );
        CREATE TABLE note (id INTEGER PRIMARY KEY, about INTEGER REFERENCES note);
    )sql");
    CHECK(fk_set(cat) == std::set<std::string>{
                             "db.section.dept -> db.course.dept",
                             "db.section.num -> db.course.num",
                             "db.note.about -> db.note.id",
                         });
    const auto e = error_of("CREATE TABLE a (x int);\nCREATE TABLE b (y int REFERENCES a);");
    CHECK(e.line() == 2);
    CHECK(contains(e.what(), "no primary key"));
    CHECK(contains(e.what(), "'a'"));
}

TEST_CASE("ddl: forward references and ALTER TABLE", "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE orders (id int PRIMARY KEY, customer int REFERENCES customers (id));
        CREATE TABLE customers (id int, name text);
        ALTER TABLE customers ADD PRIMARY KEY (id);
        ALTER TABLE IF EXISTS ONLY public.orders ADD COLUMN IF NOT EXISTS shipper int,
            ADD CONSTRAINT orders_shipper_fk FOREIGN KEY (shipper) REFERENCES shippers (id);
        CREATE TABLE shippers (id int PRIMARY KEY);
        ALTER TABLE orders OWNER TO someone;
    )sql");
    CHECK(fk_set(cat) == std::set<std::string>{
                             "db.orders.customer -> db.customers.id",
                             "db.orders.shipper -> db.shippers.id",
                         });
    CHECK(primary_key_of(cat, "db", "customers") == std::vector<std::string>{"id"});
    CHECK(column_count(cat, "db", "orders") == 3);

    const auto e = error_of("CREATE TABLE a (x int);\n\nALTER TABLE b ADD PRIMARY KEY (x);");
    CHECK(e.line() == 3);
    CHECK(contains(e.what(), "unknown table 'b'"));
}

TEST_CASE("ddl: column types are normalised", "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE t (
            a numeric( 10 , 2 ),
            b DOUBLE    PRECISION,
            c TIMESTAMP(6)   WITH TIME ZONE,
            d int[],
            e text ARRAY,
            f varchar(20) NOT NULL,
            g INTERVAL DAY TO SECOND,
            h UNSIGNED BIG INT,
            i,
            j character varying(80) COLLATE "C",
            k time without time zone DEFAULT '00:00'::time without time zone,
            l national character varying(10),
            m enum('it''s', 'b')
        );
    )sql");
    const auto type = [&cat](const std::string& c) { return column_of(cat, "db", "t", c).type; };
    CHECK(type("a") == "numeric(10,2)");
    CHECK(type("b") == "DOUBLE PRECISION");
    CHECK(type("c") == "TIMESTAMP(6) WITH TIME ZONE");
    CHECK(type("d") == "int[]");
    CHECK(type("e") == "text ARRAY");
    CHECK(type("f") == "varchar(20)");
    CHECK(type("g") == "INTERVAL DAY TO SECOND");
    CHECK(type("h") == "UNSIGNED BIG INT");
    CHECK(type("i").empty());
    CHECK(type("j") == "character varying(80)");
    CHECK(type("k") == "time without time zone");
    CHECK(type("l") == "national character varying(10)");
    CHECK(type("m") == "enum('it''s','b')");
}

TEST_CASE("ddl: column constraints and defaults are skipped correctly", "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE t (
            id bigint GENERATED BY DEFAULT AS IDENTITY (START WITH 10) PRIMARY KEY,
            a int NOT NULL DEFAULT (1 + (2 * 3)) CHECK (a > 0 AND a < 100),
            b text DEFAULT 'x;y' || 'z' COLLATE nocase UNIQUE,
            c int CONSTRAINT c_ref REFERENCES t (id) ON DELETE SET NULL ON UPDATE CASCADE
                DEFERRABLE INITIALLY DEFERRED,
            d timestamp NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP,
            e int AUTO_INCREMENT COMMENT 'the e; really',
            f numeric GENERATED ALWAYS AS (a * 2) STORED,
            g int DEFAULT -1,
            h text DEFAULT nextval('seq'::regclass)
        ) WITHOUT ROWID, STRICT;
    )sql");
    CHECK(column_count(cat, "db", "t") == 9);
    CHECK(column_of(cat, "db", "t", "e").description == "the e; really");
    const auto constraints = [&](const char* c) {
        return column_of(cat, "db", "t", c).constraints;
    };
    CHECK(constraints("id") == column_constraints{});
    CHECK(constraints("a") == column_constraints{true, false, "(1 + (2 * 3))"});
    CHECK(constraints("b") == column_constraints{false, true, "'x;y' || 'z'"});
    CHECK(constraints("d") == column_constraints{false, false, "NULL"});
    CHECK(constraints("g").default_value == "-1");
    CHECK(constraints("h").default_value == "nextval('seq'::regclass)");
    CHECK(fk_set(cat) == std::set<std::string>{"db.t.c -> db.t.id"});
}

TEST_CASE("ddl: UNIQUE on one column in a table constraint or ALTER TABLE marks the column",
          "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE t (a int, b int, c int, d int, CONSTRAINT t_a UNIQUE (a), UNIQUE (b, c));
        ALTER TABLE ONLY t ADD CONSTRAINT t_d_key UNIQUE (d);
    )sql");
    CHECK(column_of(cat, "db", "t", "a").constraints.unique);
    CHECK_FALSE(column_of(cat, "db", "t", "b").constraints.unique);
    CHECK_FALSE(column_of(cat, "db", "t", "c").constraints.unique);
    CHECK(column_of(cat, "db", "t", "d").constraints.unique);
}

TEST_CASE("ddl: statements that are not modelled are skipped whole", "[ddl]") {
    const auto cat = from_sql(R"sql(
# a MySQL comment at the start of a line
        SET search_path = public; BEGIN;
        CREATE FUNCTION f() RETURNS int AS $body$
            BEGIN CREATE TABLE fake (id int); RETURN 1; END;
        $body$ LANGUAGE plpgsql;
        CREATE VIEW v AS SELECT ';' AS s FROM (SELECT 1) x;
        INSERT INTO x VALUES (1, 'a;b', (2; 3));  -- a ';' in parentheses
        /* CREATE TABLE commented (id int); */
        PRAGMA foreign_keys = ON;
        CREATE INDEX i ON real_one (id);
        DROP TABLE IF EXISTS real_one; USE somewhere; GRANT ALL ON x TO y;
        CREATE TABLE real_one (id int PRIMARY KEY)
    )sql");
    CHECK(table_names(cat) == std::vector<std::string>{"v", "real_one"});  // a view is a table
    CHECK(cat.column(cat.table(0).columns.at(0)).name == "s");
}

TEST_CASE("ddl: COMMENT ON and descriptions", "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE s.t (id int, v text COMMENT 'mysql comment');
        COMMENT ON TABLE s.t IS 'the ' 'table';
        COMMENT ON COLUMN s.t.id IS 'the id';
        COMMENT ON COLUMN t.v IS NULL;
        COMMENT ON COLUMN some_view.x IS 'ignored: not a table in this file';
        COMMENT ON INDEX idx IS 'skipped';
    )sql");
    CHECK(cat.table(table_of(cat, "db", "t")).description == "the table");
    CHECK(column_of(cat, "db", "t", "id").description == "the id");
    CHECK(column_of(cat, "db", "t", "v").description.empty());
}

TEST_CASE("ddl: IF NOT EXISTS ignores a repeated table", "[ddl]") {
    const auto cat = from_sql(R"sql(
        CREATE TABLE IF NOT EXISTS t (a int);
        CREATE TABLE IF NOT EXISTS T (b int, c int REFERENCES nowhere);
    )sql");
    CHECK(cat.tables().size() == 1);
    CHECK(column_count(cat, "db", "t") == 1);
    CHECK(cat.foreign_keys().empty());
}

TEST_CASE("ddl: syntax errors say what was expected and found", "[ddl][errors]") {
    SECTION("missing comma before a table constraint") {
        const auto e = error_of(
            "CREATE TABLE orders (\n  id int,\n  total numeric(10, 2)\n  FOREIGN KEY (id) "
            "REFERENCES x (id)\n);");
        CHECK(e.line() == 4);
        CHECK(contains(e.what(),
                       "expected ',' or ')' after column 'total' of table 'orders', found "
                       "'FOREIGN'"));
    }
    SECTION("missing ';' between statements") {
        const auto e = error_of("CREATE TABLE a (x int)\nCREATE TABLE b (y int);");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "expected ';' after CREATE TABLE a, found 'CREATE'"));
    }
    SECTION("missing ')' in a type") {
        const auto e = error_of("CREATE TABLE t (\n  a numeric(10, 2 NOT NULL,\n  b int);");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "type 'numeric'"));
    }
    SECTION("no column list") {
        const auto e = error_of("\n\nCREATE TABLE t;");
        CHECK(e.line() == 3);
        CHECK(contains(e.what(), "expected '(' after CREATE TABLE t, found ';'"));
    }
    SECTION("trailing comma") {
        const auto e = error_of("CREATE TABLE t (a int,\n);");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "column name or constraint in table 't'"));
    }
    SECTION("bad ON DELETE action") {
        const auto e = error_of(
            "CREATE TABLE t (a int PRIMARY KEY,\n b int REFERENCES t ON "
            "DELETE EXPLODE);");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "found 'EXPLODE'"));
    }
}

TEST_CASE("ddl: unterminated constructs name where they start", "[ddl][errors]") {
    SECTION("block comment") {
        const auto e = error_of("CREATE TABLE a (x int);\n/* never\nclosed\n");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "unterminated /* comment"));
    }
    SECTION("quoted identifier") {
        const auto e = error_of("CREATE TABLE a (\n\"x int);\n");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "unterminated quoted identifier"));
    }
    SECTION("dollar-quoted body") {
        const auto e = error_of("SELECT 1;\nDO $fn$ BEGIN END;\n");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "$fn$"));
    }
    SECTION("column list at end of input") {
        const auto e = error_of("\nCREATE TABLE a (\n  x int,\n  y int\n");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "unterminated column list of table 'a'"));
    }
    SECTION("parenthesis in a CHECK") {
        const auto e = error_of("CREATE TABLE a (\n  y int,\n  x int CHECK ((x > 0\n);\n");
        CHECK(e.line() == 3);
        CHECK(contains(e.what(), "unterminated '('"));
        CHECK(contains(e.what(), "column 'x'"));
    }
    SECTION("a ')' missing inside the column list") {
        // The CHECK swallows the table's ')': the error is at ';' and names the list's '('.
        const auto e = error_of("CREATE TABLE a (\n  x int CHECK (x > 0,\n  y int\n);\n");
        CHECK(e.line() == 4);
        CHECK(contains(e.what(), "found ';': the '(' on line 1 is never closed"));
    }
    SECTION("parenthesis in a skipped statement") {
        const auto e = error_of("INSERT INTO a VALUES\n  (1, 'x';\nCREATE TABLE b (y int);\n");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "unterminated '('"));
    }
}

TEST_CASE("ddl: structural errors", "[ddl][errors]") {
    SECTION("duplicate table") {
        const auto e = error_of("CREATE TABLE a (x int);\nCREATE TABLE A (y int);");
        CHECK(e.line() == 2);
        CHECK(contains(e.what(), "duplicate table 'A'"));
    }
    SECTION("duplicate column") {
        const auto e = error_of("CREATE TABLE a (\n  x int,\n  X text\n);");
        CHECK(e.line() == 3);
        CHECK(contains(e.what(), "duplicate column 'X' in table 'a'"));
    }
    SECTION("primary key names a missing column") {
        const auto e = error_of("CREATE TABLE a (\n  x int,\n  PRIMARY KEY (x, z)\n);");
        CHECK(e.line() == 3);
        CHECK(contains(e.what(), "primary key of table 'a' names unknown column 'z'"));
    }
    SECTION("two primary keys") {
        const auto e = error_of("CREATE TABLE a (\n  x int PRIMARY KEY,\n  y int PRIMARY KEY\n);");
        CHECK(e.line() == 3);
        CHECK(contains(e.what(), "more than one primary key"));
    }
    SECTION("foreign key names a missing local column") {
        const auto e = error_of(
            "CREATE TABLE a (x int PRIMARY KEY);\nCREATE TABLE b (\n  y int,"
            "\n  FOREIGN KEY (z) REFERENCES a (x)\n);");
        CHECK(e.line() == 4);
        CHECK(contains(e.what(), "foreign key of table 'b' names unknown column 'z'"));
    }
    SECTION("foreign key column counts differ") {
        const auto e = error_of(
            "CREATE TABLE a (x int, y int, PRIMARY KEY (x, y));\nCREATE TABLE b (\n  y int "
            "REFERENCES a\n);");
        CHECK(e.line() == 3);
        CHECK(contains(e.what(), "b(y)"));
        CHECK(contains(e.what(), "references 2"));
    }
}

TEST_CASE("ddl: line numbers with CRLF line endings", "[ddl][errors]") {
    const auto e =
        error_of("CREATE TABLE a (x int);\r\n\r\nCREATE TABLE b (y int REFERENCES c);\r\n");
    CHECK(e.line() == 3);
    CHECK(contains(e.what(), "inline.sql:3:"));
}
