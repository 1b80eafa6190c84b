#pragma once
// Shared helpers for the C++ tests: where the benchmark data and fixtures are.

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

namespace tabret::test {

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
