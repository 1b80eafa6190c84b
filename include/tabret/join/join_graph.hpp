#pragma once
/// @file join/join_graph.hpp
/// @brief Which tables of a database join, and how well: declared foreign keys (ω = 1) plus
/// compatibility ω(i, j) inferred from column pairs (join/compatibility.hpp). Built once per
/// catalog and embedder, saved as one checksummed file, never recomputed per query.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/catalog.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/interrupt.hpp"
#include "tabret/io/artifact.hpp"
#include "tabret/io/catalog_fingerprint.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/io/sealed_json.hpp"
#include "tabret/join/column_stats.hpp"
#include "tabret/join/compatibility.hpp"
#include "tabret/progress.hpp"
#include "tabret/serialize.hpp"
#include "tabret/text/tokenize.hpp"

namespace tabret {

/** @brief One table pair of a database that can join, with its best column pair. */
struct join_edge {
    table_id a = 0;  ///< a < b.
    table_id b = 0;
    float weight = 0.0f;    ///< ω in (0, 1]; 1 for a declared foreign key.
    column_id from = 0;     ///< The column of the pair on a's side (the FK column if declared).
    column_id to = 0;       ///< On b's side.
    bool declared = false;  ///< A declared foreign key joins the two tables.
    friend bool operator==(const join_edge&, const join_edge&) = default;
};

struct join_graph_options {
    name_style names = name_style::natural;  ///< Names in the column texts `table:column`.
    compatibility_options compatibility{};
    std::size_t batch_size = 512;  ///< Column texts per embedder call while building.
    /// A database with at most this many tables scores every table pair (the exact, quadratic
    /// graph; every published benchmark database has far fewer). A larger one scores only the
    /// candidate pairs found by blocking (see join_graph::score_pairs).
    std::size_t exhaustive_max_tables = 2000;
    /// Blocking: a (type family, name word) key shared by more tables than this is a stop-word
    /// and proposes no pairs.
    std::size_t max_block_tables = 256;
    /// Blocking: inferred edges kept per table, the heaviest first (an edge stays when either
    /// end keeps it); declared foreign keys are always kept on top of these.
    std::size_t max_edges_per_table = 32;
    /// Infer compatibility ω for undeclared pairs. false: the graph holds the declared foreign
    /// keys only (ω = 1), a sparse key graph (with inferred keys added by
    /// join/key_discovery.hpp's with_foreign_keys when the catalog declares none).
    bool infer_compatibility = true;
};

inline constexpr int join_graph_version = 2;

namespace detail {

inline std::uint64_t pair_key(table_id a, table_id b) noexcept {
    if (a > b) std::swap(a, b);
    return (std::uint64_t{a} << 32) | b;
}

}  // namespace detail

/**
 * @brief The join graph of a catalog: edges only within a database (tables of different
 * databases never join), plus the embeddings of every column's text `table:column` (the
 * greedy/JAR fine-grained signal uses them too). Immutable once built; const members are
 * thread-safe.
 */
class join_graph {
  public:
    /** @brief The text a column is embedded as: `table:column`. */
    static std::string column_text(const catalog& cat, column_id c, name_style names) {
        const auto& col = cat.column(c);
        const auto& tb = cat.table(col.table);
        return fmt::format("{}:{}", detail::pick(tb.name, tb.nl_name, names),
                           detail::pick(col.name, col.nl_name, names));
    }

