#!/usr/bin/env bash
# Runs libFuzzer targets built by tests/fuzz/build.sh for SECONDS each, one
# after the other, starting from the seeds in tests/fuzz/corpus/<target>/,
# after replaying the past crash inputs of tests/fuzz/crashes/<target>/.
# New inputs go to BUILD/corpus/<target>/ (the checked-in seeds are only
# read); a crash, leak, UB report, timeout (10 s per input) or RSS above
# 2 GiB leaves its input in BUILD/artifacts/ and fails the run.
# Usage: tests/fuzz/run.sh BUILD SECONDS [TARGET...]   (default: every target)
# Exit 77 (ctest's skip) when BUILD has no fuzz targets.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=$1
seconds=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(scenario_textproto hf_config megatron_args
                                    calibration_csv nccl_tests runs_csv
                                    sweep_spec sweep_merge model_values
                                    system_values scenario_values)
status=0
for t in "${targets[@]}"; do
  bin="$build/${t}_fuzz"
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin not built (make fuzz-build); skipped"
    exit 77
  fi
  mkdir -p "$build/corpus/$t" "$build/artifacts"
  log="$build/artifacts/$t.log"
  # The inputs that crashed moesim once (tests/fuzz/crashes/<target>/),
  # replayed first, each once.
  if compgen -G "tests/fuzz/crashes/$t/*" >/dev/null; then
    if ! "$bin" -timeout=10 -rss_limit_mb=2048 tests/fuzz/crashes/"$t"/* \
         >"$log" 2>&1; then
      echo "fuzz: $t: a past crash input fails again; log $log"
      grep -m1 -A12 'ERROR:\|runtime error\|Timeout\|out-of-memory' "$log"
      status=1
      continue
    fi
    replayed=$(ls tests/fuzz/crashes/"$t" | wc -l)
    echo "fuzz: $t: $replayed past crash inputs replayed, no crash"
  fi
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
    "$build/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  if [ $rc -eq 0 ]; then
    echo "fuzz: $t: ${runs:-?} executions in ${seconds}s, no crash"
  else
    echo "fuzz: $t: FAILED (exit $rc) after ${runs:-?} executions; log $log"
    grep -m1 -A12 'ERROR:\|runtime error\|Timeout\|out-of-memory' "$log"
    status=1
  fi
done
exit $status
