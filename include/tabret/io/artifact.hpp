#pragma once
/// @file io/artifact.hpp
/// @brief A saved tabret index directory as one artifact (internal): the table index, its join
/// graph and its generated questions are parts of one directory with one sealed manifest, saved,
/// replaced and loaded together.
///
/// What a save may touch (docs/reliability.md):
/// - the target directory only when it is missing, empty, or a tabret artifact: a sealed
///   manifest of a tabret format, and nothing in it but the files that manifest lists (anything
///   else is refused with io_error naming the directory and the foreign files);
/// - its own temporaries and backups beside the target, named `.<name>.tabret-tmp-<token>` and
///   `.<name>.tabret-old-<token>` (token: pid, thread, random) with a marker file inside
///   (`.tabret-save`) naming the target and the token; recovery and clean-up touch nothing else.
/// Saves to one parent directory are serialised by an exclusive flock(2) on that directory, so
/// two threads or processes saving to the same target take turns instead of sharing files.
/// A load opens the directory once and reads every file once through that descriptor, verifying
/// exactly the bytes it uses; when a file is missing or does not match and the directory at the
/// path was replaced meanwhile (a save swapped a new one in), the load starts again, so a load
/// racing a save sees the old artifact or the new one, never a mix or a false corruption error.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/io/artifact_version.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/json_reader.hpp"
#include "tabret/io/sealed_json.hpp"

namespace tabret::detail {

inline constexpr const char* artifact_format = "tabret-index";
inline constexpr const char* manifest_file = "manifest.json";
/// The marker inside tabret's temporaries and backups (and, for a moment, a new artifact).
inline constexpr const char* marker_file = ".tabret-save";
inline constexpr std::uint64_t max_manifest_bytes = std::uint64_t{64} << 20;
/// The largest data file a load reads (a guard against a file that is not what it claims).
inline constexpr std::uint64_t max_artifact_file_bytes = std::uint64_t{64} << 30;

/// One component of an artifact: metadata (a JSON object) and files (name -> bytes).
struct artifact_part {
    nlohmann::json meta = nlohmann::json::object();
    std::map<std::string, std::string> files;
};

/// How a part is called in messages.
inline std::string part_title(std::string_view part) {
    if (part == "index") return "table index";
    if (part == "join_graph") return "join graph";
    if (part == "questions") return "generated questions";
    if (part == "values") return "value index";
    if (part == "tuning") return "tuned pipeline";
    return std::string(part);
}

/// Reads regular file @p name of the directory open as @p dir_fd, all of it, at most
/// @p max_bytes (read_regular_file_at). @throws io_error naming dir / name.
inline std::string read_file_at(int dir_fd, const std::filesystem::path& dir,
                                const std::string& name, std::uint64_t max_bytes) {
    return read_regular_file_at(dir_fd, name, (dir / name).string(), max_bytes);
}

inline std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
}

/// Whether process @p pid has ended (it cannot be signalled: no such process).
inline bool process_gone(long pid) {
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH;
}

/// The target's parent directory and final name (a trailing separator is ignored).
/// @throws io_error for a path without a name ("." or "..").
inline std::pair<std::filesystem::path, std::string> split_target(
    const std::filesystem::path& dir) {
    auto p = dir.lexically_normal();
    if (p.filename().empty() && p.has_parent_path()) p = p.parent_path();
    const auto name = p.filename().string();
    if (name.empty() || name == "." || name == "..")
        throw io_error(fmt::format("{}: not a directory name to save to", dir.string()));
    return {p.has_parent_path() ? p.parent_path() : std::filesystem::path("."), name};
}