    /**
     * @brief Embeds every column text with @p embedder (batch_size texts per call, reporting
     * "join graph columns" progress after each) and scores every table pair of every database.
     * @throws error for an empty catalog; embedding_error for a bad embedder answer; whatever
     * @p progress throws.
     */
    template <Embedder E>
    static join_graph build(const catalog& cat, const E& embedder, std::string embedder_name,
                            const column_stats_table& stats = {}, join_graph_options o = {},
                            const progress_fn& progress = {}) {
        if (cat.columns().empty()) throw error("cannot build a join graph over no columns");
        if (o.batch_size == 0) throw error("batch_size must be positive");
        std::vector<std::string> texts;
        for (column_id c = 0; c < cat.columns().size(); ++c)
            texts.push_back(column_text(cat, c, o.names));
        matrix vectors;
        for (std::size_t begin = 0; begin < texts.size(); begin += o.batch_size) {
            check_interrupt();
            const auto n = std::min(o.batch_size, texts.size() - begin);
            const auto part =
                embed_normalized(embedder, std::span<const std::string>(texts).subspan(begin, n),
                                 static_cast<std::size_t>(vectors.cols()));
            if (begin == 0) vectors.resize(static_cast<Eigen::Index>(texts.size()), part.cols());
            vectors.middleRows(static_cast<Eigen::Index>(begin), static_cast<Eigen::Index>(n)) =
                part;
            if (progress) progress("join graph columns", begin + n, texts.size());
        }
        return from_vectors(cat, std::move(vectors), std::move(embedder_name), stats, o);
    }

    /**
     * @brief Builds from given column vectors (one L2-normalised row per column, in column_id
     * order). @throws error when the row count is not the catalog's column count.
     */
    static join_graph from_vectors(const catalog& cat, matrix vectors, std::string embedder_name,
                                   const column_stats_table& stats = {},
                                   join_graph_options o = {}) {
        if (static_cast<std::size_t>(vectors.rows()) != cat.columns().size())
            throw error(fmt::format("join graph: {} column vectors for {} columns", vectors.rows(),
                                    cat.columns().size()));
        join_graph g(cat, std::move(vectors), std::move(embedder_name), o.names);
        g.score_pairs(cat, stats, o);
        return g;
    }

    /** @brief ω(a, b): 1 for a declared FK, the inferred score, or 0 (no edge; a == b). */
    [[nodiscard]] float weight(table_id a, table_id b) const {
        if (a == b) return 0.0f;
        const auto it = by_pair_.find(detail::pair_key(a, b));
        return it == by_pair_.end() ? 0.0f : edges_[it->second].weight;
    }
    /** @brief The edge between @p a and @p b, or nullptr. */
    [[nodiscard]] const join_edge* edge(table_id a, table_id b) const {
        const auto it = by_pair_.find(detail::pair_key(a, b));
        return it == by_pair_.end() ? nullptr : &edges_[it->second];
    }
    [[nodiscard]] const std::vector<join_edge>& edges() const noexcept { return edges_; }
    /// One row per column (column_id order): the embedding of column_text().
    [[nodiscard]] const matrix& column_vectors() const noexcept { return vectors_; }
    [[nodiscard]] const std::string& embedder_name() const noexcept { return embedder_name_; }
    [[nodiscard]] name_style names() const noexcept { return names_; }
    [[nodiscard]] std::size_t dim() const noexcept {
        return static_cast<std::size_t>(vectors_.cols());
    }
    /// Fingerprint of the catalog it was built for.
    [[nodiscard]] const std::string& catalog_fingerprint() const noexcept { return fingerprint_; }

    /**
     * @brief Saves the graph into the index directory @p dir, which must hold the table index
     * of the same catalog and embedder (saved, replaced and loaded with it; io/artifact.hpp).
     * @throws io_error.
     */
    void save(const std::filesystem::path& dir) const {
        detail::save_artifact(dir, fingerprint_, {{"join_graph", to_part()}}, false);
    }

    /// The graph as a part of an artifact: one file, `join_graph.tjg` (to_bytes).
    [[nodiscard]] detail::artifact_part to_part() const {
        detail::artifact_part part;
        part.meta = {{"embedder", embedder_name_}};
        part.files[file_name] = to_bytes();
        return part;
    }

    /// The name of the graph's file inside an index directory.
    static constexpr const char* file_name = "join_graph.tjg";

