#include "calibration/tables.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "models/dispatchers.h"
#include "util/bus_bandwidth.h"
#include "util/csv.h"
#include "util/embedded.h"
#include "util/textproto.h"

namespace moesim::calibration {

const std::vector<util::EmbeddedFile>& EmbeddedFiles();

namespace {

using util::CsvTable;

constexpr std::string_view kDir = "calibration/tables";

struct Choice {
  std::string_view column;
  std::vector<std::string_view> values;
};

// Reads the fields of one row, keeping the first error; after reading every
// field the caller checks error().
class RowReader {
 public:
  RowReader(const CsvTable& t, size_t row, std::string_view file)
      : t_(t), row_(row), file_(file) {}

  const std::optional<util::Error>& error() const { return error_; }

  std::string Text(std::string_view col) { return t_.Get(row_, col); }

  // An integer >= min.
  int64_t Int(std::string_view col, int64_t min) {
    const std::string& s = t_.Get(row_, col);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
      Fail(col, "must be an integer, got '" + s + "'");
    } else if (v < min) {
      Fail(col, "must be >= " + std::to_string(min) + ", got " + s);
    }
    return v;
  }

  // A finite number > 0 (throughputs, sizes); empty allowed when optional
  // (then 0).
  double Positive(std::string_view col, bool optional = false) {
    const std::string& s = t_.Get(row_, col);
    if (s.empty() && optional) return 0;
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
      Fail(col, "must be a number, got '" + s + "'");
    } else if (!(v > 0) || !std::isfinite(v)) {
      Fail(col, "must be > 0 and finite, got " + s);
    }
    return v;
  }

  // bus_gb_s: > 0 and at most util::kMaxMeasuredBusGbPerS.
  double BusGbPerS() {
    const double v = Positive("bus_gb_s");
    if (v > util::kMaxMeasuredBusGbPerS) {
      char max[32];
      std::snprintf(max, sizeof(max), "%.0f", util::kMaxMeasuredBusGbPerS);
      Fail("bus_gb_s", "above " + std::string(max) +
                           " GB/s, 100x any NVLink, got " +
                           t_.Get(row_, "bus_gb_s"));
    }
    return v;
  }

  // A number in (0, 1] (a share of a rate).
  double Fraction(std::string_view col) {
    const double v = Positive(col);
    if (v > 1) Fail(col, "must be a share in (0, 1], got " + t_.Get(row_, col));
    return v;
  }

  std::string OneOf(const Choice& choice) {
    const std::string& s = t_.Get(row_, choice.column);
    if (std::find(choice.values.begin(), choice.values.end(), s) ==
        choice.values.end()) {
      std::string known;
      for (std::string_view v : choice.values)
        known += (known.empty() ? "" : ", ") + std::string(v);
      Fail(choice.column, "unknown '" + s + "' (known: " + known + ")");
    }
    return s;
  }

  Dtype DtypeOf(std::string_view col) {
    auto d = ParseDtype(t_.Get(row_, col));
    if (!d) {
      Fail(col, d.error().message);
      return Dtype::kBf16;
    }
    return *d;
  }

  bool Flag(std::string_view col) { return Int(col, 0) != 0; }

  Provenance Source() {
    Provenance p{std::string(file_), t_.Line(row_), t_.Get(row_, "source")};
    if (!p.source.starts_with("published:") &&
        !p.source.starts_with("measured:") &&
        !p.source.starts_with("derived:")) {
      Fail("source",
           "must start with published:, measured: or derived:, got '" +
               p.source.substr(0, 40) + "'");
    }
    return p;
  }

 private:
  void Fail(std::string_view col, const std::string& rule) {
    if (error_) return;
    error_ =
        util::Error{std::string(file_) + ":" + std::to_string(t_.Line(row_)) +
                    ": " + std::string(col) + ": " + rule};
  }

  const CsvTable& t_;
  size_t row_;
  std::string_view file_;
  std::optional<util::Error> error_;
};

// One table kind: its columns (in schema order), the columns whose values
// are the measurement (not part of the grid point), and how to read a row.
struct TableSpec {
  std::string name;
  std::vector<std::string_view> columns;
  std::vector<std::string_view> values;  // measured value columns
  std::function<void(RowReader&, const Provenance&, Tables&)> read;
};

