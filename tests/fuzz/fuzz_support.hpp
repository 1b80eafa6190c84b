#pragma once
// Shared helpers of the libFuzzer targets: the expected-outcome guard, a scratch directory for
// loaders that read paths, and the archive format that packs several files into one input.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tabret/error.hpp"

namespace tabret::fuzz {

/// Runs @p f; a tabret::error is an accepted outcome, anything else escapes to libFuzzer.
template <class F>
void expect_tabret_errors_only(F&& f) {
    try {
        f();
    } catch (const tabret::error&) {
    }
}

/// The input of a target with modes: the first byte picks the entry point, the rest is the
/// text. Runs @p run(mode, text) under expect_tabret_errors_only; an empty input does nothing.
template <class F>
void run_with_mode(const std::uint8_t* data, std::size_t size, F&& run) {
    if (size == 0) return;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    expect_tabret_errors_only([&] { run(data[0], text); });
}

/// A broken invariant on a successful result: a finding (libFuzzer reports the abort).
inline void require(bool ok) {
    if (!ok) std::abort();
}

/// A per-process scratch directory (on /dev/shm when there is one), removed at exit.
inline const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                               ? std::filesystem::path("/dev/shm")
                                               : std::filesystem::temp_directory_path();
        auto d = base / ("tabret-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(scratch_dir(), ec);
        });
        return d;
    }();
    return dir;
}

/// An empty directory @p name inside the scratch directory.
inline std::filesystem::path fresh_dir(const std::string& name) {
    const auto d = scratch_dir() / name;
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
    std::filesystem::create_directories(d);
    return d;
}

inline void write_file(const std::filesystem::path& path, std::string_view data) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

/// The separator of the archive format: every file starts with `@@ <name>\n` at the start of
/// the input or right after a newline; its contents run to the next separator.
inline constexpr std::string_view archive_marker = "@@ ";

/// Splits an archive into (name, contents) pairs; text before the first marker is ignored.
inline std::vector<std::pair<std::string, std::string>> unpack(std::string_view data) {
    std::vector<std::pair<std::string, std::string>> files;
    std::size_t pos = data.starts_with(archive_marker) ? 0 : data.find("\n@@ ");
    if (pos == std::string_view::npos) return files;
    if (pos > 0) ++pos;  // skip the newline before the marker
    while (pos < data.size()) {
        const auto name_from = pos + archive_marker.size();
        const auto eol = data.find('\n', name_from);
        if (eol == std::string_view::npos) break;
        const auto next = data.find("\n@@ ", eol);
        const auto end = next == std::string_view::npos ? data.size() : next;
        files.emplace_back(std::string(data.substr(name_from, eol - name_from)),
                           std::string(data.substr(eol + 1, end - eol - 1)));
        if (next == std::string_view::npos) break;
        pos = next + 1;
    }
    return files;
}

/// The inverse of unpack (used to write the seed corpus).
inline std::string pack(const std::vector<std::pair<std::string, std::string>>& files) {
    std::string out;
    for (const auto& [name, contents] : files) {
        if (!out.empty()) out.push_back('\n');
        out += archive_marker;
        out += name;
        out.push_back('\n');
        out += contents;
    }
    return out;
}

}  // namespace tabret::fuzz
