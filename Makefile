# Two commands on a fresh Debian machine:
#   make run   install missing packages, build (Release), simulate the default scenario
#   make test  install missing packages, build, run every test (ctest)
BUILD ?= build
JOBS ?= $(shell nproc)
SCENARIO ?= scenarios/default.textproto

.PHONY: deps configure build run test bench clean format

deps:
	@tools/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Until the replay exists (the event-engine issue), the default scenario's
# memory report is what moesim predicts.
run: build
	@$(BUILD)/moesim memory $(SCENARIO)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD)/memory_bench
	@$(BUILD)/topology_bench
	@$(BUILD)/maxmin_bench

clean:
	@rm -rf $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.cc' '*.h')
