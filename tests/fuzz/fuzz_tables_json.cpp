// libFuzzer target: the JSON catalog loaders. The first byte picks the format, the rest is the
// file: even = Spider/BIRD `tables.json` (add_spider_json), odd = tabret's catalog JSON
// (load_catalog_json, read from a scratch file as users load it). A catalog that loads must
// round-trip through catalog_to_json / catalog_from_json, without error and unchanged in shape.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "tabret/catalog.hpp"
#include "tabret/io/catalog_json.hpp"
#include "tabret/io/spider_json.hpp"
#include "tabret/serialize.hpp"

namespace {

using namespace tabret;
using tabret::fuzz::require;

void check(const catalog& cat) {
    for (table_id t = 0; t < cat.tables().size(); ++t) (void)serialize_table(cat, t);
    // What tabret writes it must read back: an error here is a finding, not an outcome.
    catalog again;
    try {
        again = catalog_from_json(catalog_to_json(cat), "round trip");
    } catch (const error&) {
        std::abort();
    }
    require(again.databases().size() == cat.databases().size());
    require(again.tables().size() == cat.tables().size());
    require(again.columns().size() == cat.columns().size());
    require(again.foreign_keys().size() == cat.foreign_keys().size());
}

void run(std::uint8_t mode, std::string_view text) {
    if (mode % 2 == 0) {
        catalog cat;
        add_spider_json(cat, text, "tables.json");
        check(cat);
        return;
    }
    const auto file = fuzz::scratch_dir() / "catalog.json";
    fuzz::write_file(file, text);
    check(load_catalog_json(file));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    tabret::fuzz::run_with_mode(data, size, run);
    return 0;
}
