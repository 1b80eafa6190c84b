#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/value_index.hpp>
#include <tabret/io/sqlite.hpp>
#include <tabret/retrieval/first_stage/value_retriever.hpp>
#include <tabret/retrieval/select/greedy_join_retriever.hpp>
#include <tabret/saved_index.hpp>

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace tabret;

namespace {

/// singer(name, country), stadium(name, location), concert(theme, year).
catalog music() {
    catalog cat;
    const auto db = cat.add_database("music");
    const auto s = cat.add_table(db, "singer");
    cat.add_column(s, "name", "text");
    cat.add_column(s, "country", "text");
    const auto st = cat.add_table(db, "stadium");
    cat.add_column(st, "name", "text");
    cat.add_column(st, "location", "text");
    const auto c = cat.add_table(db, "concert");
    cat.add_column(c, "theme", "text");
    cat.add_column(c, "year", "text");
    return cat;
}

void cat_add_ghost(catalog& cat) {
    cat.add_column(0, "age", "int");
    cat.add_column(cat.add_table(0, "ghost"), "name", "text");
}

std::vector<std::string> strings(std::initializer_list<const char*> xs) {
    return {xs.begin(), xs.end()};
}

value_index music_values(const catalog& cat, value_index_options o = {}) {
    value_index v(cat, o);
    v.add(0, strings({"Joe Sharp", "Timbaland"}));
    v.add(1, strings({"France", "United States", "Netherlands"}));
    v.add(2, strings({"Stark's Park", "Hampden Park"}));
    v.add(3, strings({"Raith Rovers", "Zürich"}));
    v.add(4, strings({"Free choice", "Bleeding Love"}));
    v.add(5, strings({"2014", "15", "the"}));
    return v;
}

}  // namespace

TEST_CASE("values and questions compare after case, accent and punctuation folding", "[values]") {
    CHECK(detail::normalise_value("  Zürich, São-Paulo! ÉCOLE  ") == "zurich sao paulo ecole");
    CHECK(detail::normalise_value("Stark's Park") == "stark s park");
    CHECK(detail::normalise_value("東京 Tower") == "東京 tower");
    CHECK(detail::normalise_value("...") == "");
    CHECK(detail::normalise_value("\u201cFrance\u201d") == "france");  // typographic quotes
    CHECK(detail::normalise_value("Stark\u2019s Park\u2014Glasgow\u2026") ==
          "stark s park glasgow");
    CHECK(detail::normalise_value("\u00d8resund \u00ff") == "oresund y");
    CHECK(detail::value_words("\xC3"
                              "A")
              .size() == 1);  // an invalid byte stays in its word
    const auto words = detail::value_words("a Zürich-b");
    REQUIRE(words.size() == 3);
    CHECK(words[1].text == "zurich");
    CHECK(words[1].begin == 2);
    CHECK(words[1].end == 9);
}

TEST_CASE("a question's values are matched longest first, each word once", "[values]") {
    const auto cat = music();
    const auto v = music_values(cat);
    CHECK(v.size() == 12);  // "15" and "the" are no evidence
    CHECK(v.skipped() == 2);
    const auto m = v.match("Which singers from the UNITED STATES sang at stark's park in 2014?");
    std::vector<std::string> found;
    for (const auto& x : m) found.push_back(x.value);
    std::ranges::sort(found);
    CHECK(found == strings({"2014", "Stark's Park", "United States"}));
    // "park" alone is no value; "states" inside "united states" is not matched again
    CHECK(v.match("any park in the states").empty());
    CHECK(v.match("concerts in Zürich")[0].value == "Zürich");
}

