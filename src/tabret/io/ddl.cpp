/// @file io/ddl.cpp
/// @brief The DDL loader (include/tabret/io/ddl.hpp): parser, key validation, catalog build.

#include "tabret/io/ddl.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ddl_lexer.hpp"
#include "tabret/catalog.hpp"
#include "tabret/error.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/schema_format.hpp"
#include "tabret/io/text_file.hpp"
#include "tabret/serialize.hpp"

namespace tabret {

namespace detail {
namespace {

// ---------------------------------------------------------------------------------------------
// What a DDL file declares, before validation

struct ddl_column {
    std::string name;
    std::string type;
    std::string description;
    column_constraints constraints;
    std::size_t line = 0;
    bool operator==(const ddl_column&) const = default;
};

struct ddl_foreign_key {
    std::vector<std::string> columns;      ///< Referencing columns.
    std::size_t line = 0;                  ///< Where the referencing columns are named.
    std::string ref_table;                 ///< Referenced table, schema dropped.
    std::vector<std::string> ref_columns;  ///< Empty: the referenced table's primary key.
    std::size_t ref_line = 0;              ///< Where the referenced table is named.
    bool operator==(const ddl_foreign_key&) const = default;
};

struct ddl_table {
    std::string name;
    std::string description;
    std::size_t line = 0;
    std::vector<ddl_column> columns;
    std::vector<std::string> primary_key;
    std::size_t primary_key_line = 0;
    std::vector<ddl_foreign_key> foreign_keys;
    bool operator==(const ddl_table&) const = default;
};

struct ddl_schema {
    std::vector<ddl_table> tables;
    std::unordered_map<std::string, std::size_t> index;  ///< Folded name → position in tables.

    bool operator==(const ddl_schema&) const = default;

    void add(ddl_table table) {
        index.emplace(fold(table.name), tables.size());
        tables.push_back(std::move(table));
    }
};

std::optional<std::size_t> ddl_find_table(const ddl_schema& schema, std::string_view name) {
    const auto it = schema.index.find(fold(name));
    if (it == schema.index.end()) return std::nullopt;
    return it->second;
}

std::optional<std::size_t> ddl_find_column(const ddl_table& table, std::string_view name) {
    for (std::size_t i = 0; i < table.columns.size(); ++i)
        if (iequals(table.columns[i].name, name)) return i;
    return std::nullopt;
}

std::string ddl_join(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out;
}

/// Appends one piece of a column type in the canonical spelling (see the file comment).
void ddl_append_type(std::string& type, std::string_view piece) {
    const bool glued_to_previous = piece == "(" || piece == ")" || piece == "," || piece == "." ||
                                   piece == "[" || piece == "]";
    const bool after_opening = !type.empty() && (type.back() == '(' || type.back() == ',' ||
                                                 type.back() == '.' || type.back() == '[');
    if (!type.empty() && !glued_to_previous && !after_opening) type += ' ';
    type += piece;
}

std::string ddl_quote_string(std::string_view text) {
    std::string out = "'";
    for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

// ---------------------------------------------------------------------------------------------
// Parser

/// The text of an expression's tokens, spaced as written in the usual style: `count(*)`,
/// `t.a`, `id + 1`.
std::string ddl_expression_text(std::span<const ddl_token> tokens) {
    std::string text;
    const auto tight = [](const ddl_token& t, std::string_view after_or_before) {
        return t.kind == ddl_token_kind::symbol &&
               after_or_before.find(t.text) != std::string_view::npos && t.text.size() == 1;
    };
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (i > 0 && !tight(tokens[i - 1], ".(") && !tight(tokens[i], ".(),")) text += ' ';
        text += tokens[i].text;
    }
    return text;
}

/// Whether @p word, after CREATE (and OR REPLACE, TEMPORARY, ...), starts a statement the loader
/// skips whole: an object that is not a table (a view is read by parse_create_view; VIEW and
/// its options are here for a CREATE that names no view after them).
bool ddl_is_skipped_object(std::string_view word) {
    return is_one_of(word, {"VIEW",         "MATERIALIZED", "RECURSIVE",      "ALGORITHM",
                            "DEFINER",      "SQL",          "INDEX",          "UNIQUE",
                            "FULLTEXT",     "SPATIAL",      "BITMAP",         "CLUSTERED",
                            "NONCLUSTERED", "VIRTUAL",      "TRIGGER",        "CONSTRAINT",
                            "EVENT",        "FUNCTION",     "PROCEDURE",      "PROC",
                            "PACKAGE",      "AGGREGATE",    "SEQUENCE",       "TYPE",
                            "DOMAIN",       "SCHEMA",       "DATABASE",       "EXTENSION",
                            "LANGUAGE",     "TRUSTED",      "PROCEDURAL",     "ROLE",
                            "USER",         "GROUP",        "POLICY",         "RULE",
                            "CAST",         "COLLATION",    "CONVERSION",     "DEFAULT",
                            "OPERATOR",     "TEXT",         "ACCESS",         "TRANSFORM",
                            "STATISTICS",   "PUBLICATION",  "SUBSCRIPTION",   "SERVER",
                            "FOREIGN",      "TABLESPACE",   "SYNONYM",        "PUBLIC",
                            "ALIAS",        "VARIABLE",     "EDITIONABLE",    "NONEDITIONABLE",
                            "UNDO",         "LOGFILE",      "SPATIAL_REF_SYS"});
}

/// Recursive-descent parser over the token list; one statement at a time.
class ddl_parser {
  public:
    ddl_parser(std::vector<ddl_token> tokens, std::string source)
        : tokens_(std::move(tokens)), source_(std::move(source)) {}

    /// @throws parse_error for a syntax error or a duplicate table, column or primary key.
    ddl_schema parse() {
        while (!at_end()) parse_statement();
        return std::move(schema_);
    }

  private:
    // --- token access ------------------------------------------------------------------------

    [[nodiscard]] const ddl_token& peek(std::size_t ahead = 0) const {
        return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
    }
    const ddl_token& next() {
        const auto& token = tokens_[pos_];
        if (pos_ + 1 < tokens_.size()) ++pos_;
        return token;
    }
    void skip(std::size_t n) {
        for (; n > 0; --n) next();
    }
    [[nodiscard]] bool at_end() const { return peek().kind == ddl_token_kind::end; }
    [[nodiscard]] bool at_kw(std::string_view keyword, std::size_t ahead = 0) const {
        const auto& token = peek(ahead);
        return token.kind == ddl_token_kind::word && iequals(token.text, keyword);
    }
    [[nodiscard]] bool at_any_kw(std::initializer_list<std::string_view> keywords,
                                 std::size_t ahead = 0) const {
        const auto& token = peek(ahead);
        return token.kind == ddl_token_kind::word && is_one_of(token.text, keywords);
    }
    [[nodiscard]] bool at_sym(std::string_view symbol, std::size_t ahead = 0) const {
        const auto& token = peek(ahead);
        return token.kind == ddl_token_kind::symbol && token.text == symbol;
    }
    [[nodiscard]] bool at_ident(std::size_t ahead = 0) const {
        const auto kind = peek(ahead).kind;
        return kind == ddl_token_kind::word || kind == ddl_token_kind::quoted;
    }
    bool accept_kw(std::string_view keyword) {
        if (!at_kw(keyword)) return false;
        next();
        return true;
    }
    bool accept_any_kw(std::initializer_list<std::string_view> keywords) {
        if (!at_any_kw(keywords)) return false;
        next();
        return true;
    }
    bool accept_sym(std::string_view symbol) {
        if (!at_sym(symbol)) return false;
        next();
        return true;
    }

