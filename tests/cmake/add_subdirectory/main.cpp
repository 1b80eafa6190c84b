#include <tabret/tabret.hpp>

#include <fmt/format.h>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const auto cat = tabret::load_catalog_json(argv[1]);
    fmt::print("tables: {}\n", cat.tables().size());
    return cat.tables().empty() ? 1 : 0;
}
