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