const Choice kGemmImpl{"impl", {"cublas", "deepgemm", "thunderkittens"}};
const Choice kGroupedImpl{
    "impl",
    {"cublas", "cublas_grouped", "cublas_loop", "cutlass_sm80",
     "cutlass_sm90_cooperative", "cutlass_sm90_pingpong", "deepgemm_contiguous",
     "deepgemm_masked"}};
const Choice kAttentionImpl{
    "impl", {"cudnn", "fa2", "fa3", "fa4", "triton", "flashmla"}};
const Choice kDirection{"direction", {"fwd", "bwd"}};
const Choice kKernel{
    "kernel",
    {"rmsnorm_fwd", "rmsnorm_bwd", "layernorm_fwd", "layernorm_bwd",
     "swiglu_fwd", "swiglu_bwd", "permute", "unpermute", "fp8_quantize",
     "fp4_quantize", "adam", "copy"}};
const Choice kCollective{"collective",
                         {"all_reduce", "all_gather", "reduce_scatter",
                          "alltoall", "sendrecv", "broadcast"}};
const Choice kAlgorithm{"algorithm", {"ring", "tree", "nvls", "auto"}};
const Choice kTier{"tier", {"nvlink", "net"}};
// The `dispatcher` column names the rows a fused dispatcher is priced from
// (models/dispatchers.h, `table_rows`): the registry's list, not a copy.
const Choice& DispatcherChoice() {
  static const Choice choice = [] {
    Choice c{"dispatcher", {}};
    for (const models::DispatcherTraits& t : models::Dispatchers()) {
      if (!t.table_rows.empty()) c.values.push_back(t.table_rows);
    }
    return c;
  }();
  return choice;
}
const Choice kPhase{"phase", {"dispatch", "combine"}};
const Choice kQuantity{"quantity",
                       {"kernel_launch_us", "torch_op_us", "te_module_us",
                        "autograd_node_us", "graph_launch_us", "graph_node_us",
                        "auto_gc_stall_fraction", "python_call_factor"}};
const Choice kSustainedQuantity{"quantity", {"compute_rate"}};
const Choice kLink{"link", {"pcie-gen5-x16", "nvlink-c2c"}};
const Choice kCopyDirection{"direction", {"h2d", "d2h", "bidir"}};

