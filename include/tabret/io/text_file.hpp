#pragma once
/// @file io/text_file.hpp
/// @brief The encoding policy of every text tabret reads (DDL, tables.json, catalog JSON):
/// UTF-8, with an optional UTF-8 byte order mark that is skipped; anything else is refused.

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "tabret/error.hpp"
#include "tabret/io/file.hpp"
#include "tabret/text/utf8.hpp"

namespace tabret {

/**
 * @brief Checks that @p text is UTF-8 and returns it without a leading UTF-8 byte order mark.
 * @param source names the text in the error (a file name, say).
 * @throws parse_error naming @p source, the 1-based line, the byte offset (0-based, from the
 * start of the text, byte order mark included) and the value of the first byte that is not part of
 * valid UTF-8.
 */
inline std::string_view check_utf8_text(std::string_view text, std::string_view source) {
    const std::size_t bom = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    text.remove_prefix(bom);
    const auto bad = detail::first_invalid_utf8(text);
    if (!bad) return text;
    const auto before = text.substr(0, *bad);
    const auto line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const auto line_start = before.rfind('\n');
    const auto column = *bad - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    throw parse_error(
        std::string(source), line,
        fmt::format("not valid UTF-8: byte 0x{:02X} at byte offset {} (column {}); tabret reads "
                    "text files as UTF-8 only: convert the file (e.g. iconv -f latin1 -t utf-8)",
                    static_cast<unsigned>(static_cast<unsigned char>(text[*bad])), bom + *bad,
                    column));
}

/**
 * @brief Reads a text file (read_text_file: regular files only, size-limited) and checks that it
 * is UTF-8 (check_utf8_text); the byte order mark, if any, is dropped.
 * @throws io_error naming the path; parse_error naming the path, line and byte offset.
 */
inline std::string read_utf8_file(const std::filesystem::path& path) {
    auto text = read_text_file(path);
    const auto body = check_utf8_text(text, path.string());
    if (body.size() != text.size()) text.erase(0, text.size() - body.size());
    return text;
}

/**
 * @brief The default database name for a file: its stem (`shop.sql` → `shop`).
 * @throws io_error naming the path if the stem is empty or not valid UTF-8 (pass a name).
 */
inline std::string default_db_name(const std::filesystem::path& path) {
    auto stem = path.stem().string();
    if (stem.empty() || detail::first_invalid_utf8(stem))
        throw io_error(fmt::format("{}: the file name is {}; give the database a name (db_name)",
                                   path.string(), stem.empty() ? "empty" : "not valid UTF-8"));
    return stem;
}

}  // namespace tabret