    // --- errors and expectations -------------------------------------------------------------

    [[noreturn]] void fail(std::size_t line, const std::string& message) const {
        throw parse_error(source_, line, message);
    }
    /// "expected <what>, found <next token>", at the next token's line.
    [[noreturn]] void fail_expected(const std::string& what) const {
        fail(peek().line, fmt::format("expected {}, found {}", what, ddl_describe(peek())));
    }
    void expect_kw(std::string_view keyword, std::string_view where) {
        if (!accept_kw(keyword)) fail_expected(fmt::format("{} {}", keyword, where));
    }
    const ddl_token& expect_sym(std::string_view symbol, std::string_view where) {
        if (!at_sym(symbol)) fail_expected(fmt::format("'{}' {}", symbol, where));
        return next();
    }
    std::string expect_ident(std::string_view what) {
        if (!at_ident()) fail_expected(std::string(what));
        const auto& token = next();
        if (token.text.empty()) fail(token.line, fmt::format("zero-length identifier as {}", what));
        return token.text;
    }
    /// One string literal, or several adjacent ones concatenated. MySQL `"text"` counts too.
    std::string expect_string(std::string_view what) {
        if (peek().kind != ddl_token_kind::string && peek().kind != ddl_token_kind::quoted)
            fail_expected(std::string(what));
        std::string text = next().text;
        while (peek().kind == ddl_token_kind::string) text += next().text;
        return text;
    }
    void end_statement(std::string_view what) {
        if (!accept_sym(";") && !at_end()) fail_expected(fmt::format("';' after {}", what));
    }

    /// `a.b.c` as its parts.
    std::vector<std::string> parse_name_parts(std::string_view what) {
        std::vector<std::string> parts{expect_ident(what)};
        while (accept_sym(".")) parts.push_back(expect_ident("a name after '.'"));
        return parts;
    }
    /// `[catalog.][schema.]name`, keeping only the name.
    std::string parse_qualified_name(std::string_view what) {
        return parse_name_parts(what).back();
    }

    // --- skipping ----------------------------------------------------------------------------

    /// Skips to the `;` that ends the statement, outside parentheses. A statement tabret reads
    /// inside it (`CREATE`, `ALTER TABLE` or `COMMENT ON` starting a line, `CREATE TABLE`
    /// anywhere) means its `;` is missing: that fails naming both lines instead of swallowing the
    /// next table. Compound statements (a `BEGIN` body, `CREATE SCHEMA` elements) are exempt.
    void skip_statement() {
        std::vector<std::size_t> open_lines;
        bool compound = at_kw("SCHEMA", 1) && pos_ == statement_start_;
        while (!at_end()) {
            const bool inside = pos_ > statement_start_;
            const auto& token = next();
            if (token.kind == ddl_token_kind::word && open_lines.empty() && inside && !compound) {
                if (iequals(token.text, "BEGIN")) compound = true;
                const bool starts_statement =
                    (iequals(token.text, "CREATE") && (token.starts_line || at_kw("TABLE"))) ||
                    (token.starts_line && iequals(token.text, "ALTER") && at_kw("TABLE")) ||
                    (token.starts_line && iequals(token.text, "COMMENT") && at_kw("ON"));
                if (starts_statement)
                    fail(token.line,
                         fmt::format("{} inside the statement that starts on line {}: a ';' is "
                                     "missing before it (tabret does not guess where a statement "
                                     "ends)",
                                     token.text, tokens_[statement_start_].line));
            }
            if (token.kind != ddl_token_kind::symbol) continue;
            if (token.text == "(") open_lines.push_back(token.line);
            if (token.text == ")" && !open_lines.empty()) open_lines.pop_back();
            if (token.text == ";" && open_lines.empty()) return;
        }
        if (!open_lines.empty())
            fail(open_lines.back(), "unterminated '(': no matching ')' before end of input");
    }

    /// Skips a balanced `( ... )` group; DDL never has `;` inside one.
    void skip_group(std::string_view where) {
        if (!at_sym("(")) fail_expected(fmt::format("'(' {}", where));
        const auto open_line = next().line;
        for (std::size_t depth = 1; depth > 0; next()) {
            if (at_end() || at_sym(";"))
                fail(open_line, fmt::format("unterminated '(' {}: no matching ')' before {}", where,
                                            at_end() ? std::string("end of input")
                                                     : fmt::format("';' on line {}", peek().line)));
            if (at_sym("(")) ++depth;
            if (at_sym(")")) --depth;
        }
    }

    /// Skips the rest of an index definition: up to `,`, `)` or `;` outside parentheses.
    void skip_to_element_end() {
        while (!at_end() && !at_sym(",") && !at_sym(")") && !at_sym(";")) {
            if (at_sym("("))
                skip_group("in an index definition");
            else
                next();
        }
    }

    /// Skips a DEFAULT or ON UPDATE value: operands joined by arithmetic or `||`.
    void skip_expression(std::string_view where) {
        skip_operand(where);
        while (at_sym("+") || at_sym("-") || at_sym("*") || at_sym("/") || at_sym("%") ||
               at_sym("||")) {
            next();
            skip_operand(where);
        }
    }

    void skip_operand(std::string_view where) {
        while (at_sym("-") || at_sym("+")) next();
        const auto& token = peek();
        if (at_sym("(")) {
            skip_group(where);
        } else if (token.kind == ddl_token_kind::string || token.kind == ddl_token_kind::number ||
                   token.kind == ddl_token_kind::quoted) {
            next();
        } else if (token.kind == ddl_token_kind::word) {
            next();  // Db2 writes `CURRENT TIMESTAMP`; a `(` makes a function call
            if (iequals(token.text, "CURRENT") && at_any_kw({"TIMESTAMP", "DATE", "TIME", "USER"}))
                next();
            if (at_sym("(")) skip_group(where);
            while (accept_sym("[")) skip_subscript();
        } else {
            fail_expected(fmt::format("a value {}", where));
        }
        while (accept_sym("::")) parse_type();  // PostgreSQL cast
    }

    /// Skips the tokens up to the next one that starts a line.
    void skip_line() {
        next();
        while (!at_end() && !peek().starts_line) next();
    }

    void skip_subscript() {
        while (!at_end() && !at_sym("]") && !at_sym(";")) next();
        expect_sym("]", "to close '['");
    }

    // --- statements --------------------------------------------------------------------------

    void parse_statement() {
        statement_start_ = pos_;
        if (accept_sym(";")) return;
        if (at_sym("\\")) {  // a psql meta-command (\connect, \restrict) fills its line
            if (peek().starts_line) return skip_line();
            fail(peek().line,
                 "'\\' where a statement should start (a literal \\n written for a line "
                 "break?): tabret does not guess where a statement starts");
        }
        if (at_kw("CREATE")) return parse_create();
        if (at_kw("ALTER") && at_kw("TABLE", 1)) return parse_alter_table();
        if (at_kw("COMMENT") && at_kw("ON", 1)) return parse_comment_on();
        skip_statement();
    }

