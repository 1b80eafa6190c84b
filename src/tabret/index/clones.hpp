#pragma once
/// @file src/tabret/index/clones.hpp
/// @brief TABRET_CLONES: compile a kernel for x86-64-v4 (AVX-512), x86-64-v3 (AVX2 + FMA) and
/// the x86-64 baseline, the loader picking the clone for the CPU (GCC function multi-versioning,
/// an ifunc), never a global `-march=native`. Private to the library's sources.
///
/// Each string of `target_clones` is split at its commas into clones of its own, so "avx2,fma"
/// would make an AVX2 clone without FMA and an FMA clone without AVX2: the ISA levels name one
/// clone each. Clang (the fuzz build) gets per-feature clones. Under the sanitizers (whose
/// runtimes are not set up yet when the loader runs an ifunc resolver), and off x86-64, one
/// portable version.

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TABRET_NO_TARGET_CLONES
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TABRET_NO_TARGET_CLONES
#endif
#endif

#if !defined(__x86_64__) || defined(TABRET_NO_TARGET_CLONES)
#define TABRET_CLONES
#elif defined(__clang__)
#define TABRET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#elif defined(__GNUC__)
#define TABRET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TABRET_CLONES
#endif
