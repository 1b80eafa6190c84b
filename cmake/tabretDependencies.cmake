# The dependencies of tabret::tabret; also used by the installed package config (find_dependency).
include(GNUInstallDirs)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(xtensor REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(hnswlib REQUIRED)
