#pragma once
/// @file table_search.hpp
/// @brief The compiled entry point for the common case: index a catalog with the built-in
/// hashing embedder (or an embedding function over plain float buffers), retrieve tables and
/// columns for questions, save and load. No Eigen and no templates in this header, so a program
/// that needs only this compiles in about a second; the templates under index/ and retrieval/
/// are the general API (any Embedder, every method, composed pipelines).

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/embedding/hashing_params.hpp"
#include "tabret/retrieval/retrieval.hpp"

namespace tabret {

class callback_embedder;
class table_index;

/**
 * @brief An embedding model as a plain function: write one row of `dim` floats per text into
 * @p out (row-major, `texts.size() * dim` floats, zero-filled on entry). Rows need not be
 * normalised; tabret checks them (NaN, infinity, all-zero rows are an embedding_error) and
 * normalises them itself.
 */
struct text_embedder {
    std::string name;  ///< Stored in the saved index; loading checks it.
    std::size_t dim = 0;
    std::function<void(std::span<const std::string> texts, std::span<float> out)> embed;
};

struct table_search_options {
    bool hybrid = false;  ///< Fuse the dense ranking with BM25 over the table texts.
    bool columns = true;  ///< Embed every column too (needed for retrieve_options::k_columns).
};

/**
 * @brief A catalog indexed for single-hop retrieval (dense, or dense fused with BM25). Immutable
 * once built; copies share the index; `retrieve` is const and thread-safe when the embedder is.
 * Models Retriever, so it composes with the rest of the library (retrieval/any_retriever.hpp).
 */
class table_search {
  public:
    /// Indexes @p cat with the built-in hashing embedder. @throws error for an empty catalog.
    explicit table_search(class catalog cat, const hashing_params& params = {},
                          table_search_options options = {});
    /// Indexes @p cat with @p embedder. @throws error for an empty catalog, a dim of 0 or no
    /// function; embedding_error for a bad row; whatever the function throws.
    table_search(class catalog cat, text_embedder embedder, table_search_options options = {});

    /// Loads an index saved by save() or by table_index::save with the same hashing parameters
    /// (of @p options only `hybrid` applies: the saved index says whether it has columns).
    /// @throws io_error as table_index::load; error when it was built with another embedder.
    static table_search load(const std::filesystem::path& dir, const hashing_params& params = {},
                             table_search_options options = {});
    /// Loads an index saved with @p embedder (checked by name and dimension).
    static table_search load(const std::filesystem::path& dir, text_embedder embedder,
                             table_search_options options = {});

    /// Saves the index (table_index::save: atomic, never replaces what tabret did not write).
    void save(const std::filesystem::path& dir) const;

    /// @throws error for k == 0, or k_columns > 0 on an index without columns.
    [[nodiscard]] std::vector<retrieval> retrieve(std::span<const std::string> questions,
                                                  const retrieve_options& options = {}) const;

    [[nodiscard]] const class catalog& catalog() const noexcept;
    [[nodiscard]] const std::string& embedder_name() const noexcept;

  private:
    struct state;
    static std::shared_ptr<const state> make_state(callback_embedder embedder, table_index index,
                                                   const table_search_options& options);
    table_search(callback_embedder embedder, class catalog cat,
                 const table_search_options& options);
    table_search(callback_embedder embedder, const std::filesystem::path& dir, std::size_t dim,
                 const table_search_options& options);
    std::shared_ptr<const state> state_;
};

}  // namespace tabret
