#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/join/join_graph.hpp>
#include <tabret/join/key_discovery.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace tabret;

namespace {

/// A shop without declared keys: customers(id), orders(order_id, customer_id, billing_customer_id,
/// id), order_items(order_id, product_code, qty), products(code, name), invoices(order_id int).
struct shop {
    catalog cat;
    database_id db = 0;
    table_id customers = 0, orders = 0, items = 0, products = 0;
    column_id customer_pk = 0, order_pk = 0, order_customer = 0, order_billing = 0,
              order_id_col = 0;
    column_id item_order = 0, item_product = 0, product_code = 0;

    shop() {
        db = cat.add_database("shop");
        customers = cat.add_table(db, "customers");
        customer_pk = cat.add_column(customers, "id", "integer");
        cat.add_column(customers, "name", "text");
        orders = cat.add_table(db, "Orders");
        order_pk = cat.add_column(orders, "OrderID", "integer");
        order_customer = cat.add_column(orders, "customer_id", "integer");
        order_billing = cat.add_column(orders, "billing_customer_id", "integer");
        order_id_col = cat.add_column(orders, "id", "integer");
        items = cat.add_table(db, "order_items");
        item_order = cat.add_column(items, "order_id", "integer");
        item_product = cat.add_column(items, "product_code", "text");
        cat.add_column(items, "qty", "integer");
        products = cat.add_table(db, "products");
        product_code = cat.add_column(products, "code", "text");
        cat.add_column(products, "name", "text");
    }
};

const inferred_key* find(const std::vector<inferred_key>& keys, column_id from, column_id to) {
    const auto it = std::find_if(keys.begin(), keys.end(), [&](const inferred_key& k) {
        return k.from == from && k.to == to;
    });
    return it == keys.end() ? nullptr : &*it;
}

bool references(const std::vector<inferred_key>& keys, column_id from) {
    return std::any_of(keys.begin(), keys.end(),
                       [&](const inferred_key& k) { return k.from == from; });
}

}  // namespace

TEST_CASE("key discovery finds each naming rule", "[join][keys]") {
    const shop s;
    const auto keys = infer_foreign_keys(s.cat);
    // table_name_id: customer_id → customers.id (singular), product_code → products.code.
    const auto* k = find(keys, s.order_customer, s.customer_pk);
    REQUIRE(k != nullptr);
    CHECK(k->rule == key_rule::table_name_id);
    CHECK(k->confidence == Approx(0.85f));
    REQUIRE(find(keys, s.item_product, s.product_code) != nullptr);
    // same_name: order_items.order_id → Orders.OrderID (normalised: snake and camel case).
    k = find(keys, s.item_order, s.order_pk);
    REQUIRE(k != nullptr);
    CHECK(k->rule == key_rule::same_name);
    CHECK(k->confidence == Approx(0.9f));
    // role_prefixed: billing_customer_id → customers.id.
    k = find(keys, s.order_billing, s.customer_pk);
    REQUIRE(k != nullptr);
    CHECK(k->rule == key_rule::role_prefixed);
    // A column named just `id` references nothing; the own key OrderID is referenced only.
    CHECK_FALSE(references(keys, s.customer_pk));
    CHECK_FALSE(references(keys, s.order_id_col));
    CHECK_FALSE(references(keys, s.order_pk));
    CHECK(keys.size() == 4);
    CHECK(std::is_sorted(keys.begin(), keys.end(), [](const auto& x, const auto& y) {
        return std::pair(x.from, x.to) < std::pair(y.from, y.to);
    }));
    CHECK(key_rule_name(key_rule::role_prefixed) == "role_prefixed");
}

TEST_CASE("key discovery: copy numbers and role prefixes reach own keys", "[join][keys]") {
    catalog cat;
    const auto db = cat.add_database("league");
    const auto club = cat.add_table(db, "club");
    const auto club_id = cat.add_column(club, "club_id", "int");
    const auto result = cat.add_table(db, "result");
    const auto first = cat.add_column(result, "club_id_1", "int");
    const auto second = cat.add_column(result, "club_id_2", "int");
    const auto host = cat.add_column(result, "host_club_id", "int");
    const auto keys = infer_foreign_keys(cat);
    for (auto c : {first, second, host}) {
        const auto* k = find(keys, c, club_id);
        REQUIRE(k != nullptr);
        CHECK(k->rule == key_rule::role_prefixed);
    }
    key_discovery_options o;
    o.role_prefixed = false;
    CHECK(infer_foreign_keys(cat, nullptr, o).empty());
}

