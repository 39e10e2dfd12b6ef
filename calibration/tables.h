// The calibration tables of one GPU (calibration/tables/<gpu>/*.csv, schema
// in calibration/tables/README.md): measured, published or derived kernel and
// communication speeds, every row with its source.
//
// The shipped tables are compiled into the binary; a user's own folder (the
// output of `make calibrate-bench`, say) loads with LoadTablesFromDir. Loading
// validates everything a later lookup relies on: every required column and
// no unknown one, positive finite values, known dtypes and implementations,
// a `source` that is published:, measured: or derived:, and no grid point
// twice. Errors are one line, "<file>:<line>: <column>: <rule>".
#ifndef MOESIM_CALIBRATION_TABLES_H_
#define MOESIM_CALIBRATION_TABLES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace moesim::calibration {

enum class Dtype { kBf16, kFp16, kFp8, kMxfp8, kNvfp4, kTf32, kFp32 };
const char* DtypeName(Dtype dtype);
[[nodiscard]] util::Result<Dtype> ParseDtype(std::string_view name);

// Where a row came from: its file, line and source text.
struct Provenance {
  std::string file;
  int line = 0;
  std::string source;
  bool measured() const;         // published: or measured:, not derived:
  std::string ToString() const;  // "file:line (source)"
};

struct GemmPoint {
  std::string impl;
  int64_t m = 0, n = 0, k = 0;
  Dtype dtype = Dtype::kBf16;
  double tflops = 0;
  Provenance from;
};

struct GroupedGemmPoint {
  std::string impl;
  int64_t experts = 0, tokens_per_expert = 0, n = 0, k = 0;
  Dtype dtype = Dtype::kBf16;
  double tflops = 0;
  Provenance from;
};

struct AttentionShape {
  int64_t batch = 1, seq_q = 0, seq_kv = 0;
  int64_t heads_q = 0, heads_kv = 0, head_dim_qk = 0, head_dim_v = 0;
  bool causal = false;
  int64_t window = 0;  // sliding window; 0 = none
  Dtype dtype = Dtype::kBf16;
  // FLOPs of the forward pass (tables/README.md convention); backward is
  // 2.5x.
  double ForwardFlops() const;
  // A window shorter than the keys: each query sees `window` of them.
  bool Windowed() const { return window > 0 && window < seq_kv; }
};

struct AttentionPoint {
  std::string impl;
  bool backward = false;
  AttentionShape shape;
  double tflops = 0;
  Provenance from;
};

struct MemoryPoint {
  std::string kernel;
  double bytes = 0;
  Dtype dtype = Dtype::kBf16;
  double gb_s = 0;
  Provenance from;
};

struct CollectivePoint {
  std::string collective, algorithm, tier;
  int64_t group_size = 0;
  double bytes = 0;
  double bus_gb_s = 0;
  double latency_us = 0;  // 0 when not measured
  Provenance from;
};

struct DispatchPoint {
  std::string dispatcher, phase, tier;
  int64_t ep_size = 0, tokens = 0, hidden = 0, topk = 0;
  Dtype dtype = Dtype::kBf16;
  double gb_s = 0;
  int64_t sms = 0;  // 0 when not stated
  Provenance from;
};

struct HostQuantity {
  std::string quantity;  // kernel_launch_us, torch_op_us, te_module_us, ...
  double value = 0;
  std::string unit;
  Provenance from;
};

// How a GPU runs under the sustained load of a training step, where the
// tables' kernel rows are short benchmarks: compute_rate, the share of
// their rate compute-bound kernels keep once the board's power limit pulls
// the SM clock down (a GPU without a published figure has no row).
struct SustainedQuantity {
  std::string quantity;  // compute_rate
  double value = 0;
  std::string unit;
  Provenance from;
};

struct HostCopyPoint {
  std::string link, direction;
  double bytes = 0;
  double gb_s = 0;
  Provenance from;
};

struct CpuAdamPoint {
  std::string cpu;
  int64_t threads = 0;
  double params_per_s = 0;
  Provenance from;
};

struct Tables {
  std::string gpu;
  std::vector<GemmPoint> gemm;
  std::vector<GroupedGemmPoint> grouped_gemm;
  std::vector<AttentionPoint> attention;
  std::vector<MemoryPoint> memory_bound;
  std::vector<CollectivePoint> collectives;
  std::vector<DispatchPoint> dispatch;
  std::vector<HostQuantity> host;
  std::vector<HostCopyPoint> host_copy;
  std::vector<CpuAdamPoint> cpu_adam;
  std::vector<SustainedQuantity> sustained;

  size_t num_rows() const;
  // The sustained compute_rate row's value, 1 without one.
  double SustainedComputeRate() const;
};

// A file of the shipped calibration/runs/ folder ("runs.csv",
// "ab_pairs.csv"), compiled into the binary; error when absent.
[[nodiscard]] util::Result<std::string_view> ShippedRunsFile(
    std::string_view name);

// GPU folders of the shipped tables, read from the files compiled in, in
// the order calibration/CMakeLists.txt lists them (MOESIM_CALIBRATION_GPUS):
// h100, h200, b200, b300, gb200, gb300.
std::vector<std::string> TableGpus();

// The shipped tables of `gpu` (a System's gpu.calibration). Error for an
// unknown GPU, listing the known ones.
[[nodiscard]] util::Result<Tables> LoadTables(std::string_view gpu);

// Tables from a folder of CSVs named like the shipped ones; a missing file is
// an empty table. `gpu` labels the result.
[[nodiscard]] util::Result<Tables> LoadTablesFromDir(const std::string& dir,
                                                     std::string_view gpu);

// Parses one table file's text; `name` is the table (gemm, attention, ...)
// and `file` names it in errors. Appends to `tables`.
[[nodiscard]] util::Result<void> ParseTable(std::string_view name,
                                            std::string_view text,
                                            std::string_view file,
                                            Tables& tables);

// Table names in load order.
const std::vector<std::string>& TableNames();

}  // namespace moesim::calibration

#endif  // MOESIM_CALIBRATION_TABLES_H_