    /**
     * @brief The graph as one self-describing file: a JSON header line (format, version,
     * embedder, catalog fingerprint, the size and FNV-1a checksum of each part, sealed by its
     * own checksum), the edges as JSON and the column vectors as float32.
     */
    [[nodiscard]] std::string to_bytes() const {
        nlohmann::json edges = nlohmann::json::array();
        for (const auto& e : edges_)
            edges.push_back({e.a, e.b, e.weight, e.from, e.to, e.declared});
        const std::string body = nlohmann::json{{"edges", edges}}.dump();
        const std::string floats(reinterpret_cast<const char*>(vectors_.data()),
                                 static_cast<std::size_t>(vectors_.size()) * sizeof(float));
        const nlohmann::json header =
            detail::sealed({{"format", "tabret-join-graph"},
                            {"version", join_graph_version},
                            {"embedder", embedder_name_},
                            {"names", names_ == name_style::original ? "original" : "natural"},
                            {"catalog", fingerprint_},
                            {"rows", vectors_.rows()},
                            {"dim", vectors_.cols()},
                            {"json_bytes", body.size()},
                            {"json_fnv1a64", detail::checksum_hex(body)},
                            {"f32_bytes", floats.size()},
                            {"f32_fnv1a64", detail::checksum_hex(floats)}});
        return detail::dump_json(header, -1, file_name) + "\n" + body + floats;
    }

    /**
     * @brief Loads the graph saved in the index directory @p path (or a `join_graph.tjg` file
     * taken out of one) for catalog @p cat. Sizes and checksums are verified before anything
     * is parsed.
     * @throws io_error for a missing, truncated or corrupt file, another format version, no
     * graph saved there, or a graph built for another catalog.
     */
    static join_graph load(const std::filesystem::path& path, const catalog& cat) {
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) return load(detail::artifact::read(path), cat);
        return from_bytes(read_text_file(path), path, cat);
    }

    /// Loads the join graph part of an artifact already read. @throws as load(path, cat).
    static join_graph load(const detail::artifact& saved, const catalog& cat) {
        return from_bytes(saved.file("join_graph", file_name), saved.path_of(file_name), cat);
    }

    /// Parses the bytes of a `join_graph.tjg` file (to_bytes), named @p path in messages.
    static join_graph from_bytes(const std::string& data, const std::filesystem::path& path,
                                 const catalog& cat) {
        auto corrupt = [&](std::string_view why) {
            return io_error(
                fmt::format("{}: not a valid join graph file ({})", path.string(), why));
        };
        const auto eol = data.find('\n');
        if (eol == std::string::npos) throw corrupt("no header line");
        const auto h = nlohmann::json::parse(data.substr(0, eol), nullptr, false);
        if (h.is_discarded()) throw corrupt("the header does not parse");
        if (!h.is_object() || h.value("format", nlohmann::json()) != "tabret-join-graph")
            throw corrupt("wrong format tag");
        const auto source = path.string();
        const detail::json_reader r(h, source, "header");
        if (const auto v = r.integer("version"); v != join_graph_version)
            throw io_error(
                fmt::format("{}: join graph version {} is not supported (this tabret "
                            "reads version {}); rebuild it",
                            source, v, join_graph_version));
        detail::check_seal(h, source, "header");
        const auto json_bytes = r.count("json_bytes");
        const auto f32_bytes = r.count("f32_bytes");
        if (const auto rest = data.size() - eol - 1;
            json_bytes > rest || f32_bytes != rest - json_bytes)
            throw corrupt(fmt::format("size {} does not match the header: truncated or corrupt",
                                      data.size()));
        const std::string_view body(data.data() + eol + 1, json_bytes);
        const std::string_view floats(data.data() + eol + 1 + json_bytes, f32_bytes);
        if (detail::checksum_hex(body) != r.str("json_fnv1a64") ||
            detail::checksum_hex(floats) != r.str("f32_fnv1a64"))
            throw corrupt("checksum mismatch");
        if (r.str("catalog") != detail::catalog_fingerprint(cat))
            throw io_error(
                fmt::format("{}: this join graph was built for another catalog", source));
        const auto rows = r.count("rows");
        const auto dim = r.count("dim");
        if (rows != cat.columns().size() || dim == 0 || f32_bytes / sizeof(float) / dim != rows ||
            f32_bytes != rows * dim * sizeof(float))
            throw corrupt("vector shape does not match");
        matrix vectors(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(dim));
        if (f32_bytes > 0) std::memcpy(vectors.data(), floats.data(), f32_bytes);
        if (!vectors.allFinite()) throw corrupt("a column vector has NaN or infinity");
        join_graph g(cat, std::move(vectors), r.str("embedder"),
                     r.one_of("names", {"natural", "original"}) == 0 ? name_style::natural
                                                                     : name_style::original);
        try {
            const auto doc = nlohmann::json::parse(body);
            for (const auto& e : doc.at("edges")) {
                const join_edge edge{e.at(0).get<table_id>(),  e.at(1).get<table_id>(),
                                     e.at(2).get<float>(),     e.at(3).get<column_id>(),
                                     e.at(4).get<column_id>(), e.at(5).get<bool>()};
                if (!valid_edge(cat, edge))
                    throw corrupt(fmt::format(
                        "edge {}-{} (columns {}, {}, weight {}) does not fit the catalog: not two "
                        "tables of one database joined by their own columns with a weight in "
                        "[0, 1]",
                        edge.a, edge.b, edge.from, edge.to, edge.weight));
                g.add_edge(edge);
            }
        } catch (const nlohmann::json::exception& err) {
            throw corrupt(err.what());
        }
        return g;
    }

