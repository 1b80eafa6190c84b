#pragma once
// One register_* function per family; module.cpp calls them in dependency order.

#include <pybind11/pybind11.h>

namespace tabret::bindings {

void register_errors(pybind11::module_& m);
void register_catalog(pybind11::module_& m);
void register_io(pybind11::module_& m);

}  // namespace tabret::bindings
