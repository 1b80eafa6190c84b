#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, Clang, ASan + UBSan) and runs each one on its seed
# corpus for SECONDS seconds, one after another.
#   scripts/fuzz.sh SECONDS [TARGET...]     (make fuzz: 600 s each; make fuzz-smoke: 20 s each)
# The working corpus grows in build/fuzz/corpus/<target> (seeded from tests/fuzz/corpus, which
# is never written); crash inputs land in build/fuzz/crashes/<target>. Prints, per target, the
# exec count (libFuzzer's final stats), the corpus size reached and whether it crashed; fails if
# any target crashed.
set -euo pipefail
seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_llm_parsers fuzz_ddl fuzz_tables_json fuzz_index_loader)
jobs=${JOBS:-2}
build=${FUZZ_BUILD:-build/fuzz}
cxx=${FUZZ_CXX:-clang++}

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[ -f "$build/CMakeCache.txt" ] || { command -v ninja >/dev/null 2>&1 && launcher+=(-G Ninja); }
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DTABRET_FUZZ=ON -DTABRET_WERROR=ON -DTABRET_BUILD_TESTS=OFF -DTABRET_BUILD_EXAMPLES=OFF \
  -DTABRET_BUILD_TOOLS=OFF -DTABRET_INSTALL=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
summary=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  crashes="$build/crashes/$t"
  log="$build/logs/$t.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  echo "fuzz: $t for ${seconds}s (log $log)"
  set +e
  "$build/tests/fuzz/$t" "$corpus" "tests/fuzz/corpus/$t" -max_total_time="$seconds" \
    -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 -max_len=16384 \
    -artifact_prefix="$crashes/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  size=$(ls "$corpus" | wc -l)
  if [ $rc -eq 0 ]; then
    result="no crash"
  else
    result="CRASHED (exit $rc; see $log and $crashes)"
    status=1
    grep -m1 -E "ERROR: (AddressSanitizer|libFuzzer)|runtime error|terminate called" "$log" || true
  fi
  summary+=("$(printf '%-20s %6ss  execs %-10s corpus %-6s %s' "$t" "$seconds" "${execs:-?}" \
    "$size" "$result")")
done
echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
exit $status
