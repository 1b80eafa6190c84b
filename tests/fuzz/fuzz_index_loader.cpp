// libFuzzer target: the loaders of saved index files. The input is a mode byte followed by an
// archive of files (fuzz_support.hpp: `@@ <name>\n<contents>` sections), written into a
// scratch directory and loaded from there, as users load them:
//   mode & 3 == 0  table_index::load (manifest.json, catalog.json, tables.f32, columns.f32,
//                  bm25.json, tables.hnsw, columns.hnsw)
//   mode & 3 == 1  table_index::load, then question_index::load of the same directory
//   mode & 3 == 2  join_graph::load of `join_graph.bin` for the archive's catalog.json (or a
//                  fixed two-table catalog when that does not load)
//   mode & 3 == 3  hnsw_index::load of `tables.hnsw`, dimension 1 + (mode >> 3)
// With mode & 4 the harness first makes the checksums right: every file the manifest's parts
// list gets the true size and FNV-1a of the archive's file, the catalog fingerprint that of the
// archive's catalog.json, and the join graph header the true
// sizes, checksums and catalog fingerprint; then the manifest or header is sealed again. Without
// that, mutated inputs almost never get past verification; with it, the parsers behind the
// checksums (catalog JSON, BM25 JSON, matrices, the HNSW structural check, question lists, join
// edges) see the mutated bytes. A successful load is then used (searches, serialisation), and must
// be consistent.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "tabret/catalog.hpp"
#include "tabret/index/hnsw_index.hpp"
#include "tabret/index/question_index.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/io/catalog_fingerprint.hpp"
#include "tabret/io/catalog_json.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/io/sealed_json.hpp"
#include "tabret/join/join_graph.hpp"

