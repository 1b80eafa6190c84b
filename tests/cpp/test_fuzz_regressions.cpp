// Regression tests for the bugs the libFuzzer targets (tests/fuzz) found: each replays the
// crashing input (or its minimal form) and asserts the typed tabret error that is now thrown.

#include <tabret/catalog.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/io/checksum.hpp>
#include <tabret/io/ddl.hpp>
#include <tabret/io/file.hpp>
#include <tabret/io/sealed_json.hpp>
#include <tabret/io/spider_json.hpp>
#include <tabret/join/join_graph.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

catalog school() {
    catalog c;
    const auto db = c.add_database("school");
    const auto student = c.add_table(db, "student", "student");
    c.add_column(student, "id", "INT");
    const auto club_ref = c.add_column(student, "club_id", "INT");
    const auto club = c.add_table(db, "club", "club");
    const auto cid = c.add_column(club, "id", "INT");
    c.add_foreign_key(club_ref, cid);
    return c;
}

/// Replaces file @p name of a saved index and makes the manifest's size and checksum match,
/// as a corruption that passes verification would.
void replace_verified(const std::filesystem::path& dir, const std::string& name,
                      const std::string& data) {
    write_file_atomic(dir / name, data);
    auto manifest = nlohmann::json::parse(read_text_file(dir / "manifest.json"));
    manifest["parts"]["index"]["files"][name] = {{"bytes", data.size()},
                                                 {"fnv1a64", detail::checksum_hex(data)}};
    write_file_atomic(dir / "manifest.json", detail::sealed(manifest).dump());
}

/// Sets the manifest value at JSON pointer @p key (e.g. "/parts/index/meta/dim") and reseals.
void set_manifest_field(const std::filesystem::path& dir, const std::string& key,
                        const nlohmann::json& value) {
    auto manifest = nlohmann::json::parse(read_text_file(dir / "manifest.json"));
    manifest[nlohmann::json::json_pointer(key)] = value;
    write_file_atomic(dir / "manifest.json", detail::sealed(manifest).dump());
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const error& e) {
        return e.what();
    }
    return {};
}

/// A join graph file with a sealed header whose sizes and checksums match @p body and @p floats.
std::string join_graph_file(const catalog& cat, const std::string& body, const std::string& floats,
                            nlohmann::json extra = {}) {
    nlohmann::json h = {{"format", "tabret-join-graph"},
                        {"version", join_graph_version},
                        {"embedder", "hashing"},
                        {"names", "natural"},
                        {"catalog", detail::catalog_fingerprint(cat)},
                        {"rows", cat.columns().size()},
                        {"dim", floats.size() / sizeof(float) / cat.columns().size()},
                        {"json_bytes", body.size()},
                        {"json_fnv1a64", detail::checksum_hex(body)},
                        {"f32_bytes", floats.size()},
                        {"f32_fnv1a64", detail::checksum_hex(floats)}};
    if (extra.is_object()) h.update(extra);
    return detail::sealed(h).dump() + "\n" + body + floats;
}

std::string unit_floats(std::size_t rows, std::size_t dim) {
    std::string out(rows * dim * sizeof(float), '\0');
    for (std::size_t r = 0; r < rows; ++r) {
        const float one = 1.0f;
        std::memcpy(out.data() + (r * dim + r % dim) * sizeof(float), &one, sizeof(float));
    }
    return out;
}

}  // namespace

TEST_CASE("fuzz: a number too large for a double is a parse_error, not a json exception",
          "[fuzz]") {
    // fuzz_tables_json crash: nlohmann's out_of_range.406 escaped load_catalog_json.
    const test::temp_dir tmp;
    write_file_atomic(tmp.path() / "catalog.json", "{\"format\": 403e403}");
    const auto msg = message_of([&] { (void)load_catalog_json(tmp.path() / "catalog.json"); });
    CHECK_THROWS_AS(load_catalog_json(tmp.path() / "catalog.json"), parse_error);
    CHECK(msg.find("catalog.json") != std::string::npos);
    CHECK(msg.find("number overflow") != std::string::npos);
    catalog cat;
    CHECK_THROWS_AS(add_spider_json(cat, "[{\"db_id\": 1e999}]", "tables.json"), parse_error);
}

