#include <tabret/serialize.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

catalog library() {
    catalog cat;
    const auto db = cat.add_database("library");
    const auto book = cat.add_table(db, "book_tbl", "book");
    const auto isbn = cat.add_column(book, "isbn", "text");
    cat.add_column(book, "PubYear", "integer", "publication year");
    cat.set_primary_key(book, {isbn});
    const auto loan = cat.add_table(db, "loan");
    const auto lid = cat.add_column(loan, "loan id", "integer");
    const auto lisbn = cat.add_column(loan, "isbn", "text");
    cat.set_primary_key(loan, {lid});
    cat.add_foreign_key(lisbn, isbn);
    return cat;
}

}  // namespace

TEST_CASE("table serialisations in every format and name style", "[serialize]") {
    const auto cat = library();
    CHECK(serialize_table(cat, 0) == "library.book(isbn, publication year)");
    CHECK(serialize_table(cat, 0, table_format::signature, name_style::original) ==
          "library.book_tbl(isbn, PubYear)");
    CHECK(serialize_table(cat, 0, table_format::words) == "library book isbn publication year");
    CHECK(serialize_table(cat, 0, table_format::words, name_style::original) ==
          "library book_tbl isbn PubYear");
    CHECK(serialize_column(cat, 1) == "library.book.publication year");
    CHECK(serialize_column(cat, 1, name_style::original) == "library.book_tbl.PubYear");
}

TEST_CASE("the related format names the tables a table references and is referenced by",
          "[serialize]") {
    auto cat = library();
    CHECK(serialize_table(cat, 0, table_format::related) ==
          "library.book(isbn, publication year) referenced by loan");
    CHECK(serialize_table(cat, 1, table_format::related, name_style::original) ==
          "library.loan(loan id, isbn) references book_tbl");
    const auto shelf = cat.add_table(cat.find_database("library").value(), "shelf");
    const auto code = cat.add_column(shelf, "code", "text");
    cat.add_foreign_key(cat.find_column(0, "isbn").value(), code);  // book -> shelf
    CHECK(serialize_table(cat, 0, table_format::related) ==
          "library.book(isbn, publication year) references shelf; referenced by loan");
    CHECK(serialize_table(cat, shelf, table_format::related) ==
          "library.shelf(code) referenced by book");
}

TEST_CASE("DDL serialisation quotes identifiers and writes keys", "[serialize]") {
    const auto cat = library();
    CHECK(serialize_table(cat, 1, table_format::ddl) ==
          "CREATE TABLE loan (\n"
          "  \"loan id\" integer,\n"
          "  isbn text,\n"
          "  PRIMARY KEY (\"loan id\"),\n"
          "  FOREIGN KEY (isbn) REFERENCES book_tbl (isbn)\n"
          ");");
    CHECK(serialize_database_ddl(cat, 0).starts_with("CREATE TABLE book_tbl (\n  isbn text,"));
    CHECK(detail::quote_identifier("a\"b") == "\"a\"\"b\"");
}

TEST_CASE("DDL shows constraints, descriptions and sample values as comments", "[serialize]") {
    catalog cat;
    const auto db = cat.add_database("shop");
    const auto t = cat.add_table(db, "customer", {}, "People who\nbuy.");
    const auto id = cat.add_column(t, "id", "INT");
    const auto email = cat.add_column(t, "email", "TEXT", {}, "Login; unique.");
    const auto status = cat.add_column(t, "status", "TEXT");
    cat.set_constraints(id, {true, false, ""});
    cat.set_constraints(email, {true, true, ""});
    cat.set_constraints(status, {false, false, "'active'"});
    cat.set_primary_key(t, {id});
    CHECK(serialize_table(cat, t, table_format::ddl) ==
          "-- People who buy.\n"
          "CREATE TABLE customer (\n"
          "  id INT NOT NULL,\n"
          "  email TEXT NOT NULL UNIQUE,  -- Login; unique.\n"
          "  status TEXT DEFAULT 'active',\n"
          "  PRIMARY KEY (id)\n"
          ");");
    column_stats_table stats(cat.columns().size());
    stats.set(id, {std::nullopt, {"1", "2", "3"}});
    stats.set(email, {std::nullopt, {"it's@x.org", std::string(50, 'a')}});
    stats.set(status, {std::nullopt, {"caf\xc3\xa9\nbar"}});
    const auto ddl = serialize_table_ddl(cat, t, {&stats, 2});
    CHECK(ddl ==
          "-- People who buy.\n"
          "CREATE TABLE customer (\n"
          "  id INT NOT NULL,  -- e.g. 1, 2\n"
          "  email TEXT NOT NULL UNIQUE,  -- Login; unique. e.g. 'it''s@x.org', '" +
              std::string(40, 'a') +
              "...'\n"
              "  status TEXT DEFAULT 'active',  -- e.g. 'caf\xc3\xa9 bar'\n"
              "  PRIMARY KEY (id)\n"
              ");");
    CHECK(serialize_table_ddl(cat, t, {&stats, 0}) == serialize_table(cat, t, table_format::ddl));
    // A cut never splits a UTF-8 sequence.
    stats.set(status, {std::nullopt, {std::string(39, 'x') + "\xc3\xa9\xc3\xa9"}});
    CHECK(serialize_table_ddl(cat, t, {&stats, 1}).find(std::string(39, 'x') + "\xc3\xa9...'") !=
          std::string::npos);
    CHECK(serialize_database_ddl(cat, db, {&stats, 1}) ==
          serialize_table_ddl(cat, t, {&stats, 1}) + "\n");
}

TEST_CASE("described: the signature, then the non-empty descriptions; column texts get theirs",
          "[serialize]") {
    catalog cat;
    const auto db = cat.add_database("shop");
    const auto t = cat.add_table(db, "ord", "order", "One order of a customer.");
    const auto id = cat.add_column(t, "id", "INT");
    const auto cust = cat.add_column(t, "cust", "INT", "customer", "The customer who ordered.");
    const auto bare = cat.add_table(db, "tag");
    cat.add_column(bare, "name", "TEXT");
    CHECK(serialize_table(cat, t, table_format::described) ==
          "shop.order(id, customer) -- One order of a customer. -- customer: The customer who "
          "ordered.");
    CHECK(serialize_table(cat, bare, table_format::described) ==
          serialize_table(cat, bare, table_format::signature));
    CHECK(serialize_column(cat, cust, name_style::natural, true) ==
          "shop.order.customer: The customer who ordered.");
    CHECK(serialize_column(cat, id, name_style::natural, true) == "shop.order.id");
    CHECK(serialize_column(cat, cust) == "shop.order.customer");
}
