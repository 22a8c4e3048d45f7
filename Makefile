# The two set-up commands of the README: `make demo` and `make test`.
# Each installs what is missing, configures, builds and runs.
PRESET ?= default
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc)

.PHONY: all deps configure build test demo bench format clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

demo: build
	@examples/demo.sh $(BUILD)

bench: build
	@$(BUILD)/tests/bench/engine_bench
	@$(BUILD)/tests/bench/runtime_bench
	@$(BUILD)/tests/bench/table_load_bench
	@$(BUILD)/tests/bench/dispatch_bench
	@for n in 2 4 8; do $(BUILD)/cli/tunelock launch -n $$n -- $(BUILD)/tests/bench/ucx_verify_bench; done

format:
	@git ls-files '*.hpp' '*.cpp' | xargs clang-format -i

clean:
	@rm -rf build
