#pragma once
/// @file rewriting/response_cache.hpp
/// @brief LLM answers cached by (model, prompt), in memory or in a SQLite database file,
/// so that reruns are free and deterministic.

#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/io/checksum.hpp"
#include "tabret/io/file.hpp"
#include "tabret/rewriting/llm.hpp"
#include "tabret/rewriting/text.hpp"

namespace tabret {

namespace detail::rw {

/// Length-prefixed so that no (model, prompt) pair can collide with another.
inline std::string cache_key(std::string_view model, std::string_view prompt) {
    return fmt::format("{}:{}\n{}", model.size(), model, prompt);
}

/// The first 60 bytes of @p text, for a message.
inline std::string snippet(std::string_view text) {
    return text.size() <= 60 ? std::string(text) : std::string(text.substr(0, 60)) + "...";
}

inline std::string cache_line(std::string_view model, std::string_view prompt,
                              std::string_view completion) {
    const nlohmann::json j = {{"model", model}, {"prompt", prompt}, {"completion", completion}};
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace detail::rw

/**
 * @brief A cache of LLM completions keyed by (model name, prompt).
 *
 * In memory only, or backed by a SQLite database file (format `tabret-response-cache` 1):
 * one table `responses(model BLOB, prompt BLOB, completion BLOB, checksum INTEGER,
 * PRIMARY KEY(model, prompt))` (checksum: 64-bit FNV-1a of the entry, checked by find()),
 * `PRAGMA application_id` 0x74627263 ("tbrc") and `PRAGMA user_version` 1. Keys are compared
 * as exact bytes (a NUL is a byte like any other). The database runs in WAL mode with a busy
 * timeout of busy_timeout_ms; each put_many is one transaction, and a later put for the same
 * key wins. Any number of caches on the same file, in any number of threads and processes, may
 * read and write at once: nothing committed is lost, and a reader sees every committed entry.
 * SQLite keeps `<file>-wal` and `<file>-shm` next to the file while it is open.
 *
 * A file that is not such a database is never modified: an existing file that is not SQLite
 * (the JSON-lines format of earlier versions, or anything else), a SQLite database of another
 * application, or a damaged one (opening runs `PRAGMA quick_check`, linear in the file's size;
 * a damaged entry found later fails its checksum) is an io_error naming it. A JSON-lines cache of
 * earlier versions can be copied into a cache with import_jsonl(). An empty (0-byte) file is taken
 * as a new database.
 *
 * An existing cache this process cannot write (a read-only file or directory, a read-only
 * filesystem) is opened read-only (read_only()): it is read, never written.
 *
 * Thread-safe: every member locks one mutex around the connection.
 */
class response_cache {
  public:
    static constexpr int application_id = 0x74627263;  // "tbrc"
    static constexpr int format_version = 1;
    static constexpr int busy_timeout_ms = 60'000;

    /** @brief An empty in-memory cache. */
    response_cache() { open(":memory:", true); }

    /**
     * @brief A cache backed by @p file: opens the database, creating it if it does not exist.
     * @throws io_error naming the file if it cannot be opened or created, or is not a tabret
     * response cache (see the class comment); the file is then left untouched.
     */
    explicit response_cache(std::filesystem::path file) : file_(std::move(file)) {
        read_only_ = check_existing(*file_) && !writable(*file_);
        open(file_->string(), false);
    }

    response_cache(const response_cache&) = delete;
    response_cache& operator=(const response_cache&) = delete;

    /** @brief The cached completion, or nullopt. @throws io_error on a database error. */
    [[nodiscard]] std::optional<std::string> find(std::string_view model,
                                                  std::string_view prompt) const {
        std::lock_guard lock(mutex_);
        auto* s = find_.get();
        sqlite3_reset(s);
        bind(s, 1, model);
        bind(s, 2, prompt);
        const int rc = sqlite3_step(s);
        std::optional<std::string> out;
        if (rc == SQLITE_ROW) {
            out = column(s, 0);
            const auto sum = static_cast<std::uint64_t>(sqlite3_column_int64(s, 1));
            if (sum != row_checksum(model, prompt, *out)) {
                sqlite3_reset(s);
                throw io_error(
                    fmt::format("{}: response cache: the entry of model \"{}\" for "
                                "prompt \"{}\" is damaged (checksum mismatch)",
                                label(), detail::rw::snippet(model), detail::rw::snippet(prompt)));
            }
        } else if (rc != SQLITE_DONE) {
            fail("cannot read");
        }
        sqlite3_reset(s);
        return out;
    }

    /** @brief Stores one completion (committed to the file, if any). @throws io_error. */
    void put(std::string_view model, std::string_view prompt, std::string_view completion) {
        const std::string p(prompt), c(completion);
        put_many(model, std::span<const std::string>(&p, 1), std::span<const std::string>(&c, 1));
    }

    /**
     * @brief Stores a batch in one transaction: @p completions[i] answers @p prompts[i].
     * @throws error on a length mismatch; io_error if the database cannot be written (then
     * nothing of the batch is stored).
     */
    void put_many(std::string_view model, std::span<const std::string> prompts,
                  std::span<const std::string> completions) {
        if (prompts.size() != completions.size())
            throw error(fmt::format("response_cache: {} prompts but {} completions", prompts.size(),
                                    completions.size()));
        if (prompts.empty()) return;
        check_writable();
        std::lock_guard lock(mutex_);
        transaction tx(*this);
        auto* s = insert_.get();
        for (std::size_t i = 0; i < prompts.size(); ++i) {
            sqlite3_reset(s);
            bind(s, 1, model);
            bind(s, 2, prompts[i]);
            bind(s, 3, completions[i]);
            bind_checksum(s, 4, row_checksum(model, prompts[i], completions[i]));
            if (sqlite3_step(s) != SQLITE_DONE) {
                sqlite3_reset(s);
                fail("cannot write");
            }
        }
        sqlite3_reset(s);
        tx.commit();
    }

    /**
     * @brief Copies the entries of a JSON-lines cache written by earlier versions (one object
     * `{"model": …, "prompt": …, "completion": …}` per line; a later line for the same key
     * wins; blank lines are skipped) into this cache, in one transaction, and returns how many
     * lines were read. @p jsonl is only read. A last line without its newline that does not
     * parse (a write cut short) is ignored and counted in truncated_lines().
     * @throws io_error if @p jsonl cannot be read; parse_error naming the file and line for any
     * other line that is not such an object (then nothing is imported).
     */
    std::size_t import_jsonl(const std::filesystem::path& jsonl) {
        check_writable();
        const auto text = read_text_file(jsonl);
        std::vector<std::array<std::string, 3>> rows;
        std::size_t pos = 0, line_no = 0, truncated = 0;
        while (pos < text.size()) {
            ++line_no;
            const auto nl = text.find('\n', pos);
            const bool complete = nl != std::string::npos;
            const auto end = complete ? nl : text.size();
            const std::string_view line(text.data() + pos, end - pos);
            if (!detail::rw::trim(line).empty()) {
                auto row = parse_jsonl_line(jsonl, line, line_no, complete);
                if (!row) {
                    truncated = 1;
                    break;
                }
                rows.push_back(std::move(*row));
            }
            pos = complete ? nl + 1 : text.size();
        }
        std::lock_guard lock(mutex_);
        transaction tx(*this);
        auto* s = insert_.get();
        for (const auto& r : rows) {
            sqlite3_reset(s);
            for (int i = 0; i < 3; ++i) bind(s, i + 1, r[static_cast<std::size_t>(i)]);
            bind_checksum(s, 4, row_checksum(r[0], r[1], r[2]));
            if (sqlite3_step(s) != SQLITE_DONE) {
                sqlite3_reset(s);
                fail("cannot write");
            }
        }
        sqlite3_reset(s);
        tx.commit();
        truncated_lines_ = truncated;
        return rows.size();
    }

    /** @brief Number of distinct (model, prompt) keys held (in the file: by every writer). */
    [[nodiscard]] std::size_t size() const {
        std::lock_guard lock(mutex_);
        auto* s = count_.get();
        sqlite3_reset(s);
        if (sqlite3_step(s) != SQLITE_ROW) {
            sqlite3_reset(s);
            fail("cannot read");
        }
        const auto n = static_cast<std::size_t>(sqlite3_column_int64(s, 0));
        sqlite3_reset(s);
        return n;
    }

    /** @brief Lines ignored by the last import_jsonl() because its file ended inside one. */
    [[nodiscard]] std::size_t truncated_lines() const {
        std::lock_guard lock(mutex_);
        return truncated_lines_;
    }

    /**
     * @brief True when the backing file exists but cannot be written by this process (the file,
     * or the directory that must hold its `-wal` and `-shm`, is not writable, or lies on a
     * read-only filesystem). Such a cache is opened read-only: find() answers from it; put(),
     * put_many() and import_jsonl() throw io_error; cached_llm() asks the LLM for misses and
     * does not store the answers.
     */
    [[nodiscard]] bool read_only() const noexcept { return read_only_; }

    /** @brief The backing file, if any. */
    [[nodiscard]] const std::optional<std::filesystem::path>& file() const noexcept {
        return file_;
    }

  private:
    struct db_closer {
        void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
    };
    struct stmt_finalizer {
        void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
    };
    using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

    /// BEGIN IMMEDIATE … COMMIT; rolled back when left without commit().
    class transaction {
      public:
        explicit transaction(const response_cache& c) : c_(c) {
            c_.exec("BEGIN IMMEDIATE", "cannot start a write transaction");
        }
        transaction(const transaction&) = delete;
        transaction& operator=(const transaction&) = delete;
        void commit() {
            c_.exec("COMMIT", "cannot commit");
            done_ = true;
        }
        ~transaction() {
            if (!done_) sqlite3_exec(c_.db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        }

      private:
        const response_cache& c_;
        bool done_ = false;
    };

    [[nodiscard]] std::string label() const { return file_ ? file_->string() : ":memory:"; }

    [[noreturn]] void fail(std::string_view what) const {
        throw io_error(fmt::format("{}: response cache: {}: {}", label(), what,
                                   db_ ? sqlite3_errmsg(db_.get()) : "out of memory"));
    }

    void exec(const char* sql, std::string_view what) const {
        if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(what);
    }

    [[nodiscard]] stmt_ptr prepare(const char* sql) const {
        sqlite3_stmt* raw = nullptr;
        if (sqlite3_prepare_v2(db_.get(), sql, -1, &raw, nullptr) != SQLITE_OK)
            fail("cannot read the database");
        return stmt_ptr(raw);
    }

    [[nodiscard]] long long pragma_int(const char* sql) const {
        const auto s = prepare(sql);
        const int rc = sqlite3_step(s.get());
        if (rc == SQLITE_ROW) return sqlite3_column_int64(s.get(), 0);
        if (rc != SQLITE_DONE) fail("cannot read the database");
        return 0;
    }

    static void bind(sqlite3_stmt* s, int i, std::string_view bytes) {
        // Always a BLOB (even when empty), so that keys compare as exact bytes.
        static const char empty = 0;
        sqlite3_bind_blob64(s, i, bytes.empty() ? &empty : bytes.data(), bytes.size(),
                            SQLITE_TRANSIENT);
    }

    static void bind_checksum(sqlite3_stmt* s, int i, std::uint64_t sum) {
        sqlite3_bind_int64(s, i, static_cast<sqlite3_int64>(sum));
    }

    /// Stored with each entry and checked by find(): SQLite does not checksum its pages.
    static std::uint64_t row_checksum(std::string_view model, std::string_view prompt,
                                      std::string_view completion) {
        return detail::fnv1a(completion, detail::fnv1a(detail::rw::cache_key(model, prompt)));
    }

    static std::string column(sqlite3_stmt* s, int i) {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(s, i));
        const auto n = static_cast<std::size_t>(sqlite3_column_bytes(s, i));
        return p ? std::string(p, n) : std::string{};
    }

    void check_writable() const {
        if (read_only_)
            throw io_error(fmt::format(
                "{}: response cache: opened read-only (the file or its directory cannot be "
                "written); nothing was stored",
                label()));
    }

    /// Whether this process may write @p file and create its `-wal`, `-shm` and journal
    /// beside it (false on a read-only filesystem, as root too).
    static bool writable(const std::filesystem::path& file) {
        const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
        return ::access(file.c_str(), W_OK) == 0 && ::access(dir.c_str(), W_OK) == 0;
    }

    /// On a read-only filesystem nobody can change the file, so SQLite may read it without
    /// locks or a `-shm` file (`immutable=1`); elsewhere another process may be writing it.
    static bool on_read_only_filesystem(const std::filesystem::path& file) {
        struct statvfs st {};
        return ::statvfs(file.c_str(), &st) == 0 && (st.f_flag & ST_RDONLY) != 0;
    }

    /// A `file:` URI naming @p path (SQLite's URI syntax: '%', '?' and '#' escaped; an
    /// absolute path after an empty authority, so that `//x` is no host).
    static std::string file_uri(const std::string& path) {
        std::string out = path.starts_with('/') ? "file://" : "file:";
        for (const char c : path) {
            if (c == '%' || c == '?' || c == '#')
                out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
            else
                out += c;
        }
        return out;
    }

    /// Refuses, before SQLite touches it, anything at @p path that is not a SQLite file;
    /// returns whether a file exists there.
    static bool check_existing(const std::filesystem::path& path) {
        std::error_code ec;
        const auto st = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(st)) return false;
        if (!std::filesystem::is_regular_file(st))
            throw io_error(
                fmt::format("{}: not a regular file (a response cache is a SQLite "
                            "database file)",
                            path.string()));
        const auto size = std::filesystem::file_size(path, ec);
        if (ec || size == 0) return true;
        std::array<char, 16> header{};
        std::ifstream in(path, std::ios::binary);
        if (!in) throw io_error(fmt::format("{}: cannot open for reading", path.string()));
        in.read(header.data(), header.size());
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == header.size() && std::memcmp(header.data(), "SQLite format 3\0", 16) == 0)
            return true;
        const std::string_view head(header.data(), got);
        const auto first = head.find_first_not_of(" \t\r\n");
        if (first != std::string_view::npos && head[first] == '{')
            throw io_error(fmt::format(
                "{}: not a tabret response cache: this looks like the JSON-lines cache of earlier "
                "tabret versions, which is no longer read in place; the file was left untouched. "
                "Import it into a new cache with ResponseCache(new_path).import_jsonl(old_path)",
                path.string()));
        throw io_error(fmt::format(
            "{}: not a tabret response cache (not a SQLite database); the file was left untouched",
            path.string()));
    }

