# install(EXPORT) with a generated package config and version file.
include(CMakePackageConfigHelpers)
set(TABRET_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/tabret")

install(TARGETS tabret EXPORT tabretTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(DIRECTORY include/tabret DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT tabretTargets NAMESPACE tabret:: DESTINATION "${TABRET_CMAKE_DIR}")
configure_package_config_file(cmake/tabretConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/tabretConfig.cmake" INSTALL_DESTINATION "${TABRET_CMAKE_DIR}")
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/tabretConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${CMAKE_CURRENT_BINARY_DIR}/tabretConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/tabretConfigVersion.cmake"
  cmake/Findhnswlib.cmake
  DESTINATION "${TABRET_CMAKE_DIR}")
