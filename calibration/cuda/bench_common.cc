#include "calibration/cuda/bench_common.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>

#include "calibration/cuda/nvml_probe.h"

namespace moesim::cuda_bench {

void CheckCuda(cudaError_t status, const char* expr, const char* file,
               int line) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, expr,
               cudaGetErrorName(status), cudaGetErrorString(status));
  std::exit(1);
}

void Die(std::string_view tool, const std::string& message) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(tool.size()), tool.data(),
               message.c_str());
  std::exit(1);
}

// ---------------------------------------------------------------- Args

Args::Args(int argc, char** argv, std::string_view usage,
           std::vector<std::string> options, std::vector<std::string> flags) {
  const std::string tool = argc > 0 ? argv[0] : "bench";
  auto usage_exit = [&](int status, const std::string& why) {
    std::FILE* to = status == 0 ? stdout : stderr;
    if (!why.empty()) std::fprintf(to, "%s: %s\n", tool.c_str(), why.c_str());
    std::fprintf(to,
                 "%.*s\ncommon options: --out FILE (required) [--append] "
                 "[--quick] [--budget-s S] [--device N]\n",
                 static_cast<int>(usage.size()), usage.data());
    std::exit(status);
  };
  options.insert(options.end(), {"out", "budget-s", "device"});
  flags.insert(flags.end(), {"append", "quick"});
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") usage_exit(0, "");
    if (!arg.starts_with("--")) usage_exit(2, "unexpected argument " + arg);
    std::string name = arg.substr(2);
    std::string value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (std::find(options.begin(), options.end(), name) !=
               options.end()) {
      if (i + 1 >= argc) usage_exit(2, "--" + name + " needs a value");
      value = argv[++i];
    }
    if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
      flags_set_.push_back(name);
    } else if (std::find(options.begin(), options.end(), name) !=
               options.end()) {
      values_[name] = value;
    } else {
      usage_exit(2, "unknown option --" + name);
    }
  }
  out_ = Get("out", "");
  if (out_.empty()) usage_exit(2, "--out FILE is required");
  append_ = Flag("append");
  quick_ = Flag("quick");
  budget_s_ = GetDouble("budget-s", 0);
  device_ = static_cast<int>(GetInt("device", 0));
}

bool Args::Flag(const std::string& name) const {
  return std::find(flags_set_.begin(), flags_set_.end(), name) !=
         flags_set_.end();
}

std::string Args::Get(const std::string& name,
                      const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

double Args::GetDouble(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0')
    Die("args", "--" + name + " wants a number, got '" + it->second + "'");
  return v;
}

int64_t Args::GetInt(const std::string& name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0')
    Die("args", "--" + name + " wants an integer, got '" + it->second + "'");
  return v;
}

// ------------------------------------------------------- names and cells

std::string GpuSlug(const std::string& device_name) {
  std::string slug;
  for (char c : device_name) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool keep = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.' ||
                l == '_' || l == '-';
    slug += keep ? l : '-';
  }
  return slug;
}

std::string UtcDate() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", &utc);
  return buf;
}

std::string MeasuredSource(int device) {
  cudaDeviceProp prop{};
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return "measured:" + GpuSlug(prop.name) + ":" + UtcDate();
}

std::string FormatValue(double value) {
  if (!std::isfinite(value)) return "nan";
  if (value == 0) return "0";
  int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  int decimals = std::clamp(3 - magnitude, 0, 9);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

// ------------------------------------------------------------ CsvWriter

CsvWriter::CsvWriter(const std::string& path,
                     const std::vector<std::string>& header, bool append)
    : file_(std::fopen(path.c_str(), append ? "a" : "w")),
      columns_(header.size()) {
  if (file_ == nullptr) Die("csv", "cannot open " + path + " for writing");
  if (!append) {
    Row(header);
    rows_ = 0;
  }
}

CsvWriter::~CsvWriter() { std::fclose(file_); }

void CsvWriter::Row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_) Die("csv", "row with a wrong cell count");
  for (size_t i = 0; i < cells.size(); ++i) {
    std::fputs(cells[i].c_str(), file_);
    std::fputc(i + 1 == cells.size() ? '\n' : ',', file_);
  }
  std::fflush(file_);
  ++rows_;
}

// ----------------------------------------------------------- environment

