#include <tabret/io/spider_json.hpp>

#include <string>

#include "test_support.hpp"

using namespace tabret;

namespace {

// A valid two-table entry; tests break one field at a time.
std::string entry(const std::string& override_key = {}, const std::string& value = {}) {
    std::vector<std::pair<std::string, std::string>> fields = {
        {"db_id", R"("pets")"},
        {"table_names_original", R"(["Owner", "Pet"])"},
        {"table_names", R"(["owner", "pet"])"},
        {"column_names_original",
         R"([[-1, "*"], [0, "OwnerId"], [0, "Name"], [1, "PetId"], [1, "OwnerId"]])"},
        {"column_names",
         R"([[-1, "*"], [0, "owner id"], [0, "name"], [1, "pet id"], [1, "owner id"]])"},
        {"column_types", R"(["text", "number", "text", "number", "number"])"},
        {"primary_keys", "[1, [3]]"},
        {"foreign_keys", "[[4, 1]]"},
    };
    std::string out = "{";
    for (const auto& [k, v] : fields) {
        if (k == override_key && value.empty()) continue;  // drop the field
        if (out.size() > 1) out += ", ";
        out += "\"" + k + "\": " + (k == override_key ? value : v);
    }
    return out + "}";
}

catalog load(const std::string& text) {
    catalog cat;
    add_spider_json(cat, text, "tables.json");
    return cat;
}

}  // namespace

TEST_CASE("a Spider entry loads with names, types, keys", "[spider]") {
    const auto cat = load("[" + entry() + "]");
    REQUIRE(cat.tables().size() == 2);
    REQUIRE(cat.columns().size() == 4);  // '*' dropped
    CHECK(cat.table(1).name == "Pet");
    CHECK(cat.column(0).nl_name == "owner id");
    CHECK(cat.column(0).type == "number");
    CHECK(cat.table(0).primary_key == std::vector<column_id>{0});
    CHECK(cat.table(1).primary_key == std::vector<column_id>{2});
    CHECK(cat.foreign_keys() == std::vector<foreign_key>{{3, 0}});
}

TEST_CASE("malformed tables.json names the file, database and field", "[spider][errors]") {
    using Catch::Contains;
    CHECK_THROWS_AS(load("[{"), parse_error);
    CHECK_THROWS_WITH(load("{}"), Contains("tables.json: expected a JSON list"));
    CHECK_THROWS_WITH(load("[" + entry("db_id") + "]"),
                      Contains("tables.json: database entry 0: missing field 'db_id'"));
    CHECK_THROWS_WITH(load("[" + entry("column_types") + "]"),
                      Contains("database 'pets': missing field 'column_types'"));
    CHECK_THROWS_WITH(load("[" +
                           entry("column_names_original",
                                 R"([[-1, "*"], [0, "a"], [0, "b"], [5, "x"], [1, "c"]])") +
                           "]"),
                      Contains("column 'x' points at table 5 which does not exist"));
    CHECK_THROWS_WITH(load("[" + entry("foreign_keys", "[[4, 17]]") + "]"),
                      Contains("foreign key refers to column 17 which does not exist"));
    CHECK_THROWS_WITH(load("[" + entry("foreign_keys", "[[4]]") + "]"),
                      Contains("is not a [from, to] pair"));
    CHECK_THROWS_WITH(load("[" + entry("primary_keys", "[0]") + "]"),
                      Contains("primary key refers to column 0 ('*')"));
    CHECK_THROWS_WITH(load("[" + entry("primary_keys", "[[1, 3]]") + "]"),
                      Contains("database 'pets': primary key of 'pets.Owner' names column"));
    CHECK_THROWS_WITH(load("[" + entry("column_types", R"(["text"])") + "]"),
                      Contains("'column_types' 1"));
    CHECK_THROWS_WITH(load("[" + entry("table_names_original", "[1, 2]") + "]"),
                      Contains("field 'table_names_original' holds a non-string"));
    CHECK_THROWS_WITH(load("[" + entry() + ", " + entry() + "]"),
                      Contains("duplicate database 'pets'"));
}

TEST_CASE("a failing document leaves the catalog unchanged", "[spider][errors]") {
    catalog cat;
    add_spider_json(cat, "[" + entry() + "]", "first.json");
    const auto before = cat;
    // The second database loads fine, the third fails: neither may stay.
    const auto other = entry("db_id", R"("other")");
    const auto broken = entry("foreign_keys", "[[4, 99]]");
    CHECK_THROWS_AS(add_spider_json(cat, "[" + other + ", " + broken + "]", "second.json"),
                    schema_error);
    CHECK(cat == before);
}

TEST_CASE("a missing file is an io_error naming the path", "[spider][errors]") {
    CHECK_THROWS_AS(load_spider_json("/nonexistent/tables.json"), io_error);
    CHECK_THROWS_WITH(load_spider_json("/nonexistent/tables.json"),
                      Catch::Contains("/nonexistent/tables.json: no such file"));
}

TEST_CASE("Spider and BIRD dev schemas load with the published counts", "[spider][data]") {
    const auto dir = test::data_dir();
    if (!dir) return;
    struct expected {
        const char* file;
        std::size_t dbs, tables, columns, fks;
    };
    for (const auto& e : {expected{"spider/tables.json", 166, 876, 4503, 795},
                          expected{"bird/dev_tables.json", 11, 75, 798, 102}}) {
        INFO(e.file);
        const auto cat = load_spider_json(*dir / e.file);
        CHECK(cat.databases().size() == e.dbs);
        CHECK(cat.tables().size() == e.tables);
        CHECK(cat.columns().size() == e.columns);
        CHECK(cat.foreign_keys().size() == e.fks);
    }
    const auto bird = load_spider_json(*dir / "bird/dev_tables.json");
    const auto t = bird.find_table("card_games", "rulings");
    REQUIRE(t);
    CHECK(bird.table(*t).nl_name == "ruling");  // BIRD's natural-language table name
}