    void parse_create() {
        std::size_t k = 1;
        while (at_any_kw({"OR", "REPLACE", "ALTER", "GLOBAL", "LOCAL", "TEMPORARY", "TEMP",
                          "UNLOGGED", "EXTERNAL", "TRANSIENT", "VOLATILE", "MULTISET"},
                         k))
            ++k;
        if (at_kw("TABLE", k)) {
            skip(k + 1);
            return parse_create_table();
        }
        if (const auto view = view_keyword_at(k)) {  // a view is a table to a text-to-SQL model
            skip(*view + 1);
            return parse_create_view();
        }
        // Indexes, functions, triggers, ...: skipped whole. Anything else is most likely a
        // misspelt TABLE: refused, never dropped in silence.
        if (peek(k).kind != ddl_token_kind::word || ddl_is_skipped_object(peek(k).text))
            return skip_statement();
        fail(peek(k).line,
             fmt::format("CREATE {}: not a kind of object tabret knows (TABLE, VIEW, INDEX, "
                         "FUNCTION, ...); a misspelt TABLE? tabret skips only statements it can "
                         "name",
                         peek(k).text));
    }

    /// Where VIEW is in `CREATE [MATERIALIZED | RECURSIVE | MySQL options] VIEW`, from @p k.
    [[nodiscard]] std::optional<std::size_t> view_keyword_at(std::size_t k) const {
        if (at_any_kw({"MATERIALIZED", "RECURSIVE"}, k)) ++k;
        if (at_any_kw({"ALGORITHM", "DEFINER", "SQL"}, k))  // MySQL: options up to VIEW
            while (!at_kw("VIEW", k) && !at_sym(";", k) && peek(k).kind != ddl_token_kind::end) ++k;
        return at_kw("VIEW", k) ? std::optional(k) : std::nullopt;
    }

    /// `CREATE VIEW v [(a, b)] AS SELECT ...`: a table whose columns are the list given, or the
    /// names of the select list (its aliases, the last part of column references, the columns
    /// of the one table `*` reads); a repeated name gets `:1`, `:2` as in SQLite.
    void parse_create_view() {
        const bool if_not_exists = accept_if_not_exists();
        ddl_table view;
        view.line = peek().line;
        view.name = parse_qualified_name("a view name after CREATE VIEW");
        if (at_sym("(")) {
            next();
            do {
                const auto line = peek().line;
                view.columns.push_back(
                    {expect_ident("a column name of the view"), "", "", {}, line});
            } while (accept_sym(","));
            expect_sym(")", fmt::format("after the column names of view {}", view.name));
        } else {
            if (accept_kw("AS") && at_sym("(") && at_kw("SELECT", 1)) next();  // AS (SELECT
            while (!at_end() && !at_sym(";") && !at_kw("SELECT")) {  // WITH q AS (...) SELECT
                if (at_sym("("))
                    skip_group(fmt::format("in view {}", view.name));
                else
                    next();
            }
            if (!accept_kw("SELECT"))
                fail(view.line, fmt::format("view {}: no SELECT to name its columns from; list "
                                            "them (CREATE VIEW {} (a, b) AS ...)",
                                            view.name, view.name));
            accept_any_kw({"DISTINCT", "ALL", "DISTINCTROW"});
            do {
                parse_view_item(view);
            } while (accept_sym(","));
        }
        std::unordered_map<std::string, std::size_t> seen;  // folded name → times seen
        for (auto& c : view.columns)
            if (const auto n = seen[fold(c.name)]++; n > 0) c.name += fmt::format(":{}", n);
        skip_statement();
        add_table(std::move(view), if_not_exists);
    }

    /// One item of a view's select list: its alias, the last part of a column reference, or the
    /// expression's text (`count(*)`, `id + 1`); or the columns of the table `*` reads.
    void parse_view_item(ddl_table& view) {
        const auto start = pos_;
        const auto line = peek().line;
        while (!at_end() && !at_sym(",") && !at_sym(";") && !at_sym(")") &&
               !at_any_kw({"FROM", "INTO", "WHERE", "UNION", "GROUP", "ORDER", "LIMIT"})) {
            if (at_sym("("))
                skip_group(fmt::format("in view {}", view.name));
            else
                next();
        }
        const std::span item(tokens_.begin() + static_cast<std::ptrdiff_t>(start), pos_ - start);
        const auto ident = [](const ddl_token& t) {
            return t.kind == ddl_token_kind::word || t.kind == ddl_token_kind::quoted;
        };
        const auto named = [&](std::string name) {
            view.columns.push_back({std::move(name), "", "", {}, line});
        };
        if (item.empty()) fail_expected(fmt::format("a column of view {}", view.name));
        const auto& last = item.back();
        if (last.kind == ddl_token_kind::symbol && last.text == "*") return add_star(view, item);
        const bool reference =
            std::all_of(item.begin(), item.end(),
                        [&](const ddl_token& t) {
                            return ident(t) || (t.kind == ddl_token_kind::symbol && t.text == ".");
                        }) &&
            item.size() % 2 == 1;
        if (ident(last) && (reference || item.size() >= 2) && !iequals(last.text, "END") &&
            (reference || iequals(item[item.size() - 2].text, "AS") ||
             item[item.size() - 2].kind != ddl_token_kind::symbol ||
             item[item.size() - 2].text == ")"))
            return named(last.text);
        named(ddl_expression_text(item));  // as SQLite names it: the expression as written
    }

    /// `*` or `t.*` in view @p view: the columns of the one table the view reads (`FROM t`, a
    /// table declared before the view). @throws parse_error when that cannot be told.
    void add_star(ddl_table& view, std::span<const ddl_token> item) {
        std::string from;
        if (item.size() >= 3) from = item[item.size() - 3].text;  // t.*
        if (at_kw("FROM") &&
            (peek(1).kind == ddl_token_kind::word || peek(1).kind == ddl_token_kind::quoted)) {
            std::size_t k = 2;
            while (at_sym(".", k) && at_ident(k + 1)) k += 2;
            const bool one_table =
                !at_sym(",", k) &&
                !at_any_kw({"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL"}, k) &&
                !at_any_kw({"JOIN", "INNER", "LEFT", "CROSS"}, k + 1);
            if (one_table && from.empty()) from = peek(k - 1).text;
        }
        const auto t = from.empty() ? std::nullopt : ddl_find_table(schema_, from);
        if (!t)
            fail(item.front().line,
                 fmt::format("view {}: SELECT * over {}: tabret cannot tell its columns; list "
                             "them (CREATE VIEW {} (a, b) AS ...)",
                             view.name, from.empty() ? "several tables" : "'" + from + "'",
                             view.name));
        for (const auto& c : schema_.tables[*t].columns)
            view.columns.push_back({c.name, c.type, "", {}, item.front().line});
    }

    bool accept_if_not_exists() {
        if (!accept_kw("IF")) return false;
        expect_kw("NOT", "after IF");
        expect_kw("EXISTS", "after IF NOT");
        return true;
    }

    void parse_create_table() {
        const bool if_not_exists = accept_if_not_exists();
        ddl_table table;
        table.line = peek().line;
        table.name = parse_qualified_name("a table name after CREATE TABLE");
        // CREATE TABLE ... AS SELECT, LIKE, OF type, PARTITION OF: no column list to read, and
        // dropping the table would be a silent loss.
        if (at_any_kw({"AS", "LIKE", "OF", "PARTITION"}))
            fail(table.line,
                 fmt::format("CREATE TABLE {} {} ...: the table has no column list, and tabret "
                             "reads columns only from one; declare its columns, or load the "
                             "database itself (`tabret catalog sqlite`, `sqlalchemy`)",
                             table.name, peek().text));
        const auto open_line =
            expect_sym("(", fmt::format("after CREATE TABLE {}", table.name)).line;
        parse_table_elements(table, open_line);
        parse_table_options(table);
        add_table(std::move(table), if_not_exists);
    }

    void add_table(ddl_table table, bool if_not_exists) {
        if (const auto existing = ddl_find_table(schema_, table.name)) {
            if (if_not_exists) return;
            fail(table.line, fmt::format("duplicate table '{}' (first declared at line {})",
                                         table.name, schema_.tables[*existing].line));
        }
        schema_.add(std::move(table));
    }

