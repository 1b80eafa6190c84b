#pragma once
// A retrieval method defined once in C++ and listed to Python. A file in bindings/methods/
// registers it (`const registration r{method<Options>(...)}`); tabret.methods reads the list
// (`_core.native_methods()`), so the method reaches the Python API, `--method`, `--pipeline`
// and `tabret eval` with no other wiring, and its options' defaults are read from the C++
// options struct, never repeated.

#include <tabret/index/table_index.hpp>
#include <tabret/index/value_index.hpp>
#include <tabret/retrieval/any_retriever.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include "callbacks.hpp"
#include "owner.hpp"

namespace tabret::bindings {

/// What a native method is built from.
struct method_inputs {
    std::shared_ptr<const table_index> index;
    callback_embedder embedder;
    std::optional<any_retriever> first;         ///< The stage before a "select" or "post" method.
    std::shared_ptr<const value_index> values;  ///< The index's cell values, when it has them.
};

/// One option of a method: its name, how to read it (the default is read from `Options{}`)
/// and how a Python value sets it.
template <class Options>
struct option_field {
    std::string name;
    std::function<pybind11::object(const Options&)> get;
    std::function<void(Options&, const pybind11::handle&)> set;
};

/// The option @p name, stored in @p member.
template <class Options, class T>
option_field<Options> field(std::string name, T Options::*member) {
    return {std::move(name), [member](const Options& o) { return pybind11::cast(o.*member); },
            [member](Options& o, const pybind11::handle& v) { o.*member = v.cast<T>(); }};
}

/// What a method is, as tabret.methods lists it.
struct method_info {
    std::string name;
    std::string kind;  ///< "first", "select" or "post" (tabret.methods.StageKind).
    std::string description;
    std::string score;          ///< What a returned table's score is (`tabret query` says it).
    bool columns = false;       ///< Ranks columns too.
    bool column_index = false;  ///< Searches the index's column vectors.
    std::vector<std::string> needs = {};  ///< What it cannot run without (tabret.methods.Need).
};

/// A method as Python sees it: what it is, its options with their defaults, how to build it.
struct native_method {
    method_info info;
    std::function<pybind11::dict()> defaults;
    std::function<any_retriever(const method_inputs&, const pybind11::dict&)> build;
};

/// Every registered method, in registration order.
std::vector<native_method>& native_methods();

/// Registers a method while _core loads (a namespace-scope `const registration`).
struct registration {
    explicit registration(native_method m) { native_methods().push_back(std::move(m)); }
};

/// @p R built by `make(held...)`, owning what it refers to, as an any_retriever.
template <class R, class Make, class... Held>
any_retriever owned(Make&& make, Held... held) {
    auto o =
        std::make_shared<const owner<R, Held...>>(std::forward<Make>(make), std::move(held)...);
    return any_retriever([o](std::span<const std::string> questions, const retrieve_options& ro) {
        return o->get().retrieve(questions, ro);
    });
}

/**
 * A native method whose options are @p fields of @p Options; `build(inputs, options)` returns
 * its retriever. Options given by Python are checked: an unknown name or a value of the wrong
 * type is a TypeError naming the method and the option.
 */
template <class Options, class Build>
native_method method(method_info info, std::vector<option_field<Options>> fields, Build build) {
    auto defaults = [fields] {
        pybind11::dict d;
        const Options o{};
        for (const auto& f : fields) d[pybind11::str(f.name)] = f.get(o);
        return d;
    };
    auto make = [name = info.name, fields, build](const method_inputs& in,
                                                  const pybind11::dict& given) {
        Options o{};
        for (const auto& [key, value] : given) {
            const auto k = pybind11::cast<std::string>(key);
            const auto f = std::ranges::find(fields, k, &option_field<Options>::name);
            if (f == fields.end())
                throw pybind11::type_error(fmt::format("{} has no option '{}'", name, k));
            try {
                f->set(o, value);
            } catch (const pybind11::cast_error&) {
                throw pybind11::type_error(
                    fmt::format("{} option '{}': {} is not a {}", name, k,
                                pybind11::cast<std::string>(pybind11::repr(value)),
                                pybind11::cast<std::string>(
                                    pybind11::type::of(f->get(Options{})).attr("__name__"))));
            }
        }
        return build(in, o);
    };
    return {std::move(info), std::move(defaults), std::move(make)};
}

}  // namespace tabret::bindings
