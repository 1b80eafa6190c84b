#include <tabret/catalog.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

catalog small_shop() {
    catalog cat;
    const auto db = cat.add_database("shop", "a small shop");
    const auto customer = cat.add_table(db, "Customer");
    const auto cid = cat.add_column(customer, "customer_id", "integer");
    cat.add_column(customer, "FullName", "text");
    cat.set_primary_key(customer, {cid});
    const auto order = cat.add_table(db, "order_header", "order");
    const auto oid = cat.add_column(order, "order_id", "integer");
    const auto ocust = cat.add_column(order, "customer_id", "integer");
    cat.set_primary_key(order, {oid});
    cat.add_foreign_key(ocust, cid);
    return cat;
}

}  // namespace

TEST_CASE("ids are dense and in insertion order", "[catalog]") {
    const auto cat = small_shop();
    REQUIRE(cat.databases().size() == 1);
    REQUIRE(cat.tables().size() == 2);
    REQUIRE(cat.columns().size() == 4);
    CHECK(cat.table(1).columns == std::vector<column_id>{2, 3});
    CHECK(cat.column(3).table == 1);
    CHECK(cat.database(0).tables == std::vector<table_id>{0, 1});
    CHECK(cat.foreign_keys() == std::vector<foreign_key>{{3, 0}});
}

TEST_CASE("lookup by name is case-insensitive and misses are nullopt", "[catalog]") {
    const auto cat = small_shop();
    CHECK(cat.find_database("SHOP") == 0u);
    CHECK(cat.find_table("shop", "customer") == 0u);
    CHECK(cat.find_table("Shop", "ORDER_HEADER") == 1u);
    CHECK(cat.find_column(1, "Customer_ID") == 3u);
    CHECK_FALSE(cat.find_table("shop", "nope"));
    CHECK_FALSE(cat.find_table("nope", "customer"));
    CHECK_FALSE(cat.find_column(0, "order_id"));
    CHECK(cat.qualified_name(1) == "shop.order_header");
    CHECK(cat.qualified_name_of_column(1) == "shop.Customer.FullName");
}

TEST_CASE("natural-language names are derived when not given", "[catalog]") {
    const auto cat = small_shop();
    CHECK(cat.table(0).nl_name == "customer");
    CHECK(cat.table(1).nl_name == "order");
    CHECK(cat.column(1).nl_name == "full name");
    CHECK(cat.column(0).nl_name == "customer id");
    CHECK(detail::natural_name("HTTPServerURL_v2") == "http server url v2");
    CHECK(detail::natural_name("__x__") == "x");
}

TEST_CASE("building rejects duplicates and dangling ids with named errors", "[catalog]") {
    auto cat = small_shop();
    CHECK_THROWS_WITH(cat.add_database("Shop"), Catch::Contains("duplicate database 'Shop'"));
    CHECK_THROWS_WITH(cat.add_table(0, "CUSTOMER"),
                      Catch::Contains("duplicate table 'CUSTOMER' in database 'shop'"));
    CHECK_THROWS_WITH(cat.add_column(0, "fullname"),
                      Catch::Contains("duplicate column 'fullname' in table 'shop.Customer'"));
    CHECK_THROWS_AS(cat.add_table(7, "x"), schema_error);
    CHECK_THROWS_AS(cat.add_column(9, "x"), schema_error);
    CHECK_THROWS_AS(cat.add_foreign_key(0, 99), schema_error);
    CHECK_THROWS_WITH(cat.set_primary_key(0, {2}),
                      Catch::Contains("primary key of 'shop.Customer' names column 'order_id'"));
    CHECK_THROWS_AS(cat.add_table(0, ""), schema_error);
    const auto other = cat.add_database("other");
    const auto t = cat.add_table(other, "t");
    const auto c = cat.add_column(t, "x");
    CHECK_THROWS_WITH(cat.add_foreign_key(c, 0), Catch::Contains("crosses databases"));
    CHECK(cat.foreign_keys().size() == 1);
}

TEST_CASE("foreign_keys_from lists the keys leaving a table", "[catalog]") {
    const auto cat = small_shop();
    CHECK(cat.foreign_keys_from(1) == std::vector<foreign_key>{{3, 0}});
    CHECK(cat.foreign_keys_from(0).empty());
}

TEST_CASE("equality compares foreign keys per table, not their order across tables", "[catalog]") {
    // Two tables a and b, each with a key to c; declared a-then-b in one catalog, b-then-a in
    // the other (catalog JSON lists keys per table, so a saved and loaded catalog is the second).
    const auto make = [](bool a_first, bool swap_within_a) {
        catalog cat;
        const auto db = cat.add_database("d");
        const auto a = cat.add_table(db, "a");
        const auto a1 = cat.add_column(a, "c1");
        const auto a2 = cat.add_column(a, "c2");
        const auto b = cat.add_table(db, "b");
        const auto b1 = cat.add_column(b, "c1");
        const auto c = cat.add_table(db, "c");
        const auto c1 = cat.add_column(c, "id");
        const auto keys_of_a = [&] {
            cat.add_foreign_key(swap_within_a ? a2 : a1, c1);
            cat.add_foreign_key(swap_within_a ? a1 : a2, c1);
        };
        if (a_first) keys_of_a();
        cat.add_foreign_key(b1, c1);
        if (!a_first) keys_of_a();
        return cat;
    };
    CHECK(make(true, false) == make(false, false));
    CHECK_FALSE(make(true, false) == make(true, true));
}