TEST_CASE("a one-word value counts where the question marks it, or the schema does not explain it",
          "[values]") {
    auto cat = music();
    value_index v(cat);
    v.add(0, strings({"Car", "Name", "France", "DHL", "Smith"}));
    const auto found = [&](std::string_view q, one_word_values w) {
        std::vector<std::string> out;
        for (const auto& m : v.match(q, w)) out.push_back(m.value);
        return out;
    };
    constexpr auto literal = one_word_values::literal;
    CHECK(found("What is the name of the car?", literal).empty());          // words of the question
    CHECK(found("Car models from France", literal).size() == 1);            // "Car" starts it
    CHECK(found("cars sold in france", literal).empty());                   // lower case: a word
    CHECK(found("cars sold in 'france'", literal) == strings({"France"}));  // quoted
    CHECK(found("DHL shipments", literal) == strings({"DHL"}));             // capitals
    CHECK(found("the teacher's name is Smith", literal) == strings({"Smith"}));
    CHECK(found("the teacher's name is 'Smith'", literal) == strings({"Smith"}));
    CHECK(found("shipped by \u201cDHL\u201d", literal) == strings({"DHL"}));
    constexpr auto unexplained = one_word_values::unexplained;
    // "name" is a column of the catalog, "car" and "france" name nothing in it
    CHECK(found("What is the name of the car?", unexplained) == strings({"Car"}));
    CHECK(found("cars sold in france", unexplained) == strings({"France"}));
    cat.add_column(cat.add_table(0, "car_makers"), "maker", "text");
    value_index with_cars(cat);
    with_cars.add(0, strings({"Car"}));
    CHECK(with_cars.match("What is the name of the car?").empty());
    CHECK(with_cars.match("the 'car' of the year").size() == 1);
}

TEST_CASE("a value held by fewer columns weighs more", "[values]") {
    const auto cat = music();
    value_index v(cat);
    v.add(0, strings({"Paris"}));
    v.add(2, strings({"Paris"}));
    v.add(3, strings({"Lyon"}));
    const auto m = v.match("from Paris to Lyon");
    REQUIRE(m.size() == 3);
    CHECK(m[0].value == "Lyon");
    CHECK(m[0].weight > m[1].weight);
}

TEST_CASE("the bounds of a value index are honoured", "[values]") {
    const auto cat = music();
    value_index v(cat, {.max_values_per_column = 2, .max_value_bytes = 8, .max_bytes = 20});
    CHECK(v.add(0, strings({"Alpha", "Beta", "Gamma"})) == 2);      // per column
    CHECK(v.add(1, strings({"a very long value", "Delta"})) == 1);  // per value
    CHECK(v.add(2, strings({"Epsilon", "Zeta1", "Eta"})) == 1);     // in all: 19 bytes
    CHECK(v.bytes() <= 20);
    CHECK(v.skipped() == 4);
    CHECK_THROWS_AS(v.add(99, strings({"x"})), error);
}

TEST_CASE("a value index survives its bytes and refuses damage and another catalog", "[values]") {
    const auto cat = music();
    const auto v = music_values(cat);
    const auto bytes = v.to_bytes();
    const auto back = value_index::from_bytes(bytes, "v.tvi", cat);
    CHECK(back.size() == v.size());
    CHECK(back.skipped() == v.skipped());
    CHECK(back.match("Joe Sharp in France") == v.match("Joe Sharp in France"));
    auto damaged = bytes;
    damaged[damaged.size() - 3] ^= 1;
    CHECK_THROWS_WITH(value_index::from_bytes(damaged, "v.tvi", cat), Catch::Contains("v.tvi"));
    auto other = music();
    other.add_column(0, "age", "int");
    CHECK_THROWS_WITH(value_index::from_bytes(bytes, "v.tvi", other),
                      Catch::Contains("another catalog"));
}

TEST_CASE("values are read from a SQLite file: text values only, within the bounds",
          "[values][sqlite]") {
    test::temp_dir dir;
    const auto path = dir.path() / "music.db";
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db,
                         "CREATE TABLE singer(name TEXT, country TEXT);"
                         "INSERT INTO singer VALUES ('Joe Sharp', 'France'), ('Ann \"Q\" Lee', "
                         "'France'), (42, NULL);"
                         "CREATE TABLE \"stadium\"(name TEXT, location TEXT);"
                         "INSERT INTO stadium VALUES ('Hampden Park', 'Glasgow');"
                         "CREATE TABLE concert(theme TEXT, year TEXT);",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    const auto cat = load_sqlite(path, "music");
    value_index v(cat);
    const auto report = add_sqlite_values(v, cat, 0, path);
    CHECK(report.complete);
    CHECK(report.columns == 6);
    CHECK(report.values == 5);  // 42 is an integer, NULL nothing, France counted once
    CHECK(v.values_of(1).size() == 1);
    value_index none(cat);
    CHECK_FALSE(add_sqlite_values(none, cat, 0, path, std::chrono::milliseconds(-1)).complete);
    CHECK(none.size() == 0);
    auto wider = cat;  // a catalog from elsewhere: what the file lacks is skipped, and said
    cat_add_ghost(wider);
    value_index w(wider);
    const auto partial = add_sqlite_values(w, wider, 0, path);
    CHECK(partial.missing == strings({"singer.age", "ghost"}));
    CHECK(partial.values == 5);
    value_index huge(cat, {.max_values_per_column = SIZE_MAX, .max_value_bytes = SIZE_MAX});
    CHECK(add_sqlite_values(huge, cat, 0, path).values == 5);  // bounds beyond SQLite's integers
    CHECK_THROWS_WITH(add_sqlite_values(w, cat, 0, path), Catch::Contains("another catalog"));
    CHECK_THROWS_WITH(add_sqlite_values(v, cat, 0, dir.path() / "missing.db"),
                      Catch::Contains("missing.db"));
}

