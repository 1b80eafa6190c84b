#!/usr/bin/env bash
# Installs the Debian packages tabret builds against, only those that are missing.
# Python packages come from pip (see the Makefile); nothing else is downloaded.
# --test adds what the tests need beyond the build: a PostgreSQL server and a MariaDB server
# (started by the tests; pg_dump and mysqldump make real dumps for the DDL loader tests), the
# sqlite3 shell (`.schema` dumps) and clang with its runtime libraries (libFuzzer, for
# make fuzz-smoke). --bench adds what make bench needs: Google Benchmark (the C++
# micro-benchmarks) and perf (the profile).
set -euo pipefail

packages=(g++ make libeigen3-dev xtensor-dev libfmt-dev libhnswlib-dev nlohmann-json3-dev
          libsqlite3-dev catch2 clang-format)
command -v cmake >/dev/null 2>&1 || packages+=(cmake)
[ "${1:-}" = "--test" ] && packages+=(postgresql mariadb-server mariadb-client sqlite3 clang
                                            libclang-rt-14-dev)
[ "${1:-}" = "--bench" ] && packages+=(libbenchmark-dev linux-perf)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all Debian packages present"
    exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "install-deps: need root to run apt-get install ${missing[*]}" >&2
        exit 1
    fi
else
    SUDO=
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
