#pragma once
/// @file io/json_reader.hpp
/// @brief Typed field access for the JSON loaders, with errors that name file and item.

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"

namespace tabret::detail {

/// Reads fields of one JSON object and names the path to it on failure (`databases[2].tables[0]`).
class json_reader {
  public:
    json_reader(const nlohmann::json& j, std::string_view source, std::string where)
        : j_(j), source_(source), where_(std::move(where)) {
        if (!j_.is_object()) fail("is not an object");
    }
    [[noreturn]] void fail(std::string_view what) const {
        throw schema_error(fmt::format("{}: {}: {}", source_, where_, what));
    }
    const nlohmann::json& get(const char* key, nlohmann::json::value_t type) const {
        const auto it = j_.find(key);
        if (it == j_.end()) fail(fmt::format("missing field '{}'", key));
        if (it->type() != type) fail(fmt::format("field '{}' has type {}", key, it->type_name()));
        return *it;
    }
    std::string str(const char* key) const {
        return get(key, nlohmann::json::value_t::string).get<std::string>();
    }
    long integer(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end()) fail(fmt::format("missing field '{}'", key));
        if (!it->is_number_integer())
            fail(fmt::format("field '{}' has type {}, expected an integer", key, it->type_name()));
        return it->template get<long>();
    }
    /// Optional string field; empty when absent.
    std::string opt_str(const char* key) const {
        return j_.contains(key) ? str(key) : std::string{};
    }
    const nlohmann::json& list(const char* key) const {
        return get(key, nlohmann::json::value_t::array);
    }
    /// Optional list; empty when absent.
    nlohmann::json opt_list(const char* key) const {
        return j_.contains(key) ? list(key) : nlohmann::json::array();
    }
    json_reader child(const nlohmann::json& j, const char* key, std::size_t i) const {
        return {j, source_, fmt::format("{}.{}[{}]", where_, key, i)};
    }
    const std::string& where() const noexcept { return where_; }

    /// Runs @p f; a schema_error from the catalog (which knows no file) gets this reader's place.
    template <class F>
    void placing_errors(F&& f) const {
        try {
            f();
        } catch (const schema_error& err) {
            if (std::string_view(err.what()).starts_with(source_)) throw;
            fail(err.what());
        }
    }

  private:
    const nlohmann::json& j_;
    std::string_view source_;
    std::string where_;
};

}  // namespace tabret::detail
