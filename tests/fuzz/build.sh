#!/usr/bin/env bash
# Configures and builds the libFuzzer targets (MOESIM_FUZZ=ON) in BUILD
# (default build-fuzz) with the newest clang >= 16 that has libFuzzer;
# installs Debian's clang-16 and libclang-rt-16-dev when there is none.
# clang 14 (Debian 12's default) cannot compile libstdc++ 12's <expected>.
# Usage: tests/fuzz/build.sh [BUILD]   (JOBS=N for the build's parallelism)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-fuzz}
jobs=${JOBS:-$(nproc)}

find_clang() {
  local v
  for v in 19 18 17 16; do
    if command -v "clang++-$v" >/dev/null &&
       compgen -G "/usr/lib/llvm-$v/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
      echo "clang++-$v"
      return 0
    fi
  done
  return 1
}

if ! cxx=$(find_clang); then
  echo "fuzz: installing clang-16 libclang-rt-16-dev"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends clang-16 libclang-rt-16-dev >/dev/null
  cxx=$(find_clang)
fi

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DMOESIM_FUZZ=ON -DMOESIM_BUILD_TESTS=OFF -DMOESIM_CUDA_BENCH=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target moesim_fuzz