TEST_CASE("fuzz: a corrupt catalog.json or bm25.json behind a valid checksum", "[fuzz]") {
    // fuzz_index_loader crash: table_index::load let nlohmann's parse_error escape.
    const test::temp_dir tmp;
    const auto dir = tmp.path() / "index";
    const hashing_embedder embedder(hashing_params{.dim = 8});
    table_index::build(school(), embedder, "hashing-8").save(dir);
    SECTION("catalog.json") {
        replace_verified(dir, "catalog.json", "{\n \"name\"\x01");
        CHECK_THROWS_AS(table_index::load(dir), parse_error);
        CHECK(message_of([&] { (void)table_index::load(dir); }).find("catalog.json") !=
              std::string::npos);
    }
    SECTION("bm25.json") {
        replace_verified(dir, "bm25.json", "{\"k1\": 1e400}");
        CHECK_THROWS_AS(table_index::load(dir), parse_error);
        CHECK(message_of([&] { (void)table_index::load(dir); }).find("bm25.json") !=
              std::string::npos);
    }
}

TEST_CASE("fuzz: manifest sizes that overflow or are negative", "[fuzz]") {
    const test::temp_dir tmp;
    const auto dir = tmp.path() / "index";
    const hashing_embedder embedder(hashing_params{.dim = 8});
    table_index::build(school(), embedder, "hashing-8").save(dir);
    SECTION("dim * rows * 4 wraps to the file size") {
        // 2 tables × 2^62 floats × 4 bytes wraps to 0 bytes: allocated 2^63 floats before.
        set_manifest_field(dir, "/parts/index/meta/dim", std::int64_t{1} << 62);
        replace_verified(dir, "tables.f32", "");
        CHECK_THROWS_AS(table_index::load(dir), io_error);
        CHECK(message_of([&] { (void)table_index::load(dir); }).find("tables.f32") !=
              std::string::npos);
    }
    SECTION("negative dim") {
        set_manifest_field(dir, "/parts/index/meta/dim", -1);
        CHECK_THROWS_AS(table_index::load(dir), schema_error);
        CHECK(message_of([&] {
                  (void)table_index::load(dir);
              }).find("'dim' is -1, expected a count") != std::string::npos);
    }
}

TEST_CASE("fuzz: join graph headers and edges that do not fit", "[fuzz]") {
    const test::temp_dir tmp;
    const auto path = tmp.path() / "join_graph.bin";
    const auto cat = school();
    const auto floats = unit_floats(cat.columns().size(), 4);
    const std::string good_body = R"({"edges":[[0,1,1.0,1,2,true]]})";
    write_file_atomic(path, join_graph_file(cat, good_body, floats));
    REQUIRE(join_graph::load(path, cat).edges().size() == 1);

    // A damaged file is an io_error; a header field of the wrong type or sign a schema_error.
    auto expect_corrupt = [&](const std::string& file, const std::string& why) {
        write_file_atomic(path, file);
        CHECK_THROWS_AS(join_graph::load(path, cat), error);
        const auto msg = message_of([&] { (void)join_graph::load(path, cat); });
        CHECK(msg.find(why) != std::string::npos);
    };
    // A header field of the wrong type threw nlohmann's type_error.
    expect_corrupt(join_graph_file(cat, good_body, floats, {{"version", "1"}}),
                   "'version' has type string, expected an integer");
    expect_corrupt(join_graph_file(cat, good_body, floats, {{"json_bytes", "12"}}),
                   "'json_bytes' has type string, expected an integer");
    // Sizes whose sum wraps around matched the file size and read out of bounds.
    expect_corrupt(join_graph_file(cat, good_body, floats,
                                   {{"json_bytes", ~std::uint64_t{0}},
                                    {"f32_bytes", good_body.size() + floats.size() + 1}}),
                   "does not match the header");
    // Edges naming tables or columns the catalog does not have were accepted.
    expect_corrupt(join_graph_file(cat, R"({"edges":[[0,7,1.0,1,2,true]]})", floats), "edge 0-7");
    expect_corrupt(join_graph_file(cat, R"({"edges":[[0,1,1.0,0,99,true]]})", floats),
                   "does not fit the catalog");
    expect_corrupt(join_graph_file(cat, R"({"edges":[[0,1,2.5,1,2,false]]})", floats),
                   "weight 2.5");
    // NaN column vectors were accepted.
    auto nan_floats = floats;
    const float nan = std::nanf("");
    std::memcpy(nan_floats.data(), &nan, sizeof(float));
    expect_corrupt(join_graph_file(cat, good_body, nan_floats), "NaN");
}

