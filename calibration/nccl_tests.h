// Import of nccl-tests logs (github.com/NVIDIA/nccl-tests: all_reduce_perf,
// all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf,
// broadcast_perf) into rows of the collectives.csv calibration table
// (schema: calibration/tables/README.md).
//
// A log is what one run of an nccl-tests binary prints on rank 0, with
// whatever a job script or NCCL_DEBUG adds around it. The parser reads the
// table by its header line (`#  size  count  type ... time  algbw  busbw
// #wrong  time ...`), so column sets that vary across nccl-tests versions
// (no `root`, no `redop`, `error` instead of `#wrong`, `cputime`, `#bitdiff`,
// per-iteration and timestamp columns) all map to the same out-of-place
// `time` and `busbw`. Lines that are not part of the table (NCCL INFO/WARN,
// mpirun chatter, blank lines) are skipped; a line inside the table that
// starts with a whole number, or has a row's field count and starts like a
// number, is a data row and must be well formed.
//
// Thread safety: the functions are pure; no state is shared between calls.
#ifndef MOESIM_CALIBRATION_NCCL_TESTS_H_
#define MOESIM_CALIBRATION_NCCL_TESTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace moesim::calibration {

// One row of collectives.csv.
struct CollectiveRow {
  std::string collective;  // nccl-tests name: all_reduce, alltoall, ...
  std::string algorithm;   // ring, tree, nvls or auto (NCCL's choice)
  std::string tier;        // nvlink or net
  int group_size = 0;      // ranks in the communicator
  double bytes = 0;        // nccl-tests "size" column, bytes (whole number)
  double bus_gb_s = 0;     // out-of-place busbw, 1e9 bytes/s
  double latency_us = 0;   // out-of-place time of one call, microseconds
  std::string source;      // measured:<gpu>:<date>, or the override
};

// Parses one nccl-tests log. `file` names it in errors, which read
// "<file>:<line>: <what>: <rule>" (the tier check, which is about the
// argument, reads "<file>: tier ...").
//
// - collective: from "# Collective test starting: <binary>", else the first
//   known `<name>_perf` binary named anywhere in the log (the command echo),
//   else a known collective named in `file`; a `_perf` binary outside the
//   collectives.csv set (gather_perf, ...) is an error, as is none at all.
// - algorithm: "auto" unless the log echoes NCCL_ALGO=<x> (or NCCL's
//   "NCCL_ALGO set by environment to <x>"): ring, tree, nvls kept; a list or
//   an exclusion (^x) is "auto"; any other value is an error.
// - group_size: distinct ranks of rank 0's group in the "#  Rank" device
//   lines (MPI runs list every process there); without device lines,
//   nThread x nGpus from the "# nThread" line.
// - source: `source_override` when non-empty, else
//   "measured:<gpu>:<date>" with <gpu> the device lines' GPU name lowercased,
//   blanks to '-', and <date> the first YYYY-MM-DD (or `date` output) in the
//   log, else "unknown-date".
// - One row per data row, in log order; sizes repeated by `-d all`, `-o all`
//   or a rerun are kept (merging them is the caller's choice).
//
// REQUIRES: tier is "nvlink" or "net" (else an error is returned).
// Refuses: an empty log, no table header, no data rows, a malformed data row
// (field count, size not a whole number, time or bandwidth negative, NaN or
// not a number), a non-zero #wrong or "Out of bounds values", ranks listed
// twice by different processes (a non-MPI build under mpirun), device lines
// naming different GPUs (unless `source_override` is given).
// What a log says of where it ran, for the caller to check against the
// system and tier it is imported for.
struct NcclLogFacts {
  int group_size = 0;
  int hosts = 0;    // distinct hosts of the group's rank lines; 0: none
  std::string gpu;  // the rank lines' GPU, as printed; "" without them
};

// Also read: lines prefixed by mpirun --tag-output ("[1,0]<stdout>:") or
// srun -l ("0: "), and the JSON file nccl-tests writes with -J FILE.json
// (its args, env, devices and results; errors name "results[i]").
// `group_size` > 0 is the communicator size the caller states: used where
// the log lists no ranks and no "# nThread" line, and an error where the
// log's ranks say otherwise. `facts`, when given, receives NcclLogFacts.
[[nodiscard]] util::Result<std::vector<CollectiveRow>> ParseNcclTestsLog(
    std::string_view text, std::string_view file, std::string_view tier,
    std::string_view source_override = "", int group_size = 0,
    NcclLogFacts* facts = nullptr);

// collectives.csv text: the header line, then one line per row, each ending
// in '\n'. Bytes as whole numbers; bus_gb_s and latency_us as %.6g without
// an exponent (fixed notation when %.6g would use one); fields quoted per RFC
// 4180 when they hold a comma, quote or newline. Deterministic.
std::string CollectiveRowsToCsv(const std::vector<CollectiveRow>& rows);

}  // namespace moesim::calibration

#endif  // MOESIM_CALIBRATION_NCCL_TESTS_H_
