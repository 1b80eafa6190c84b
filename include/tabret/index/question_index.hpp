#pragma once
/// @file index/question_index.hpp
/// @brief Reverse Engineering's index-time half: one generated question q_o per table of a
/// table_index, embedded once, saved and loaded as its own versioned, checksummed directory, so
/// that an index built once never asks its question generator (an LLM) again.

#include <concepts>
#include <cstddef>
#include <filesystem>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/catalog.hpp"
#include "tabret/embedding/embedder.hpp"
#include "tabret/index/exact_index.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/io/catalog_fingerprint.hpp"
#include "tabret/io/catalog_json.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/io/manifest.hpp"

namespace tabret {

/**
 * @brief Writes one question per table, for a whole batch of tables at once (one LLM call for
 * an LLM-backed generator): template_question_generator, llm_question_generator.
 */
template <class G>
concept QuestionGenerator = requires(const G& g, std::span<const table_id> tables) {
    { g.generate(tables) } -> std::same_as<std::vector<std::string>>;
};

inline constexpr int question_index_version = 2;

/**
 * @brief The generated question q_o of every table of one table_index and its embedding (same
 * embedder as the index, L2-normalised). Immutable once built; every const method is
 * thread-safe.
 *
 * Saved as a directory: manifest.json (format `tabret-questions`, version, generator name,
 * embedder, dim, table count, catalog fingerprint, per-file size and checksum),
 * questions.json (the texts, by table id) and questions.f32 (the vectors). Loading checks every
 * file and that the questions belong to the given index (same catalog, embedder and dimension).
 */
class question_index {
  public:
    /**
     * @brief Asks @p generator once for the questions of every table of @p index (one batch),
     * then embeds them with @p embedder in batches of @p batch_size.
     * @param generator_name stored in the manifest (e.g. "template", "llm:gpt-4o").
     * @throws whatever the generator throws (e.g. llm_error); error for a wrong question count
     * or batch_size == 0; embedding_error for a bad embedder answer.
     */
    template <QuestionGenerator G, Embedder E>
    static question_index build(const table_index& index, const G& generator,
                                std::string generator_name, const E& embedder,
                                std::size_t batch_size = 512) {
        std::vector<table_id> ids(index.catalog().tables().size());
        std::iota(ids.begin(), ids.end(), table_id{0});
        return from_questions(index, generator.generate(ids), std::move(generator_name), embedder,
                              batch_size);
    }

    /**
     * @brief Embeds given questions, @p questions[t] for table t (e.g. written offline).
     * @throws error unless there is one non-empty question per table; embedding_error for a bad
     * embedder answer or a dimension other than the index's.
     */
    template <Embedder E>
    static question_index from_questions(const table_index& index,
                                         std::vector<std::string> questions,
                                         std::string generator_name, const E& embedder,
                                         std::size_t batch_size = 512) {
        const auto n = index.catalog().tables().size();
        if (questions.size() != n)
            throw error(fmt::format("question generator '{}' returned {} questions for {} tables",
                                    generator_name, questions.size(), n));
        for (std::size_t t = 0; t < n; ++t)
            if (questions[t].empty())
                throw error(
                    fmt::format("question generator '{}' returned an empty question for "
                                "table {} ({})",
                                generator_name, t, index.catalog().qualified_name(t)));
        auto vectors =
            embed_in_batches(embedder, questions, batch_size, index.dim(), [](std::size_t) {});
        return question_index(std::move(questions), exact_index(std::move(vectors)),
                              std::move(generator_name), index.embedder_name(),
                              detail::catalog_fingerprint(index.catalog()));
    }

    /** @brief q_o of every table, by table id. */
    [[nodiscard]] const std::vector<std::string>& questions() const noexcept { return questions_; }
    /** @brief q_o of table @p t. @throws error for an unknown id. */
    [[nodiscard]] const std::string& question(table_id t) const {
        if (t >= questions_.size())
            throw error(fmt::format("question_index: no table {} ({} tables)", t, size()));
        return questions_[t];
    }
    /** @brief The normalised embeddings of the questions, row t for table t. */
    [[nodiscard]] const exact_index& vectors() const noexcept { return vectors_; }
    [[nodiscard]] std::size_t size() const noexcept { return questions_.size(); }
    [[nodiscard]] std::size_t dim() const noexcept { return vectors_.dim(); }
    [[nodiscard]] const std::string& generator() const noexcept { return generator_; }
    [[nodiscard]] const std::string& embedder_name() const noexcept { return embedder_name_; }