/// An exclusive flock(2) on a directory for the lifetime of the object (saves to one parent are
/// serialised; a flock is per open file description, so threads of one process exclude each
/// other too).
class directory_lock {
  public:
    explicit directory_lock(const std::filesystem::path& dir)
        : fd_{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)} {
        if (fd_.fd < 0)
            throw io_error(fmt::format("{}: cannot open the directory: {}", dir.string(),
                                       std::strerror(errno)));
        while (::flock(fd_.fd, LOCK_EX) != 0)
            if (errno != EINTR)
                throw io_error(fmt::format("{}: cannot lock the directory: {}", dir.string(),
                                           std::strerror(errno)));
    }

  private:
    fd_guard fd_;
};

/// The marker of a temporary or backup of target @p name with @p token, if @p dir holds one.
inline std::optional<nlohmann::json> read_marker(const std::filesystem::path& dir,
                                                 std::string_view name, std::string_view token) {
    const fd_guard d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)};
    if (d.fd < 0) return std::nullopt;
    try {
        const auto doc = nlohmann::json::parse(read_file_at(d.fd, dir, marker_file, 4096));
        if (doc.is_object() && doc.value("target", "") == detail::escape_invalid_utf8(name) &&
            doc.value("token", "") == token)
            return doc;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

/// The marker of a temporary or backup of target @p name named with @p token: proves to a later
/// save that this process made it (pid and host tell whether the process has ended). A name that
/// is not UTF-8 (JSON holds nothing else) is kept with its invalid bytes as `\xNN`.
inline std::string marker_text(std::string_view name, std::string_view token) {
    return nlohmann::json{{"target", detail::escape_invalid_utf8(name)},
                          {"token", token},
                          {"pid", ::getpid()},
                          {"host", host_name()}}
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The siblings of target @p name in @p parent that are tabret's temporaries or backups:
/// (path, kind "tmp"/"old", token), checked by name only (see read_marker for the proof).
struct sibling {
    std::filesystem::path path;
    std::string kind;
    std::string token;
};
inline std::vector<sibling> tabret_siblings(const std::filesystem::path& parent,
                                            std::string_view name) {
    std::vector<sibling> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
        const auto s = entry.path().filename().string();
        for (const std::string_view kind : {"tmp", "old"}) {
            const auto prefix = fmt::format(".{}.tabret-{}-", name, kind);
            if (s.size() > prefix.size() && s.starts_with(prefix))
                out.push_back({entry.path(), std::string(kind), s.substr(prefix.size())});
        }
    }
    return out;
}

/// Removes the files @p names (and the marker) of a directory tabret made, then the directory
/// if that left it empty (a file someone else put there keeps it).
inline void remove_owned(const std::filesystem::path& dir, const std::set<std::string>& names) {
    std::error_code ec;
    for (const auto& n : names)  // the marker last: until then it proves the directory is ours
        if (n != marker_file) std::filesystem::remove(dir / n, ec);
    std::filesystem::remove(dir / marker_file, ec);
    std::filesystem::remove(dir, ec);  // only if empty
}

/// The entries of a directory tabret wrote that its manifest lists: for version 3 the files of
/// every part, for earlier versions the top-level `files`.
inline std::set<std::string> listed_files(const nlohmann::json& manifest) {
    std::set<std::string> out{manifest_file, marker_file};
    auto add = [&](const nlohmann::json& files) {
        if (files.is_object())
            for (const auto& [n, _] : files.items()) out.insert(n);
    };
    if (manifest.contains("files")) add(manifest["files"]);
    if (const auto it = manifest.find("parts"); it != manifest.end() && it->is_object())
        for (const auto& [_, part] : it->items())
            if (part.is_object() && part.contains("files")) add(part["files"]);
    return out;
}

/**
 * @brief A whole artifact read in one pass: the manifest and every file it lists, verified
 * (size and FNV-1a checksum) before anything is parsed.
 */
class artifact {
  public:
    /**
     * @brief Reads @p dir (restoring an interrupted save's backup first); retries when a save
     * replaced the directory while it was read.
     * @throws io_error for a missing directory or file, another format or version, a broken
     * seal, a size or checksum mismatch; parse_error / schema_error for a bad manifest.
     */
    /// With @p keep_going, parts that do not verify are listed in broken() instead of throwing;
    /// parts named in @p meta_only are read without their files (a save that replaces them).
    static artifact read(const std::filesystem::path& dir, bool keep_going = false,
                         const std::set<std::string>& meta_only = {}) {
        for (int attempt = 0;; ++attempt) {
            recover_backup(dir);
            const fd_guard d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
            if (d.fd < 0)
                throw io_error(errno == ENOENT ? fmt::format("{}: no such directory", dir.string())
                               : errno == ENOTDIR ? fmt::format("{}: not a directory", dir.string())
                                                  : fmt::format("{}: cannot open: {}", dir.string(),
                                                                std::strerror(errno)));
            struct stat opened {};
            if (::fstat(d.fd, &opened) != 0)
                throw io_error(
                    fmt::format("{}: cannot stat: {}", dir.string(), std::strerror(errno)));
            try {
                return artifact(d.fd, dir, keep_going, meta_only);
            } catch (const error&) {
                if (attempt < 50 && replaced(dir, opened)) continue;
                throw;
            }
        }
    }

    [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
    [[nodiscard]] std::string path_of(std::string_view name) const {
        return (dir_ / name).string();
    }
    [[nodiscard]] std::string manifest_path() const { return path_of(manifest_file); }
    [[nodiscard]] const std::string& catalog_fingerprint() const noexcept { return catalog_; }
    [[nodiscard]] bool has(std::string_view part) const {
        return parts_.find(std::string(part)) != parts_.end();
    }
    /// @throws io_error when the artifact has no such part.
    [[nodiscard]] const artifact_part& part(std::string_view name) const {
        const auto it = parts_.find(std::string(name));
        if (it == parts_.end())
            throw io_error(fmt::format("{}: holds no {} (save it with the index)", dir_.string(),
                                       part_title(name)));
        return it->second;
    }
    /// The verified bytes of file @p name of part @p p. @throws io_error when not listed.
    [[nodiscard]] const std::string& file(std::string_view p, const std::string& name) const {
        const auto& files = part(p).files;
        const auto it = files.find(name);
        if (it == files.end())
            throw io_error(fmt::format("{}: manifest lists no file '{}'", dir_.string(), name));
        return it->second;
    }
    [[nodiscard]] const std::map<std::string, artifact_part>& parts() const noexcept {
        return parts_;
    }
    /// With read(dir, keep_going = true): the parts whose files did not verify, and why.
    [[nodiscard]] const std::map<std::string, std::string>& broken() const noexcept {
        return broken_;
    }

    /**
     * @brief When @p dir is missing but a save was interrupted between the two renames of the
     * fallback swap (no atomic exchange), renames the newest backup of it (a
     * `.<name>.tabret-old-<token>` sibling whose marker names it) back. Touches nothing else.
     */
    static void recover_backup(const std::filesystem::path& dir) {
        std::error_code ec;
        if (std::filesystem::exists(dir, ec)) return;
        const auto [parent, name] = split_target(dir);
        if (!std::filesystem::is_directory(parent, ec)) return;
        const directory_lock lock(parent);
        recover_backup_locked(parent, name);
    }

    /// recover_backup with the parent's lock held.
    static void recover_backup_locked(const std::filesystem::path& parent,
                                      const std::string& name) {
        std::error_code ec;
        const auto target = parent / name;
        if (std::filesystem::exists(target, ec)) return;
        std::filesystem::path best;
        std::filesystem::file_time_type best_time{};
        for (const auto& s : tabret_siblings(parent, name)) {
            if (s.kind != "old" || !read_marker(s.path, name, s.token)) continue;
            if (!std::filesystem::exists(s.path / manifest_file, ec)) continue;
            const auto t = std::filesystem::last_write_time(s.path, ec);
            if (best.empty() || t > best_time) best = s.path, best_time = t;
        }
        if (best.empty()) return;
        std::filesystem::rename(best, target, ec);
        if (!ec) std::filesystem::remove(target / marker_file, ec);
    }

  private:
    artifact(int dir_fd, const std::filesystem::path& dir, bool keep_going,
             const std::set<std::string>& meta_only)
        : dir_(dir) {
        const auto source = manifest_path();
        const auto doc =
            parse_json(read_file_at(dir_fd, dir, manifest_file, max_manifest_bytes), source);
        const json_reader r(doc, source, "manifest");
        if (const auto f = r.str("format"); f != artifact_format)
            throw io_error(fmt::format("{}: not a tabret index (format '{}')", source, f));
        if (const auto v = r.integer("version"); v != artifact_version)
            throw io_error(fmt::format(
                "{}: tabret index version {} is not supported (this tabret reads version {}); "
                "rebuild it",
                source, v, artifact_version));
        check_seal(doc, source, "manifest");
        catalog_ = r.str("catalog_fnv1a64");
        for (const auto& [name, p] : r.get("parts", nlohmann::json::value_t::object).items()) {
            try {
                parts_.emplace(name, read_part(dir_fd, name, p, !meta_only.contains(name)));
            } catch (const io_error& e) {
                if (!keep_going) throw;
                broken_.emplace(name, e.what());
            }
        }
    }

    artifact_part read_part(int dir_fd, const std::string& name, const nlohmann::json& p,
                            bool with_files) const {
        const auto source = manifest_path();
        const json_reader pr(p, source, fmt::format("manifest.parts.{}", name));
        artifact_part part;
        part.meta = pr.get("meta", nlohmann::json::value_t::object);
        if (!with_files) return part;
        for (const auto& [file, entry] : pr.get("files", nlohmann::json::value_t::object).items()) {
            check_file_name(file, source);
            const json_reader er(entry, source, fmt::format("manifest file '{}'", file));
            const auto bytes = er.count("bytes");
            const auto sum = er.str("fnv1a64");
            auto data = read_file_at(dir_fd, dir_, file, max_artifact_file_bytes);
            if (data.size() != bytes)
                throw io_error(
                    fmt::format("{}: size {} does not match the manifest: the file is truncated or "
                                "corrupt",
                                path_of(file), data.size()));
            if (checksum_hex(data) != sum)
                throw io_error(
                    fmt::format("{}: checksum mismatch: the file is corrupt", path_of(file)));
            part.files.emplace(file, std::move(data));
        }
        return part;
    }

    static void check_file_name(const std::string& name, std::string_view source) {
        if (name.empty() || name == "." || name == ".." || name == manifest_file ||
            name == marker_file || name.find('/') != std::string::npos ||
            name.find('\0') != std::string::npos)
            throw io_error(fmt::format("{}: lists an invalid file name '{}'", source, name));
    }

    /// Whether the directory at @p dir is no longer the one opened (a save swapped it out).
    static bool replaced(const std::filesystem::path& dir, const struct stat& opened) {
        struct stat now {};
        return ::stat(dir.c_str(), &now) != 0 || now.st_ino != opened.st_ino ||
               now.st_dev != opened.st_dev;
    }

    std::filesystem::path dir_;
    std::string catalog_;
    std::map<std::string, artifact_part> parts_;
    std::map<std::string, std::string> broken_;
};

/// What is at a save's target: nothing, an empty directory, or a tabret artifact (its files).
struct existing_target {
    bool exists = false;
    std::set<std::string> owned;      ///< entries tabret wrote (may be removed)
    std::optional<artifact> current;  ///< readable version-3 artifact, for carrying parts
    std::string unreadable;           ///< why `current` is empty for a tabret directory
};

/**
 * @brief Checks that @p target may be replaced: missing, an empty directory, or a directory
 * that a sealed tabret manifest describes completely; reads its parts, those in
 * @p replaced_parts without their files. @throws io_error naming the target and, for foreign
 * files, the first of them.
 */
inline existing_target inspect_target(const std::filesystem::path& target,
                                      const std::set<std::string>& replaced_parts) {
    existing_target out;
    std::error_code ec;
    const auto st = std::filesystem::symlink_status(target, ec);
    if (ec || st.type() == std::filesystem::file_type::not_found) return out;
    out.exists = true;
    if (st.type() == std::filesystem::file_type::symlink)
        throw io_error(
            fmt::format("{}: is a symbolic link; not replacing it (save to the directory it names)",
                        target.string()));
    if (st.type() != std::filesystem::file_type::directory)
        throw io_error(
            fmt::format("{}: exists and is not a directory; not replacing it", target.string()));
    std::vector<std::string> entries;
    for (const auto& e : std::filesystem::directory_iterator(target, ec))
        entries.push_back(e.path().filename().string());
    if (ec) throw io_error(fmt::format("{}: cannot list: {}", target.string(), ec.message()));
    if (entries.empty()) return out;
    const fd_guard d{::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    nlohmann::json manifest;
    try {
        if (d.fd < 0) throw io_error(std::strerror(errno));
        manifest =
            nlohmann::json::parse(read_file_at(d.fd, target, manifest_file, max_manifest_bytes));
        const auto f = manifest.is_object() ? manifest.value("format", "") : "";
        if (f != "tabret-index" && f != "tabret-questions") throw io_error("not a tabret format");
        check_seal(manifest, "", "manifest");
    } catch (const std::exception&) {
        throw io_error(fmt::format(
            "{}: exists and is not a saved tabret index (no sealed tabret manifest.json); not "
            "replacing it",
            target.string()));
    }
    out.owned = listed_files(manifest);
    std::vector<std::string> foreign;
    for (const auto& e : entries)
        if (!out.owned.contains(e)) foreign.push_back(e);
    if (!foreign.empty())
        throw io_error(fmt::format(
            "{}: holds {} file(s) tabret did not write ('{}'{}); not replacing it: move them "
            "out or save elsewhere",
            target.string(), foreign.size(), foreign.front(), foreign.size() > 1 ? ", …" : ""));
    try {
        out.current.emplace(artifact::read(target, true, replaced_parts));
    } catch (const std::exception& e) {
        out.unreadable = e.what();
    }
    return out;
}

/// A sibling without a valid marker is removed only when the pid in its name has ended and it
/// holds nothing but (at most) an incomplete marker: a save killed while it wrote its marker.
inline void remove_if_markerless_leftover(const sibling& s) {
    long pid = 0;
    const auto digits = std::string_view(s.token).substr(0, s.token.find('-'));
    const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (err != std::errc() || end != digits.data() + digits.size() || !process_gone(pid)) return;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(s.path, ec))
        if (e.path().filename() != marker_file) return;
    if (ec) return;
    std::filesystem::remove(s.path / marker_file, ec);
    std::filesystem::remove(s.path, ec);
}

/// Removes what dead saves of @p name left in @p parent: temporaries, and backups when the
/// target exists (a backup that is the only copy is restored by recover_backup, never removed).
/// Only siblings whose marker names the target, this host, and an ended process (and markerless
/// ones as remove_if_markerless_leftover says).
inline void remove_stale_siblings(const std::filesystem::path& parent, const std::string& name) {
    std::error_code ec;
    const bool target_exists = std::filesystem::exists(parent / name, ec);
    const auto host = host_name();
    for (const auto& s : tabret_siblings(parent, name)) {
        const auto marker = read_marker(s.path, name, s.token);
        if (!marker) {
            remove_if_markerless_leftover(s);
            continue;
        }
        if (marker->value("host", "") != host) continue;
        const auto pid = marker->value("pid", 0L);
        if (!process_gone(pid) || (s.kind == "old" && !target_exists)) continue;
        std::filesystem::remove_all(s.path, ec);
    }
}

/// Writes @p parts and their sealed manifest into the new directory @p tmp.
inline void write_artifact(const std::filesystem::path& tmp, const std::string& catalog_fp,
                           const std::map<std::string, artifact_part>& parts) {
    nlohmann::json manifest_parts = nlohmann::json::object();
    for (const auto& [name, part] : parts) {
        nlohmann::json files = nlohmann::json::object();
        for (const auto& [file, data] : part.files) {
            write_new_file(tmp / file, data);
            files[file] = {{"bytes", data.size()}, {"fnv1a64", checksum_hex(data)}};
        }
        manifest_parts[name] = {{"meta", part.meta}, {"files", files}};
    }
    const nlohmann::json manifest{{"format", artifact_format},
                                  {"version", artifact_version},
                                  {"catalog_fnv1a64", catalog_fp},
                                  {"parts", manifest_parts}};
    write_new_file(tmp / manifest_file,
                   dump_json(sealed(manifest), 2, (tmp / manifest_file).string()) + "\n");
    fsync_directory(tmp);
}

/// Swaps the finished @p tmp (whose marker is @p tmp_marker) in for @p target (see the file
/// comment), removing the old artifact's owned files afterwards.
inline void swap_artifact(const std::filesystem::path& tmp, const std::string& tmp_marker,
                          const std::filesystem::path& target, const existing_target& old) {
    std::error_code ec;
    if (!old.exists) {
        std::filesystem::rename(tmp, target, ec);
        if (ec) throw io_error(fmt::format("{}: cannot write: {}", target.string(), ec.message()));
        return;
    }
#ifdef __linux__
    // The old artifact ends up under tmp's name: give it tmp's marker first, so that if this
    // process dies before removing it, the next save knows it for a dead save's leftover.
    std::filesystem::remove(target / marker_file, ec);
    write_new_file(target / marker_file, tmp_marker);
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
        remove_owned(tmp, old.owned);  // the previous artifact, now at tmp
        return;
    }
    const int err = errno;
    std::filesystem::remove(target / marker_file, ec);
    if (err != EINVAL && err != ENOSYS && err != ENOTSUP)
        throw io_error(fmt::format("{}: cannot replace: {}", target.string(), std::strerror(err)));
#endif
    // No atomic exchange: back the old artifact up under a marked name, then rename the new one
    // in; a crash in between leaves the backup, which the next load or save restores.
    const auto [parent, name] = split_target(target);
    const auto token = unique_token();
    const auto backup = parent / fmt::format(".{}.tabret-old-{}", name, token);
    write_new_file(target / marker_file, marker_text(name, token));
    std::filesystem::rename(target, backup, ec);
    if (ec) {
        std::filesystem::remove(target / marker_file, ec);
        throw io_error(fmt::format("{}: cannot replace: {}", target.string(), ec.message()));
    }
    std::filesystem::rename(tmp, target, ec);
    if (ec) {
        std::error_code back;
        std::filesystem::rename(backup, target, back);
        throw io_error(fmt::format("{}: cannot write: {}", target.string(), ec.message()));
    }
    remove_owned(backup, old.owned);
}

/// The embedder of the index the saved @p parts will belong to: the given index's, or the one
/// already saved at @p target for the same catalog. @throws io_error when there is none.
inline nlohmann::json index_embedder(const std::map<std::string, artifact_part>& parts,
                                     const existing_target& old, const std::string& catalog_fp,
                                     const std::filesystem::path& target) {
    if (const auto it = parts.find("index"); it != parts.end())
        return it->second.meta.value("embedder", nlohmann::json());
    if (!old.current || !old.current->has("index"))
        throw io_error(
            fmt::format("{}: holds no table index for this catalog; save the index there first",
                        target.string()));
    if (old.current->catalog_fingerprint() != catalog_fp)
        throw io_error(fmt::format(
            "{}: holds the table index of another catalog than the {}'s; not saving it",
            target.string(), parts.empty() ? "part" : part_title(parts.begin()->first)));
    return old.current->part("index").meta.value("embedder", nlohmann::json());
}

/// Adds to @p parts the parts of @p old that are not given and fit (same catalog, and no
/// embedder or the index's). @throws io_error when one would be dropped, unless @p replace.
inline void carry_parts(std::map<std::string, artifact_part>& parts, const existing_target& old,
                        const std::string& catalog_fp, const nlohmann::json& embedder, bool replace,
                        const std::filesystem::path& target) {
    if (!old.current) {
        if (old.owned.empty() || replace) return;  // nothing there, or the caller drops it all
        throw io_error(fmt::format(
            "{}: cannot keep what it holds ({}); pass replace=True (tabret index --replace) to "
            "overwrite it",
            target.string(), old.unreadable));
    }
    std::vector<std::string> dropped;
    for (const auto& [name, part] : old.current->parts()) {
        if (parts.contains(name)) continue;
        const bool fits = old.current->catalog_fingerprint() == catalog_fp &&
                          part.meta.value("embedder", embedder) == embedder;
        if (fits)
            parts.emplace(name, part);
        else
            dropped.push_back(part_title(name));
    }
    for (const auto& [name, why] : old.current->broken())
        if (!parts.contains(name))
            dropped.push_back(fmt::format("{} that is damaged ({})", part_title(name), why));
    if (!dropped.empty() && !replace)
        throw io_error(fmt::format(
            "{}: holds {} made for another catalog or embedder; saving would discard it: save "
            "elsewhere, or pass replace=True (tabret index --replace)",
            target.string(), fmt::join(dropped, " and ")));
}

/**
 * @brief Saves @p parts into the artifact at @p dir for the catalog with fingerprint
 * @p catalog_fp. Parts of the existing artifact that are not given are kept when they belong
 * to the same catalog and embedder as the index; otherwise the save is refused, unless
 * @p replace, which drops them. Everything lands in a marked temporary sibling that is swapped
 * in, so an interrupted save leaves the previous artifact. @throws io_error.
 */
inline void save_artifact(const std::filesystem::path& dir, const std::string& catalog_fp,
                          std::map<std::string, artifact_part> parts, bool replace) {
    const auto [parent, name] = split_target(dir);
    const auto target = parent / name;
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    const directory_lock lock(parent);
    artifact::recover_backup_locked(parent, name);
    remove_stale_siblings(parent, name);
    std::set<std::string> given;
    for (const auto& [part_name, _] : parts) given.insert(part_name);
    const auto old = inspect_target(target, given);

    const auto embedder = index_embedder(parts, old, catalog_fp, target);
    for (const auto& [part_name, part] : parts)
        if (part.meta.value("embedder", embedder) != embedder)
            throw io_error(fmt::format(
                "{}: the {} was made with embedder {}, the index there with {}; not saving it",
                target.string(), part_title(part_name), part.meta["embedder"].dump(),
                embedder.dump()));
    carry_parts(parts, old, catalog_fp, embedder, replace, target);
    if (!parts.contains("index"))  // the index there was damaged and replace dropped it
        throw io_error(
            fmt::format("{}: holds no table index for this catalog; save the index there first",
                        target.string()));

    const auto token = unique_token();
    const auto tmp = parent / fmt::format(".{}.tabret-tmp-{}", name, token);
    const auto marker = marker_text(name, token);
    if (!std::filesystem::create_directory(tmp, ec) || ec)
        throw io_error(
            fmt::format("{}: cannot create: {}", tmp.string(), ec ? ec.message() : "exists"));
    try {
        write_new_file(tmp / marker_file, marker);
        write_artifact(tmp, catalog_fp, parts);
        swap_artifact(tmp, marker, target, old);
    } catch (...) {
        std::filesystem::remove_all(tmp, ec);
        throw;
    }
    std::filesystem::remove(target / marker_file, ec);
    fsync_directory(target);
    fsync_directory(parent);
}

}  // namespace tabret::detail
