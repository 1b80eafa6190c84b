// Regression tests of issue 47, items 1 and 11: every single-file save goes through
// write_file_atomic, which writes only where nothing or a regular file is (a symbolic link, FIFO,
// socket, device or directory is refused and left as it is, as an index save refuses them), and
// says why a save failed, naming the target.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <tabret/embedding/hashing_embedder.hpp>
#include <tabret/index/table_index.hpp>
#include <tabret/io/catalog_json.hpp>
#include <tabret/io/ddl.hpp>
#include <tabret/io/file.hpp>

#include "test_support.hpp"

using namespace tabret;
namespace fs = std::filesystem;

namespace {

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const io_error& e) {
        return e.what();
    }
    return "(no io_error)";
}

std::string contents(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A bound Unix socket at @p path for the object's lifetime.
struct bound_socket {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    explicit bound_socket(const fs::path& path) {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
        REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    }
    ~bound_socket() { ::close(fd); }
    bound_socket(const bound_socket&) = delete;
    bound_socket& operator=(const bound_socket&) = delete;
};

bool no_temporaries(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().find("tabret-tmp") != std::string::npos) return false;
    return true;
}

}  // namespace

TEST_CASE("write_file_atomic refuses what is not a regular file and leaves it",
          "[safety-writers]") {
    const test::temp_dir dir;
    const auto fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(message_of([&] { write_file_atomic(fifo, "x"); }) ==
          fifo.string() + ": is a FIFO, not a regular file; not replacing it");
    CHECK(fs::is_fifo(fs::symlink_status(fifo)));

    const auto sock = dir.path() / "sock";
    const bound_socket s(sock);
    CHECK(message_of([&] { write_file_atomic(sock, "x"); }).find(": is a socket, not a regular") !=
          std::string::npos);
    CHECK(fs::is_socket(fs::symlink_status(sock)));

    CHECK(message_of([&] { write_file_atomic(dir.path(), "x"); }) ==
          dir.path().string() + ": is a directory, not a regular file; not replacing it");

    if (::geteuid() == 0) {  // mknod of a device needs root: a second /dev/null, in dir
        const auto null = dir.path() / "null";
        REQUIRE(::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0);
        CHECK(message_of([&] { write_file_atomic(null, "x"); }).find("is a character device") !=
              std::string::npos);
        CHECK(fs::is_character_file(fs::symlink_status(null)));
    }
    CHECK(no_temporaries(dir.path()));
}

TEST_CASE("write_file_atomic refuses a symbolic link, as an index save does", "[safety-writers]") {
    const test::temp_dir dir;
    const auto real = dir.path() / "real.json";
    write_file_atomic(real, "mine");
    const auto link = dir.path() / "link.json";
    fs::create_symlink(real, link);
    CHECK(message_of([&] {
              save_catalog_json(load_ddl(test::fixture("ddl/sqlite_shop.sql")), link);
          }) == link.string() +
                    ": is a symbolic link, not a regular file; not replacing it (save to the "
                    "file it names)");
    CHECK(fs::is_symlink(link));
    CHECK(contents(real) == "mine");
}

TEST_CASE("write_file_atomic replaces a regular file keeping its permissions", "[safety-writers]") {
    const test::temp_dir dir;
    const auto path = dir.path() / "f";
    write_file_atomic(path, "old");
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
    write_file_atomic(path, "new");
    CHECK(contents(path) == "new");
    CHECK(fs::status(path).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
    CHECK(no_temporaries(dir.path()));
}

TEST_CASE("a failed single-file save names the target and why", "[safety-writers]") {
    const test::temp_dir dir;
    const auto target = dir.path() / "missing" / "cat.json";
    CHECK(message_of([&] { write_file_atomic(target, "x"); }) ==
          fmt::format("{}: cannot write: the directory {} does not exist", target.string(),
                      target.parent_path().string()));
    CHECK(message_of([&] { write_file_atomic(dir.path(), "x"); }).find("Success") ==
          std::string::npos);
}

TEST_CASE("an index saves to and replaces a directory whose name is not UTF-8",
          "[safety-writers]") {
    const test::temp_dir dir;
    const auto target = dir.path() / "idx\xff";
    const auto index = table_index::build(load_ddl(test::fixture("ddl/sqlite_shop.sql")),
                                          hashing_embedder(hashing_params{.dim = 16}), "h16");
    index.save(target);
    index.save(target);  // the second save reads the marker of the first
    CHECK(table_index::load(target).catalog().tables().size() == index.catalog().tables().size());
    CHECK(no_temporaries(dir.path()));
}
