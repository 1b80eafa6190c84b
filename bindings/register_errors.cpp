// Maps the tabret::error family to Python exceptions that also derive from the matching builtin
// (FileError is an OSError, ParseError and SchemaError are ValueErrors; LLMError is a
// RuntimeError, MissingRecordingError also a LookupError, TemplateError a ValueError).
#include <tabret/embedding/matrix.hpp>
#include <tabret/error.hpp>
#include <tabret/rewriting/llm.hpp>
#include <tabret/rewriting/parsers.hpp>
#include <tabret/rewriting/prompts.hpp>
#include <tabret/rewriting/replay_llm.hpp>
#include <tabret/scoring/window_scorer.hpp>

#include <fmt/format.h>

#include "callbacks.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace tabret::bindings {

namespace {

py::handle new_exception(py::module_& m, const char* name, py::tuple bases, const char* doc) {
    const auto qualified = fmt::format("tabret._core.{}", name);
    py::object type = py::reinterpret_steal<py::object>(
        PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr));
    if (!type) throw py::error_already_set();
    m.attr(name) = type;
    return type.release();  // the module keeps it alive; no decref after finalisation
}

}  // namespace

void register_errors(py::module_& m) {
    auto builtins = py::module_::import("builtins");
    static auto base = new_exception(m, "Error", py::make_tuple(builtins.attr("Exception")),
                                     "Base of every error tabret raises.");
    static auto file_error =
        new_exception(m, "FileError", py::make_tuple(base, builtins.attr("OSError")),
                      "A missing, unreadable or wrong-kind file.");
    static auto parse_error_type =
        new_exception(m, "ParseError", py::make_tuple(base, builtins.attr("ValueError")),
                      "Text that does not parse; has .source and .line (0 if unknown).");
    static auto schema_error_type =
        new_exception(m, "SchemaError", py::make_tuple(base, builtins.attr("ValueError")),
                      "A structurally wrong schema: missing field, dangling reference.");
    static auto embedding_error_type =
        new_exception(m, "EmbeddingError", py::make_tuple(base, builtins.attr("ValueError")),
                      "An embedding of the wrong shape, or with NaN or infinity.");
    static auto llm_error_type =
        new_exception(m, "LLMError", py::make_tuple(base, builtins.attr("RuntimeError")),
                      "An LLM call failed or misbehaved (wrong number of completions, HTTP "
                      "error after the last retry).");
    static auto llm_parse_error_type = new_exception(
        m, "LLMParseError", py::make_tuple(parse_error_type),
        "An LLM answer that yields nothing usable; has .parser and .answer (the raw text).");
    static auto missing_recording_type = new_exception(
        m, "MissingRecordingError", py::make_tuple(llm_error_type, builtins.attr("LookupError")),
        "A replayed question that has no recorded answer; has .question.");
    static auto template_error_type =
        new_exception(m, "TemplateError", py::make_tuple(base, builtins.attr("ValueError")),
                      "A prompt template that is malformed, lacks a value, or is not in the set.");
    static auto scoring_error_type =
        new_exception(m, "ScoringError", py::make_tuple(base, builtins.attr("ValueError")),
                      "A window scorer answered with the wrong number of logits, or NaN.");
    // Most derived first: each catch clause must come before the clauses of its bases.
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const tabret::llm_parse_error& e) {
            py::object exc = llm_parse_error_type(lenient_str(e.what()));
            exc.attr("source") = e.source();
            exc.attr("line") = e.line();
            exc.attr("parser") = e.parser();
            exc.attr("answer") = lenient_str(e.answer());
            PyErr_SetObject(llm_parse_error_type.ptr(), exc.ptr());
        } catch (const tabret::parse_error& e) {
            py::object exc = parse_error_type(e.what());
            exc.attr("source") = e.source();
            exc.attr("line") = e.line();
            PyErr_SetObject(parse_error_type.ptr(), exc.ptr());
        } catch (const tabret::io_error& e) {
            PyErr_SetString(file_error.ptr(), e.what());
        } catch (const tabret::embedding_error& e) {
            PyErr_SetString(embedding_error_type.ptr(), e.what());
        } catch (const tabret::schema_error& e) {
            PyErr_SetString(schema_error_type.ptr(), e.what());
        } catch (const tabret::missing_recording_error& e) {
            py::object exc = missing_recording_type(lenient_str(e.what()));
            exc.attr("question") = lenient_str(e.question());
            PyErr_SetObject(missing_recording_type.ptr(), exc.ptr());
        } catch (const tabret::llm_error& e) {
            PyErr_SetObject(llm_error_type.ptr(), lenient_str(e.what()).ptr());
        } catch (const tabret::template_error& e) {
            PyErr_SetString(template_error_type.ptr(), e.what());
        } catch (const tabret::scoring_error& e) {
            PyErr_SetString(scoring_error_type.ptr(), e.what());
        } catch (const tabret::error& e) {
            PyErr_SetString(base.ptr(), e.what());
        }
    });
}

}  // namespace tabret::bindings