    /// Opens @p name. A read-only cache is opened `mode=ro`, or `immutable=1` on a read-only
    /// filesystem or where `mode=ro` cannot read it (a WAL database whose `-shm` cannot be made
    /// in a directory this process cannot write).
    void open(const std::string& name, bool memory) {
        if (!read_only_ || on_read_only_filesystem(name)) return open(name, memory, read_only_);
        try {
            open(name, memory, false);
        } catch (const io_error&) {
            open(name, memory, true);
        }
    }

    void open(const std::string& name, bool memory, bool immutable) {
        sqlite3* raw = nullptr;
        const auto target =
            read_only_ ? file_uri(name) + (immutable ? "?immutable=1" : "?mode=ro") : name;
        const int flags = read_only_ ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                                     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        const int rc = sqlite3_open_v2(target.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
        db_.reset(raw);
        if (rc != SQLITE_OK) fail(read_only_ ? "cannot open read-only" : "cannot open");
        sqlite3_extended_result_codes(db_.get(), 1);
        sqlite3_busy_timeout(db_.get(), busy_timeout_ms);
        // Read the header first: a damaged or foreign file fails here, before any write.
        const auto [app, version, schema] = read_header();
        if (app == application_id) {
            if (version != format_version)
                throw io_error(
                    fmt::format("{}: response cache format version {}; this tabret "
                                "reads version {}",
                                label(), version, format_version));
        } else if (app != 0 || schema != 0) {
            throw io_error(
                fmt::format("{}: a SQLite database that is not a tabret response "
                            "cache (application_id {}); the file was left untouched",
                            label(), app));
        }
        if (!memory && app == application_id) quick_check();
        if (read_only_ && app == 0)
            throw io_error(fmt::format(
                "{}: response cache: an empty file that cannot be written (the file or its "
                "directory is read-only), so no cache can be made in it",
                label()));
        if (!memory && !read_only_) set_wal();
        if (app == 0) initialise();
        find_ =
            prepare("SELECT completion, checksum FROM responses WHERE model = ?1 AND prompt = ?2");
        insert_ = prepare(
            "INSERT OR REPLACE INTO responses(model, prompt, completion, checksum) "
            "VALUES (?1, ?2, ?3, ?4)");
        count_ = prepare("SELECT count(*) FROM responses");
    }

    /// PRAGMA quick_check (linear in the file's size): a damaged file fails here, untouched.
    void quick_check() const {
        const auto s = prepare("PRAGMA quick_check(1)");
        const int rc = sqlite3_step(s.get());
        if (rc != SQLITE_ROW) fail("cannot check the database");
        const auto answer = column(s.get(), 0);
        if (answer != "ok")
            throw io_error(
                fmt::format("{}: response cache: the database is damaged ({}); the "
                            "file was left untouched",
                            label(), answer));
    }

    struct header {
        long long app, version, schema;
    };

    /// application_id, user_version and the number of schema entries, read in one snapshot:
    /// another process may be creating the cache between two separate reads.
    [[nodiscard]] header read_header() const {
        exec("BEGIN", "cannot start a read transaction");
        header h{};
        try {
            h = {pragma_int("PRAGMA application_id"), pragma_int("PRAGMA user_version"),
                 pragma_int("SELECT count(*) FROM sqlite_schema")};
        } catch (...) {
            sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
            throw;
        }
        exec("COMMIT", "cannot end a read transaction");
        return h;
    }

    /// Switches to WAL mode. SQLite answers SQLITE_BUSY at once, without the busy handler, when
    /// another connection holds a write lock while this one needs the switch; retried for up to
    /// busy_timeout_ms.
    void set_wal() {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
        for (;;) {
            const auto s = prepare("PRAGMA journal_mode = WAL");
            const int rc = sqlite3_step(s.get());
            if (rc == SQLITE_ROW) return;
            if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) break;
            if (std::chrono::steady_clock::now() > deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        fail("cannot switch to WAL mode");
    }

    /// Creates the schema of a new (empty) database; another process may be doing the same.
    void initialise() {
        transaction tx(*this);
        const auto app = pragma_int("PRAGMA application_id");
        if (app == 0) {
            if (pragma_int("SELECT count(*) FROM sqlite_schema") != 0)
                throw io_error(
                    fmt::format("{}: a SQLite database that is not a tabret response "
                                "cache; the file was left untouched",
                                label()));
            exec(
                "CREATE TABLE responses(model BLOB NOT NULL, prompt BLOB NOT NULL, "
                "completion BLOB NOT NULL, checksum INTEGER NOT NULL, PRIMARY KEY(model, prompt)) "
                "WITHOUT ROWID",
                "cannot create the cache table");
            exec(fmt::format("PRAGMA application_id = {}", application_id).c_str(),
                 "cannot mark the cache");
            exec(fmt::format("PRAGMA user_version = {}", format_version).c_str(),
                 "cannot mark the cache");
        }
        tx.commit();
    }

    /// Returns false for a truncated last line; throws parse_error for any other bad line.
    static std::optional<std::array<std::string, 3>> parse_jsonl_line(
        const std::filesystem::path& file, std::string_view line, std::size_t line_no,
        bool complete) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) {
            if (!complete) return std::nullopt;
            throw parse_error(file.string(), line_no, "not a JSON object (corrupt cache line)");
        }
        auto field = [&](const char* key) -> std::string {
            if (!j.is_object() || !j.contains(key) || !j[key].is_string())
                throw parse_error(file.string(), line_no,
                                  fmt::format("cache line lacks string field '{}'", key));
            return j[key].get<std::string>();
        };
        return std::array<std::string, 3>{field("model"), field("prompt"), field("completion")};
    }

