#pragma once
/// @file io/artifact_version.hpp
/// @brief The version of the saved directory (the artifact, io/artifact.hpp) this tabret writes
/// and reads.

namespace tabret::detail {

inline constexpr long artifact_version = 3;

}  // namespace tabret::detail
