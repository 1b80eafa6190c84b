// libFuzzer target: the DDL lexer and parser (add_ddl: CREATE TABLE, ALTER TABLE, COMMENT ON,
// keys resolved across the file). A database that loads must be a consistent catalog: every
// key refers to columns of its own database, it saves as catalog JSON (or a schema_error says
// a name is not UTF-8) and loads back, and the DDL it serialises to loads again.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_support.hpp"
#include "tabret/catalog.hpp"
#include "tabret/io/catalog_json.hpp"
#include "tabret/io/ddl.hpp"
#include "tabret/serialize.hpp"

namespace {

using namespace tabret;
using tabret::fuzz::require;

void run(std::string_view sql) {
    catalog cat;
    const auto db = add_ddl(cat, sql, "fuzz", "fuzz.sql");
    require(cat.databases().size() == 1);
    for (const auto t : cat.database(db).tables) {
        for (const auto c : cat.table(t).primary_key) require(cat.column(c).table == t);
        (void)serialize_table(cat, t, table_format::signature);
    }
    for (const auto& fk : cat.foreign_keys())
        require(cat.table(cat.column(fk.from).table).database == db &&
                cat.table(cat.column(fk.to).table).database == db);
    // Saving it as catalog JSON works (or says which text is not UTF-8), and what was saved
    // loads back: an error there is a finding.
    const auto file = fuzz::scratch_dir() / "ddl-catalog.json";
    bool saved = false;
    try {
        save_catalog_json(cat, file);
        saved = true;
    } catch (const schema_error&) {
    }
    if (saved) {
        try {
            require(load_catalog_json(file).columns().size() == cat.columns().size());
        } catch (const error&) {
            std::abort();
        }
    }
    // Round trip: tabret's own DDL of the database parses into the same shape.
    catalog again;
    const auto db2 = add_ddl(again, serialize_database_ddl(cat, db), "fuzz", "round-trip.sql");
    require(again.database(db2).tables.size() == cat.database(db).tables.size());
    require(again.columns().size() == cat.columns().size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view sql(reinterpret_cast<const char*>(data), size);
    tabret::fuzz::expect_tabret_errors_only([&] { run(sql); });
    return 0;
}
