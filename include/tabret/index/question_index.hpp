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
#include "tabret/embedding/matrix_bytes.hpp"
#include "tabret/index/exact_index.hpp"
#include "tabret/index/table_index.hpp"
#include "tabret/io/artifact.hpp"
#include "tabret/io/catalog_json.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/progress.hpp"

namespace tabret {

/**
 * @brief Writes one question per table, for a whole batch of tables at once (one LLM call for
 * an LLM-backed generator): template_question_generator, llm_question_generator.
 */
template <class G>
concept QuestionGenerator = requires(const G& g, std::span<const table_id> tables) {
    { g.generate(tables) } -> std::same_as<std::vector<std::string>>;
};

/**
 * @brief The generated question q_o of every table of one table_index and its embedding (same
 * embedder as the index, L2-normalised). Immutable once built; every const method is
 * thread-safe.
 *
 * Saved as the `questions` part of the index's directory (io/artifact.hpp): its manifest holds
 * the generator name, embedder, dim and table count; questions.json (the texts, by table id)
 * and questions.f32 (the vectors) are its files. Loading checks every file and that the
 * questions belong to the given index (same catalog, embedder and dimension).
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
                                std::size_t batch_size = 512, const progress_fn& progress = {}) {
        std::vector<table_id> ids(index.catalog().tables().size());
        std::iota(ids.begin(), ids.end(), table_id{0});
        return from_questions(index, generator.generate(ids), std::move(generator_name), embedder,
                              batch_size, progress);
    }

    /**
     * @brief Embeds given questions, @p questions[t] for table t (e.g. written offline),
     * reporting "generated questions" progress after each batch.
     * @throws error unless there is one non-empty question per table; embedding_error for a bad
     * embedder answer or a dimension other than the index's; whatever @p progress throws.
     */
    template <Embedder E>
    static question_index from_questions(const table_index& index,
                                         std::vector<std::string> questions,
                                         std::string generator_name, const E& embedder,
                                         std::size_t batch_size = 512,
                                         const progress_fn& progress = {}) {
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
            embed_in_batches(embedder, questions, batch_size, index.dim(), [&](std::size_t done) {
                if (progress) progress("generated questions", done, n);
            });
        return question_index(std::move(questions), exact_index(std::move(vectors)),
                              std::move(generator_name), index.embedder_name(),
                              index.catalog_fingerprint());
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
        if (catalog_ != index.catalog_fingerprint())
            throw error("generated questions were made for another catalog than the index's");
    }

    /**
     * @brief Saves the questions into the index directory @p dir, which must hold the table
     * index they were made for (saved, replaced and loaded with it; io/artifact.hpp).
     * @throws io_error.
     */
    void save(const std::filesystem::path& dir) const {
        detail::save_artifact(dir, catalog_, {{"questions", to_part()}}, false);
    }

    /// The questions as a part of an artifact.
    [[nodiscard]] detail::artifact_part to_part() const {
        detail::artifact_part part;
        part.meta = {{"generator", generator_},
                     {"embedder", embedder_name_},
                     {"dim", dim()},
                     {"tables", size()}};
        part.files["questions.json"] =
            detail::dump_json(nlohmann::json(questions_), 1, "questions.json");
        part.files["questions.f32"] = detail::matrix_bytes(vectors_.vectors());
        return part;
    }

    /**
     * @brief Loads the questions saved in the index directory @p dir and checks them against
     * @p index (check_matches). Never calls a generator.
     * @throws io_error for a missing, truncated or corrupt file, another format or version, or
     * no questions saved there; parse_error / schema_error for a bad manifest or question list;
     * error when the questions belong to another index.
     */
    static question_index load(const std::filesystem::path& dir, const table_index& index) {
        return load(detail::artifact::read(dir), index);
    }

    /// Loads the questions part of an artifact already read. @throws as load(dir, index).
    static question_index load(const detail::artifact& saved, const table_index& index) {
        const detail::json_reader r(saved.part("questions").meta, saved.manifest_path(),
                                    "manifest.parts.questions.meta");
        const auto rows = r.count("tables");
        const auto dim = r.count("dim");
        const auto json_path = saved.path_of("questions.json");
        auto questions = read_questions(json_path, saved.file("questions", "questions.json"));
        if (questions.size() != rows)
            throw io_error(fmt::format("{}: holds {} questions, the manifest says {}", json_path,
                                       questions.size(), rows));
        auto vectors = detail::read_matrix(saved.path_of("questions.f32"),
                                           saved.file("questions", "questions.f32"), rows, dim);
        question_index out(std::move(questions), exact_index(std::move(vectors)),
                           r.str("generator"), r.str("embedder"), saved.catalog_fingerprint());
        try {
            out.check_matches(index);
        } catch (const error& e) {
            throw error(fmt::format("{}: {}", saved.dir().string(), e.what()));
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

    static std::vector<std::string> read_questions(const std::string& path,
                                                   const std::string& data) {
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
