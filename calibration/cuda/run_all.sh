#!/usr/bin/env bash
# Runs every CUDA calibration benchmark on this machine's GPU(s) and writes
# the tables (README.md here) to OUT_ROOT/<gpu>/: gemm.csv, grouped_gemm.csv,
# attention.csv, memory_bound.csv, host.csv, host_copy.csv, sustained.csv,
# collectives.csv, env.txt (bench_env, plus nvidia-smi when present) and
# log.txt (every benchmark's stderr). <gpu> is the device name as in the rows' sources,
# e.g. nvidia-h200.
#
#   run_all.sh BIN_DIR OUT_ROOT [--quick]
#
# `make calibrate-bench` calls it with BIN_DIR = build/calibration_bench and
# OUT_ROOT = calibration/measured. Each benchmark has a time budget (it stops
# starting new points, keeping the rows it has) and a hard timeout; the full
# run is sized for about 6 minutes on one H200, --quick for about 1. A
# benchmark that fails does not stop the others; the exit status is then 1.
set -u -o pipefail

usage="usage: run_all.sh BIN_DIR OUT_ROOT [--quick]"
bin=${1:?$usage}
root=${2:?$usage}
shift 2
quick=""
for arg in "$@"; do
  case $arg in
    --quick) quick=--quick ;;
    *) echo "run_all: unknown argument $arg; $usage" >&2; exit 2 ;;
  esac
done

if [ ! -x "$bin/bench_env" ]; then
  echo "run_all: $bin/bench_env is missing: build the benchmarks first" \
       "(make calibrate-bench; they need nvcc)" >&2
  exit 1
fi
slug=$("$bin/bench_env" --slug) || { echo "run_all: no usable CUDA device" >&2; exit 1; }
out="$root/$slug"
mkdir -p "$out"
log="$out/log.txt"
: > "$log"
"$bin/bench_env" > "$out/env.txt"
gpus=$(sed -n 's/^gpus: //p' "$out/env.txt")
started=$(date +%s)
failed=()

# Budgets (s) for a full and a --quick run: gemm grouped attention memory
# collectives-per-algorithm. The timeouts add a margin for the last point.
if [ -n "$quick" ]; then
  b_gemm=30 b_grouped=20 b_attention=60 b_memory=15 b_coll=30
else
  b_gemm=90 b_grouped=60 b_attention=300 b_memory=40 b_coll=60
fi

# run NAME TIMEOUT_S COMMAND...: the benchmark's stderr goes to the console
# and to log.txt; a missing binary is reported and skipped.
run() {
  local name=$1 limit=$2
  shift 2
  if [ ! -x "$1" ]; then
    echo "run_all: $name was not built here, skipped" | tee -a "$log"
    return 0
  fi
  echo "== $name ($(date -u +%H:%M:%S) UTC)" | tee -a "$log"
  timeout --signal=INT --kill-after=30 "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    echo "run_all: $name exited with status $rc" | tee -a "$log"
    failed+=("$name")
  fi
  return "$rc"
}

run gemm $((b_gemm + 120)) "$bin/gemm_bench" --out "$out/gemm.csv" \
  --budget-s "$b_gemm" $quick
run grouped_gemm $((b_grouped + 120)) "$bin/grouped_gemm_bench" \
  --out "$out/grouped_gemm.csv" --budget-s "$b_grouped" $quick
attention_rows=0
if [ -x "$bin/attention_bench" ]; then
  run attention $((b_attention + 180)) "$bin/attention_bench" \
    --out "$out/attention.csv" --budget-s "$b_attention" $quick
  [ -f "$out/attention.csv" ] && attention_rows=$(( $(wc -l < "$out/attention.csv") - 1 ))
fi
if [ "$attention_rows" -le 0 ]; then
  # No cuDNN plan could be built (or no attention_bench): the PyTorch path.
  if python3 -c "import torch" 2>/dev/null; then
    echo "run_all: attention via attention_bench.py (PyTorch SDPA, cuDNN" \
         "backend)" | tee -a "$log"
    if run attention_py $((b_attention + 180)) python3 \
         "$(dirname "$0")/attention_bench.py" --out "$out/attention.csv" \
         --budget-s "$b_attention" $quick; then
      kept=()
      for name in "${failed[@]}"; do [ "$name" = attention ] || kept+=("$name"); done
      failed=(${kept[@]+"${kept[@]}"})
    fi
  else
    echo "run_all: no attention rows, and no PyTorch for attention_bench.py" | tee -a "$log"
  fi
fi
run memory_bound $((b_memory + 60)) "$bin/memory_bound_bench" \
  --out "$out/memory_bound.csv" --budget-s "$b_memory" $quick
run host 180 "$bin/host_bench" --out "$out/host.csv" \
  --copy-out "$out/host_copy.csv" $quick
# Sustained load last but one, on a GPU the others left warm: it idles
# --idle-s first, then runs 20 s (--quick 5 s) back to back.
run sustained 120 "$bin/sustained_bench" --out "$out/sustained.csv" $quick
run collectives $((b_coll + 120)) "$bin/collectives_bench" \
  --out "$out/collectives.csv" --algo auto --budget-s "$b_coll" $quick
if [ "${gpus:-1}" -ge 2 ]; then
  for algo in ring nvls; do
    run "collectives_$algo" $((b_coll + 120)) "$bin/collectives_bench" \
      --out "$out/collectives.csv" --append --algo "$algo" \
      --collectives all_reduce,all_gather,reduce_scatter \
      --budget-s "$b_coll" $quick
  done
fi

{
  echo
  if command -v nvidia-smi >/dev/null; then
    echo "# nvidia-smi after the run"
    nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active --format=csv 2>&1
    [ "${gpus:-1}" -ge 2 ] && nvidia-smi topo -m 2>&1
  fi
  echo "# run_all: flags '${quick}', $(( $(date +%s) - started )) s," \
       "failed: ${failed[*]:-none}"
} >> "$out/env.txt"

echo "run_all: tables in $out ($(( $(date +%s) - started )) s)"
for f in gemm grouped_gemm attention memory_bound host host_copy sustained collectives; do
  [ -f "$out/$f.csv" ] && printf '  %-14s %5d rows\n' "$f" $(( $(wc -l < "$out/$f.csv") - 1 ))
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_all: failed: ${failed[*]} (see $log)"
  exit 1
fi
