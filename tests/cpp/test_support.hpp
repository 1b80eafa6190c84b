#pragma once
// Shared helpers for the C++ tests: where the benchmark data and fixtures are.

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tabret/catalog.hpp>
#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/join/join_graph.hpp>
#include <tabret/rewriting/response_cache.hpp>
#include <tabret/rewriting/rewriter.hpp>

namespace tabret::test {

/// An n × d matrix of seeded standard-normal entries.
inline matrix random_rows(std::size_t n, std::size_t d, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal;
    matrix m(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = normal(gen);
    return m;
}

/// school: students —< enrollments >— courses (many-to-many), teachers —< courses;
/// shop: customers —< orders; both databases have an `id` everywhere.
/// A rewriter that answers every request with the same queries.
struct fixed_rewriter {
    std::vector<std::string> queries;
    std::vector<rewrite_result> rewrite(std::span<const rewrite_request> r) const {
        return std::vector<rewrite_result>(r.size(), rewrite_result{false, queries});
    }
};

inline catalog school_and_shop() {
    catalog cat;
    // A table keyed by an integer `id`, with a text `name`; returns the id column.
    const auto named = [&cat](database_id db, const std::string& table) {
        const auto t = cat.add_table(db, table);
        const auto id = cat.add_column(t, "id", "integer");
        cat.add_column(t, "name", "text");
        cat.set_primary_key(t, {id});
        return id;
    };
    const auto school = cat.add_database("school");
    const auto s_id = named(school, "students");
    const auto t_id = named(school, "teachers");
    const auto courses = cat.add_table(school, "courses");
    const auto c_id = cat.add_column(courses, "id", "integer");
    cat.add_column(courses, "title", "text");
    const auto c_teacher = cat.add_column(courses, "teacher_id", "integer");
    cat.set_primary_key(courses, {c_id});
    const auto enrollments = cat.add_table(school, "enrollments");
    const auto e_student = cat.add_column(enrollments, "student_id", "integer");
    const auto e_course = cat.add_column(enrollments, "course_id", "integer");
    cat.add_column(enrollments, "grade", "real");
    cat.add_foreign_key(e_student, s_id);
    cat.add_foreign_key(e_course, c_id);
    cat.add_foreign_key(c_teacher, t_id);
    const auto shop = cat.add_database("shop");
    const auto cu_id = named(shop, "customers");
    const auto orders = cat.add_table(shop, "orders");
    cat.add_column(orders, "id", "integer");
    const auto o_customer = cat.add_column(orders, "customer_id", "integer");
    cat.add_foreign_key(o_customer, cu_id);
    return cat;
}

/// What a join-aware selector needs over school_and_shop: the hashing embedder's table index
/// and join graph, a rewriter that asks for students' names and course titles, and a question.
struct join_setup {
    catalog cat = school_and_shop();
    hashing_embedder e;
    table_index index = table_index::build(cat, e, e.name());
    join_graph graph = join_graph::build(cat, e, e.name());
    fixed_rewriter rw{{"students:name", "courses:title"}};
    std::vector<std::string> qs{"which students take which course titles"};
};

/// A JSON-lines response cache of two answers from model "m": p1 -> a1, p2 -> a2.
inline std::string two_cached_answers() {
    return detail::rw::cache_line("m", "p1", "a1") + detail::rw::cache_line("m", "p2", "a2");
}

inline std::filesystem::path fixture(const std::string& name) {
    return std::filesystem::path(TABRET_TEST_DATA_DIR) / name;
}

inline std::filesystem::path demo_catalog_path() {
    return std::filesystem::path(TABRET_DEMO_DIR) / "catalog.json";
}

/// The demo catalog, loaded once.
inline const catalog& demo() {
    static const catalog cat = load_catalog_json(demo_catalog_path());
    return cat;
}

/// A table index of the demo catalog under the hashing embedder, built once.
inline const table_index& demo_index() {
    static const table_index index =
        table_index::build(demo(), hashing_embedder{}, hashing_embedder{}.name());
    return index;
}

/// The benchmark data directory ($TABRET_DATA_DIR, default ../shared/data beside the repo), or
/// nullopt when absent. Under CI=true absence fails the test instead.
inline std::optional<std::filesystem::path> data_dir() {
    const char* env = std::getenv("TABRET_DATA_DIR");
    const std::filesystem::path dir =
        env && *env ? std::filesystem::path(env) : std::filesystem::path(TABRET_DEFAULT_DATA_DIR);
    if (std::filesystem::is_directory(dir)) return dir;
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL("benchmark data directory missing under CI: " << dir);
    WARN("skipped: benchmark data directory not found: " << dir);
    return std::nullopt;
}

/// A fresh empty directory under the system temp dir, removed on destruction.
class temp_dir {
  public:
    temp_dir() {
        auto base = std::filesystem::temp_directory_path();
        for (int i = 0;; ++i) {
            path_ = base / ("tabret-test-" + std::to_string(std::rand()) + "-" + std::to_string(i));
            if (std::filesystem::create_directory(path_)) break;
        }
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace tabret::test
