# The two set-up commands of the README: `make demo` and `make test`.
# Each installs what is missing, configures, builds and runs.
PRESET ?= default
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)

WASM   := build/wasm
# Debian's emscripten runs its tools with node; NodeSource's node needs this.
EMENV  := NODE_PATH=/usr/share/nodejs

.PHONY: all deps configure build wasm wasm-build web test demo bench bench-gloo fuzz sanitize format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)
	@$(MAKE) --no-print-directory wasm

# The engine in WebAssembly and the preview page, in $(WASM)/site.
wasm: deps
	@$(MAKE) --no-print-directory wasm-build

wasm-build:
	@if command -v em++ >/dev/null; then \
	  $(EMENV) cmake --preset wasm >/dev/null && $(EMENV) cmake --build $(WASM) -j $(JOBS); \
	else echo "em++ not found: the wasm build and its tests are skipped"; fi

# Serves the preview page on http://127.0.0.1:8000/, or another free port
# when 8000 is taken (Ctrl-C to stop).
web:
	@scripts/install-deps.sh --web
	@$(MAKE) --no-print-directory wasm-build
	@port=$$(python3 scripts/free_port.py 8000); \
	  echo "tunelock preview: http://127.0.0.1:$$port/"; \
	  python3 -m http.server --bind 127.0.0.1 --directory $(WASM)/site $$port

test: build
	@ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

# Every reader under libFuzzer (clang, ASan, UBSan), FUZZ_SECONDS each.
FUZZ_SECONDS ?= 60
fuzz: deps
	@scripts/fuzz.sh $(FUZZ_SECONDS) $(JOBS)

# The native suites under ASan+UBSan, and the threaded ones under TSan
# (presets asan and tsan). CI runs it after `make test`.
sanitize: deps
	@scripts/sanitize.sh all $(JOBS)

# Only what the demo runs: the CLI and tunelock-demo, native, in build/demo
# (no tests, benchmarks, fuzzers or wasm page; `make test` builds those),
# and the C ABI library, so `cmake --install build/demo` has all it installs,
# and the watch library where CUPTI is installed, so the README's
# `tunelock watch` runs after it.
demo:
	@scripts/install-deps.sh --demo
	@cmake --preset demo >/dev/null
	@cmake --build build/demo -j $(JOBS) --target tunelock tunelock-demo tunelock_c
	@if cmake --build build/demo --target help 2>/dev/null | grep -q '^tunelock_watch:'; then \
	  cmake --build build/demo -j $(JOBS) --target tunelock_watch; fi
	@examples/demo.sh build/demo

bench: build
	@$(BUILD)/tests/bench/engine_bench
	@$(BUILD)/tests/bench/runtime_bench
	@$(BUILD)/tests/bench/table_load_bench
	@$(BUILD)/tests/bench/dispatch_bench
	@echo "== audit regret of a deliberately slow entry vs its measured per-call ratio =="
	@tests/launcher/demo_audit.sh $(BUILD)/launcher/demo/tunelock-demo $(BUILD)/cli/tunelock --compare
	@ctest --test-dir $(BUILD) -R web.parity -V | grep -E "decisions/s"
	@if [ -f $(WASM)/site/tunelock.js ]; then cd web/tests && node first_decision.cjs ../../$(WASM)/site 5; fi
	@for n in 2 4 8 16 64; do $(BUILD)/cli/tunelock launch -n $$n -- $(BUILD)/tests/bench/ucx_verify_bench; done

# The UCX check next to torch.distributed all_gather_object over gloo, and
# Python's tunelock.verify() over gloo next to all_gather_object of the same
# batch, in one run on one machine (installs Debian's python3-torch, which
# `make test` does not need).
bench-gloo: build
	@scripts/install-deps.sh --bench
	@for n in 2 4 8 16; do \
	  $(BUILD)/cli/tunelock launch -n $$n -- $(BUILD)/tests/bench/ucx_verify_bench; \
	  /usr/bin/python3 tests/bench/gloo_all_gather_bench.py $$n; \
	  PYTHONPATH=$(BUILD)/python /usr/bin/python3 tests/bench/python_verify_bench.py $$n; \
	done
	@$(BUILD)/cli/tunelock launch -n 64 -- $(BUILD)/tests/bench/ucx_verify_bench

format:
	@git ls-files '*.hpp' '*.cpp' | xargs clang-format -i

clean:
	@rm -rf build