TEST_CASE("the values stage ranks the tables holding the question's values, with why", "[values]") {
    const auto cat = music();
    const hashing_embedder e;
    const auto index = table_index::build(cat, e, "hashing");
    const auto v = music_values(cat);
    const value_retriever r(index, v);
    const std::vector<std::string> qs{
        "Did Joe Sharp sing at Hampden Park in France or the Netherlands?", "How many concerts?"};
    const auto out = r.retrieve(qs, {.k = 5, .k_columns = 5});
    REQUIRE(out[0].tables.size() == 2);
    CHECK(out[0].columns.size() == 3);  // name, country (two values: once), stadium.name
    CHECK(cat.table(out[0].tables[0].table).name == "singer");  // two values
    CHECK(cat.table(out[0].tables[1].table).name == "stadium");
    CHECK(out[0].trace.size() == 4);
    CHECK(out[0].trace[0].step == "values");
    for (const auto& t : out[0].trace)  // each names the value it matched, as the stored spelling
        CHECK(t.query.starts_with("'" + t.value + "' in "));
    CHECK(out[1].tables.empty());
    const auto one = r.retrieve(std::span(qs).first(1), {.k = 1});
    CHECK(one[0].tables.size() == 1);
    CHECK_THROWS_AS(r.retrieve(qs, {.k = 0}), error);

    test::temp_dir dir;
    save_index(dir.path() / "idx", index, nullptr, nullptr, false, &v);
    const auto loaded = load_index(dir.path() / "idx");
    REQUIRE(loaded.values);
    CHECK(loaded.values->match(qs[0]) == v.match(qs[0]));
    CHECK_FALSE(load_index(dir.path() / "idx", {.values = false}).values);
}

TEST_CASE("a value the first stage matched is a sub-query join-aware selection covers once",
          "[values]") {
    join_problem p;
    p.tables = {0, 1, 2};
    p.coarse = {0.9f, 0.5f, 0.6f};
    p.subqueries = {"q"};
    p.fine = {0.5f, 0.4f, 0.4f};
    p.join.assign(9, 0.0f);
    // 'France' in tables 1 and 2 (two spellings: one value), 'Zürich' in a table not a candidate.
    p.origin = {{0, "dense", "q", 0.9f},
                {1, "values", "'France' in country", 7.0f, "France"},
                {2, "values", "'france' in location", 3.0f, "france"},
                {5, "values", "'Zürich' in city", 1.0f, "Zürich"}};
    const auto before = greedy_select(p, 2);
    CHECK(before.order == std::vector<std::size_t>{0, 2});
    detail::add_value_rows(p);
    REQUIRE(p.subqueries == strings({"q", "value 'France'"}));
    CHECK(p.fine == std::vector<float>{0.5f, 0.4f, 0.4f, 0.0f, 1.0f, 1.0f});
    // gains 4 r_i + 2 Σ_j F_ji: the seed is table 2 (5.2 against 4.8 and 4.6); table 1 then
    // adds nothing for 'France', covered already, and table 0 comes second.
    CHECK(greedy_select(p, 2).order == std::vector<std::size_t>{2, 0});
    p.subqueries = {"q"};
    p.fine.resize(3);
    p.origin.erase(p.origin.begin() + 2);  // 'France' only in table 1: it earns its place
    detail::add_value_rows(p);
    CHECK(p.fine == std::vector<float>{0.5f, 0.4f, 0.4f, 0.0f, 1.0f, 0.0f});
    const auto after = greedy_select(p, 2);
    CHECK(after.order == std::vector<std::size_t>{1, 0});
    CHECK(p.subqueries.at(after.reason[0]) == "value 'France'");
}
