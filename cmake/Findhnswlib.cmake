# Findhnswlib: the header-only hnswlib (Debian's libhnswlib-dev ships no CMake config).
# Defines hnswlib_FOUND and the imported target hnswlib::hnswlib.
if(TARGET hnswlib::hnswlib)
  set(hnswlib_FOUND TRUE)
  return()
endif()
find_path(hnswlib_INCLUDE_DIR NAMES hnswlib/hnswlib.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(hnswlib REQUIRED_VARS hnswlib_INCLUDE_DIR)
if(hnswlib_FOUND)
  add_library(hnswlib::hnswlib INTERFACE IMPORTED)
  set_target_properties(hnswlib::hnswlib PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${hnswlib_INCLUDE_DIR}")
endif()
mark_as_advanced(hnswlib_INCLUDE_DIR)
