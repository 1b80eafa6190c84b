#pragma once
// Shared helpers for the C++ tests: where the benchmark data and fixtures are.

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tabret/catalog.hpp>
#include <tabret/rewriting/rewriter.hpp>

namespace tabret::test {

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
    const auto school = cat.add_database("school");
    const auto students = cat.add_table(school, "students");
    const auto s_id = cat.add_column(students, "id", "integer");
    cat.add_column(students, "name", "text");
    cat.set_primary_key(students, {s_id});
    const auto teachers = cat.add_table(school, "teachers");
    const auto t_id = cat.add_column(teachers, "id", "integer");
    cat.add_column(teachers, "name", "text");
    cat.set_primary_key(teachers, {t_id});
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
    const auto customers = cat.add_table(shop, "customers");
    const auto cu_id = cat.add_column(customers, "id", "integer");
    cat.add_column(customers, "name", "text");
    cat.set_primary_key(customers, {cu_id});
    const auto orders = cat.add_table(shop, "orders");
    cat.add_column(orders, "id", "integer");
    const auto o_customer = cat.add_column(orders, "customer_id", "integer");
    cat.add_foreign_key(o_customer, cu_id);
    return cat;
}

inline std::filesystem::path fixture(const std::string& name) {
    return std::filesystem::path(TABRET_TEST_DATA_DIR) / name;
}

inline std::filesystem::path demo_catalog_path() {
    return std::filesystem::path(TABRET_DEMO_DIR) / "catalog.json";
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