    /**
     * @brief Checks that these questions were made for @p index: same catalog (fingerprint),
     * table count, embedder and dimension. @throws error naming the first mismatch.
     */
    void check_matches(const table_index& index) const {
        if (size() != index.catalog().tables().size())
            throw error(fmt::format("generated questions cover {} tables, the index has {}", size(),
                                    index.catalog().tables().size()));
        if (embedder_name_ != index.embedder_name() || dim() != index.dim())
            throw error(fmt::format(
                "generated questions were embedded with '{}' (dimension {}), the index with "
                "'{}' (dimension {})",
                embedder_name_, dim(), index.embedder_name(), index.dim()));
        if (catalog_ != detail::catalog_fingerprint(index.catalog()))
            throw error("generated questions were made for another catalog than the index's");
    }

    /**
     * @brief Writes the directory (see the class comment); an interrupted save leaves the
     * previous one intact. @throws io_error.
     */
    void save(const std::filesystem::path& dir) const {
        detail::save_directory(
            dir,
            [&](const std::filesystem::path&, const detail::put_file_fn& put) {
                put("questions.json", detail::dump_json(nlohmann::json(questions_), 1,
                                                        (dir / "questions.json").string()));
                put("questions.f32", detail::matrix_bytes(vectors_.vectors()));
            },
            [&](const nlohmann::json& files) {
                return nlohmann::json{{"format", "tabret-questions"},
                                      {"version", question_index_version},
                                      {"generator", generator_},
                                      {"embedder", embedder_name_},
                                      {"dim", dim()},
                                      {"tables", size()},
                                      {"catalog_fnv1a64", catalog_},
                                      {"files", files}};
            });
    }

    /**
     * @brief Loads a directory written by save() and checks it against @p index (check_matches).
     * Never calls a generator.
     * @throws io_error for a missing, truncated or corrupt file, another format or version;
     * parse_error / schema_error for a bad manifest or question list; error when the questions
     * belong to another index.
     */
    static question_index load(const std::filesystem::path& dir, const table_index& index) {
        const auto manifest_path = (dir / "manifest.json").string();
        const auto doc = detail::read_manifest(dir, "tabret-questions", question_index_version,
                                               "tabret question index");
        const detail::json_reader r(doc, manifest_path, "manifest");
        const auto files = r.get("files", nlohmann::json::value_t::object);
        const auto rows = r.count("tables");
        const auto dim = r.count("dim");
        auto questions = read_questions(dir, detail::read_verified(dir, files, "questions.json"));
        if (questions.size() != rows)
            throw io_error(fmt::format("{}: holds {} questions, the manifest says {}",
                                       (dir / "questions.json").string(), questions.size(), rows));
        auto vectors = detail::read_matrix(dir, detail::read_verified(dir, files, "questions.f32"),
                                           "questions.f32", rows, dim);
        question_index out(std::move(questions), exact_index(std::move(vectors)),
                           r.str("generator"), r.str("embedder"), r.str("catalog_fnv1a64"));
        try {
            out.check_matches(index);
        } catch (const error& e) {
            throw error(fmt::format("{}: {}", dir.string(), e.what()));
        }
        return out;
    }

  private:
    question_index(std::vector<std::string> questions, exact_index vectors, std::string generator,
                   std::string embedder_name, std::string catalog)
        : questions_(std::move(questions)),
          vectors_(std::move(vectors)),
          generator_(std::move(generator)),
          embedder_name_(std::move(embedder_name)),
          catalog_(std::move(catalog)) {}

    static std::vector<std::string> read_questions(const std::filesystem::path& dir,
                                                   const std::string& data) {
        const auto path = (dir / "questions.json").string();
        const auto j = detail::parse_json(data, path);
        if (!j.is_array())
            throw schema_error(fmt::format("{}: expected a list of questions", path));
        std::vector<std::string> out;
        for (const auto& q : j) {
            if (!q.is_string())
                throw schema_error(
                    fmt::format("{}: question {} is not a string", path, out.size()));
            out.push_back(q.get<std::string>());
        }
        return out;
    }

    std::vector<std::string> questions_;
    exact_index vectors_;
    std::string generator_;
    std::string embedder_name_;
    std::string catalog_;  ///< catalog fingerprint
};

}  // namespace tabret