    mutable std::mutex mutex_;
    std::optional<std::filesystem::path> file_;
    std::unique_ptr<sqlite3, db_closer> db_;
    stmt_ptr find_, insert_, count_;
    std::size_t truncated_lines_ = 0;
    bool read_only_ = false;
};

/**
 * @brief Wraps @p llm with @p cache under the name @p model: each call answers cache hits from
 * the cache and sends the misses, deduplicated, in one batch (no call when all hit), then stores
 * the new answers.
 *
 * A read_only() cache is only read: misses are asked and answered, not stored.
 *
 * The returned callback refers to @p cache, which must outlive it. It is as thread-safe as
 * @p llm; two threads missing the same prompt at once may both ask for it.
 */
inline llm_fn cached_llm(llm_fn llm, std::string model, response_cache& cache) {
    return [llm = std::move(llm), model = std::move(model),
            &cache](std::span<const std::string> prompts) {
        std::vector<std::string> out(prompts.size());
        std::vector<std::string> misses;  // distinct, first-occurrence order
        std::unordered_map<std::string_view, std::vector<std::size_t>> waiting;
        for (std::size_t i = 0; i < prompts.size(); ++i) {
            if (auto hit = cache.find(model, prompts[i])) {
                out[i] = std::move(*hit);
                continue;
            }
            auto& slots = waiting[prompts[i]];
            if (slots.empty()) misses.push_back(prompts[i]);
            slots.push_back(i);
        }
        if (misses.empty()) return out;
        const auto answers = call_llm(llm, misses, model);
        if (!cache.read_only()) cache.put_many(model, misses, answers);
        for (std::size_t k = 0; k < misses.size(); ++k)
            for (auto i : waiting.at(misses[k])) out[i] = answers[k];
        return out;
    };
}

}  // namespace tabret
