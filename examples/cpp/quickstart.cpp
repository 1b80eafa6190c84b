// Load a catalog, print it the ways retrievers embed it, and retrieve tables for a question
// with the built-in hashing embedder (no model needed). table_search is the compiled entry
// point (no Eigen, no templates): the program compiles in about a second. <tabret/tabret.hpp>
// has everything (every method, any embedder), at several times the compile time.
#include <tabret/catalog.hpp>
#include <tabret/error.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/serialize.hpp>
#include <tabret/table_search.hpp>

#include <string>
#include <vector>

#include <fmt/core.h>

int main(int argc, char** argv) try {
    if (argc < 2 || argc > 3) {
        fmt::print(stderr, "usage: {} CATALOG.json [QUESTION]\n", argv[0]);
        return 2;
    }
    const tabret::catalog cat = tabret::load_catalog_json(argv[1]);
    fmt::print("{} databases, {} tables, {} columns, {} foreign keys\n", cat.databases().size(),
               cat.tables().size(), cat.columns().size(), cat.foreign_keys().size());
    for (tabret::table_id t : cat.database(0).tables)
        fmt::print("{}\n", tabret::serialize_table(cat, t, tabret::table_format::signature));
    if (auto t = cat.find_table(cat.database(0).name, cat.table(0).name))
        fmt::print("\n{}\n", tabret::serialize_table(cat, *t, tabret::table_format::ddl));

    const std::vector<std::string> questions{
        argc == 3 ? argv[2] : "Which doctors treated patients in the cardiology ward?"};
    const tabret::table_search search(cat);
    fmt::print("\n{}\n", questions[0]);
    const auto results = search.retrieve(questions, {.k = 3});
    for (const auto& t : results[0].tables)
        fmt::print("  {:.3f}  {}\n", t.score, search.catalog().qualified_name(t.table));
    return 0;
} catch (const tabret::error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
}