TEST_CASE("key discovery rejects incompatible types", "[join][keys]") {
    catalog cat;
    const auto db = cat.add_database("d");
    const auto customers = cat.add_table(db, "customer");
    cat.add_column(customers, "customer_id", "integer");
    const auto orders = cat.add_table(db, "orders");
    const auto wrong = cat.add_column(orders, "customer_id", "timestamp");
    const auto text = cat.add_table(db, "notes");
    const auto untyped = cat.add_column(text, "customer_id", "");
    const auto keys = infer_foreign_keys(cat);
    CHECK_FALSE(references(keys, wrong));
    CHECK(references(keys, untyped));  // an unknown type matches any family
}

TEST_CASE("key discovery never links id to id", "[join][keys]") {
    catalog cat;
    const auto db = cat.add_database("d");
    for (const char* name : {"a", "b", "c"}) {
        const auto t = cat.add_table(db, name);
        cat.set_primary_key(t, {cat.add_column(t, "id", "integer")});
        cat.add_column(t, "value", "integer");
    }
    CHECK(infer_foreign_keys(cat).empty());
}

TEST_CASE("key discovery orients two keys of one name by the table name", "[join][keys]") {
    catalog cat;
    const auto db = cat.add_database("d");
    const auto details = cat.add_table(db, "customer_details");
    const auto detail_key = cat.add_column(details, "customer_id", "integer");
    cat.add_column(details, "notes", "text");
    cat.set_primary_key(details, {detail_key});
    const auto customers = cat.add_table(db, "Customers");
    const auto customer_key = cat.add_column(customers, "CustomerId", "integer");
    cat.set_primary_key(customers, {customer_key});
    const auto keys = infer_foreign_keys(cat);
    REQUIRE(keys.size() == 1);
    CHECK(keys.front().from == detail_key);
    CHECK(keys.front().to == customer_key);
    CHECK(keys.front().rule == key_rule::same_name);
}

TEST_CASE("key discovery: value inclusion vetoes and raises confidence", "[join][keys]") {
    catalog cat;
    const auto db = cat.add_database("d");
    const auto customers = cat.add_table(db, "customers");
    const auto key = cat.add_column(customers, "customer_id", "integer");
    const auto orders = cat.add_table(db, "orders");
    const auto good = cat.add_column(orders, "customer_id", "integer");
    const auto visits = cat.add_table(db, "visits");
    const auto bad = cat.add_column(visits, "customer_id", "integer");
    column_stats_table stats(cat.columns().size());
    stats.set(key, {1.0, {"1", "2", "3", "4"}});
    stats.set(good, {0.5, {"1", "2", "2", "4"}});
    stats.set(bad, {0.5, {"1", "7", "8", "9"}});
    key_discovery_options strict;
    strict.min_inclusion = 0.9;
    const auto keys = infer_foreign_keys(cat, &stats, strict);
    const auto* k = find(keys, good, key);
    REQUIRE(k != nullptr);
    CHECK(k->confidence == Approx(1.0f));  // 1 − (1 − 0.9)·(1 − 1)
    CHECK(find(keys, bad, key) == nullptr);
    key_discovery_options lenient;
    lenient.min_inclusion = 0.25;
    const auto lenient_keys = infer_foreign_keys(cat, &stats, lenient);
    const auto* weak = find(lenient_keys, bad, key);
    REQUIRE(weak != nullptr);
    CHECK(weak->confidence == Approx(1.0 - 0.1 * 0.75));
    // By default values veto nothing (they may be samples), they only raise the confidence.
    const auto default_keys = infer_foreign_keys(cat, &stats);
    const auto* kept = find(default_keys, bad, key);
    REQUIRE(kept != nullptr);
    CHECK(kept->confidence == Approx(1.0 - 0.1 * 0.75));
    // Statistics of a larger catalog are refused; an option out of range too.
    column_stats_table other(cat.columns().size() + 5);
    CHECK_THROWS_AS(infer_foreign_keys(cat, &other), error);
    key_discovery_options bad_option;
    bad_option.min_inclusion = 1.5;
    CHECK_THROWS_AS(infer_foreign_keys(cat, nullptr, bad_option), error);
}

