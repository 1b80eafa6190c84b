#pragma once
/// @file io/manifest.hpp
/// @brief The conventions every saved tabret directory follows (internal): files listed in
/// manifest.json with their size and FNV-1a checksum, verified before they are parsed; float
/// matrices as raw row-major bytes; the whole directory written beside the target and swapped in.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/embedding/matrix.hpp"
#include "tabret/error.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/json_reader.hpp"

namespace tabret::detail {

/// The raw bytes of a float matrix (row-major, native endianness).
inline std::string matrix_bytes(const matrix& m) {
    return {reinterpret_cast<const char*>(m.data()),
            static_cast<std::size_t>(m.size()) * sizeof(float)};
}

/// Writes one file into a directory being saved and records it in the manifest's `files`.
using put_file_fn = std::function<void(const std::string& name, const std::string& data)>;

/// The backup name of @p dir while swap_in replaces it: `<dir>.old-<pid>`.
inline std::filesystem::path backup_path(const std::filesystem::path& dir) {
    return fmt::format("{}.old-{}", dir.string(), ::getpid());
}

/// Refuses to replace anything but a tabret directory (one with a manifest.json), so that a
/// wrong path (a home directory, a file) is never deleted. @throws io_error.
inline void check_replaceable(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) return;
    if (!std::filesystem::is_directory(dir, ec))
        throw io_error(
            fmt::format("{}: exists and is not a directory; not replacing it", dir.string()));
    if (!std::filesystem::is_empty(dir, ec) && !std::filesystem::exists(dir / "manifest.json", ec))
        throw io_error(fmt::format(
            "{}: exists and is not a saved tabret directory (no manifest.json); not replacing it",
            dir.string()));
}

/**
 * @brief Replaces @p dir by @p tmp. On Linux both are exchanged in one atomic rename
 * (RENAME_EXCHANGE), so a crash leaves either the old or the new directory at @p dir. Elsewhere
 * (or where the file system lacks it) the old directory is first renamed to backup_path(dir):
 * a crash between the two renames leaves only the backup, which the next load restores
 * (recover_backup).
 */
inline void swap_in(const std::filesystem::path& tmp, const std::filesystem::path& dir) {
    std::error_code ec;
    const bool had_old = std::filesystem::exists(dir);
#ifdef __linux__
    if (had_old) {
        if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0) {
            std::filesystem::remove_all(tmp, ec);  // the previous directory, now at tmp
            return;
        }
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
            throw io_error(
                fmt::format("{}: cannot replace: {}", dir.string(), std::strerror(errno)));
    }
#endif
    const auto old = backup_path(dir);
    if (had_old) std::filesystem::rename(dir, old, ec);
    if (ec) throw io_error(fmt::format("{}: cannot replace: {}", dir.string(), ec.message()));
    std::filesystem::rename(tmp, dir, ec);
    if (ec) {
        if (had_old) std::filesystem::rename(old, dir);
        throw io_error(fmt::format("{}: cannot write: {}", dir.string(), ec.message()));
    }
    if (had_old) std::filesystem::remove_all(old, ec);
}

/**
 * @brief When @p dir is missing but a save was interrupted between swap_in's two renames,
 * renames the newest complete backup (`<dir>.old-<pid>` with a manifest.json) back to @p dir.
 * Does nothing otherwise.
 */
inline void recover_backup(const std::filesystem::path& dir) {
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) || dir.filename().empty()) return;
    const auto prefix = dir.filename().string() + ".old-";
    const auto parent = dir.has_parent_path() ? dir.parent_path() : std::filesystem::path(".");
    std::filesystem::path best;
    std::filesystem::file_time_type best_time{};
    for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
        if (!entry.path().filename().string().starts_with(prefix)) continue;
        if (!std::filesystem::exists(entry.path() / "manifest.json", ec)) continue;
        const auto t = std::filesystem::last_write_time(entry.path(), ec);
        if (best.empty() || t > best_time) best = entry.path(), best_time = t;
    }
    if (!best.empty()) std::filesystem::rename(best, dir, ec);  // a racing loader may win
}

/**
 * @brief Saves a directory the tabret way: @p write_files(tmp, put) writes every data file
 * through `put` (atomic write, size and checksum recorded), then @p manifest(files) gives the
 * manifest.json document; everything lands in a temporary sibling that is swapped in, so an
 * interrupted save leaves the previous directory intact. @throws io_error.
 */
inline void save_directory(
    const std::filesystem::path& dir,
    const std::function<void(const std::filesystem::path& tmp, const put_file_fn& put)>&
        write_files,
    const std::function<nlohmann::json(const nlohmann::json& files)>& manifest) {
    check_replaceable(dir);
    const auto tmp = std::filesystem::path(fmt::format("{}.tmp-{}", dir.string(), ::getpid()));
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
    if (!ec) std::filesystem::create_directories(tmp, ec);
    if (ec) throw io_error(fmt::format("{}: cannot create: {}", tmp.string(), ec.message()));
    try {
        nlohmann::json files = nlohmann::json::object();
        const put_file_fn put = [&](const std::string& name, const std::string& data) {
            write_file_atomic(tmp / name, data);
            files[name] = {{"bytes", data.size()}, {"fnv1a64", checksum_hex(data)}};
        };
        write_files(tmp, put);
        write_file_atomic(tmp / "manifest.json",
                          dump_json(manifest(files), 2, (dir / "manifest.json").string()) + "\n");
        fsync_directory(tmp);
        swap_in(tmp, dir);
    } catch (...) {
        std::filesystem::remove_all(tmp, ec);
        throw;
    }
    fsync_directory(dir.has_parent_path() ? dir.parent_path() : std::filesystem::path("."));
}

/// Parses @p dir / manifest.json, after restoring an interrupted save's backup (recover_backup).
/// @throws io_error if missing; parse_error if not JSON.
inline nlohmann::json read_manifest(const std::filesystem::path& dir) {
    recover_backup(dir);
    const auto path = dir / "manifest.json";
    return parse_json(read_text_file(path), path.string());
}

/**
 * @brief Reads file @p name of a saved directory after checking its size and checksum against
 * the manifest's @p files. @throws io_error for an unlisted, missing, truncated or corrupt file.
 */
inline std::string read_verified(const std::filesystem::path& dir, const nlohmann::json& files,
                                 const std::string& name) {
    const auto path = dir / name;
    if (!files.contains(name))
        throw io_error(fmt::format("{}: manifest lists no file '{}'", dir.string(), name));
    const auto& entry = files.at(name);
    std::string data = read_text_file(path);
    if (!entry.contains("bytes") || entry["bytes"] != data.size())
        throw io_error(
            fmt::format("{}: size {} does not match the manifest: the file is truncated or corrupt",
                        path.string(), data.size()));
    if (!entry.contains("fnv1a64") || entry["fnv1a64"] != checksum_hex(data))
        throw io_error(fmt::format("{}: checksum mismatch: the file is corrupt", path.string()));
    return data;
}

/// A rows × dim float matrix from raw bytes. @throws io_error if the size does not fit.
inline matrix read_matrix(const std::filesystem::path& dir, const std::string& data,
                          const char* name, std::size_t rows, std::size_t dim) {
    const bool fits = dim == 0 || rows <= data.size() / sizeof(float) / dim;
    if (!fits || data.size() != rows * dim * sizeof(float))
        throw io_error(fmt::format("{}: holds {} bytes, expected {} rows × {} floats",
                                   (dir / name).string(), data.size(), rows, dim));
    matrix m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(dim));
    if (!data.empty()) std::memcpy(m.data(), data.data(), data.size());
    return m;
}

}  // namespace tabret::detail
