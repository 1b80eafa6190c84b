#pragma once
// Python passes enum choices as strings ("signature", "hnsw", …); one helper maps them and
// names every valid choice when the string is not one.

#include <initializer_list>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <tabret/index/fusion.hpp>

namespace tabret::bindings {

/// The value named @p s among @p choices; ValueError "what must be 'a', 'b' or 'c', not 's'".
template <class E>
E choice(const char* what, const std::string& s,
         std::initializer_list<std::pair<const char*, E>> choices) {
    std::string names;
    std::size_t i = 0;
    for (const auto& [name, value] : choices) {
        if (s == name) return value;
        names += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ", name);
        ++i;
    }
    throw pybind11::value_error(fmt::format("{} must be {}, not '{}'", what, names, s));
}

inline fusion_mode to_fusion(const std::string& s) {
    return choice<fusion_mode>("fusion", s,
                               {{"rrf", fusion_mode::rrf}, {"weighted", fusion_mode::weighted}});
}

}  // namespace tabret::bindings