  private:
    join_graph(const catalog& cat, matrix vectors, std::string embedder_name, name_style names)
        : vectors_(std::move(vectors)),
          embedder_name_(std::move(embedder_name)),
          names_(names),
          fingerprint_(detail::catalog_fingerprint(cat)) {}

    /// Tables a < b of one database, columns of a and b, a weight in [0, 1].
    static bool valid_edge(const catalog& cat, const join_edge& e) {
        const auto tables = cat.tables().size(), columns = cat.columns().size();
        return e.a < e.b && e.b < tables && e.from < columns && e.to < columns &&
               cat.table(e.a).database == cat.table(e.b).database &&
               cat.column(e.from).table == e.a && cat.column(e.to).table == e.b &&
               e.weight >= 0.0f && e.weight <= 1.0f;
    }

    void add_edge(join_edge e) {
        by_pair_[detail::pair_key(e.a, e.b)] = edges_.size();
        edges_.push_back(e);
    }

    /// Per-column inputs of the pair score, computed once.
    struct column_features {
        type_family family = type_family::unknown;
        double uniqueness = 0.0;
        std::vector<std::string> words;
    };

    /**
     * Scores the table pairs of every database. Each database with at most
     * o.exhaustive_max_tables tables scores all its pairs (quadratic; the exact graph). A larger
     * one is blocked: an inverted index maps (type family, word of a column text `table:column`)
     * to the tables having such a column (a column of unknown type under every family); keys
     * shared by more than o.max_block_tables tables are skipped as stop-words; the tables sharing
     * a key with table a are its candidates, each candidate pair is scored once by best_pair
     * (so its edge equals the exhaustive one), and a pair keeps its edge when it is among the
     * o.max_edges_per_table heaviest of either table. Declared foreign keys always get their
     * edge. Memory of a blocked database of T tables with C columns and W words per column
     * text: O(C·W) for the index, O(T) for the candidate marks, O(T·max_edges_per_table) for the
     * kept edges; edges ≤ T·max_edges_per_table + its declared foreign keys; work
     * Σ_keys size² ≤ 6·C·W·max_block_tables pair scores (6 type families). check_interrupt() is
     * called once per table (and once per embedder batch in build). Without
     * o.infer_compatibility only the declared foreign keys get edges, in (a, b) order.
     */
    void score_pairs(const catalog& cat, const column_stats_table& stats,
                     const join_graph_options& go) {
        const auto& o = go.compatibility;
        std::unordered_map<std::uint64_t, foreign_key> declared;
        for (const auto& fk : cat.foreign_keys())
            declared.try_emplace(
                detail::pair_key(cat.column(fk.from).table, cat.column(fk.to).table), fk);
        const auto declared_edge = [&](table_id a, table_id b, const foreign_key& fk) {
            const bool from_a = cat.column(fk.from).table == a;
            return join_edge{a, b, 1.0f, from_a ? fk.from : fk.to, from_a ? fk.to : fk.from, true};
        };
        if (!go.infer_compatibility) {
            std::vector<std::pair<std::uint64_t, foreign_key>> keys(declared.begin(),
                                                                    declared.end());
            std::sort(keys.begin(), keys.end(),
                      [](const auto& x, const auto& y) { return x.first < y.first; });
            for (const auto& [key, fk] : keys) {
                const auto ta = cat.column(fk.from).table, tb = cat.column(fk.to).table;
                if (ta != tb) add_edge(declared_edge(std::min(ta, tb), std::max(ta, tb), fk));
            }
            return;
        }
        std::vector<column_features> f(cat.columns().size());
        for (column_id c = 0; c < cat.columns().size(); ++c)
            f[c] = {family_of(cat.column(c).type), uniqueness_of(cat, stats, c, o),
                    schema_tokens(column_text(cat, c, names_))};
        for (const auto& db : cat.databases()) {
            if (db.tables.size() > go.exhaustive_max_tables) {
                score_blocked(cat, stats, f, declared, db.tables, go, declared_edge);
                continue;
            }
            for (std::size_t i = 0; i < db.tables.size(); ++i) {
                check_interrupt();
                for (std::size_t j = i + 1; j < db.tables.size(); ++j) {
                    const auto a = db.tables[i], b = db.tables[j];
                    if (const auto it = declared.find(detail::pair_key(a, b));
                        it != declared.end()) {
                        add_edge(declared_edge(a, b, it->second));
                        continue;
                    }
                    auto e = best_pair(cat, stats, f, a, b);
                    if (e.weight > o.min_weight) add_edge(e);
                }
            }
        }
    }

