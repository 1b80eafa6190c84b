// Loaders and savers. Arguments are converted first; file work runs without the GIL.
#include <tabret/io/catalog_json.hpp>
#include <tabret/io/ddl.hpp>
#include <tabret/io/file.hpp>
#include <tabret/io/json_reader.hpp>
#include <tabret/io/spider_json.hpp>
#include <tabret/io/sqlite.hpp>
#include <tabret/io/text_file.hpp>

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <nlohmann/json.hpp>

#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

void register_io(py::module_& m) {
    using release = py::call_guard<py::gil_scoped_release>;
    using std::filesystem::path;
    m.def(
        "add_spider_json",
        [](catalog& cat, const path& p) { add_spider_json(cat, read_text_file(p), p.string()); },
        py::arg("catalog"), py::arg("path"), release(),
        "Adds every database of a Spider/BIRD tables.json file (all or nothing).");
    m.def(
        "add_spider_json_text",
        [](catalog& cat, const std::string& text, const std::string& source) {
            add_spider_json(cat, text, source);
        },
        py::arg("catalog"), py::arg("text"), py::arg("source") = "<string>", release());
    m.def(
        "add_ddl",
        [](catalog& cat, const path& p, std::string db_name) {
            if (db_name.empty()) db_name = default_db_name(p);
            return add_ddl(cat, read_text_file(p), std::move(db_name), p.string());
        },
        py::arg("catalog"), py::arg("path"), py::arg("db_name") = "", release(),
        "Adds the tables of a SQL DDL file as one database (default name: the file stem).");
    m.def(
        "add_ddl_text",
        [](catalog& cat, const std::string& sql, std::string db_name, const std::string& source) {
            return add_ddl(cat, sql, std::move(db_name), source);
        },
        py::arg("catalog"), py::arg("sql"), py::arg("db_name"), py::arg("source") = "<string>",
        release());
    m.def(
        "add_sqlite",
        [](catalog& cat, const path& p, std::string db_name) {
            return add_sqlite(cat, p, std::move(db_name));
        },
        py::arg("catalog"), py::arg("path"), py::arg("db_name") = "", release(),
        "Adds the schema of a SQLite file as one database (default name: the file stem).");
    m.def("load_catalog_json", &load_catalog_json, py::arg("path"), release(),
          "Loads tabret catalog JSON.");
    m.def("save_catalog_json", &save_catalog_json, py::arg("catalog"), py::arg("path"), release(),
          "Saves tabret catalog JSON atomically.");
    m.def(
        "write_file_atomic",
        [](const path& p, const std::string& data) { write_file_atomic(p, data); }, py::arg("path"),
        py::arg("data"), release(),
        "Replaces the regular file @p path (or creates it) with the bytes @p data atomically; a "
        "symbolic link, directory, FIFO, socket or device there is refused with FileError.");
    m.def(
        "read_file_bytes",
        [](const path& p) {
            std::string data;
            {
                const py::gil_scoped_release unlocked;
                data = read_text_file(p);
            }
            return py::bytes(data);
        },
        py::arg("path"),
        "The bytes of the regular file @p path, as every loader reads one (io/file.hpp: opened "
        "without blocking, FIFOs, sockets, devices, directories and files over 4 GiB refused "
        "with FileError naming the path).");
    m.def(
        "check_utf8",
        [](const py::bytes& data, const std::string& source) {
            const auto text = std::string_view(data);
            return std::string(check_utf8_text(text, source));
        },
        py::arg("data"), py::arg("source"),
        "@p data as UTF-8 text without a leading byte order mark (io/text_file.hpp); ParseError "
        "naming @p source, the line, byte offset and value of the first byte that is not UTF-8.");
    m.def(
        "check_file_target", [](const path& p) { (void)detail::replaceable_file_mode(p); },
        py::arg("path"), release(),
        "Raises FileError unless write_file_atomic(path, …) may write there (nothing or a "
        "regular file, in an existing directory).");
    m.def(
        "catalog_to_json_text", [](const catalog& cat) { return catalog_to_json(cat).dump(2); },
        py::arg("catalog"), release());
    m.def(
        "catalog_from_json_text",
        [](const std::string& text, const std::string& source) {
            return catalog_from_json(detail::parse_json(text, source), source);
        },
        py::arg("text"), py::arg("source") = "<string>", release(),
        "Parses tabret catalog JSON text; errors name @p source.");
}

}  // namespace tabret::bindings
