// Load a catalog, look a table up by name, and print it the ways retrievers embed it.
#include <tabret/tabret.hpp>

#include <fmt/format.h>

int main(int argc, char** argv) try {
    if (argc != 2) {
        fmt::print(stderr, "usage: {} CATALOG.json\n", argv[0]);
        return 2;
    }
    const tabret::catalog cat = tabret::load_catalog_json(argv[1]);
    fmt::print("{} databases, {} tables, {} columns, {} foreign keys\n", cat.databases().size(),
               cat.tables().size(), cat.columns().size(), cat.foreign_keys().size());
    for (tabret::table_id t : cat.database(0).tables)
        fmt::print("{}\n", tabret::serialize_table(cat, t, tabret::table_format::signature));
    if (auto t = cat.find_table(cat.database(0).name, cat.table(0).name))
        fmt::print("\n{}\n", tabret::serialize_table(cat, *t, tabret::table_format::ddl));
    return 0;
} catch (const tabret::error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
}