    void parse_table_elements(ddl_table& table, std::size_t open_line) {
        if (accept_sym(")")) return;
        for (;;) {
            const auto element = parse_table_element(table);
            if (accept_sym(",")) continue;
            if (accept_sym(")")) return;
            if (at_end())
                fail(open_line, fmt::format("unterminated column list of table '{}': the '(' "
                                            "on this line is never closed",
                                            table.name));
            const auto expected =
                fmt::format("',' or ')' after {} of table '{}'", element, table.name);
            if (at_sym(";"))  // a ')' is missing somewhere: say where the list opened
                fail(peek().line, fmt::format("expected {}, found ';': the '(' on line {} is "
                                              "never closed",
                                              expected, open_line));
            fail_expected(expected);
        }
    }

    /// Returns what it parsed, for the next error message ("column 'x'").
    std::string parse_table_element(ddl_table& table) {
        if (at_table_constraint()) return parse_table_constraint(table);
        return parse_column(table);
    }

    /// After `)`: engine, charset, `COMMENT=` (the table description), tablespace, ...
    void parse_table_options(ddl_table& table) {
        while (!at_end() && !accept_sym(";")) {
            if (accept_kw("COMMENT")) {
                accept_sym("=");
                table.description =
                    expect_string(fmt::format("a string after COMMENT of table '{}'", table.name));
            } else if (at_any_kw({"CREATE", "ALTER", "DROP", "INSERT"}) || at_sym(")")) {
                fail_expected(fmt::format("';' after CREATE TABLE {}", table.name));
            } else if (at_sym("(")) {
                skip_group(fmt::format("in the options of table '{}'", table.name));
            } else {
                next();
            }
        }
    }

    void parse_alter_table() {
        skip(2);  // ALTER TABLE
        if (at_kw("IF") && at_kw("EXISTS", 1)) skip(2);
        accept_kw("ONLY");
        const auto line = peek().line;
        const auto name = parse_qualified_name("a table name after ALTER TABLE");
        accept_sym("*");
        for (;;) {
            if (!accept_kw("ADD")) return skip_statement();  // OWNER TO, ALTER COLUMN, DROP, ...
            const auto index = ddl_find_table(schema_, name);
            if (!index) fail(line, fmt::format("ALTER TABLE names unknown table '{}'", name));
            auto& table = schema_.tables[*index];
            if (at_table_constraint()) {
                parse_table_constraint(table);
            } else {
                accept_kw("COLUMN");
                accept_if_not_exists();
                parse_column(table);
            }
            if (accept_sym(",")) continue;
            return end_statement(fmt::format("ALTER TABLE {} ADD ...", name));
        }
    }

    /// `COMMENT ON TABLE t IS '..'`, `COMMENT ON COLUMN t.c IS '..'` and Db2's
    /// `COMMENT ON t (c IS '..', ...)`; comments on other objects are skipped. Comments on
    /// tables or columns not declared in the file (views, say) are ignored.
    void parse_comment_on() {
        skip(2);  // COMMENT ON
        if (at_column_comment_list()) return parse_column_comment_list();
        const bool is_column = at_kw("COLUMN");
        if (!is_column && !at_kw("TABLE")) return skip_statement();
        next();
        const auto line = peek().line;
        const auto parts = parse_name_parts(is_column ? "a column name after COMMENT ON COLUMN"
                                                      : "a table name after COMMENT ON TABLE");
        if (is_column && parts.size() < 2)
            fail(line, fmt::format("expected table.column after COMMENT ON COLUMN, found '{}'",
                                   parts.back()));
        auto text = parse_comment_is();
        end_statement("COMMENT ON");
        if (is_column)
            set_column_comment(parts[parts.size() - 2], parts.back(), std::move(text));
        else if (const auto table = ddl_find_table(schema_, parts.back()))
            schema_.tables[*table].description = std::move(text);
    }

    /// Whether a name followed by `(` comes next: Db2's column comment list.
    [[nodiscard]] bool at_column_comment_list() const {
        if (!at_ident()) return false;
        std::size_t k = 1;
        while (at_sym(".", k) && at_ident(k + 1)) k += 2;
        return at_sym("(", k);
    }

    void parse_column_comment_list() {
        const auto table = parse_qualified_name("a table name after COMMENT ON");
        expect_sym("(", fmt::format("after COMMENT ON {}", table));
        do {
            const auto column = expect_ident("a column name in COMMENT ON");
            set_column_comment(table, column, parse_comment_is());
        } while (accept_sym(","));
        expect_sym(")", fmt::format("to close the column list of COMMENT ON {}", table));
        end_statement("COMMENT ON");
    }

    /// `IS 'text'` or `IS NULL` (an empty description).
    std::string parse_comment_is() {
        expect_kw("IS", "after the name in COMMENT ON");
        return accept_kw("NULL") ? std::string{} : expect_string("a string after IS in COMMENT ON");
    }

    void set_column_comment(std::string_view table_name, std::string_view column_name,
                            std::string text) {
        const auto table = ddl_find_table(schema_, table_name);
        if (!table) return;
        auto& target = schema_.tables[*table];
        if (const auto column = ddl_find_column(target, column_name))
            target.columns[*column].description = std::move(text);
    }

    // --- columns -----------------------------------------------------------------------------

    std::string parse_column(ddl_table& table) {
        ddl_column column;
        column.line = peek().line;
        column.name =
            expect_ident(fmt::format("a column name or constraint in table '{}'", table.name));
        if (ddl_find_column(table, column.name))
            fail(column.line,
                 fmt::format("duplicate column '{}' in table '{}'", column.name, table.name));
        column.type = parse_type();
        table.columns.push_back(std::move(column));
        const auto index = table.columns.size() - 1;
        while (parse_column_constraint(table, index) || parse_constraint_attribute()) {
        }
        return fmt::format("column '{}'", table.columns[index].name);
    }

    [[nodiscard]] bool at_column_constraint() const {
        return at_any_kw({"CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "DEFAULT", "CHECK",
                          "REFERENCES", "COLLATE", "AUTO_INCREMENT", "AUTOINCREMENT", "GENERATED",
                          "COMMENT", "AS", "IDENTITY"});
    }

    /// The next token as a piece of a type: a quoted identifier that needs its quotes keeps
    /// them (`"my type"`), so the type reads back the same when written as DDL.
    std::string type_piece() {
        const auto& token = next();
        return token.kind == ddl_token_kind::quoted ? quote_identifier(token.text) : token.text;
    }

    /// A column type in canonical spelling, or "" when the column has none (SQLite).
    std::string parse_type() {
        if (!at_ident() || at_column_constraint()) return {};
        const bool interval = at_kw("INTERVAL");
        std::string last = fold(peek().text);
        std::string type;
        ddl_append_type(type, type_piece());
        while (at_sym(".") && at_ident(1)) {  // schema-qualified type: public.mood
            ddl_append_type(type, next().text);
            last = fold(peek().text);
            ddl_append_type(type, type_piece());
        }
        for (;;) {
            if (at_sym("(")) {
                parse_type_parameters(type);
            } else if (at_sym("[")) {
                parse_array_suffix(type);
            } else if (continues_type(last, interval)) {
                last = fold(peek().text);
                ddl_append_type(type, next().text);
            } else {
                return type;
            }
        }
    }

