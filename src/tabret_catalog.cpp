// tabret-catalog: load a schema in any supported format and print its size, or convert it to
// tabret's catalog JSON.
#include <tabret/tabret.hpp>

#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace {

constexpr const char* usage = R"(usage: tabret-catalog FORMAT PATH [--save OUT.json]

Loads a schema and prints its databases, tables, columns and foreign keys.
FORMAT is one of:
  spider   Spider/BIRD tables.json (many databases)
  ddl      SQL DDL file (one database, named after the file)
  sqlite   SQLite database file (one database, named after the file)
  json     tabret catalog JSON
--save OUT.json writes the catalog as tabret catalog JSON (atomically).
)";

tabret::catalog load(std::string_view format, const std::filesystem::path& path) {
    if (format == "spider") return tabret::load_spider_json(path);
    if (format == "ddl") return tabret::load_ddl(path);
    if (format == "sqlite") return tabret::load_sqlite(path);
    if (format == "json") return tabret::load_catalog_json(path);
    throw tabret::error(fmt::format("unknown format '{}' (spider, ddl, sqlite, json)", format));
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc != 3 && !(argc == 5 && std::string_view(argv[3]) == "--save")) {
        fmt::print(stderr, "{}", usage);
        return 2;
    }
    const auto cat = load(argv[1], argv[2]);
    fmt::print("databases: {}\ntables: {}\ncolumns: {}\nforeign keys: {}\n", cat.databases().size(),
               cat.tables().size(), cat.columns().size(), cat.foreign_keys().size());
    if (argc == 5) tabret::save_catalog_json(cat, argv[4]);
    return 0;
} catch (const tabret::error& e) {
    fmt::print(stderr, "tabret-catalog: {}\n", e.what());
    return 1;
}
