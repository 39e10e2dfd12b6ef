#!/usr/bin/env bash
# Installs the Debian packages moesim's build needs, and only those that are
# missing. Quiet when everything is present; uses sudo only when not root.
# With --test, also what only the tests need: Chromium, to render the sweep
# HTML report headless and check its charts (tests/tools/sweep_test.cc), and
# the locale sources, to build de_DE for the locale test
# (tests/robustness/json_output_test.cc), clang-format for
# make format-check and python3 for make structure-check.
# With --mpi, OpenMPI for `mpirun -n N moesim sweep` (-DMOESIM_MPI=ON; `make`
# turns it on when these are installed): 35 packages, 12.4 MB download,
# 53 MB on disk, about a minute; not part of the default set.
set -euo pipefail

packages=(
  g++ cmake make            # toolchain (C++23 on GCC 12)
  libprotobuf-dev protobuf-compiler  # schemas, text format, JSON
  libcli11-dev              # command line
  libboost-graph-dev        # cluster graph (topology/)
  libeigen3-dev             # calibration profile fitting (calibration/fit.cc)
  libgtest-dev libgmock-dev # tests
  libbenchmark-dev          # benchmarks (tests/bench)
  pybind11-dev python3-dev  # the Python module (python/, import moesim)
)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium)      # headless render of the sweep HTML report
  packages+=(locales)       # de_DE for the locale test (tests/robustness)
  packages+=(clang-format)  # make format-check (tools/check-format.sh)
  packages+=(python3)       # make structure-check (tools/check_structure.py)
  packages+=(python3-pytest)  # the Python API's tests (tests/python)
fi
if [ "${1:-}" = "--mpi" ]; then
  packages+=(libopenmpi-dev openmpi-bin)  # the MPI sweep
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
