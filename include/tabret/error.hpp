#pragma once
/// @file error.hpp
/// @brief The tabret exception family. Every message names the offending thing.

#include <cstddef>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include "tabret/text/utf8.hpp"

namespace tabret {

/**
 * @brief Base of every exception tabret throws. Its message is always valid UTF-8: bytes of
 * the input it quotes (a path, a name, a line of text) that are not UTF-8 appear as `\xNN`,
 * so that every message converts to a Python str.
 */
class error : public std::runtime_error {
  public:
    explicit error(const std::string& what)
        : std::runtime_error(detail::escape_invalid_utf8(what)) {}
    explicit error(const char* what) : error(std::string(what)) {}
};

/** @brief A file that does not exist, cannot be read or written, or is not what it claims. */
class io_error : public error {
  public:
    using error::error;
};

/** @brief Text that does not parse (DDL, JSON, LLM output). Carries the source and line. */
class parse_error : public error {
  public:
    /// @param source file name or other origin of the text; @param line 1-based, 0 if unknown.
    parse_error(std::string source, std::size_t line, const std::string& what)
        : error(line > 0 ? fmt::format("{}:{}: {}", source, line, what)
                         : fmt::format("{}: {}", source, what)),
          source_(detail::escape_invalid_utf8(source)),
          line_(line) {}

    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    [[nodiscard]] std::size_t line() const noexcept { return line_; }

  private:
    std::string source_;
    std::size_t line_;
};

/** @brief A schema that is structurally wrong: missing field, dangling reference, duplicate. */
class schema_error : public error {
  public:
    using error::error;
};

}  // namespace tabret