namespace {

using namespace tabret;
using tabret::fuzz::require;
using files_t = std::vector<std::pair<std::string, std::string>>;

/// The only names written (anything else in an archive is ignored).
constexpr std::string_view known_files[] = {"manifest.json",  "catalog.json",   "tables.f32",
                                            "columns.f32",    "bm25.json",      "tables.hnsw",
                                            "columns.hnsw",   "questions.json", "questions.f32",
                                            "join_graph.tjg", "join_graph.bin"};

bool known(std::string_view name) {
    return std::find(std::begin(known_files), std::end(known_files), name) != std::end(known_files);
}

std::string* find(files_t& files, std::string_view name) {
    for (auto& [n, contents] : files)
        if (n == name) return &contents;
    return nullptr;
}

std::optional<catalog> archive_catalog(files_t& files);

/// Makes the size and checksum of every file the manifest's parts list match the archive's
/// file, and the catalog fingerprint that of the archive's catalog.json; then seals it.
void fix_manifest(files_t& files) {
    auto* manifest = find(files, "manifest.json");
    if (!manifest) return;
    auto doc = nlohmann::json::parse(*manifest, nullptr, false);
    if (!doc.is_object()) return;
    if (doc.contains("parts") && doc["parts"].is_object())
        for (auto& [_, part] : doc["parts"].items()) {
            if (!part.is_object() || !part.contains("files") || !part["files"].is_object())
                continue;
            for (auto& [name, entry] : part["files"].items())
                if (const auto* contents = find(files, name))
                    entry = {{"bytes", contents->size()},
                             {"fnv1a64", detail::checksum_hex(*contents)}};
        }
    if (const auto cat = archive_catalog(files))
        doc["catalog_fnv1a64"] = detail::catalog_fingerprint(*cat);
    *manifest = detail::sealed(doc).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Rewrites the join graph header: sizes, checksums and catalog fingerprint made true.
void fix_join_graph(files_t& files, const catalog& cat) {
    auto* data = find(files, "join_graph.bin");
    if (!data) return;
    const auto eol = data->find('\n');
    if (eol == std::string::npos) return;
    auto h = nlohmann::json::parse(data->substr(0, eol), nullptr, false);
    if (!h.is_object()) return;
    const auto rest = std::string_view(*data).substr(eol + 1);
    std::size_t json_bytes = rest.find('\0');  // the vectors start after the JSON body
    if (h.contains("json_bytes") && h["json_bytes"].is_number_unsigned())
        json_bytes = h["json_bytes"].get<std::size_t>();
    json_bytes = std::min(json_bytes, rest.size());
    h["json_bytes"] = json_bytes;
    h["json_fnv1a64"] = detail::checksum_hex(rest.substr(0, json_bytes));
    h["f32_bytes"] = rest.size() - json_bytes;
    h["f32_fnv1a64"] = detail::checksum_hex(rest.substr(json_bytes));
    h["catalog"] = detail::catalog_fingerprint(cat);
    *data = detail::sealed(h).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
            "\n" + std::string(rest);
}

const catalog& fixed_catalog() {
    static const catalog cat = [] {
        catalog c;
        const auto db = c.add_database("school");
        const auto student = c.add_table(db, "student", "student");
        c.add_column(student, "id", "INT");
        c.add_column(student, "club_id", "INT");
        const auto club = c.add_table(db, "club", "club");
        c.add_column(club, "id", "INT");
        return c;
    }();
    return cat;
}

std::optional<catalog> archive_catalog(files_t& files) {
    const auto* text = find(files, "catalog.json");
    if (!text) return std::nullopt;
    const auto doc = nlohmann::json::parse(*text, nullptr, false);
    try {
        return catalog_from_json(doc, "catalog.json");
    } catch (const error&) {
        return std::nullopt;
    }
}

matrix unit_query(std::size_t dim) {
    matrix q = matrix::Zero(1, static_cast<Eigen::Index>(dim));
    q(0, 0) = 1.0f;
    return q;
}

void check_hits(const std::vector<hits>& result, std::size_t n) {
    require(result.size() == 1);
    for (const auto& h : result[0]) require(h.id < n);
}

void use(const table_index& index) {
    const auto& cat = index.catalog();
    const auto n = cat.tables().size();
    require(static_cast<std::size_t>(index.tables().vectors().rows()) == n);
    for (table_id t = 0; t < n; ++t) (void)index.table_text(t);
    if (n > 0 && index.dim() > 0) {
        const auto q = unit_query(index.dim());
        check_hits(index.search_tables(q, std::min<std::size_t>(3, n)), n);
        if (index.has_columns() && !cat.columns().empty())
            check_hits(index.search_columns(q, 2), cat.columns().size());
    }
    const std::vector<std::string> queries = {"student name club"};
    check_hits(index.bm25().search(queries, 3), n);
}

void use(const join_graph& g, const catalog& cat) {
    require(static_cast<std::size_t>(g.column_vectors().rows()) == cat.columns().size());
    for (const auto& e : g.edges()) {
        require(e.a < cat.tables().size() && e.b < cat.tables().size());
        require(e.from < cat.columns().size() && e.to < cat.columns().size());
        (void)g.weight(e.a, e.b);
    }
}

void run(std::uint8_t mode, files_t files) {
    const bool fix = (mode & 4) != 0;
    const auto loader = mode & 3;
    std::optional<catalog> own_catalog;
    if (loader == 2) {
        own_catalog = archive_catalog(files);
        if (fix) fix_join_graph(files, own_catalog ? *own_catalog : fixed_catalog());
    } else if (fix) {
        fix_manifest(files);
    }
    const auto dir = fuzz::fresh_dir("index");
    for (const auto& [name, contents] : files)
        if (known(name)) fuzz::write_file(dir / name, contents);

    switch (loader) {
        case 0:
            use(table_index::load(dir));
            break;
        case 1: {
            const auto index = table_index::load(dir);
            const auto questions = question_index::load(dir, index);
            require(questions.size() == index.catalog().tables().size());
            if (questions.size() > 0) {
                const auto q = unit_query(questions.dim());
                check_hits(questions.vectors().search(q, 1), questions.size());
            }
            break;
        }
        case 2: {
            const auto& cat = own_catalog ? *own_catalog : fixed_catalog();
            use(join_graph::load(dir / "join_graph.bin", cat), cat);
            break;
        }
        default: {
            const std::size_t dim = 1 + (mode >> 3);
            const auto index = hnsw_index::load(dir / "tables.hnsw", dim);
            if (index.size() > 0) check_hits(index.search(unit_query(dim), 1), index.size());
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    tabret::fuzz::run_with_mode(data, size, [](std::uint8_t mode, std::string_view text) {
        run(mode, tabret::fuzz::unpack(text));
    });
    return 0;
}
