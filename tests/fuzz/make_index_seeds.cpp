// Writes the seed corpus of fuzz_index_loader into the directory given as argument: a tiny
// index (3 tables, hashing embedder of dimension 8) saved exact and with HNSW, with generated
// questions and a join graph, each packed as an archive under every mode that loads it (with
// and without the checksum fix-up), plus the bare HNSW file and the bare join graph file.
//   build/fuzz/tests/fuzz/fuzz_make_index_seeds tests/fuzz/corpus/fuzz_index_loader

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"
#include "tabret/catalog.hpp"
#include "tabret/embedding/hashing_embedder.hpp"
#include "tabret/index/question_index.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/io/file.hpp"
#include "tabret/join/join_graph.hpp"
#include "tabret/rewriting/offline.hpp"

namespace {

using namespace tabret;
using files_t = std::vector<std::pair<std::string, std::string>>;

catalog seed_catalog() {
    catalog c;
    const auto db = c.add_database("school");
    const auto student = c.add_table(db, "student", "student");
    const auto sid = c.add_column(student, "id", "INT");
    const auto club_ref = c.add_column(student, "club_id", "INT");
    c.add_column(student, "name", "TEXT");
    c.set_primary_key(student, {sid});
    const auto club = c.add_table(db, "club", "club");
    const auto cid = c.add_column(club, "id", "INT");
    c.add_column(club, "title", "TEXT");
    c.set_primary_key(club, {cid});
    c.add_foreign_key(club_ref, cid);
    const auto db2 = c.add_database("shop");
    const auto item = c.add_table(db2, "item", "item");
    c.add_column(item, "price", "REAL");
    return c;
}

void add_dir(files_t& files, const std::filesystem::path& dir, const std::string& prefix) {
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.is_regular_file())
            files.emplace_back(prefix + entry.path().filename().string(),
                               read_text_file(entry.path()));
}

void write_seed(const std::filesystem::path& out, const std::string& name, std::uint8_t mode,
                const files_t& files) {
    const auto packed = fuzz::pack(files);
    if (fuzz::unpack(packed) != files) {
        std::fprintf(stderr, "%s: the archive does not round-trip\n", name.c_str());
        std::exit(1);
    }
    std::ofstream(out / name, std::ios::binary) << static_cast<char>(mode) << packed;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
        return 2;
    }
    const std::filesystem::path out = argv[1];
    std::filesystem::create_directories(out);
    const auto work = std::filesystem::temp_directory_path() / "tabret-fuzz-seeds";
    std::filesystem::remove_all(work);

    const hashing_embedder embedder(hashing_params{.dim = 8});
    const auto cat = seed_catalog();
    for (const auto kind : {index_kind::exact, index_kind::hnsw}) {
        table_index_options options;
        options.kind = kind;
        options.hnsw.m = 2;
        options.hnsw.threads = 1;
        const auto index = table_index::build(cat, embedder, "hashing-8", options);
        const auto dir = work / (kind == index_kind::hnsw ? "hnsw" : "exact");
        index.save(dir);
        files_t files;
        add_dir(files, dir, "");
        const std::string tag = kind == index_kind::hnsw ? "hnsw" : "exact";
        write_seed(out, "index_" + tag, 0, files);
        write_seed(out, "index_" + tag + "_fixup", 4, files);
        question_index::build(index, template_question_generator(index.catalog()), "template",
                              embedder)
            .save(dir);  // the questions part joins the index's directory
        files.clear();
        add_dir(files, dir, "");
        write_seed(out, "questions_" + tag, 1, files);
        write_seed(out, "questions_" + tag + "_fixup", 5, files);
        if (kind == index_kind::hnsw) {
            // Bare HNSW file: mode 3, dimension 1 + (mode >> 3) = 8.
            write_seed(out, "hnsw_tables", 3 | (7 << 3),
                       {{"tables.hnsw", read_text_file(dir / "tables.hnsw")}});
        }
    }
    const auto graph = join_graph::build(cat, embedder, "hashing-8");
    const files_t graph_files = {{"catalog.json", catalog_to_json(cat).dump(1)},
                                 {"join_graph.bin", graph.to_bytes()}};
    write_seed(out, "join_graph", 2, graph_files);
    write_seed(out, "join_graph_fixup", 6, graph_files);
    std::filesystem::remove_all(work);
    return 0;
}