    /// Whether the next word belongs to a multi-word type after the word @p last.
    [[nodiscard]] bool continues_type(const std::string& last, bool interval) const {
        if (peek().kind != ddl_token_kind::word) return false;
        const auto& word = peek().text;
        const auto after = [&last](std::initializer_list<std::string_view> words) {
            return is_one_of(last, words);
        };
        if (is_one_of(word, {"UNSIGNED", "SIGNED", "ZEROFILL", "ARRAY"})) return true;
        if (is_one_of(word, {"WITH", "WITHOUT"})) return at_any_kw({"TIME", "LOCAL"}, 1);
        if (iequals(word, "FOR")) return at_any_kw({"BIT", "SBCS", "MIXED"}, 1);  // Db2
        if (interval)
            return is_one_of(word, {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "TO"});
        return (iequals(word, "PRECISION") && after({"double"})) ||
               (iequals(word, "VARYING") && after({"character", "char", "bit", "binary"})) ||
               (is_one_of(word, {"CHARACTER", "CHAR"}) && after({"national"})) ||
               (iequals(word, "LARGE") && after({"character", "char", "binary"})) ||
               (iequals(word, "OBJECT") && after({"large"})) ||
               (iequals(word, "LOCAL") && after({"with"})) ||
               (iequals(word, "TIME") && after({"with", "without", "local"})) ||
               (iequals(word, "ZONE") && after({"time"})) ||
               (iequals(word, "BIG") && after({"unsigned"})) ||
               (is_one_of(word, {"INT", "INTEGER"}) && after({"unsigned", "big"})) ||
               (is_one_of(word, {"VARCHAR", "VARBINARY", "VARGRAPHIC", "RAW"}) &&
                after({"long"})) ||
               (is_one_of(word, {"BIT", "SBCS", "MIXED"}) && after({"for"})) ||
               (iequals(word, "DATA") && after({"bit", "sbcs", "mixed"}));
    }

    /// `(10, 2)`, `(50 OCTETS)`, `('a', 'b')`: values separated by commas.
    void parse_type_parameters(std::string& type) {
        const auto name = type;
        const auto open_line = next().line;
        ddl_append_type(type, "(");
        for (;;) {
            if (at_end()) fail(open_line, fmt::format("unterminated '(' in type '{}'", name));
            parse_type_parameter(type, name);
            if (accept_sym(",")) {
                ddl_append_type(type, ",");
            } else if (accept_sym(")")) {
                return ddl_append_type(type, ")");
            } else if (at_end()) {
                fail(open_line, fmt::format("unterminated '(' in type '{}'", name));
            } else {
                fail_expected(fmt::format("',' or ')' in the parameters of type '{}'", name));
            }
        }
    }

    void parse_type_parameter(std::string& type, const std::string& name) {
        const auto& token = peek();
        if (token.kind == ddl_token_kind::number ||
            (at_sym("-") && peek(1).kind == ddl_token_kind::number)) {
            std::string number = next().text;
            if (number == "-") number += next().text;
            ddl_append_type(type, number);
            if (at_any_kw({"OCTETS", "CODEUNITS16", "CODEUNITS32", "CHAR", "CHARACTERS", "BYTE",
                           "K", "M", "G"}))
                ddl_append_type(type, next().text);
        } else if (token.kind == ddl_token_kind::word || token.kind == ddl_token_kind::quoted) {
            ddl_append_type(type, type_piece());  // varchar(max), geometry(Point, 4326)
        } else if (token.kind == ddl_token_kind::string) {
            ddl_append_type(type, ddl_quote_string(next().text));  // enum('a', 'b')
        } else {
            fail_expected(fmt::format("a parameter of type '{}'", name));
        }
    }

    void parse_array_suffix(std::string& type) {
        ddl_append_type(type, next().text);
        if (peek().kind == ddl_token_kind::number) ddl_append_type(type, next().text);
        expect_sym("]", "to close '[' in a column type");
        ddl_append_type(type, "]");
    }

    /// One inline column constraint; false if the next token does not start one.
    bool parse_column_constraint(ddl_table& table, std::size_t index) {
        const auto where =
            fmt::format("in column '{}' of table '{}'", table.columns[index].name, table.name);
        const auto line = peek().line;
        if (accept_kw("CONSTRAINT")) {
            expect_ident(fmt::format("a constraint name after CONSTRAINT {}", where));
        } else if (accept_kw("PRIMARY")) {
            expect_kw("KEY", fmt::format("after PRIMARY {}", where));
            set_primary_key(table, {table.columns[index].name}, line);
        } else if (at_kw("NOT") && at_kw("NULL", 1)) {
            skip(2);
            table.columns[index].constraints.not_null = true;
        } else if (at_kw("NOT") && at_any_kw({"LOGGED", "COMPACT", "HIDDEN"}, 1)) {
            skip(2);
        } else if (accept_any_kw({"NULL", "AUTO_INCREMENT", "AUTOINCREMENT", "LOGGED", "COMPACT",
                                  "VISIBLE", "INVISIBLE", "STORED", "VIRTUAL", "PERSISTENT"})) {
        } else if (accept_kw("UNIQUE")) {
            accept_kw("KEY");
            table.columns[index].constraints.unique = true;
        } else if (accept_kw("DEFAULT")) {
            const auto start = pos_;
            skip_expression(fmt::format("after DEFAULT {}", where));
            table.columns[index].constraints.default_value = text_of(start, pos_);
        } else if (at_kw("WITH") && at_kw("DEFAULT", 1)) {  // Db2: WITH DEFAULT [value]
            skip(2);
            if (!at_sym(",") && !at_sym(")") && !at_column_constraint())
                skip_expression(fmt::format("after WITH DEFAULT {}", where));
        } else if (accept_kw("CHECK")) {
            skip_group(fmt::format("after CHECK {}", where));
        } else if (accept_kw("REFERENCES")) {
            parse_references(table, {table.columns[index].name}, line);
        } else if (accept_kw("COLLATE")) {
            parse_name_parts(fmt::format("a collation after COLLATE {}", where));
        } else if (at_kw("CHARACTER") && at_kw("SET", 1)) {
            skip(2);
            expect_ident(fmt::format("a character set after CHARACTER SET {}", where));
        } else if (accept_kw("CHARSET")) {
            expect_ident(fmt::format("a character set after CHARSET {}", where));
        } else if (accept_kw("IDENTITY")) {
            if (at_sym("(")) skip_group(fmt::format("after IDENTITY {}", where));
        } else if (at_kw("GENERATED")) {
            parse_generated(where);
        } else if (at_kw("AS") && at_sym("(", 1)) {  // MySQL, SQLite generated column
            next();
            skip_group(fmt::format("after AS {}", where));
        } else if (accept_kw("COMMENT")) {
            table.columns[index].description =
                expect_string(fmt::format("a string after COMMENT {}", where));
        } else if (at_kw("IMPLICITLY") && at_kw("HIDDEN", 1)) {
            skip(2);
        } else {
            return false;
        }
        return true;
    }

    /// `GENERATED {ALWAYS | BY DEFAULT [ON NULL]} AS {IDENTITY [(..)] | (expr) | ROW BEGIN}`.
    void parse_generated(const std::string& where) {
        next();
        if (accept_kw("BY")) {
            expect_kw("DEFAULT", fmt::format("after GENERATED BY {}", where));
            if (at_kw("ON") && at_kw("NULL", 1)) skip(2);
        } else {
            expect_kw("ALWAYS", fmt::format("or BY DEFAULT after GENERATED {}", where));
        }
        expect_kw("AS", fmt::format("after GENERATED {}", where));
        if (accept_kw("IDENTITY")) {
            if (at_sym("(")) skip_group(fmt::format("after IDENTITY {}", where));
        } else if (at_sym("(")) {
            skip_group(fmt::format("after GENERATED ... AS {}", where));
        } else if (accept_kw("ROW")) {
            expect_ident(fmt::format("BEGIN or END after AS ROW {}", where));
        } else {
            fail_expected(fmt::format("IDENTITY or '(' after GENERATED ... AS {}", where));
        }
    }