const std::vector<TableSpec>& Specs() {
  static const std::vector<TableSpec> specs = {
      {"gemm",
       {"impl", "m", "n", "k", "dtype", "tflops", "source"},
       {"tflops"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.gemm.push_back({r.OneOf(kGemmImpl), r.Int("m", 1), r.Int("n", 1),
                           r.Int("k", 1), r.DtypeOf("dtype"),
                           r.Positive("tflops"), p});
       }},
      {"grouped_gemm",
       {"impl", "experts", "tokens_per_expert", "n", "k", "dtype", "tflops",
        "source"},
       {"tflops"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.grouped_gemm.push_back({r.OneOf(kGroupedImpl), r.Int("experts", 1),
                                   r.Int("tokens_per_expert", 1), r.Int("n", 1),
                                   r.Int("k", 1), r.DtypeOf("dtype"),
                                   r.Positive("tflops"), p});
       }},
      {"attention",
       {"impl", "direction", "batch", "seq_q", "seq_kv", "heads_q", "heads_kv",
        "head_dim_qk", "head_dim_v", "causal", "window", "dtype", "tflops",
        "source"},
       {"tflops"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         AttentionPoint a;
         a.impl = r.OneOf(kAttentionImpl);
         a.backward = r.OneOf(kDirection) == "bwd";
         a.shape.batch = r.Int("batch", 1);
         a.shape.seq_q = r.Int("seq_q", 1);
         a.shape.seq_kv = r.Int("seq_kv", 1);
         a.shape.heads_q = r.Int("heads_q", 1);
         a.shape.heads_kv = r.Int("heads_kv", 1);
         a.shape.head_dim_qk = r.Int("head_dim_qk", 1);
         a.shape.head_dim_v = r.Int("head_dim_v", 1);
         a.shape.causal = r.Flag("causal");
         a.shape.window = r.Int("window", 0);
         a.shape.dtype = r.DtypeOf("dtype");
         a.tflops = r.Positive("tflops");
         a.from = p;
         t.attention.push_back(std::move(a));
       }},
      {"memory_bound",
       {"kernel", "bytes", "dtype", "gb_s", "source"},
       {"gb_s"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.memory_bound.push_back({r.OneOf(kKernel), r.Positive("bytes"),
                                   r.DtypeOf("dtype"), r.Positive("gb_s"), p});
       }},
      {"collectives",
       {"collective", "algorithm", "tier", "group_size", "bytes", "bus_gb_s",
        "latency_us", "source"},
       {"bus_gb_s", "latency_us"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.collectives.push_back({r.OneOf(kCollective), r.OneOf(kAlgorithm),
                                  r.OneOf(kTier), r.Int("group_size", 1),
                                  r.Positive("bytes"), r.BusGbPerS(),
                                  r.Positive("latency_us", true), p});
       }},
      {"dispatch",
       {"dispatcher", "phase", "ep_size", "tier", "tokens", "hidden", "topk",
        "dtype", "gb_s", "sms", "source"},
       {"gb_s"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         DispatchPoint d;
         d.dispatcher = r.OneOf(DispatcherChoice());
         d.phase = r.OneOf(kPhase);
         d.ep_size = r.Int("ep_size", 1);
         d.tier = r.OneOf(kTier);
         d.tokens = r.Int("tokens", 1);
         d.hidden = r.Int("hidden", 1);
         d.topk = r.Int("topk", 1);
         d.dtype = r.DtypeOf("dtype");
         d.gb_s = r.Positive("gb_s");
         d.sms = r.Text("sms").empty() ? 0 : r.Int("sms", 1);
         d.from = p;
         t.dispatch.push_back(std::move(d));
       }},
      {"host",
       {"quantity", "value", "unit", "source"},
       {"value", "unit"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.host.push_back(
             {r.OneOf(kQuantity), r.Positive("value"), r.Text("unit"), p});
       }},
      {"host_copy",
       {"link", "direction", "bytes", "gb_s", "source"},
       {"gb_s"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.host_copy.push_back({r.OneOf(kLink), r.OneOf(kCopyDirection),
                                r.Positive("bytes"), r.Positive("gb_s"), p});
       }},
      {"cpu_adam",
       {"cpu", "threads", "params_per_s", "source"},
       {"params_per_s"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.cpu_adam.push_back({r.Text("cpu"), r.Int("threads", 1),
                               r.Positive("params_per_s"), p});
       }},
      {"sustained",
       {"quantity", "value", "unit", "source"},
       {"value", "unit"},
       [](RowReader& r, const Provenance& p, Tables& t) {
         t.sustained.push_back({r.OneOf(kSustainedQuantity),
                                r.Fraction("value"), r.Text("unit"), p});
       }},
  };
  return specs;
}

}  // namespace

const char* DtypeName(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kFp8:
      return "fp8";
    case Dtype::kMxfp8:
      return "mxfp8";
    case Dtype::kNvfp4:
      return "nvfp4";
    case Dtype::kTf32:
      return "tf32";
    case Dtype::kFp32:
      return "fp32";
  }
  return "?";
}

util::Result<Dtype> ParseDtype(std::string_view name) {
  for (Dtype d : {Dtype::kBf16, Dtype::kFp16, Dtype::kFp8, Dtype::kMxfp8,
                  Dtype::kNvfp4, Dtype::kTf32, Dtype::kFp32}) {
    if (name == DtypeName(d)) return d;
  }
  return util::Fail("unknown dtype '" + std::string(name) +
                    "' (known: bf16, fp16, fp8, mxfp8, nvfp4, tf32, fp32)");
}

bool Provenance::measured() const { return !source.starts_with("derived:"); }

std::string Provenance::ToString() const {
  return file + ":" + std::to_string(line) + " (" + source + ")";
}

double AttentionShape::ForwardFlops() const {
  const double kv = Windowed() ? window : seq_kv;
  double flops =
      2.0 * batch * heads_q * seq_q * kv * (head_dim_qk + head_dim_v);
  if (causal && seq_q == seq_kv && !Windowed()) flops /= 2;
  return flops;
}

size_t Tables::num_rows() const {
  return gemm.size() + grouped_gemm.size() + attention.size() +
         memory_bound.size() + collectives.size() + dispatch.size() +
         host.size() + host_copy.size() + cpu_adam.size() + sustained.size();
}