void PrintEnvLine(std::string_view tool, int device,
                  const std::string& libraries) {
  cudaDeviceProp prop{};
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int sm_khz = 0, mem_khz = 0, driver = 0, runtime = 0, count = 0;
  cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device);
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaGetDeviceCount(&count);
  NvmlInfo nvml = QueryNvml(device);
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::fprintf(
      stderr,
      "# env: tool=%.*s gpu=\"%s\" gpus=%d cc=%d.%d sms=%d mem_gib=%.1f "
      "l2_mib=%.1f sm_clock_peak_mhz=%d mem_clock_peak_mhz=%d ",
      static_cast<int>(tool.size()), tool.data(), prop.name, count, prop.major,
      prop.minor, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0,
      prop.l2CacheSize / 1048576.0, sm_khz / 1000, mem_khz / 1000);
  if (nvml.available) {
    std::fprintf(stderr,
                 "sm_clock_now_mhz=%u sm_clock_max_mhz=%u mem_clock_max_mhz=%u "
                 "power_limit_w=%u driver=%s ",
                 nvml.sm_clock_mhz, nvml.sm_clock_max_mhz,
                 nvml.mem_clock_max_mhz, nvml.power_limit_w,
                 nvml.driver_version.c_str());
  } else {
    std::fprintf(stderr, "nvml=unavailable ");
  }
  std::fprintf(stderr, "cuda_driver=%d cuda_runtime=%d %s date=%s\n", driver,
               runtime, libraries.c_str(), when);
}

// ---------------------------------------------------------------- timing

Budget::Budget(double seconds)
    : seconds_(seconds), start_(std::chrono::steady_clock::now()) {}

double Budget::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start_)
      .count();
}

bool Budget::Exhausted() const {
  return seconds_ > 0 && elapsed_s() > seconds_;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

namespace {

// Overwrites a buffer twice the size of the current device's L2 so that the
// next run reads its operands from HBM. One buffer per device, kept for the
// life of the process.
void FlushL2(cudaStream_t stream) {
  static std::map<int, std::pair<void*, size_t>> buffers;
  static unsigned char pattern = 0;
  int device = 0;
  BENCH_CUDA_CHECK(cudaGetDevice(&device));
  auto it = buffers.find(device);
  if (it == buffers.end()) {
    int l2_bytes = 0;
    cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device);
    size_t bytes =
        std::max<size_t>(2 * static_cast<size_t>(l2_bytes), size_t{64} << 20);
    void* p = nullptr;
    BENCH_CUDA_CHECK(cudaMalloc(&p, bytes));
    it = buffers.emplace(device, std::make_pair(p, bytes)).first;
  }
  BENCH_CUDA_CHECK(
      cudaMemsetAsync(it->second.first, ++pattern, it->second.second, stream));
}

// GPU seconds between two recorded events; waits for `stop`.
double ElapsedS(cudaEvent_t start, cudaEvent_t stop) {
  BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e-3;
}

}  // namespace

Timing TimeOnStream(cudaStream_t stream, const std::function<bool()>& launch,
                    const TimingPolicy& policy) {
  cudaEvent_t start = nullptr, stop = nullptr;
  BENCH_CUDA_CHECK(cudaEventCreate(&start));
  BENCH_CUDA_CHECK(cudaEventCreate(&stop));
  Timing result;
  auto cleanup = [&] {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  };

  // One run alone: does it work, and about how long is it?
  BENCH_CUDA_CHECK(cudaEventRecord(start, stream));
  if (!launch()) {
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    cleanup();
    return result;
  }
  BENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
  const double estimate_s = std::max(ElapsedS(start, stop), 1e-7);
  BENCH_CUDA_CHECK(cudaGetLastError());

  const int warmup = std::min<int>(
      policy.warmup_runs,
      std::max(1, static_cast<int>(policy.warmup_max_s / estimate_s)));
  for (int i = 0; i < warmup && policy.warmup_runs > 0; ++i) launch();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  const int inner = policy.flush_l2
                        ? 1
                        : std::clamp(static_cast<int>(std::ceil(
                                         policy.target_sample_s / estimate_s)),
                                     1, 10000);
  std::vector<double> samples;
  double measured_s = 0;
  while (true) {
    if (policy.flush_l2) FlushL2(stream);
    BENCH_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < inner; ++i) launch();
    BENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    const double batch_s = ElapsedS(start, stop);
    samples.push_back(batch_s / inner);
    measured_s += batch_s;
    const int n = static_cast<int>(samples.size());
    if (n >= policy.min_samples) break;
    if (measured_s >= policy.max_measure_s && n >= policy.min_samples_if_slow)
      break;
  }
  BENCH_CUDA_CHECK(cudaGetLastError());
  cleanup();
  result.median_s = Median(samples);
  result.samples = static_cast<int>(samples.size());
  result.runs_per_sample = inner;
  return result;
}

}  // namespace moesim::cuda_bench