    /// Clauses that may follow any key constraint; false if the next token starts none.
    bool parse_constraint_attribute() {
        if (at_kw("ON") && at_any_kw({"DELETE", "UPDATE"}, 1)) {
            const bool on_delete = at_kw("DELETE", 1);
            skip(2);
            parse_referential_action(on_delete);
        } else if (at_kw("ON") && at_kw("CONFLICT", 1)) {  // SQLite
            skip(2);
            expect_ident("a conflict resolution after ON CONFLICT");
        } else if (accept_kw("MATCH")) {
            expect_ident("FULL, PARTIAL or SIMPLE after MATCH");
        } else if (at_kw("NOT") && at_any_kw({"DEFERRABLE", "ENFORCED", "VALID"}, 1)) {
            skip(2);
        } else if (at_kw("NO") && at_kw("INHERIT", 1)) {
            skip(2);
        } else if (accept_kw("INITIALLY")) {
            expect_ident("DEFERRED or IMMEDIATE after INITIALLY");
        } else if (accept_any_kw({"ENABLE", "DISABLE"})) {  // Db2, Oracle
            if (accept_kw("QUERY")) expect_kw("OPTIMIZATION", "after QUERY");
        } else if (accept_kw("USING")) {
            if (!accept_kw("INDEX"))
                expect_ident("an index method after USING");
            else if (accept_kw("TABLESPACE"))
                expect_ident("a tablespace after USING INDEX TABLESPACE");
        } else if (accept_kw("COMMENT")) {
            expect_string("a string after COMMENT");
        } else if (!accept_any_kw({"DEFERRABLE", "ENFORCED", "VALIDATE", "NOVALIDATE", "RELY",
                                   "NORELY", "ASC", "DESC", "VISIBLE", "INVISIBLE"})) {
            return false;
        }
        return true;
    }

    /// After ON DELETE / ON UPDATE. MySQL's `ON UPDATE CURRENT_TIMESTAMP` is a value.
    void parse_referential_action(bool on_delete) {
        if (accept_any_kw({"CASCADE", "RESTRICT"})) return;
        if (at_kw("NO") && at_kw("ACTION", 1)) return skip(2);
        if (at_kw("SET") && at_any_kw({"NULL", "DEFAULT"}, 1)) {
            skip(2);
            if (at_sym("(")) skip_group("after ON DELETE SET");  // PostgreSQL 15 column list
            return;
        }
        if (on_delete)
            fail_expected("CASCADE, RESTRICT, NO ACTION, SET NULL or SET DEFAULT after ON DELETE");
        skip_expression("after ON UPDATE");
    }

    // --- keys --------------------------------------------------------------------------------

    void set_primary_key(ddl_table& table, std::vector<std::string> columns, std::size_t line) {
        if (!table.primary_key.empty())
            fail(line, fmt::format("table '{}' has more than one primary key (first declared at "
                                   "line {})",
                                   table.name, table.primary_key_line));
        table.primary_key = std::move(columns);
        table.primary_key_line = line;
    }

    /// After REFERENCES: `table [(columns)]`.
    void parse_references(ddl_table& table, std::vector<std::string> columns, std::size_t line) {
        ddl_foreign_key fk;
        fk.columns = std::move(columns);
        fk.line = line;
        fk.ref_line = peek().line;
        fk.ref_table = parse_qualified_name(
            fmt::format("a table name after REFERENCES in table '{}'", table.name));
        if (at_sym("("))
            fk.ref_columns = parse_name_list(fmt::format(
                "column list of REFERENCES {} in table '{}'", fk.ref_table, table.name));
        table.foreign_keys.push_back(std::move(fk));
    }

    /// `(a, b)`; MySQL index prefixes `a(10)` and ASC/DESC are allowed and dropped.
    std::vector<std::string> parse_name_list(const std::string& what) {
        const auto open_line = expect_sym("(", fmt::format("to start the {}", what)).line;
        std::vector<std::string> names;
        for (;;) {
            names.push_back(expect_ident(fmt::format("a column name in the {}", what)));
            if (at_sym("(") && peek(1).kind == ddl_token_kind::number) skip_group("");
            accept_any_kw({"ASC", "DESC"});
            if (accept_sym(",")) continue;
            if (accept_sym(")")) return names;
            if (at_end()) fail(open_line, fmt::format("unterminated '(' of the {}", what));
            fail_expected(fmt::format("',' or ')' in the {}", what));
        }
    }

    [[nodiscard]] bool at_table_constraint() const {
        const auto not_a_type = [this](std::size_t paren) {  // `KEY idx (a)`, not `key int(11)`
            return at_sym("(", paren) && peek(paren + 1).kind != ddl_token_kind::number;
        };
        if (at_kw("CONSTRAINT")) return true;
        if (at_any_kw({"PRIMARY", "FOREIGN"})) return at_kw("KEY", 1);
        if (at_kw("CHECK")) return at_sym("(", 1);
        if (at_kw("UNIQUE"))
            return at_sym("(", 1) || at_any_kw({"KEY", "INDEX"}, 1) ||
                   (at_ident(1) && not_a_type(2));
        if (at_any_kw({"KEY", "INDEX"}))
            return at_sym("(", 1) || at_kw("USING", 2) || (at_ident(1) && not_a_type(2));
        if (at_any_kw({"FULLTEXT", "SPATIAL"})) return at_ident(1) || at_sym("(", 1);
        if (at_kw("EXCLUDE")) return at_kw("USING", 1) || at_sym("(", 1);
        if (at_kw("PERIOD")) return at_kw("FOR", 1);
        return at_kw("LIKE") && at_ident(1);
    }

    std::string parse_table_constraint(ddl_table& table) {
        if (accept_kw("CONSTRAINT")) {
            const auto name = expect_ident(
                fmt::format("a constraint name after CONSTRAINT in table '{}'", table.name));
            if (!at_any_kw({"PRIMARY", "FOREIGN", "UNIQUE", "CHECK", "EXCLUDE"}))
                fail_expected(fmt::format(
                    "PRIMARY KEY, FOREIGN KEY, UNIQUE or CHECK after CONSTRAINT {} in table '{}'",
                    name, table.name));
        }
        if (at_kw("PRIMARY")) return parse_primary_key_constraint(table);
        if (at_kw("FOREIGN")) return parse_foreign_key_constraint(table);
        if (accept_kw("UNIQUE")) {
            accept_any_kw({"KEY", "INDEX"});
            if (at_ident()) next();  // index name
            const auto columns =
                parse_name_list(fmt::format("UNIQUE column list of table '{}'", table.name));
            mark_unique(table, columns);
            while (parse_constraint_attribute()) {
            }
            return "UNIQUE constraint";
        }
        if (accept_kw("CHECK")) {
            skip_group(fmt::format("after CHECK in table '{}'", table.name));
            while (parse_constraint_attribute()) {
            }
            return "CHECK constraint";
        }
        const auto keyword = next().text;  // KEY, INDEX, FULLTEXT, EXCLUDE, LIKE, PERIOD
        skip_to_element_end();
        return fmt::format("{} definition", keyword);
    }

