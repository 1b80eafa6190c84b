#pragma once
/// @file io/json_reader.hpp
/// @brief Typed field access for the JSON loaders, with errors that name file and item.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/io/text_file.hpp"

namespace tabret::detail {

/**
 * @brief Parses JSON @p text from @p source. @throws parse_error naming the source and the
 * 1-based line of the first error, with nlohmann's reason (without its exception prefix);
 * for text that is not UTF-8, the line and byte offset of the first bad byte (check_utf8_text).
 */
inline nlohmann::json parse_json(std::string_view text, std::string_view source) {
    text = check_utf8_text(text, source);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        const auto before = text.substr(0, std::min(e.byte > 0 ? e.byte - 1 : 0, text.size()));
        const auto line =
            1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
        const auto line_start = before.rfind('\n');
        const auto column =
            before.size() - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
        std::string_view why(e.what());
        if (const auto colon = why.find(": "); colon != std::string_view::npos)
            why.remove_prefix(colon + 2);  // "[json.exception.parse_error.101] parse error at …: "
        throw parse_error(std::string(source), line,
                          fmt::format("invalid JSON at column {}: {}", column, why));
    } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
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
    /// A non-negative integer field (a count or a size).
    std::size_t count(const char* key) const {
        if (const auto it = j_.find(key); it != j_.end() && it->is_number_unsigned())
            return static_cast<std::size_t>(it->template get<std::uint64_t>());
        const auto v = integer(key);
        if (v < 0) fail(fmt::format("field '{}' is {}, expected a count (>= 0)", key, v));
        return static_cast<std::size_t>(v);
    }
    /// A string field that must be one of @p allowed; returns its position there.
    std::size_t one_of(const char* key, std::initializer_list<std::string_view> allowed) const {
        const auto v = str(key);
        const auto it = std::find(allowed.begin(), allowed.end(), v);
        if (it == allowed.end())
            fail(fmt::format("field '{}' is '{}', expected one of: {}", key, v,
                             fmt::join(allowed, ", ")));
        return static_cast<std::size_t>(it - allowed.begin());
    }
    long integer(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end()) fail(fmt::format("missing field '{}'", key));
        if (!it->is_number_integer())
            fail(fmt::format("field '{}' has type {}, expected an integer", key, it->type_name()));
        return it->template get<long>();
    }
    bool has(const char* key) const { return j_.contains(key); }
    /// Optional string field; empty when absent.
    std::string opt_str(const char* key) const {
        return j_.contains(key) ? str(key) : std::string{};
    }
    /// Optional boolean field; false when absent.
    bool opt_bool(const char* key) const {
        return j_.contains(key) && get(key, nlohmann::json::value_t::boolean).get<bool>();
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
    std::string_view source() const noexcept { return source_; }

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