TEST_CASE("key discovery: unique statistics make key candidates", "[join][keys]") {
    catalog cat;
    const auto db = cat.add_database("d");
    const auto people = cat.add_table(db, "people");
    const auto ssn = cat.add_column(people, "ssn", "text");
    const auto visits = cat.add_table(db, "visits");
    const auto ref = cat.add_column(visits, "ssn", "text");
    CHECK(infer_foreign_keys(cat).empty());
    column_stats_table stats(cat.columns().size());
    stats.set(ssn, {1.0, {}});
    stats.set(ref, {0.4, {}});
    const auto keys = infer_foreign_keys(cat, &stats);
    REQUIRE(keys.size() == 1);
    CHECK(keys.front().from == ref);
    CHECK(keys.front().to == ssn);
    CHECK(keys.front().confidence == Approx(0.7f));  // not an own key (name without "people")
}

TEST_CASE("key discovery stays within a database", "[join][keys]") {
    catalog cat;
    const auto one = cat.add_database("one");
    const auto customers = cat.add_table(one, "customers");
    cat.add_column(customers, "id", "integer");
    const auto two = cat.add_database("two");
    const auto orders = cat.add_table(two, "orders");
    cat.add_column(orders, "customer_id", "integer");
    CHECK(infer_foreign_keys(cat).empty());
}

TEST_CASE("key discovery: declared primary keys or names", "[join][keys]") {
    catalog cat;
    const auto db = cat.add_database("d");
    const auto rooms = cat.add_table(db, "rooms");
    const auto code = cat.add_column(rooms, "RoomCode", "text");
    const auto room_id = cat.add_column(rooms, "room_id", "text");
    cat.set_primary_key(rooms, {code});
    const auto bookings = cat.add_table(db, "bookings");
    const auto booked = cat.add_column(bookings, "roomcode", "text");
    const auto booked_id = cat.add_column(bookings, "room_id", "text");
    // Declared: only RoomCode is a key of rooms.
    auto keys = infer_foreign_keys(cat);
    REQUIRE(keys.size() == 1);
    CHECK(find(keys, booked, code) != nullptr);
    // Ignored: names decide (room_id and roomcode are both `<table>_…` keys of rooms).
    key_discovery_options o;
    o.use_primary_keys = false;
    keys = infer_foreign_keys(cat, nullptr, o);
    CHECK(find(keys, booked, code) != nullptr);
    CHECK(find(keys, booked_id, room_id) != nullptr);
    // catalog_without_keys hides them the same way.
    const auto hidden = catalog_without_keys(cat);
    CHECK(hidden.table(rooms).primary_key.empty());
    CHECK(infer_foreign_keys(hidden) == keys);
    CHECK(catalog_without_keys(cat, true).table(rooms).primary_key == std::vector{code});
}

TEST_CASE("with_foreign_keys adds each pair once, and a sparse key graph uses them",
          "[join][keys]") {
    shop s;
    s.cat.add_foreign_key(s.item_order, s.order_pk);  // declared already
    const auto keys = infer_foreign_keys(s.cat);
    const auto added = with_foreign_keys(s.cat, keys);
    CHECK(added.foreign_keys().size() == keys.size());
    CHECK(added.foreign_keys().front() == foreign_key{s.item_order, s.order_pk});
    CHECK(catalog_without_keys(added).foreign_keys().empty());
    CHECK(catalog_without_keys(added, true) == catalog_without_keys(s.cat, true));
    std::vector<inferred_key> twice(keys);
    twice.insert(twice.end(), keys.begin(), keys.end());
    CHECK(with_foreign_keys(s.cat, twice).foreign_keys().size() == keys.size());

    const hashing_embedder embedder;
    join_graph_options sparse;
    sparse.infer_compatibility = false;
    const auto g = join_graph::build(added, embedder, "hashing", {}, sparse);
    // orders–customers, order_items–orders, order_items–products: declared edges only.
    CHECK(g.edges().size() == 3);
    for (const auto& e : g.edges()) CHECK(e.declared);
    CHECK(g.weight(s.orders, s.customers) == 1.0f);
    CHECK(g.weight(s.customers, s.products) == 0.0f);
    const auto dense = join_graph::build(added, embedder, "hashing");
    CHECK(dense.edges().size() > g.edges().size());
    for (const auto& e : g.edges()) CHECK(*dense.edge(e.a, e.b) == e);
}
