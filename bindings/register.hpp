#pragma once
// One register_* function per family; module.cpp calls them in dependency order.

#include <tabret/embedding/callback_embedder.hpp>
#include <tabret/rewriting/callback_rewriter.hpp>
#include <tabret/rewriting/llm.hpp>
#include <tabret/serialize.hpp>

#include <string>

#include <pybind11/pybind11.h>

namespace tabret::bindings {

void register_errors(pybind11::module_& m);
void register_catalog(pybind11::module_& m);
void register_io(pybind11::module_& m);
void register_index(pybind11::module_& m);
void register_values(pybind11::module_& m);
void register_retrieval(pybind11::module_& m);
void register_rewriting(pybind11::module_& m);
void register_reverse(pybind11::module_& m);
void register_crush(pybind11::module_& m);
void register_adaptive(pybind11::module_& m);
void register_join(pybind11::module_& m);
void register_key_discovery(pybind11::module_& m);
void register_murre(pybind11::module_& m);
void register_native_methods(pybind11::module_& m);

/// The rewriting layer's families, in the order register_rewriting calls them (later ones use
/// the classes of earlier ones in their signatures).
void register_rewriting_llm(pybind11::module_& m);
void register_rewriting_cache(pybind11::module_& m);
void register_rewriting_prompts(pybind11::module_& m);
void register_rewriting_replay(pybind11::module_& m);
void register_rewriting_rewriters(pybind11::module_& m);

/// "signature" | "words" | "ddl" and "natural" | "original", shared by every family.
table_format to_table_format(const std::string& s);
name_style to_name_style(const std::string& s);

/// A HashingEmbedder (used without the GIL) or a Python callable, as one C++ embedder type.
callback_embedder to_embedder(const pybind11::object& embed, const std::string& name);

/// A NativeLLM (used without the GIL), an object whose `native` attribute is one, or a Python
/// callable `list[str] -> list[str]`, as an llm_fn. @p name labels its errors ("" = the
/// object's `name` attribute, else its type name).
llm_fn to_llm(const pybind11::object& llm, const std::string& name = "");

/// A built-in rewriter (used without the GIL) or any object with `rewrite(requests)` (entered
/// once per batch with the GIL), as a callback_rewriter.
callback_rewriter to_rewriter(const pybind11::object& rewriter);

}  // namespace tabret::bindings