    /// A UNIQUE constraint on one column marks that column; one on several marks none.
    static void mark_unique(ddl_table& table, const std::vector<std::string>& columns) {
        if (columns.size() != 1) return;
        for (auto& column : table.columns)
            if (iequals(column.name, columns.front())) column.constraints.unique = true;
    }

    /// Tokens [@p from, @p to) as SQL text: strings and quoted names re-quoted, spaced as a
    /// type is (`nextval('s'::regclass)`, `CURRENT_TIMESTAMP`, `-1`).
    [[nodiscard]] std::string text_of(std::size_t from, std::size_t to) const {
        std::string out;
        for (auto i = from; i < to; ++i) {
            const auto& token = tokens_[i];
            if (token.kind == ddl_token_kind::string) {
                ddl_append_type(out, ddl_quote_string(token.text));
            } else if (token.kind == ddl_token_kind::quoted) {
                ddl_append_type(out, detail::quote_identifier(token.text));
            } else if (out == "-" || out == "+" || token.text == "::" || out.ends_with("::")) {
                out += token.text;  // a sign, a PostgreSQL cast
            } else if (token.text == "(" && !out.empty() && out.back() != '(' &&
                       !std::isalnum(static_cast<unsigned char>(out.back())) && out.back() != '_') {
                out += " (";  // `1 + (2)`, not a call
            } else {
                ddl_append_type(out, token.text);
            }
        }
        return out;
    }

    std::string parse_primary_key_constraint(ddl_table& table) {
        const auto line = next().line;
        expect_kw("KEY", "after PRIMARY");
        if (at_ident()) next();  // CLUSTERED and the like
        auto columns =
            parse_name_list(fmt::format("PRIMARY KEY column list of table '{}'", table.name));
        set_primary_key(table, std::move(columns), line);
        while (parse_constraint_attribute()) {
        }
        return "PRIMARY KEY constraint";
    }

    std::string parse_foreign_key_constraint(ddl_table& table) {
        const auto line = next().line;
        expect_kw("KEY", "after FOREIGN");
        if (at_ident()) next();  // MySQL index name
        auto columns =
            parse_name_list(fmt::format("FOREIGN KEY column list of table '{}'", table.name));
        expect_kw("REFERENCES", fmt::format("after FOREIGN KEY ({}) of table '{}'",
                                            ddl_join(columns), table.name));
        parse_references(table, std::move(columns), line);
        while (parse_constraint_attribute()) {
        }
        return "FOREIGN KEY constraint";
    }

    std::vector<ddl_token> tokens_;
    std::string source_;
    std::size_t pos_ = 0;
    std::size_t statement_start_ = 0;  ///< Position of the current statement's first token.
    ddl_schema schema_;
};

// ---------------------------------------------------------------------------------------------
// Validation and loading

struct ddl_column_ref {
    std::size_t table = 0;
    std::size_t column = 0;
};

struct ddl_keys {
    std::vector<std::vector<std::size_t>> primary_keys;  ///< Column indices, per table.
    std::vector<std::pair<ddl_column_ref, ddl_column_ref>> foreign_keys;  ///< from → to.
};

/// The indices of @p names in @p table. @throws parse_error at @p line, with the message
/// @p unknown(name), for the first name that is not a column of it.
template <class Message>
std::vector<std::size_t> ddl_resolve_columns(const ddl_table& table,
                                             const std::vector<std::string>& names,
                                             const std::string& source, std::size_t line,
                                             const Message& unknown) {
    std::vector<std::size_t> indices;
    for (const auto& name : names) {
        const auto column = ddl_find_column(table, name);
        if (!column) throw parse_error(source, line, unknown(name));
        indices.push_back(*column);
    }
    return indices;
}

std::vector<std::size_t> ddl_resolve_primary_key(const ddl_table& table,
                                                 const std::string& source) {
    return ddl_resolve_columns(
        table, table.primary_key, source, table.primary_key_line, [&](const std::string& name) {
            return fmt::format("primary key of table '{}' names unknown column '{}'", table.name,
                               name);
        });
}

void ddl_resolve_foreign_key(const ddl_schema& schema, std::size_t from_table,
                             const ddl_foreign_key& fk, const std::string& source, ddl_keys& keys) {
    const auto& table = schema.tables[from_table];
    const auto label = fmt::format("{}({})", table.name, ddl_join(fk.columns));
    const auto from =
        ddl_resolve_columns(table, fk.columns, source, fk.line, [&](const std::string& name) {
            return fmt::format("foreign key of table '{}' names unknown column '{}'", table.name,
                               name);
        });
    const auto to_table = ddl_find_table(schema, fk.ref_table);
    if (!to_table)
        throw parse_error(
            source, fk.ref_line,
            fmt::format("foreign key {} references unknown table '{}'", label, fk.ref_table));
    const auto& target = schema.tables[*to_table];
    std::vector<std::size_t> to = keys.primary_keys[*to_table];
    if (fk.ref_columns.empty() && to.empty())
        throw parse_error(source, fk.ref_line,
                          fmt::format("foreign key {} references table '{}' without naming "
                                      "columns, but '{}' has no primary key",
                                      label, target.name, target.name));
    if (!fk.ref_columns.empty())
        to = ddl_resolve_columns(
            target, fk.ref_columns, source, fk.ref_line, [&](const std::string& name) {
                return fmt::format("foreign key {} references unknown column '{}' of table '{}'",
                                   label, name, target.name);
            });
    if (from.size() != to.size())
        throw parse_error(source, fk.ref_line,
                          fmt::format("foreign key {} has {} column(s) but references {} of "
                                      "table '{}'",
                                      label, from.size(), to.size(), target.name));
    for (std::size_t i = 0; i < from.size(); ++i)
        keys.foreign_keys.push_back({{from_table, from[i]}, {*to_table, to[i]}});
}

/// Checks every key against the whole file. @throws parse_error naming file, line and names.
ddl_keys ddl_resolve(const ddl_schema& schema, const std::string& source) {
    ddl_keys keys;
    for (const auto& table : schema.tables)
        keys.primary_keys.push_back(ddl_resolve_primary_key(table, source));
    for (std::size_t t = 0; t < schema.tables.size(); ++t)
        for (const auto& fk : schema.tables[t].foreign_keys)
            ddl_resolve_foreign_key(schema, t, fk, source, keys);
    return keys;
}

// ---------------------------------------------------------------------------------------------
// Dialects

/// The lexical rules of @p dialect (automatic reads as standard).
ddl_lex_rules ddl_rules_for(ddl_dialect dialect) {
    switch (dialect) {
        case ddl_dialect::mysql:
            return {.backslash_escapes = true, .hash_comments = true, .dollar_quotes = false};
        case ddl_dialect::postgresql:
            return {.nested_comments = true};
        default:
            return {};
    }
}

const char* ddl_dialect_name(ddl_dialect dialect) {
    switch (dialect) {
        case ddl_dialect::mysql:
            return "MySQL";
        case ddl_dialect::postgresql:
            return "PostgreSQL";
        default:
            return "standard SQL (SQLite)";
    }
}

bool ddl_contains_nocase(std::string_view text, std::string_view needle) {
    return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) ==
                      std::tolower(static_cast<unsigned char>(b));
           }) != text.end();
}

