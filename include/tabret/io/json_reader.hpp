#pragma once
/// @file io/json_reader.hpp
/// @brief Typed field access for the JSON loaders, with errors that name file and item.

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"

namespace tabret::detail {

/// Parses JSON text. Every nlohmann error (a syntax error, a number too large for a double)
/// becomes a parse_error naming @p source.
inline nlohmann::json parse_json(std::string_view text, std::string_view source) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw parse_error(std::string(source), 0, e.what());
    }
}

/// Writes JSON text (@p indent as nlohmann's dump). A string that is not valid UTF-8 (JSON can
/// hold nothing else) becomes a schema_error naming @p what.
inline std::string dump_json(const nlohmann::json& j, int indent, std::string_view what) {
    try {
        return j.dump(indent);
    } catch (const nlohmann::json::type_error& e) {
        throw schema_error(
            fmt::format("{}: cannot be written as JSON: a name or text is not valid UTF-8 ({})",
                        what, e.what()));
    }
}

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
    /// A non-negative integer field (a count or size).
    std::size_t count(const char* key) const {
        const auto v = integer(key);
        if (v < 0) fail(fmt::format("field '{}' is negative ({})", key, v));
        return static_cast<std::size_t>(v);
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
    std::string source_;  // owned: callers pass temporaries such as path.string()
    std::string where_;
};

}  // namespace tabret::detail
