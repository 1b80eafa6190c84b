#pragma once
/// @file io/file.hpp
/// @brief Reading whole files and writing them atomically (temp file, fsync, rename).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "tabret/error.hpp"

namespace tabret {

/// The largest file read_text_file reads (4 GiB): larger ones are refused before reading.
inline constexpr std::uint64_t max_read_bytes = std::uint64_t{4} << 30;

namespace detail {

/// Closes a POSIX file descriptor on scope exit.
struct fd_guard {
    int fd;
    ~fd_guard() {
        if (fd >= 0) ::close(fd);
    }
};

/// Reads the whole regular file open as @p fd (named @p shown in errors), at most @p max_bytes.
inline std::string read_open_regular_file(int fd, const std::string& shown,
                                          std::uint64_t max_bytes) {
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw io_error(fmt::format("{}: cannot stat: {}", shown, std::strerror(errno)));
    if (S_ISDIR(st.st_mode))
        throw io_error(fmt::format("{}: is a directory, expected a file", shown));
    if (!S_ISREG(st.st_mode))
        throw io_error(fmt::format("{}: not a regular file ({}); tabret reads only regular files",
                                   shown,
                                   S_ISFIFO(st.st_mode)   ? "a FIFO"
                                   : S_ISSOCK(st.st_mode) ? "a socket"
                                                          : "a device"));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes)
        throw io_error(fmt::format("{}: is {} bytes, more than the limit of {} bytes", shown, size,
                                   max_bytes));
    // Opened with O_NONBLOCK so that a FIFO cannot block open(); a regular file reads normally.
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    std::string text(static_cast<std::size_t>(size), '\0');
    std::size_t done = 0;
    for (;;) {
        if (done == text.size()) {  // at the size fstat gave: read on (to EOF), bounded
            if (done > max_bytes)
                throw io_error(fmt::format("{}: grew beyond the limit of {} bytes while read",
                                           shown, max_bytes));
            text.resize(static_cast<std::size_t>(
                std::min<std::uint64_t>(max_bytes + 1, std::max(done + 4096, 2 * done))));
        }
        const auto n = ::read(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw io_error(fmt::format("{}: read failed: {}", shown, std::strerror(errno)));
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    if (done > max_bytes)
        throw io_error(
            fmt::format("{}: grew beyond the limit of {} bytes while read", shown, max_bytes));
    text.resize(done);
    return text;
}

}  // namespace detail

/**
 * @brief Reads the regular file @p name relative to the directory open as @p dir_fd
 * (AT_FDCWD: the working directory), at most @p max_bytes; @p shown names it in errors.
 * Opens with O_NONBLOCK (a FIFO cannot hang the open), then checks with fstat that the
 * descriptor is a regular file (not a FIFO, socket, device such as /dev/zero, or directory;
 * symlinks are followed) and its size is within the limit before reading.
 * @throws io_error naming @p shown.
 */
inline std::string read_regular_file_at(int dir_fd, const std::filesystem::path& name,
                                        const std::string& shown,
                                        std::uint64_t max_bytes = max_read_bytes) {
    const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        const int err = errno;
        if (err == ENOENT) throw io_error(fmt::format("{}: no such file", shown));
        if (err == EISDIR)
            throw io_error(fmt::format("{}: is a directory, expected a file", shown));
        throw io_error(fmt::format("{}: cannot open for reading: {}", shown, std::strerror(err)));
    }
    const detail::fd_guard guard{fd};
    return detail::read_open_regular_file(fd, shown, max_bytes);
}

/**
 * @brief Reads a whole regular file (see read_regular_file_at: FIFOs, devices and files over
 * max_read_bytes are refused before reading). @throws io_error naming the path if it is
 * missing, unreadable or not a regular file.
 */
inline std::string read_text_file(const std::filesystem::path& path) {
    return read_regular_file_at(AT_FDCWD, path, path.string());
}

namespace detail {

inline void write_all(int fd, std::string_view data, const std::string& shown) {
    while (!data.empty()) {
        const auto n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw io_error(fmt::format("{}: write failed: {}", shown, std::strerror(errno)));
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

/// Writes a new file (it must not exist, rw-r--r-- before the umask) and fsyncs it; errors name
/// @p shown (default: @p path). @throws io_error.
inline void write_new_file(const std::filesystem::path& path, std::string_view data,
                           const std::string& shown = {}) {
    const auto& name = shown.empty() ? path.string() : shown;
    const fd_guard f{::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
    if (f.fd < 0) throw io_error(fmt::format("{}: cannot create: {}", name, std::strerror(errno)));
    write_all(f.fd, data, name);
    if (::fsync(f.fd) != 0)
        throw io_error(fmt::format("{}: fsync failed: {}", name, std::strerror(errno)));
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

/// What a single-file save may replace (docs/reliability.md, "What a save may touch"): nothing,
/// or a regular file; returns the old file's permission bits (none when @p path is absent). A
/// symbolic link is refused, as an index save refuses one: a save never replaces a link nor writes
/// through it to a file elsewhere.
/// @throws io_error naming @p path for a link, a directory, a FIFO, a socket or a device, and
/// for a parent directory that is missing or cannot be searched.
inline std::optional<::mode_t> replaceable_file_mode(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        const int err = errno;
        if (err != ENOENT)
            throw io_error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(err)));
        const auto parent = path.has_parent_path() ? path.parent_path() : ".";
        std::error_code ec;
        if (!std::filesystem::is_directory(parent, ec))
            throw io_error(fmt::format("{}: cannot write: the directory {} does not exist",
                                       path.string(), parent.string()));
        return std::nullopt;
    }
    if (S_ISREG(st.st_mode)) return st.st_mode & 0777;
    const char* what = S_ISLNK(st.st_mode)    ? "a symbolic link"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                                              : "not a regular file";
    throw io_error(fmt::format("{}: is {}, not a regular file; not replacing it{}", path.string(),
                               what, S_ISLNK(st.st_mode) ? " (save to the file it names)" : ""));
}

}  // namespace detail

/**
 * @brief Replaces the regular file @p path (or creates it) with @p data atomically: writes a
 * temporary beside it (`.<name>.tabret-tmp-<pid>-<thread>-<random>`, unique per call) with the
 * old file's permissions, fsyncs, renames. A crash at any point leaves either the old file or the
 * new one, never a half-written file. The one writer of every single-file save (catalog JSON,
 * HNSW and join-graph files, LLM recordings): a symbolic link, directory, FIFO, socket or device
 * at @p path is refused and left as it is (detail::replaceable_file_mode). Not atomic against
 * another process replacing @p path with such a file between the check and the rename.
 * @throws io_error naming @p path.
 */
inline void write_file_atomic(const std::filesystem::path& path, std::string_view data) {
    const auto old_mode = detail::replaceable_file_mode(path);
    const auto tmp = path.parent_path() / fmt::format(".{}.tabret-tmp-{}", path.filename().string(),
                                                      detail::unique_token());
    std::error_code ignored;
    try {
        detail::write_new_file(tmp, data, path.string());
        if (old_mode && ::chmod(tmp.c_str(), *old_mode) != 0)
            throw io_error(fmt::format("{}: cannot keep its permissions: {}", path.string(),
                                       std::strerror(errno)));
    } catch (...) {
        std::filesystem::remove(tmp, ignored);
        throw;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;  // before remove() can change it
        std::filesystem::remove(tmp, ignored);
        throw io_error(fmt::format("{}: cannot replace: {}", path.string(), std::strerror(err)));
    }
}

}  // namespace tabret