double Tables::SustainedComputeRate() const {
  for (const SustainedQuantity& q : sustained) {
    if (q.quantity == "compute_rate") return q.value;
  }
  return 1;
}

const std::vector<std::string>& TableNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const TableSpec& s : Specs()) n.push_back(s.name);
    return n;
  }();
  return names;
}

util::Result<void> ParseTable(std::string_view name, std::string_view text,
                              std::string_view file, Tables& tables) {
  const TableSpec* spec = nullptr;
  for (const TableSpec& s : Specs()) {
    if (s.name == name) spec = &s;
  }
  if (spec == nullptr) {
    return util::Fail(std::string(file) + ": unknown table '" +
                      std::string(name) + "'");
  }
  auto csv = CsvTable::Parse(text, file);
  if (!csv) return std::unexpected(csv.error());
  const std::string where = std::string(file) + ":1: ";
  for (std::string_view col : spec->columns) {
    if (csv->Column(col) < 0)
      return util::Fail(where + std::string(col) + ": missing column");
  }
  for (const std::string& col : csv->header()) {
    if (std::find(spec->columns.begin(), spec->columns.end(), col) ==
        spec->columns.end()) {
      return util::Fail(where + col + ": unknown column (" + spec->name +
                        " has only the columns of tables/README.md)");
    }
  }
  std::map<std::string, int> seen;  // grid point -> line
  for (size_t r = 0; r < csv->num_rows(); ++r) {
    RowReader reader(*csv, r, file);
    const Provenance from = reader.Source();
    spec->read(reader, from, tables);
    if (reader.error()) return std::unexpected(*reader.error());
    std::string key;
    for (std::string_view col : spec->columns) {
      if (col == "source" || std::find(spec->values.begin(), spec->values.end(),
                                       col) != spec->values.end()) {
        continue;
      }
      key += csv->Get(r, col) + "|";
    }
    auto [it, inserted] = seen.emplace(key, csv->Line(r));
    if (!inserted) {
      return util::Fail(std::string(file) + ":" + std::to_string(csv->Line(r)) +
                        ": duplicate grid point of line " +
                        std::to_string(it->second));
    }
  }
  return {};
}

std::vector<std::string> TableGpus() {
  std::vector<std::string> gpus;
  const std::string prefix = std::string(kDir) + "/";
  for (const util::EmbeddedFile& f : EmbeddedFiles()) {
    if (!f.path.starts_with(prefix)) continue;
    const std::string_view rest = f.path.substr(prefix.size());
    std::string gpu(rest.substr(0, rest.find('/')));
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end())
      gpus.push_back(std::move(gpu));
  }
  return gpus;
}

util::Result<Tables> LoadTables(std::string_view gpu) {
  const std::vector<std::string> gpus = TableGpus();
  if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) {
    return util::Fail("calibration: unknown GPU '" + std::string(gpu) +
                      "' (tables exist for " + util::JoinList(gpus) + ")");
  }
  Tables tables;
  tables.gpu = gpu;
  for (const std::string& name : TableNames()) {
    const std::string path =
        std::string(kDir) + "/" + std::string(gpu) + "/" + name + ".csv";
    const util::EmbeddedFile* file = nullptr;
    for (const util::EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path == path) file = &f;
    }
    if (file == nullptr) return util::Fail(path + ": not embedded");
    if (auto ok = ParseTable(name, file->content, path, tables); !ok)
      return std::unexpected(ok.error());
  }
  return tables;
}

util::Result<std::string_view> ShippedRunsFile(std::string_view name) {
  const std::string path = "calibration/runs/" + std::string(name);
  for (const util::EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path == path) return f.content;
  }
  return util::Fail(path + ": not shipped");
}

util::Result<Tables> LoadTablesFromDir(const std::string& dir,
                                       std::string_view gpu) {
  if (!std::filesystem::is_directory(dir))
    return util::Fail(dir + ": not a folder of calibration tables");
  Tables tables;
  tables.gpu = gpu;
  for (const std::string& name : TableNames()) {
    const std::string path = dir + "/" + name + ".csv";
    if (!std::filesystem::exists(path)) continue;
    auto text = util::ReadFile(path);
    if (!text) return std::unexpected(text.error());
    if (auto ok = ParseTable(name, *text, path, tables); !ok)
      return std::unexpected(ok.error());
  }
  return tables;
}

}  // namespace moesim::calibration