/// The dialect a text says it is in (a dump header, MySQL's `/*!` and ENGINE=, PostgreSQL's
/// pg_catalog and OWNER TO), or automatic when it says none or both.
ddl_dialect ddl_guess_dialect(std::string_view sql) {
    const auto any = [sql](std::initializer_list<std::string_view> markers) {
        return std::any_of(markers.begin(), markers.end(),
                           [sql](std::string_view m) { return ddl_contains_nocase(sql, m); });
    };
    const bool mysql = any({"-- MySQL dump", "-- MariaDB dump", "/*!", "ENGINE=InnoDB",
                            "ENGINE=MyISAM", "ENGINE = InnoDB", "DEFAULT CHARSET="});
    const bool postgresql =
        any({"-- PostgreSQL database dump", "pg_catalog.", "OWNER TO ", "SET search_path"});
    if (mysql == postgresql) return ddl_dialect::automatic;
    return mysql ? ddl_dialect::mysql : ddl_dialect::postgresql;
}

/// One reading of a text under one dialect's rules: its tokens and schema, or its error.
struct ddl_reading {
    ddl_dialect dialect = ddl_dialect::standard;
    std::vector<ddl_token> tokens;
    std::optional<ddl_schema> schema;
    std::exception_ptr error;
    ddl_lex_notes notes;
};

ddl_reading ddl_read(std::string_view sql, const std::string& origin, ddl_dialect dialect) {
    ddl_reading reading;
    reading.dialect = dialect;
    ddl_lexer lexer(sql, origin, ddl_rules_for(dialect));
    try {
        reading.tokens = lexer.run();
        reading.schema = ddl_parser(reading.tokens, origin).parse();
    } catch (const parse_error&) {
        reading.error = std::current_exception();
    }
    reading.notes = lexer.notes();
    return reading;
}

/// The first line where two readings tokenise differently.
std::size_t ddl_divergence_line(const ddl_reading& a, const ddl_reading& b) {
    const auto n = std::min(a.tokens.size(), b.tokens.size());
    for (std::size_t i = 0; i < n; ++i) {
        const auto& x = a.tokens[i];
        const auto& y = b.tokens[i];
        if (x.kind != y.kind || x.text != y.text || x.line != y.line)
            return std::min(x.line, y.line);
    }
    return n > 0 ? a.tokens[n - 1].line : 0;
}

/// Whether a string literal's text, as one reading has it, ends where every dialect ends it: no
/// backslash before a quote or at its end (where MySQL would read an escaped quote).
bool ddl_string_ends_alike(std::string_view text) {
    return !text.ends_with('\\') && text.find("\\'") == std::string_view::npos &&
           text.find("\\\"") == std::string_view::npos;
}

/// Whether two readings see the same statements and differ only in what string literals hold
/// (`DEFAULT 'C:\path'`: `C:\path`, or with MySQL's escapes `C:path`), strings that end in the
/// same place in both: the same tables, so the first (standard) reading is taken.
bool ddl_differ_in_strings_only(const ddl_reading& a, const ddl_reading& b) {
    return std::equal(a.tokens.begin(), a.tokens.end(), b.tokens.begin(), b.tokens.end(),
                      [](const ddl_token& x, const ddl_token& y) {
                          if (x.kind != y.kind || x.line != y.line) return false;
                          if (x.text == y.text) return true;
                          return x.kind == ddl_token_kind::string &&
                                 ddl_string_ends_alike(x.text) && ddl_string_ends_alike(y.text);
                      });
}

/**
 * @brief Parses @p sql under @p dialect's rules. For ddl_dialect::automatic: the dialect the text
 * says it is in (ddl_guess_dialect); else standard rules, and where the text holds something
 * another dialect reads differently (a backslash in a string, `#` after code, a comment opened
 * inside a comment), also those dialects' readings: readings that fail are dropped, and if the
 * others disagree on the schema, the load fails naming the first line where they differ.
 */
ddl_schema ddl_parse(std::string_view sql, const std::string& origin, ddl_dialect dialect) {
    if (dialect == ddl_dialect::automatic) dialect = ddl_guess_dialect(sql);
    auto first =
        ddl_read(sql, origin, dialect == ddl_dialect::automatic ? ddl_dialect::standard : dialect);
    if (dialect != ddl_dialect::automatic) {
        if (first.error) std::rethrow_exception(first.error);
        return std::move(*first.schema);
    }
    const auto notes = first.notes;  // a copy: pushing more readings may move the first
    std::vector<ddl_reading> readings;
    readings.push_back(std::move(first));
    if (notes.backslash_in_quote || notes.hash_mid_line)
        readings.push_back(ddl_read(sql, origin, ddl_dialect::mysql));
    if (notes.comment_in_comment)
        readings.push_back(ddl_read(sql, origin, ddl_dialect::postgresql));
    ddl_reading* chosen = nullptr;
    for (auto& reading : readings) {
        if (!reading.schema) continue;
        if (!chosen) {
            chosen = &reading;
        } else if (*reading.schema != *chosen->schema &&
                   !ddl_differ_in_strings_only(*chosen, reading)) {
            const auto line = ddl_divergence_line(*chosen, reading);
            throw parse_error(
                origin, line,
                fmt::format("this text reads as different tables in {} and in {} from here on "
                            "({}), and it does not say its dialect (no mysqldump or pg_dump "
                            "header, /*!, ENGINE=, pg_catalog): write it so that both agree ("
                            "a quote inside a string as '', no comment inside a comment), or "
                            "start it with the header line of its dialect's dump (-- MySQL dump, "
                            "-- PostgreSQL database dump)",
                            ddl_dialect_name(chosen->dialect), ddl_dialect_name(reading.dialect),
                            reading.dialect == ddl_dialect::mysql
                                ? "MySQL reads a backslash in a string as an escape and # as a "
                                  "comment"
                                : "PostgreSQL nests /* comments */"));
        }
    }
    if (!chosen) std::rethrow_exception(readings.front().error);
    return std::move(*chosen->schema);
}

/// Adds a validated schema; nothing here can fail after add_database succeeds.
database_id ddl_build(catalog& cat, const ddl_schema& schema, const ddl_keys& keys,
                      std::string db_name) {
    const auto db = cat.add_database(std::move(db_name));
    std::vector<std::vector<column_id>> ids(schema.tables.size());
    for (std::size_t t = 0; t < schema.tables.size(); ++t) {
        const auto& table = schema.tables[t];
        const auto id = cat.add_table(db, table.name, {}, table.description);
        for (const auto& column : table.columns) {
            ids[t].push_back(cat.add_column(id, column.name, column.type, {}, column.description));
            cat.set_constraints(ids[t].back(), column.constraints);
        }
        std::vector<column_id> primary_key;
        for (const auto c : keys.primary_keys[t]) primary_key.push_back(ids[t][c]);
        if (!primary_key.empty()) cat.set_primary_key(id, std::move(primary_key));
    }
    for (const auto& [from, to] : keys.foreign_keys)
        cat.add_foreign_key(ids[from.table][from.column], ids[to.table][to.column]);
    return db;
}

}  // namespace
}  // namespace detail

database_id add_ddl(catalog& cat, std::string_view sql, std::string db_name,
                    std::string_view source, ddl_dialect dialect) {
    const std::string origin(source);
    detail::check_ddl_text_format(sql, origin);
    sql = check_utf8_text(sql, origin);
    const auto schema = detail::ddl_parse(sql, origin, dialect);
    if (schema.tables.empty())
        throw parse_error(origin, 0, "no CREATE TABLE statement: is this a SQL DDL file?");
    const auto keys = detail::ddl_resolve(schema, origin);
    return detail::ddl_build(cat, schema, keys, std::move(db_name));
}

catalog load_ddl(const std::filesystem::path& path, std::string db_name, ddl_dialect dialect) {
    const auto text = read_text_file(path);
    if (db_name.empty()) db_name = default_db_name(path);
    catalog cat;
    add_ddl(cat, text, std::move(db_name), path.string(), dialect);
    return cat;
}

}  // namespace tabret