TEST_CASE("fuzz: saving a catalog with names that are not UTF-8 is a schema_error", "[fuzz]") {
    // fuzz_ddl: DDL in Latin-1 loads; saving it threw nlohmann's type_error.316.
    catalog cat;
    const auto db = cat.add_database("shop");
    const auto t = cat.add_table(db, "caf\xE9", "caf\xE9");
    cat.add_column(t, "id", "INT");
    const test::temp_dir tmp;
    CHECK_THROWS_AS(save_catalog_json(cat, tmp.path() / "catalog.json"), schema_error);
    const auto msg = message_of([&] { save_catalog_json(cat, tmp.path() / "catalog.json"); });
    CHECK(msg.find("not valid UTF-8") != std::string::npos);
    const hashing_embedder embedder(hashing_params{.dim = 8});
    const auto index = table_index::build(cat, embedder, "hashing-8");
    CHECK_THROWS_AS(index.save(tmp.path() / "index"), schema_error);
    CHECK_FALSE(std::filesystem::exists(tmp.path() / "index"));
}

TEST_CASE("fuzz: a manifest field error names the manifest (no dangling source name)", "[fuzz]") {
    // fuzz_index_loader crash: json_reader kept a string_view of `path.string()`, a temporary,
    // so the error message of a bad manifest field read freed memory (ASan heap-use-after-free).
    const test::temp_dir tmp;
    const auto dir = tmp.path() / "index";
    const hashing_embedder embedder(hashing_params{.dim = 8});
    table_index::build(school(), embedder, "hashing-8").save(dir);
    set_manifest_field(dir, "/parts/index/files", "not an object");
    CHECK_THROWS_AS(table_index::load(dir), schema_error);
    const auto msg = message_of([&] { (void)table_index::load(dir); });
    CHECK(msg.find((dir / "manifest.json").string()) != std::string::npos);
    CHECK(msg.find("field 'files' has type string") != std::string::npos);
}

TEST_CASE("fuzz: a quoted identifier in a column type keeps its quotes", "[fuzz]") {
    // fuzz_ddl (10-minute run): `c "Q,uoted Name"(tick)` gave the type `Q,uoted Name(tick)`, so
    // serialize_database_ddl wrote DDL that read back as two columns.
    catalog cat;
    const auto db =
        add_ddl(cat, "CREATE TABLE t (c \"Q,uoted Name\"(tick), d \"my type\", e INT);", "shop");
    const auto& cols = cat.table(cat.database(db).tables[0]).columns;
    REQUIRE(cols.size() == 3);
    CHECK(cat.column(cols[0]).type == "\"Q,uoted Name\"(tick)");
    CHECK(cat.column(cols[1]).type == "\"my type\"");
    CHECK(cat.column(cols[2]).type == "INT");
    catalog again;
    const auto db2 = add_ddl(again, serialize_database_ddl(cat, db), "shop");
    const auto& cols2 = again.table(again.database(db2).tables[0]).columns;
    REQUIRE(cols2.size() == 3);
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(again.column(cols2[i]).type == cat.column(cols[i]).type);
}

TEST_CASE("fuzz: DDL read in two dialects does not use the first reading after it moved",
          "[fuzz]") {
    // fuzz_ddl crash (ASan heap-use-after-free): ddl_parse kept a reference to the first
    // reading's lexer notes while pushing the second reading, which moved the first.
    const std::string sql =
        "C" + std::string(25, '#') + "REAABTL TEE t (c \"Q,uoted Name\"(tick), ; \"my type\");\n";
    catalog cat;
    try {
        add_ddl(cat, sql, "fuzz", "fuzz.sql");
    } catch (const error&) {
        // a typed error is fine: the text is not valid DDL in every dialect
    }
    CHECK(cat.tables().size() <= 1);  // under ASan (make sanitize) the crash itself is caught
}