    /// The blocked scoring of one large database (score_pairs).
    template <class DeclaredEdge>
    void score_blocked(const catalog& cat, const column_stats_table& stats,
                       const std::vector<column_features>& f,
                       const std::unordered_map<std::uint64_t, foreign_key>& declared,
                       const std::vector<table_id>& tables, const join_graph_options& go,
                       const DeclaredEdge& declared_edge) {
        const auto n = tables.size();
        std::unordered_map<table_id, std::uint32_t> local;  // table id → position in tables
        local.reserve(n);
        for (std::size_t i = 0; i < n; ++i) local.emplace(tables[i], static_cast<std::uint32_t>(i));
        // Inverted index: (family, word) → positions of the tables with such a column, ascending.
        std::unordered_map<std::string, std::vector<std::uint32_t>> blocks;
        for (std::uint32_t i = 0; i < n; ++i)
            for (auto c : cat.table(tables[i]).columns) {
                const auto family = f[c].family;
                for (const auto& w : f[c].words)
                    for (int fam = 0; fam <= static_cast<int>(type_family::other); ++fam) {
                        if (family != type_family::unknown && fam != static_cast<int>(family))
                            continue;
                        auto& list = blocks[fmt::format("{}\x1f{}", fam, w)];
                        if (list.empty() || list.back() != i) list.push_back(i);
                    }
            }
        // The keys of each table (indices into key_lists), only those that are not stop-words.
        std::vector<const std::vector<std::uint32_t>*> key_lists;
        for (const auto& [key, list] : blocks)
            if (list.size() > 1 && list.size() <= go.max_block_tables) key_lists.push_back(&list);
        std::vector<std::vector<std::uint32_t>> keys_of(n);
        for (std::uint32_t k = 0; k < key_lists.size(); ++k)
            for (auto i : *key_lists[k]) keys_of[i].push_back(k);
        // Kept edges per table: the heaviest max_edges_per_table, as a min-heap.
        const auto cap = go.max_edges_per_table;
        const auto lighter = [](const join_edge& x, const join_edge& y) {
            if (x.weight != y.weight) return x.weight > y.weight;  // heap top = lightest
            return detail::pair_key(x.a, x.b) < detail::pair_key(y.a, y.b);
        };
        std::vector<std::vector<join_edge>> kept(n);
        const auto keep = [&](std::uint32_t i, const join_edge& e) {
            if (cap == 0) return;
            auto& h = kept[i];
            if (h.size() < cap) {
                h.push_back(e);
                std::push_heap(h.begin(), h.end(), lighter);
            } else if (lighter(e, h.front())) {
                std::pop_heap(h.begin(), h.end(), lighter);
                h.back() = e;
                std::push_heap(h.begin(), h.end(), lighter);
            }
        };
        std::vector<join_edge> result;
        std::vector<std::uint32_t> seen(n, 0);  // seen[j] == i + 1: j is a candidate of i
        std::vector<std::uint32_t> candidates;
        for (std::uint32_t i = 0; i < n; ++i) {
            check_interrupt();
            candidates.clear();
            for (auto k : keys_of[i])
                for (auto j : *key_lists[k])
                    if (j > i && seen[j] != i + 1) {
                        seen[j] = i + 1;
                        candidates.push_back(j);
                    }
            for (auto j : candidates) {
                const auto a = std::min(tables[i], tables[j]), b = std::max(tables[i], tables[j]);
                if (declared.contains(detail::pair_key(a, b))) continue;
                const auto e = best_pair(cat, stats, f, a, b);
                if (e.weight <= go.compatibility.min_weight) continue;
                keep(i, e);
                keep(j, e);
            }
        }
        for (auto& h : kept) {
            result.insert(result.end(), h.begin(), h.end());
            std::vector<join_edge>().swap(h);
        }
        for (const auto& [key, fk] : declared) {
            const auto ta = cat.column(fk.from).table, tb = cat.column(fk.to).table;
            if (ta == tb || !local.contains(ta) || !local.contains(tb)) continue;
            result.push_back(declared_edge(std::min(ta, tb), std::max(ta, tb), fk));
        }
        std::sort(result.begin(), result.end(), [](const join_edge& x, const join_edge& y) {
            return detail::pair_key(x.a, x.b) < detail::pair_key(y.a, y.b);
        });
        result.erase(std::unique(result.begin(), result.end(),
                                 [](const join_edge& x, const join_edge& y) {
                                     return x.a == y.a && x.b == y.b;
                                 }),
                     result.end());
        for (const auto& e : result) add_edge(e);
    }

    join_edge best_pair(const catalog& cat, const column_stats_table& stats,
                        const std::vector<column_features>& f, table_id a, table_id b) const {
        join_edge best{a, b, 0.0f, 0, 0, false};
        for (auto ca : cat.table(a).columns)
            for (auto cb : cat.table(b).columns) {
                if (!same_family(f[ca].family, f[cb].family)) continue;
                const double u = std::max(f[ca].uniqueness, f[cb].uniqueness);
                if (u <= 0.0) continue;
                const column_pair_signals s{
                    u, overlap_coefficient(stats.at(ca).values, stats.at(cb).values),
                    static_cast<double>(vectors_.row(ca).dot(vectors_.row(cb))),
                    overlap_coefficient(f[ca].words, f[cb].words).value_or(0.0)};
                const auto score = static_cast<float>(column_pair_score(s));
                if (score > best.weight) best = {a, b, score, ca, cb, false};
            }
        return best;
    }

    matrix vectors_;
    std::string embedder_name_;
    name_style names_ = name_style::natural;
    std::string fingerprint_;
    std::vector<join_edge> edges_;
    std::unordered_map<std::uint64_t, std::size_t> by_pair_;
};

}  // namespace tabret
