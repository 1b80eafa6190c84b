/// @file io/sqlite.cpp
/// @brief The SQLite loader (include/tabret/io/sqlite.hpp), through the sqlite3 C API.

#include "tabret/io/sqlite.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tabret/catalog.hpp"
#include "tabret/error.hpp"
#include "tabret/interrupt.hpp"
#include "tabret/io/catalog_fingerprint.hpp"
#include "tabret/io/text_file.hpp"
#include "tabret/text/case.hpp"
#include "tabret/text/utf8.hpp"

namespace tabret {

namespace detail {
namespace {

struct sqlite_closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct sqlite_finalizer {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};

/// The name SQLite is given for @p path: never read as a URI (`file:x.db` is a file of that
/// name, not x.db): absolute paths as they are, relative ones prefixed with `./`.
std::string sqlite_literal_name(const std::filesystem::path& path) {
    const auto& s = path.native();
    return path.is_absolute() || s.starts_with("./") ? s : "./" + s;
}

/// A read-only connection and the queries the loader needs; errors name the file.
class sqlite_reader {
  public:
    explicit sqlite_reader(const std::filesystem::path& path) : path_(path.string()) {
        const auto name = sqlite_literal_name(path);
        const auto checked = check_header(name);
        sqlite3* raw = nullptr;
        // No SQLITE_OPEN_URI, and a name that cannot be read as a URI even where URIs are
        // enabled globally (see sqlite_literal_name).
        const int rc = sqlite3_open_v2(name.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
        db_.reset(raw);
        if (rc != SQLITE_OK) fail_io("cannot open");
        struct stat now {};
        if (::stat(name.c_str(), &now) != 0 || now.st_dev != checked.st_dev ||
            now.st_ino != checked.st_ino)
            throw io_error(fmt::format("{}: the file changed while it was opened", path_));
    }

    /// Runs @p sql with one optional text parameter; calls @p row for every result row.
    template <class F>
    void query(const char* sql, const std::optional<std::string>& param, F&& row,
               const char* what = "cannot read schema") const {
        sqlite3_stmt* raw = nullptr;
        if (sqlite3_prepare_v2(db_.get(), sql, -1, &raw, nullptr) != SQLITE_OK) fail_io(what);
        std::unique_ptr<sqlite3_stmt, sqlite_finalizer> stmt(raw);
        if (param) sqlite3_bind_text(raw, 1, param->c_str(), -1, SQLITE_TRANSIENT);
        int rc;
        while ((rc = sqlite3_step(raw)) == SQLITE_ROW) row(raw);
        if (rc != SQLITE_DONE) fail_io(what);
    }

    /// A text column; a value that is not UTF-8 (SQLite does not check) is a schema_error.
    std::string text(sqlite3_stmt* s, int col) const {
        const auto* p = sqlite3_column_text(s, col);
        std::string value = p ? reinterpret_cast<const char*>(p) : std::string{};
        if (first_invalid_utf8(value))
            fail_schema(fmt::format("the schema holds a name or type that is not valid UTF-8: '{}'",
                                    value));  // error escapes the bad bytes
        return value;
    }

    /// A schema_error; add_sqlite prefixes every schema_error with the file name.
    [[noreturn]] static void fail_schema(const std::string& what) { throw schema_error(what); }

    [[nodiscard]] const std::string& path() const noexcept { return path_; }

  private:
    /// Opens @p name without blocking (a FIFO cannot hang), checks that it is a regular file
    /// with the SQLite header; returns its identity, compared with what SQLite then opened.
    [[nodiscard]] struct stat check_header(const std::string& name) const {
        const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
            const int err = errno;
            throw io_error(err == ENOENT ? fmt::format("{}: no such file", path_)
                                         : fmt::format("{}: cannot open for reading: {}", path_,
                                                       std::strerror(err)));
        }
        const fd_guard guard{fd};
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
            throw io_error(
                fmt::format("{}: not a regular file; tabret reads only regular files", path_));
        std::array<char, 16> header{};
        const auto n = ::pread(fd, header.data(), header.size(), 0);
        if (n != 16 || std::memcmp(header.data(), "SQLite format 3\0", 16) != 0)
            throw io_error(fmt::format("{}: not a SQLite database (bad header)", path_));
        return st;
    }
    [[noreturn]] void fail_io(const char* what) const {
        throw io_error(fmt::format("{}: {}: {}", path_, what,
                                   db_ ? sqlite3_errmsg(db_.get()) : "out of memory"));
    }

