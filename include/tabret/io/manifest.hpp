#pragma once
/// @file io/manifest.hpp
/// @brief The conventions every saved tabret directory follows (internal): files listed in
/// manifest.json with their size and FNV-1a checksum, verified before they are parsed, and the
/// manifest sealed with its own checksum (io/sealed_json.hpp); float
/// matrices as raw row-major bytes; the whole directory written beside the target and swapped in.

#include <fcntl.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <charconv>
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
#include "tabret/io/sealed_json.hpp"

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

/// Whether process @p pid has ended (it cannot be signalled: no such process).
inline bool process_gone(long pid) {
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH;
}

/**
 * @brief Removes what killed saves of @p dir left beside it: `<dir>.tmp-<pid>` and
 * `<dir>.old-<pid>` directories whose process has ended. Called by save_directory after
 * recover_backup, so a backup that is the only copy is restored first, never removed.
 */
inline void remove_stale_siblings(const std::filesystem::path& dir) {
    std::error_code ec;
    const auto name = dir.filename().string();
    const auto parent = dir.has_parent_path() ? dir.parent_path() : std::filesystem::path(".");
    for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
        const auto sibling = entry.path().filename().string();
        for (const std::string_view kind : {".tmp-", ".old-"}) {
            const auto prefix = name + std::string(kind);
            if (!sibling.starts_with(prefix)) continue;
            const auto digits = std::string_view(sibling).substr(prefix.size());
            long pid = 0;
            const auto [end, err] =
                std::from_chars(digits.data(), digits.data() + digits.size(), pid);
            if (err == std::errc() && end == digits.data() + digits.size() && process_gone(pid))
                std::filesystem::remove_all(entry.path(), ec);
        }
    }
}

/**
 * @brief Saves a directory the tabret way: @p write_files(tmp, put) writes every data file
 * through `put` (atomic write, size and checksum recorded), then @p manifest(files) gives the
 * manifest.json document, which is sealed; everything lands in a temporary sibling that is
 * swapped in, so an interrupted save leaves the previous directory intact (and the next save
 * removes its leftovers: remove_stale_siblings). @throws io_error.
 */
inline void save_directory(
    const std::filesystem::path& dir,
    const std::function<void(const std::filesystem::path& tmp, const put_file_fn& put)>&
        write_files,
    const std::function<nlohmann::json(const nlohmann::json& files)>& manifest) {
    check_replaceable(dir);
    recover_backup(dir);
    remove_stale_siblings(dir);
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
        write_file_atomic(
            tmp / "manifest.json",
            dump_json(sealed(manifest(files)), 2, (dir / "manifest.json").string()) + "\n");
        fsync_directory(tmp);
        swap_in(tmp, dir);
    } catch (...) {
        std::filesystem::remove_all(tmp, ec);
        throw;
    }
    fsync_directory(dir.has_parent_path() ? dir.parent_path() : std::filesystem::path("."));
}

/**
 * @brief Parses @p dir / manifest.json, after restoring an interrupted save's backup
 * (recover_backup), and checks that it is a @p what (`"format": format`) of @p version with an
 * intact seal.
 * @throws io_error if missing, another format or version, or the seal does not match;
 * parse_error if not JSON; schema_error for a format or version field of the wrong type.
 */
inline nlohmann::json read_manifest(const std::filesystem::path& dir, std::string_view format,
                                    long version, std::string_view what) {
    recover_backup(dir);
    const auto path = (dir / "manifest.json").string();
    auto doc = parse_json(read_text_file(path), path);
    const json_reader r(doc, path, "manifest");
    if (const auto f = r.str("format"); f != format)
        throw io_error(fmt::format("{}: not a {} (format '{}')", path, what, f));
    if (const auto v = r.integer("version"); v != version)
        throw io_error(fmt::format(
            "{}: {} version {} is not supported (this tabret reads version {}); rebuild it", path,
            what, v, version));
    check_seal(doc, path, "manifest");
    return doc;
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
