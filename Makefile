# Two commands on a fresh Debian machine:
#   make run   install missing packages, build (Release), simulate the default scenario
#   make test  install missing packages, build, run every test (ctest)
BUILD ?= build
JOBS ?= $(shell nproc)
SCENARIO ?= scenarios/default.textproto

.PHONY: deps configure build run test bench calibrate-bench clean format

deps:
	@tools/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Replays one training step of the default scenario (scenarios/default.textproto).
run: build
	@$(BUILD)/moesim run $(SCENARIO)

test: build
	@tools/install-deps.sh --test
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD)/memory_bench
	@$(BUILD)/topology_bench
	@$(BUILD)/maxmin_bench
	@$(BUILD)/engine_bench
	@$(BUILD)/replay_bench
	@$(BUILD)/validate_bench
	@$(BUILD)/sweep_bench
	@$(BUILD)/calibrate_fit_bench

# CUDA calibration microbenchmarks (calibration/cuda/README.md): build them
# (Release; needs nvcc) and run them all on this machine's GPU(s), writing
# calibration/measured/<gpu>/*.csv and env.txt. About 6 minutes on one H200;
# CALIBRATE_FLAGS=--quick for a one-minute smoke run.
calibrate-bench: configure
	@cmake --build $(BUILD) -j $(JOBS) --target calibration_cuda_bench || { \
	  echo "calibrate-bench: the CUDA benchmarks are not configured in $(BUILD) (no nvcc found?); see calibration/cuda/README.md"; exit 1; }
	@calibration/cuda/run_all.sh $(BUILD)/calibration_bench calibration/measured $(CALIBRATE_FLAGS)

clean:
	@rm -rf $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.cc' '*.h')