    std::string path_;
    std::unique_ptr<sqlite3, sqlite_closer> db_;
};

struct sqlite_fk {
    table_id from_table;
    std::string from, ref_table, ref_column;  // ref_column empty: the referenced primary key
    std::size_t seq;                          // position in a composite key
};

column_id sqlite_fk_column(const catalog& cat, table_id t, const std::string& name) {
    const auto c = cat.find_column(t, name);
    if (!c)
        sqlite_reader::fail_schema(fmt::format(
            "table '{}' has no column '{}' named by a foreign key", cat.table(t).name, name));
    return *c;
}

/// The user tables and views (a view is a table to a text-to-SQL model; SQLite names its
/// columns) in creation order: not SQLite's own (`sqlite_…`), and not the shadow tables
/// in which a virtual table (FTS5, R-tree, …) keeps its data: `PRAGMA table_list` says which
/// those are (SQLite 3.37 and later); before, the shadow-table names of the FTS3/4/5 and R-tree
/// modules (`<vtab>_content`, `_data`, `_idx`, `_docsize`, `_config`, `_segments`, `_segdir`,
/// `_stat`, `_node`, `_parent`, `_rowid`) beside a virtual table.
std::vector<std::string> sqlite_user_tables(const sqlite_reader& r) {
    static constexpr const char* with_table_list =
        "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE "
        "'sqlite\\_%' ESCAPE '\\' AND name NOT IN (SELECT name FROM pragma_table_list WHERE "
        "schema = 'main' AND type = 'shadow') ORDER BY rowid";
    static constexpr const char* by_name =
        "SELECT s.name FROM sqlite_schema AS s WHERE s.type IN ('table', 'view') AND s.name "
        "NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND NOT EXISTS (SELECT 1 FROM sqlite_schema AS v, "
        "(VALUES ('_content'), ('_data'), ('_idx'), ('_docsize'), ('_config'), ('_segments'), "
        "('_segdir'), ('_stat'), ('_node'), ('_parent'), ('_rowid')) AS x WHERE v.type = "
        "'table' AND v.sql LIKE 'CREATE VIRTUAL TABLE%' AND s.name = v.name || x.column1) "
        "ORDER BY s.rowid";
    std::vector<std::string> names;
    r.query(sqlite3_libversion_number() >= 3037000 ? with_table_list : by_name, std::nullopt,
            [&](sqlite3_stmt* s) { names.push_back(r.text(s, 0)); });
    return names;
}

/// Adds database @p db_name with the schema @p r reads to @p cat. @throws schema_error (without
/// the file name) for what the catalog refuses or a foreign key that resolves to nothing.
database_id add_sqlite_schema(catalog& cat, const sqlite_reader& r, const std::string& db_name) {
    const auto db = cat.add_database(db_name);
    const auto names = sqlite_user_tables(r);
    std::vector<sqlite_fk> fks;
    for (const auto& name : names) {
        const auto t = cat.add_table(db, name);
        std::vector<std::pair<int, column_id>> pk;
        // table_xinfo, not table_info: generated columns (hidden 2 and 3) are columns a query
        // can name; hidden 1 are a virtual table's hidden columns (FTS5's rank), not columns.
        r.query(
            "SELECT name, type, pk, \"notnull\", dflt_value FROM pragma_table_xinfo(?1) WHERE "
            "hidden != 1 ORDER BY cid",
            name, [&](sqlite3_stmt* s) {
                const auto c = cat.add_column(t, r.text(s, 0), r.text(s, 1));
                if (const int k = sqlite3_column_int(s, 2); k > 0) pk.emplace_back(k, c);
                cat.set_constraints(c, {sqlite3_column_int(s, 3) != 0, false, r.text(s, 4)});
            });
        // Single-column UNIQUE constraints and unique indexes (not the primary key's, not
        // partial, not on an expression).
        r.query(
            "SELECT c.name FROM pragma_index_list(?1) AS i, pragma_index_info(i.name) AS c "
            "WHERE i.\"unique\" AND i.origin != 'pk' AND NOT i.partial AND c.cid >= 0 "
            "AND (SELECT count(*) FROM pragma_index_info(i.name)) = 1",
            name, [&](sqlite3_stmt* s) {
                const auto c = cat.find_column(t, r.text(s, 0));
                if (!c) return;  // SQLite indexes only the table's own columns
                auto constraints = cat.column(*c).constraints;
                constraints.unique = true;
                cat.set_constraints(*c, std::move(constraints));
            });
        std::sort(pk.begin(), pk.end());
        std::vector<column_id> key;
        for (const auto& [k, c] : pk) key.push_back(c);
        if (!key.empty()) cat.set_primary_key(t, std::move(key));
        r.query(
            "SELECT seq, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) "
            "ORDER BY id DESC, seq",  // SQLite numbers a table's keys last-declared first
            name, [&](sqlite3_stmt* s) {
                fks.push_back({t, r.text(s, 2), r.text(s, 1), r.text(s, 3),
                               static_cast<std::size_t>(sqlite3_column_int(s, 0))});
            });
    }
    for (const auto& fk : fks) {
        const auto to_table = cat.find_table(db_name, fk.ref_table);
        if (!to_table)
            sqlite_reader::fail_schema(
                fmt::format("foreign key {}.{} references missing table '{}'",
                            cat.table(fk.from_table).name, fk.from, fk.ref_table));
        const auto from = sqlite_fk_column(cat, fk.from_table, fk.from);
        const auto& ref_pk = cat.table(*to_table).primary_key;
        column_id to = 0;
        if (!fk.ref_column.empty())
            to = sqlite_fk_column(cat, *to_table, fk.ref_column);
        else if (fk.seq < ref_pk.size())
            to = ref_pk[fk.seq];
        else
            sqlite_reader::fail_schema(
                fmt::format("foreign key {}.{} references table '{}' without a primary key",
                            cat.table(fk.from_table).name, fk.from, fk.ref_table));
        cat.add_foreign_key(from, to);
    }
    return db;
}

/// @p name as an SQL identifier: in double quotes, inner quotes doubled.
std::string sql_identifier(std::string_view name) {
    std::string out = "\"";
    for (const char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

/// The distinct text values of column @p column of table @p table that the bounds of @p values
/// can keep (valid UTF-8; at most max_value_bytes long; max_values_per_column of them).
std::vector<std::string> sqlite_column_values(const sqlite_reader& r, const std::string& table,
                                              const std::string& column,
                                              const value_index_options& bounds) {
    const auto col = sql_identifier(column);
    constexpr std::size_t most = std::numeric_limits<std::int64_t>::max();  // SQLite's integers
    const auto sql = fmt::format(
        "SELECT DISTINCT {0} FROM {1} WHERE typeof({0}) = 'text' AND length(CAST({0} AS BLOB)) "
        "BETWEEN 1 AND {2} LIMIT {3}",
        col, sql_identifier(table), std::min(bounds.max_value_bytes, most),
        std::min(bounds.max_values_per_column, most));
    std::vector<std::string> out;
    r.query(
        sql.c_str(), std::nullopt,
        [&](sqlite3_stmt* s) {
            const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
            std::string v(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(s, 0)));
            if (!first_invalid_utf8(v)) out.push_back(std::move(v));
        },
        "cannot read values");
    return out;
}

}  // namespace
}  // namespace detail

value_read_report add_sqlite_values(value_index& values, const catalog& cat, database_id db,
                                    const std::filesystem::path& path,
                                    std::optional<std::chrono::milliseconds> time_budget,
                                    const progress_fn& progress) {
    if (values.catalog_fingerprint() != detail::catalog_fingerprint(cat))
        throw error("add_sqlite_values: the value index was made for another catalog");
    const detail::sqlite_reader r(path);
    const auto start = std::chrono::steady_clock::now();
    const auto& tables = cat.database(db).tables;
    value_read_report report;
    for (std::size_t i = 0; i < tables.size(); ++i) {
        const auto& table = cat.table(tables[i]);
        std::unordered_set<std::string> in_file;  // the table's columns there, folded
        r.query(
            "SELECT name FROM pragma_table_xinfo(?1)", table.name,
            [&](sqlite3_stmt* s) { in_file.insert(detail::fold(r.text(s, 0))); },
            "cannot read values");
        if (in_file.empty()) report.missing.push_back(table.name);
        for (const auto c : table.columns) {
            if (!in_file.contains(detail::fold(cat.column(c).name))) {
                if (!in_file.empty())
                    report.missing.push_back(table.name + "." + cat.column(c).name);
                continue;
            }
            check_interrupt();
            if (time_budget && std::chrono::steady_clock::now() - start > *time_budget) {
                report.complete = false;
                return report;
            }
            const auto& name = cat.column(c).name;
            try {
                const auto vs = detail::sqlite_column_values(r, table.name, name, values.options());
                report.values += values.add(c, vs);
                ++report.columns;
            } catch (const io_error& err) {  // e.g. a view over a dropped table
                report.missing.push_back(fmt::format("{}.{} ({})", table.name, name, err.what()));
            }
        }
        if (progress) progress("values", i + 1, tables.size());
    }
    return report;
}

database_id add_sqlite(catalog& cat, const std::filesystem::path& path, std::string db_name) {
    const detail::sqlite_reader r(path);
    if (db_name.empty()) db_name = default_db_name(path);
    catalog staged = cat;
    database_id db = 0;
    try {
        db = detail::add_sqlite_schema(staged, r, db_name);
    } catch (const schema_error& err) {  // the catalog's and the reader's: named here, once
        throw schema_error(fmt::format("{}: {}", r.path(), err.what()));
    }
    cat = std::move(staged);
    return db;
}

catalog load_sqlite(const std::filesystem::path& path, std::string db_name) {
    catalog cat;
    add_sqlite(cat, path, std::move(db_name));
    return cat;
}

}  // namespace tabret
