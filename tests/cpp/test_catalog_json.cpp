#include <tabret/io/catalog_json.hpp>
#include <tabret/io/spider_json.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

nlohmann::json valid_doc() {
    return nlohmann::json::parse(R"({
      "format": "tabret-catalog", "version": 1,
      "databases": [{"name": "zoo", "tables": [
        {"name": "animal", "columns": [{"name": "id", "type": "integer"},
                                       {"name": "pen_id", "type": "integer", "not_null": true,
                                        "unique": true, "default": "0"}],
         "primary_key": ["id"],
         "foreign_keys": [{"column": "pen_id", "ref_table": "pen", "ref_column": "id"}]},
        {"name": "pen", "description": "an enclosure", "columns": [{"name": "id"}],
         "primary_key": ["id"]}]}]})");
}

}  // namespace

TEST_CASE("catalog JSON reads forward foreign keys and optional fields", "[catalog_json]") {
    const auto cat = catalog_from_json(valid_doc(), "zoo.json");
    REQUIRE(cat.tables().size() == 2);
    CHECK(cat.table(1).description == "an enclosure");
    CHECK(cat.column(1).nl_name == "pen id");
    CHECK(cat.foreign_keys() == std::vector<foreign_key>{{1, 2}});
    CHECK(cat.column(1).constraints == column_constraints{true, true, "0"});
    CHECK(cat.column(0).constraints == column_constraints{});
}

TEST_CASE("catalog JSON round-trips exactly through a file", "[catalog_json]") {
    test::temp_dir dir;
    const auto cat = catalog_from_json(valid_doc(), "zoo.json");
    save_catalog_json(cat, dir.path() / "zoo.json");
    CHECK(load_catalog_json(dir.path() / "zoo.json") == cat);
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                        std::filesystem::directory_iterator{}) == 1);  // no temp file left
}

TEST_CASE("Spider round-trips through catalog JSON", "[catalog_json][data]") {
    const auto dir = test::data_dir();
    if (!dir) return;
    test::temp_dir tmp;
    const auto spider = load_spider_json(*dir / "spider/tables.json");
    save_catalog_json(spider, tmp.path() / "spider.json");
    CHECK(load_catalog_json(tmp.path() / "spider.json") == spider);
}

TEST_CASE("malformed catalog JSON names the file and the item", "[catalog_json][errors]") {
    using Catch::Contains;
    auto broken = [](auto edit) {
        auto doc = valid_doc();
        edit(doc);
        return doc;
    };
    CHECK_THROWS_WITH(catalog_from_json(broken([](auto& d) { d["format"] = "x"; }), "f.json"),
                      Contains("f.json: document: format is 'x'"));
    CHECK_THROWS_WITH(catalog_from_json(broken([](auto& d) { d["version"] = 9; }), "f.json"),
                      Contains("version 9 is not supported"));
    CHECK_THROWS_WITH(
        catalog_from_json(broken([](auto& d) { d["databases"][0]["tables"][1].erase("columns"); }),
                          "f.json"),
        Contains("f.json: databases[0].tables[1]: missing field 'columns'"));
    CHECK_THROWS_WITH(
        catalog_from_json(broken([](auto& d) {
                              d["databases"][0]["tables"][0]["foreign_keys"][0]["ref_table"] = "x";
                          }),
                          "f.json"),
        Contains("databases[0].tables[0].foreign_keys[0]: ref_table 'x' does not exist"));
    CHECK_THROWS_WITH(
        catalog_from_json(broken([](auto& d) {
                              d["databases"][0]["tables"][0]["foreign_keys"][0]["ref_column"] = "q";
                          }),
                          "f.json"),
        Contains("names column 'q' which table 'zoo.pen' does not have"));
    CHECK_THROWS_WITH(
        catalog_from_json(
            broken([](auto& d) { d["databases"][0]["tables"][1]["name"] = "ANIMAL"; }), "f.json"),
        Contains("f.json: databases[0]: duplicate table 'ANIMAL' in database 'zoo'"));
    CHECK_THROWS_WITH(
        catalog_from_json(
            broken([](auto& d) { d["databases"][0]["tables"][0]["primary_key"] = {"nope"}; }),
            "f.json"),
        Contains("primary_key names column 'nope'"));
    test::temp_dir dir;
    std::ofstream(dir.path() / "cut.json") << valid_doc().dump().substr(0, 40);
    CHECK_THROWS_AS(load_catalog_json(dir.path() / "cut.json"), parse_error);
    CHECK_THROWS_WITH(load_catalog_json(dir.path() / "cut.json"), Contains("cut.json"));
}
