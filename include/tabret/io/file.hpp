#pragma once
/// @file io/file.hpp
/// @brief Reading whole files and writing them atomically (temp file, fsync, rename).

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "tabret/error.hpp"

namespace tabret {

/** @brief Reads a whole file. @throws io_error naming the path if it is missing or unreadable. */
inline std::string read_text_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw io_error(fmt::format("{}: no such file", path.string()));
    if (std::filesystem::is_directory(path, ec))
        throw io_error(fmt::format("{}: is a directory, expected a file", path.string()));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw io_error(fmt::format("{}: cannot open for reading", path.string()));
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) throw io_error(fmt::format("{}: read failed", path.string()));
    return text;
}

namespace detail {

/// Closes a POSIX file descriptor on scope exit.
struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
};

inline void write_all(int fd, std::string_view data, const std::filesystem::path& path) {
    while (!data.empty()) {
        const auto n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            throw io_error(
                fmt::format("{}: write failed: {}", path.string(), std::strerror(errno)));
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

/// A name no user would choose and no two writers share: pid, thread and random bits.
inline std::string unique_token() {
    static std::atomic<unsigned> counter{0};
    const auto thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
    thread_local std::mt19937_64 rng{std::random_device{}() ^ thread};
    return fmt::format("{}-{:x}-{:016x}{:x}", ::getpid(), thread & 0xffffffU, rng(),
                       counter.fetch_add(1));
}

/// Flushes a directory's entries (new names, renames) to disk. @throws io_error naming it.
inline void fsync_directory(const std::filesystem::path& dir) {
    fd_guard guard{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (guard.fd < 0 || ::fsync(guard.fd) != 0)
        throw io_error(
            fmt::format("{}: cannot sync the directory: {}", dir.string(), std::strerror(errno)));
}

}  // namespace detail

/**
 * @brief Replaces @p path with @p data atomically: writes a temporary beside it
 * (`.<name>.tabret-tmp-<pid>-<thread>-<random>`, unique per call), fsyncs, renames.
 * A crash at any point leaves either the old file or the new one, never a half-written file.
 * @throws io_error naming the path.
 */
inline void write_file_atomic(const std::filesystem::path& path, std::string_view data) {
    const auto tmp = path.parent_path() / fmt::format(".{}.tabret-tmp-{}", path.filename().string(),
                                                      detail::unique_token());
    {
        detail::fd_guard guard{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
        if (guard.fd < 0)
            throw io_error(
                fmt::format("{}: cannot create: {}", tmp.string(), std::strerror(errno)));
        try {
            detail::write_all(guard.fd, data, tmp);
            if (::fsync(guard.fd) != 0)
                throw io_error(
                    fmt::format("{}: fsync failed: {}", tmp.string(), std::strerror(errno)));
        } catch (...) {
            std::filesystem::remove(tmp);
            throw;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp);
        throw io_error(fmt::format("{}: cannot replace: {}", path.string(), ec.message()));
    }
}

}  // namespace tabret
