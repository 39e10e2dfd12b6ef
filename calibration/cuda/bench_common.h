// Shared scaffolding of the CUDA calibration benchmarks (calibration/cuda/):
// command line, CSV output in the schema of calibration/tables/README.md,
// the one-line environment summary, and GPU timing.
//
// Every benchmark is a small program that measures one table's grid on GPU 0
// (collectives: all visible GPUs) and writes `<table>.csv` to the path given
// by --out: the schema's header, then one row per grid point, each ending
// with source = measured:<gpu-slug>:<YYYY-MM-DD>. Rows are flushed as they
// are measured, so a benchmark stopped by its time budget (--budget-s) or a
// crash leaves the rows measured so far. Diagnostics go to stderr, never to
// the CSV.
//
// This header is compiled by both g++ (C++23) and nvcc (its default, C++17):
// it uses nothing newer than C++17.
#ifndef MOESIM_CALIBRATION_CUDA_BENCH_COMMON_H_
#define MOESIM_CALIBRATION_CUDA_BENCH_COMMON_H_

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace moesim::cuda_bench {

// Aborts with file:line and the CUDA error when `expr` is not cudaSuccess.
// For setup that must succeed (allocation, stream creation); a benchmark
// point that may legitimately be unsupported checks its status itself.
#define BENCH_CUDA_CHECK(expr) \
  ::moesim::cuda_bench::CheckCuda((expr), #expr, __FILE__, __LINE__)

void CheckCuda(cudaError_t status, const char* expr, const char* file,
               int line);

// Prints "<tool>: <message>" to stderr and exits with status 1.
[[noreturn]] void Die(std::string_view tool, const std::string& message);

// The command line of one benchmark: `--key value` options and `--flag`
// switches. Every benchmark understands the common ones:
//   --out FILE      CSV to write (required)
//   --append        append rows to FILE without a header (FILE must exist)
//   --quick         a small grid (smoke test, ~10 s)
//   --budget-s S    stop starting new grid points after S seconds (0: none)
//   --device N      CUDA device (default 0)
//   --help
class Args {
 public:
  // Parses argv. `options` are the accepted `--key value` names besides the
  // common ones, `flags` the accepted switches. Exits with a usage message
  // on --help, an unknown name or a missing --out.
  Args(int argc, char** argv, std::string_view usage,
       std::vector<std::string> options, std::vector<std::string> flags);

  const std::string& out() const { return out_; }
  bool append() const { return append_; }
  bool quick() const { return quick_; }
  double budget_s() const { return budget_s_; }
  int device() const { return device_; }

  bool Flag(const std::string& name) const;
  // The value of `--name`, or `fallback` when absent.
  std::string Get(const std::string& name, const std::string& fallback) const;
  double GetDouble(const std::string& name, double fallback) const;
  int64_t GetInt(const std::string& name, int64_t fallback) const;

 private:
  std::string out_;
  bool append_ = false;
  bool quick_ = false;
  double budget_s_ = 0;
  int device_ = 0;
  std::map<std::string, std::string> values_;
  std::vector<std::string> flags_set_;
};

// "NVIDIA H200" -> "nvidia-h200": lowercase, every character outside
// [a-z0-9._-] becomes '-'. The GPU part of a measured source and the name of
// the output folder.
std::string GpuSlug(const std::string& device_name);

// Today's date in UTC, YYYY-MM-DD.
std::string UtcDate();

// "measured:<slug of device's name>:<UtcDate()>".
std::string MeasuredSource(int device);

// A number for a CSV cell: 4 significant digits, never exponent notation,
// so that small bandwidths stay positive (0.0004100) and large ones plain
// (12346).
std::string FormatValue(double value);

// Writes one table: the header once (unless appending), then rows of cells.
// Each row is flushed. Cells must not contain commas or newlines.
class CsvWriter {
 public:
  // Opens `path` (truncating unless `append`); exits on failure.
  CsvWriter(const std::string& path, const std::vector<std::string>& header,
            bool append);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  // REQUIRES: cells.size() == header.size().
  void Row(const std::vector<std::string>& cells);
  int rows() const { return rows_; }

 private:
  std::FILE* file_;
  size_t columns_;
  int rows_ = 0;
};

// Prints one line to stderr:
//   # env: tool=<tool> gpu=<name> cc=<m.n> sms=<n> ... date=<UTC date>
// with the device, clocks (peak from the device attribute, current and max
// from NVML when libnvidia-ml is loadable), driver and CUDA runtime
// versions, and `libraries` (e.g. "cublasLt=130000"), which the caller
// fills with the versions of the libraries it links.
void PrintEnvLine(std::string_view tool, int device,
                  const std::string& libraries);

// A wall-clock budget for a benchmark run.
class Budget {
 public:
  // `seconds` <= 0: never exhausted.
  explicit Budget(double seconds);
  bool Exhausted() const;
  double elapsed_s() const;

 private:
  double seconds_;
  std::chrono::steady_clock::time_point start_;
};

// How one grid point is timed. Defaults: up to 10 warm-up runs, then the
// median of 20 samples, or of those 50 ms of GPU time allow (at least 3).
struct TimingPolicy {
  int warmup_runs = 10;             // at most this many warm-up runs ...
  double warmup_max_s = 0.05;       // ... and at most about this long
  int min_samples = 20;             // stop after this many samples ...
  double max_measure_s = 0.05;      // ... or once this much GPU time passed
  int min_samples_if_slow = 3;      // (but never fewer than this many)
  double target_sample_s = 100e-6;  // batch fast runs so a sample is >= this
  bool flush_l2 = false;            // memset a 2x-L2 buffer before a sample
                                    // (then one run per sample)
};

// Result of timing one grid point.
struct Timing {
  double median_s = 0;  // median GPU time of one run
  int samples = 0;
  int runs_per_sample = 0;
};

// Times `launch`, which enqueues one run on `stream` and returns false when
// the run could not be enqueued (unsupported configuration). GPU time is
// taken with CUDA events around a batch of back-to-back runs; the median
// over samples is returned. Returns Timing{} (samples == 0) when the first
// `launch` fails.
Timing TimeOnStream(cudaStream_t stream, const std::function<bool()>& launch,
                    const TimingPolicy& policy);

// Median of `values` (copied). REQUIRES: !values.empty().
double Median(std::vector<double> values);

}  // namespace moesim::cuda_bench

#endif  // MOESIM_CALIBRATION_CUDA_BENCH_COMMON_H_
