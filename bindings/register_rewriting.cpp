// The rewriting layer: LLM callbacks, the response cache, prompts, parsers, recorded answers and
// query rewriters, one register_rewriting_*.cpp per family. Enumerations are strings; every
// rewriter has the one call shape `rewrite(requests) -> results` and runs without the GIL (a
// Python LLM takes it once per batch).
#include "register.hpp"

namespace tabret::bindings {

void register_rewriting(pybind11::module_& m) {
    register_rewriting_llm(m);
    register_rewriting_cache(m);
    register_rewriting_prompts(m);
    register_rewriting_replay(m);
    register_rewriting_rewriters(m);
}

}  // namespace tabret::bindings
