# Two commands on a fresh Debian machine:
#   make run   install missing packages, build (Release), simulate the default scenario
#   make test  install missing packages, build, run every test (ctest)
#   make test-sanitize  the whole ctest suite built with ASan and UBSan (build-asan/)
#   make fuzz           every libFuzzer target for FUZZ_SECONDS (tests/fuzz/README.md)
BUILD ?= build
JOBS ?= $(shell nproc)
SCENARIO ?= scenarios/default.textproto
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
SANITIZE_BUILD ?= build-asan
# WERROR=ON turns compiler warnings into errors (CI builds so).
WERROR ?= OFF
# The MPI sweep (-DMOESIM_MPI=ON, `mpirun -n N moesim sweep`) is built, and
# its 2-rank test run, when OpenMPI is installed (tools/install-deps.sh --mpi);
# otherwise the build has no MPI. MPI=ON|OFF overrides.
MPI ?= $(shell [ "$$(dpkg-query -W -f='$${db:Status-Status}' libopenmpi-dev 2>/dev/null)" = installed ] && command -v mpirun >/dev/null && echo ON || echo OFF)

.PHONY: deps configure build run test bench calibrate-bench clean format \
	format-check structure-check \
	fuzz-build fuzz test-sanitize

deps:
	@tools/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMOESIM_MPI=$(MPI) \
	  -DMOESIM_FUZZ_BUILD_DIR=$(abspath $(FUZZ_BUILD)) \
	  -DMOESIM_WERROR=$(WERROR) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Replays one training step of the default scenario (scenarios/default.textproto).
run: build
	@$(BUILD)/moesim run $(SCENARIO)

# With a fuzz build (make fuzz-build) present, it is brought up to date and
# ctest's fuzz_smoke_* tests run each target for 10 s; without one they skip.
test: build
	@tools/install-deps.sh --test
	@if [ -f $(FUZZ_BUILD)/CMakeCache.txt ]; then \
	  cmake --build $(FUZZ_BUILD) -j $(JOBS) --target moesim_fuzz; fi
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# ASan + UBSan (GCC) in SANITIZE_BUILD, then every ctest test but the fuzz
# smoke runs (already sanitized) and the CUDA benchmarks (not configured).
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DMOESIM_SANITIZE=ON -DMOESIM_CUDA_BENCH=OFF >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	@cd $(SANITIZE_BUILD) && \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) -LE fuzz

# libFuzzer targets (clang >= 16; tests/fuzz/build.sh installs clang-16 when
# missing): build them in FUZZ_BUILD, then run each for FUZZ_SECONDS.
fuzz-build: deps
	@JOBS=$(JOBS) tests/fuzz/build.sh $(FUZZ_BUILD)

fuzz: fuzz-build
	@tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

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
	@rm -rf $(BUILD) $(FUZZ_BUILD) $(SANITIZE_BUILD)

format:
	@clang-format -i $$(git ls-files '*.cc' '*.h')

# Fails when a C++ file is not as `make format` leaves it (clang-format 14).
# The structure rules (tools/check-structure.sh, CONTRIBUTING.md).
structure-check:
	@tools/install-deps.sh --test
	@tools/check-structure.sh

format-check:
	@tools/install-deps.sh --test
	@tools/check-format.sh
