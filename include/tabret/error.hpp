#pragma once
/// @file error.hpp
/// @brief The tabret exception family. Every message names the offending thing.

#include <cstddef>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tabret {

/** @brief Base of every exception tabret throws. */
class error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
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
          source_(std::move(source)),
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
