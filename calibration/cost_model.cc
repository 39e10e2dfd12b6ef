#include "calibration/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "util/bus_bandwidth.h"

namespace moesim::calibration {

namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
// Residual correction fades as exp(-d / kFadeLog2): d is the distance in log2
// units to the nearest row (one doubling of one dimension = 1).
constexpr double kFadeLog2 = 3.0;
constexpr int kNeighbours = 4;
// A GEMM row whose HBM traffic time (at the copy rate) is at least this
// share of its measured time is memory-bound (cost_model.h).
constexpr double kMemoryBoundShare = 0.75;
// In the pooled family, a row of another implementation is this far away.
constexpr double kImplDistance = 2.0;
// The overlaps a GEMM family's fit chooses from (cost_model.h): p-norm
// exponents of compute and input streaming, and the serial share of the
// output write (none or all of it).
constexpr double kNormExponents[] = {
    1, 1.5, 2, 3, 4, std::numeric_limits<double>::infinity()};
constexpr double kSerialOutput[] = {0, 1};
// An implementation with this many rows of a family gets its own overlap.
constexpr size_t kOverlapRows = 3;

// Peak classes: rows and queries of one class share an efficiency curve.
int DtypeClass(Dtype d) {
  switch (d) {
    case Dtype::kBf16:
    case Dtype::kFp16:
      return 0;
    case Dtype::kFp8:
    case Dtype::kMxfp8:
      return 1;
    case Dtype::kNvfp4:
      return 2;
    case Dtype::kTf32:
    case Dtype::kFp32:
      return 3;
  }
  return 0;
}

// Rows of one dtype class whose kernels differ: per-tensor FP8 and MXFP8
// (block scales) run different GEMM kernels; BF16 and FP16 run the same.
bool SameKernelFormat(Dtype a, Dtype b) {
  return a == b || (DtypeClass(a) == 0 && DtypeClass(b) == 0) ||
         (DtypeClass(a) == 3 && DtypeClass(b) == 3);
}

double BytesPerElement(Dtype d) {
  switch (d) {
    case Dtype::kFp8:
    case Dtype::kMxfp8:
      return 1;
    case Dtype::kNvfp4:
      return 0.5;
    case Dtype::kTf32:
    case Dtype::kFp32:
      return 4;
    default:
      return 2;
  }
}

std::vector<double> GemmFeatures(double m, double n, double k) {
  return {std::log2(m), std::log2(n), std::log2(k)};
}

std::vector<double> AttentionFeatures(const AttentionShape& s) {
  return {std::log2(s.seq_q),
          std::log2(s.seq_kv),
          std::log2(static_cast<double>(s.batch) * s.heads_q),
          std::log2(s.head_dim_qk),
          std::log2(s.head_dim_v),
          std::log2(static_cast<double>(s.heads_q) / s.heads_kv),
          s.causal ? 2.0 : 0.0,
          std::log2(1.0 + static_cast<double>(s.window))};
}

// The table family of an attention kernel: one whose sliding window is
// shorter than its keys reads rows of its own (with `windowed_rows`), whose
// efficiency is flat in sequence length (cuDNN's windowed benchmark rows,
// calibration/tables/generate.py CUDNN_SDPA_WINDOW) where full attention's
// rises with FLOPs: one curve over both fits neither.
std::string AttentionKind(const AttentionShape& s, bool backward,
                          bool windowed_rows = true) {
  std::string kind = backward ? "attention_bwd" : "attention_fwd";
  if (windowed_rows && s.Windowed()) kind += "_window";
  return kind;
}

double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(d);
}

const std::vector<std::string_view> kGemmPreference = {"cublas", "deepgemm",
                                                       "thunderkittens"};
const std::vector<std::string_view> kAttentionPreference = {
    "cudnn", "fa3", "fa4", "fa2", "triton", "flashmla"};

}  // namespace

double GpuPeaks::PeakTflops(Dtype dtype) const {
  switch (DtypeClass(dtype)) {
    case 1:
      return fp8_tflops;
    case 2:
      return fp4_tflops;
    case 3:
      return tf32_tflops;
    default:
      return bf16_tflops;
  }
}

double CostModel::Family::Curve(std::string_view level, double work) const {
  double e = mean_e_max;
  for (const auto& [name, value] : e_max) {
    if (name == level) e = value;
  }
  return e / (1 + std::pow(w0 / work, a));
}

std::string CostModel::Family::LevelOf(std::string_view impl,
                                       Dtype dtype) const {
  std::string level(impl);
  if (dtype != Dtype::kMxfp8) return level;
  const std::string mx = level + " mxfp8";
  const bool rows = std::any_of(points.begin(), points.end(),
                                [&](const Point& p) { return p.level == mx; });
  return rows ? mx : level;
}

double CostModel::Overlap::Seconds(double compute, double in,
                                   double out) const {
  if (in + out <= 0) return compute;
  const double streamed = in + (1 - serial_out) * out;
  const double both =
      std::isinf(p)
          ? std::max(compute, streamed)
          : std::pow(std::pow(compute, p) + std::pow(streamed, p), 1 / p);
  return both + serial_out * out;
}

double CostModel::Overlap::ComputeSeconds(double seconds, double in,
                                          double out) const {
  if (in + out <= 0) return seconds;
  const double rest = seconds - serial_out * out;
  const double streamed = in + (1 - serial_out) * out;
  if (rest <= streamed) return 0;
  return std::isinf(p)
             ? rest
             : std::pow(std::pow(rest, p) - std::pow(streamed, p), 1 / p);
}

const CostModel::Overlap& CostModel::Family::OverlapOf(
    std::string_view impl) const {
  for (const auto& [name, value] : overlap) {
    if (name == impl) return value;
  }
  return default_overlap;
}

double CostModel::Family::ComputeEfficiency(const Point& p) const {
  if (p.in + p.out <= 0) return p.efficiency;
  const double compute =
      OverlapOf(p.impl).ComputeSeconds(1 / p.efficiency, p.in, p.out);
  return compute > 0 ? std::min(1.0, 1 / compute) : 0.0;
}

double CostModel::Family::TimeSse() const {
  double sse = 0;
  for (const Point& p : points) {
    const double compute = 1 / std::min(1.0, Curve(p.level, p.work));
    const double r = std::log(OverlapOf(p.impl).Seconds(compute, p.in, p.out)) +
                     std::log(p.efficiency);
    sse += r * r;
  }
  return sse;
}

// Overlaps first: the family's pair, then each implementation with
// kOverlapRows rows tries its own, each candidate scored by TimeSse with the
// curve refitted under it. Families without traffic (attention) only fit
// the curve.
void CostModel::Family::Fit() {
  if (std::none_of(points.begin(), points.end(),
                   [](const Point& p) { return p.in + p.out > 0; }))
    return FitCurve();
  double best = std::numeric_limits<double>::infinity();
  // Sets `slot` to the candidate with the least TimeSse; false when none
  // beats `best`.
  auto choose = [&](Overlap& slot) {
    bool better = false;
    Overlap chosen = slot;
    for (double share : kSerialOutput) {
      for (double p : kNormExponents) {
        slot = {p, share};
        FitCurve();
        if (const double sse = TimeSse(); sse < best - 1e-12) {
          best = sse;
          chosen = slot;
          better = true;
        }
      }
    }
    slot = chosen;
    return better;
  };
  choose(default_overlap);
  std::vector<std::string_view> seen;
  for (const Point& p : points) {
    if (std::find(seen.begin(), seen.end(), p.impl) != seen.end()) continue;
    seen.push_back(p.impl);
    if (std::count_if(points.begin(), points.end(), [&](const Point& q) {
          return q.impl == p.impl;
        }) < static_cast<std::ptrdiff_t>(kOverlapRows))
      continue;
    overlap.push_back({p.impl, default_overlap});
    if (!choose(overlap.back().second)) overlap.pop_back();
  }
  FitCurve();
}

// Least squares on log compute efficiency over a grid of (a, W0), each
// implementation's level in closed form (the mean of its rows' log
// efficiency plus log(1 + (W0/W)^a)). a = 0 is a constant efficiency (used
// when fewer than three rows).
void CostModel::Family::FitCurve() {
  // The compute curve is fitted on compute-bound rows when there are any:
  // each as (implementation index, FLOPs, log compute efficiency).
  const bool any = std::any_of(points.begin(), points.end(),
                               [](const Point& p) { return !p.memory_bound; });
  std::vector<std::string> impls;
  std::vector<size_t> index, rows;
  std::vector<double> work, log_e;
  for (const Point& p : points) {
    // A row its traffic alone explains (efficiency 0) says nothing of
    // compute; if every row is such, their measured efficiencies stand in.
    double e = any && p.memory_bound ? 0 : ComputeEfficiency(p);
    if (!any && !(e > 0)) e = p.efficiency;
    if (!(e > 0)) continue;
    auto it = std::find(impls.begin(), impls.end(), p.level);
    if (it == impls.end()) it = impls.insert(impls.end(), p.level);
    index.push_back(it - impls.begin());
    rows.push_back(&p - points.data());
    work.push_back(p.work);
    log_e.push_back(std::log(e));
  }
  const size_t n = work.size();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double w : work) {
    lo = std::min(lo, std::log10(w));
    hi = std::max(hi, std::log10(w));
  }
  double best = std::numeric_limits<double>::infinity();
  // a <= 1 keeps the time W / (peak e(W)) = (W + W0^a W^(1-a)) / (peak
  // e_max) non-decreasing in W: a smaller kernel never takes longer. With
  // a > 1 the curve, extrapolated below the table's smallest rows, would make
  // tiny GEMMs (a Gated DeltaNet chunk, a router) take milliseconds.
  const std::vector<double> exponents =
      n < 3 ? std::vector<double>{0}
            : std::vector<double>{0, 0.25, 0.5, 0.75, 1};
  // The grid and each row's log(1 + (W0/W)^a) on it depend only on which
  // rows take part, not on their efficiencies: Fit() calls this once per
  // overlap candidate with the same rows, so they are computed once.
  if (shapes.rows != rows) {
    shapes.rows = rows;
    shapes.grid.clear();
    shapes.values.clear();
    for (double exponent : exponents) {
      for (double lw = lo - 3; lw <= hi + 1 + 1e-9; lw += 0.1) {
        const double w = std::pow(10, lw);
        shapes.grid.push_back(w);
        for (size_t j = 0; j < n; ++j) {
          shapes.values.push_back(std::log1p(std::pow(w / work[j], exponent)));
        }
        if (exponent == 0) break;
      }
    }
  }
  std::vector<double> sum(impls.size()), count(impls.size());
  size_t g = 0;  // grid point, across the exponents
  for (double exponent : exponents) {
    for (double lw = lo - 3; lw <= hi + 1 + 1e-9; lw += 0.1) {
      const double w = shapes.grid[g];
      const double* shape = shapes.values.data() + g * n;
      ++g;
      std::fill(sum.begin(), sum.end(), 0);
      std::fill(count.begin(), count.end(), 0);
      for (size_t j = 0; j < n; ++j) {
        sum[index[j]] += log_e[j] + shape[j];
        count[index[j]] += 1;
      }
      double sse = 0;
      for (size_t j = 0; j < n; ++j) {
        const double r = log_e[j] - sum[index[j]] / count[index[j]] + shape[j];
        sse += r * r;
      }
      if (sse < best - 1e-12) {
        best = sse;
        w0 = w;
        a = exponent;
        e_max.clear();
        double total = 0;
        for (size_t i = 0; i < impls.size(); ++i) {
          e_max.push_back({impls[i], std::exp(sum[i] / count[i])});
          total += sum[i] / count[i];
        }
        mean_e_max = std::exp(total / impls.size());
      }
      if (exponent == 0) break;  // W0 does not matter for a constant
    }
  }
}

CostModel::CostModel(Tables tables, GpuPeaks peaks, Corrections corrections)
    : tables_(std::move(tables)), peaks_(peaks), corrections_(corrections) {
  auto add = [&](std::string kind, Dtype dtype, Point p) {
    const double peak = peaks_.PeakTflops(dtype);
    if (!(peak > 0)) return;  // no tensor cores for this dtype
    p.efficiency = std::min(1.0, p.efficiency / peak);
    p.dtype = dtype;
    p.level = dtype == Dtype::kMxfp8 ? p.impl + " mxfp8" : p.impl;
    const int cls = DtypeClass(dtype);
    auto it =
        std::find_if(families_.begin(), families_.end(), [&](const Family& f) {
          return f.kind == kind && f.dtype_class == cls;
        });
    if (it == families_.end()) {
      families_.push_back({kind, cls, {}, {}, 0, 1, 0, {}, {}, {}});
      it = families_.end() - 1;
    }
    it->points.push_back(std::move(p));
  };
  // A GEMM row with its traffic (GemmTraffic, before corrections), in units
  // of its time at peak.
  auto gemm = [&](const std::string& impl, int64_t m, int64_t n, int64_t k,
                  Dtype dtype, double tflops, std::string source) {
    const double work = 2.0 * m * n * k;
    const double at_peak = work / (peaks_.PeakTflops(dtype) * kTera);
    const Traffic t = GemmTraffic(m, n, k, dtype, 0, false);
    const double measured = work / (tflops * kTera);
    Point p{impl,
            GemmFeatures(m, n, k),
            work,
            tflops,
            std::move(source),
            t.in + t.out >= kMemoryBoundShare * measured};
    p.in = t.in / at_peak;
    p.out = t.out / at_peak;
    add("gemm", dtype, std::move(p));
  };
  for (const GemmPoint& g : tables_.gemm) {
    gemm(g.impl, g.m, g.n, g.k, g.dtype, g.tflops, g.from.ToString());
  }
  // A grouped GEMM row is a point of the GEMM surface at its per-expert
  // shape, tagged with its implementation: the small per-expert GEMMs of
  // fine-grained MoEs are where the GEMM table has no rows of its own.
  for (const GroupedGemmPoint& g : tables_.grouped_gemm) {
    gemm(g.impl, g.tokens_per_expert, g.n, g.k, g.dtype, g.tflops,
         g.from.ToString());
  }
  for (const AttentionPoint& a : tables_.attention) {
    const double work = a.shape.ForwardFlops() * (a.backward ? 2.5 : 1);
    add(AttentionKind(a.shape, a.backward), a.shape.dtype,
        {a.impl, AttentionFeatures(a.shape), work, a.tflops,
         a.from.ToString()});
  }
  for (Family& f : families_) {
    f.Fit();
    f.shapes = {};
  }
}

const CostModel::Family* CostModel::FindFamily(std::string_view kind,
                                               int dtype_class) const {
  for (const Family& f : families_) {
    if (f.kind == kind && f.dtype_class == dtype_class) return &f;
  }
  return nullptr;
}

double CostModel::SmShare(int busy_sms) const {
  if (busy_sms <= 0 || peaks_.sm_count <= 0) return 1;
  const int free = std::max(1, peaks_.sm_count - busy_sms);
  return static_cast<double>(peaks_.sm_count) / free;
}

Estimate CostModel::Compute(std::string_view kind, std::string_view impl,
                            const std::vector<std::string_view>& preference,
                            Dtype dtype, const std::vector<double>& features,
                            double work, int busy_sms, double factor,
                            const Traffic& traffic) const {
  Estimate e;
  const double peak = peaks_.PeakTflops(dtype) * kTera;
  const Family* family = FindFamily(kind, DtypeClass(dtype));
  if (family == nullptr && DtypeClass(dtype) != 0) {
    // No rows at this precision: the 16-bit rows' efficiency of this
    // precision's peak.
    family = FindFamily(kind, 0);
    if (family)
      e.sources.push_back(
          "(16-bit efficiency applied to the "
          "low-precision peak)");
  }
  if (family == nullptr || !(peak > 0)) {
    e.method = "spec";
    e.efficiency = factor;
    e.seconds = Overlap().Seconds(
        work / std::max(peak, 1.0) * SmShare(busy_sms) / factor, traffic.in,
        traffic.out);
    e.sources.push_back("(no table rows: dense peak)");
    return e;
  }
  std::string_view chosen = impl;
  if (chosen.empty()) {
    for (std::string_view p : preference) {
      const bool present =
          std::any_of(family->points.begin(), family->points.end(),
                      [&](const Point& x) { return x.impl == p; });
      if (present) {
        chosen = p;
        break;
      }
    }
  }
  // Nearest rows (another implementation is kImplDistance farther; so is
  // another kernel format of the class, per-tensor FP8 beside MXFP8, when
  // the family has rows of the query's own format).
  const bool format_rows = std::any_of(
      family->points.begin(), family->points.end(),
      [&](const Point& x) { return SameKernelFormat(x.dtype, dtype); });
  std::vector<std::pair<double, const Point*>> near;
  near.reserve(family->points.size());
  for (const Point& p : family->points) {
    const double other_dtype =
        format_rows && !SameKernelFormat(p.dtype, dtype) ? kImplDistance : 0.0;
    const double d =
        std::hypot(Distance(features, p.features),
                   p.impl == chosen ? 0.0 : kImplDistance, other_dtype);
    near.push_back({d, &p});
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) {
    return x.first < y.first;
  });
  double efficiency;
  if (!near.empty() && near[0].first < 1e-9) {
    const Point& p = *near[0].second;
    efficiency = family->ComputeEfficiency(p);
    if (!(efficiency > 0)) efficiency = family->Curve(p.level, p.work);
    e.method = "table";
    e.sources.push_back(near[0].second->source);
  } else {
    double weight = 0, residual = 0;
    const size_t count = std::min<size_t>(kNeighbours, near.size());
    for (size_t i = 0; i < count; ++i) {
      const Point& p = *near[i].second;
      const double w = 1 / (near[i].first * near[i].first);
      weight += w;
      // A row its traffic alone explains says nothing of compute: no
      // residual, only weight.
      const double measured = family->ComputeEfficiency(p);
      if (measured > 0) {
        residual +=
            w * (std::log(measured) - std::log(family->Curve(p.level, p.work)));
      }
      e.sources.push_back(p.source);
    }
    const double fade = std::exp(-near[0].first / kFadeLog2);
    efficiency = family->Curve(family->LevelOf(chosen, dtype), work) *
                 std::exp(fade * residual / std::max(weight, 1e-300));
    e.method = fade > 0.5 ? "interpolated" : "curve";
    const Overlap& o = family->OverlapOf(chosen);
    char fit[200];
    std::snprintf(fit, sizeof fit,
                  "(curve over %zu %s rows: e_max %.3f, W0 %.3g, a %.2f; "
                  "traffic p %.3g, serial output %.0f)",
                  family->points.size(), family->kind.c_str(),
                  family->Curve(family->LevelOf(chosen, dtype), 1e300),
                  family->w0, family->a, o.p, o.serial_out);
    e.sources.push_back(fit);
  }
  efficiency = std::min(efficiency, 1.0);
  e.efficiency = efficiency * factor;
  const double compute =
      work / (peak * efficiency) * SmShare(busy_sms) / factor;
  e.seconds =
      family->OverlapOf(chosen).Seconds(compute, traffic.in, traffic.out);
  if (traffic.in + traffic.out > compute) {
    e.method += "+memory-bound";
    e.sources.insert(e.sources.end(), traffic.sources.begin(),
                     traffic.sources.end());
  }
  return e;
}

CostModel::Traffic CostModel::GemmTraffic(int64_t m, int64_t n, int64_t k,
                                          Dtype dtype, int busy_sms,
                                          bool corrected) const {
  // Inputs at the dtype's width, a 16-bit output, shared in proportion to
  // the bytes. They stream inside the GEMM kernel, whose fixed time its own
  // rows carry, so at the streaming copy rate: the rate of the largest copy
  // row (memory-bound rows include one kernel's fixed time, a fraction of a
  // percent there), or of the traffic's own size when larger.
  const double in = BytesPerElement(dtype) * (1.0 * m * k + 1.0 * k * n);
  const double out = 2.0 * m * n;
  double probe = in + out;
  for (const MemoryPoint& p : tables_.memory_bound) {
    if (p.kernel == "copy") probe = std::max(probe, p.bytes);
  }
  const Estimate copy = corrected ? MemoryBound("copy", probe, busy_sms)
                                  : TableMemoryBound("copy", probe, busy_sms);
  const double seconds = copy.seconds * (in + out) / probe;
  return {seconds * in / (in + out), seconds * out / (in + out), copy.sources};
}

Estimate CostModel::Gemm(int64_t m, int64_t n, int64_t k, Dtype dtype,
                         int busy_sms, std::string_view impl) const {
  return Compute("gemm", impl, kGemmPreference, dtype, GemmFeatures(m, n, k),
                 2.0 * m * n * k, busy_sms, corrections_.at(Factor::kGemm),
                 GemmTraffic(m, n, k, dtype, busy_sms, true));
}

Estimate CostModel::GroupedGemm(int64_t experts, int64_t tokens_per_expert,
                                int64_t n, int64_t k, Dtype dtype, int busy_sms,
                                std::string_view impl) const {
  // Transformer Engine's grouped linear runs one cuBLAS GEMM per expert
  // (spread over a few streams): the experts' GEMMs one after another, each
  // at the efficiency of its own shape: cuBLAS's level, with the size
  // dependence every GEMM and grouped row teaches. A named grouped
  // implementation answers at its own rows' efficiency. Each expert's GEMM
  // moves its own traffic; grouped_gemm_efficiency scales the whole time.
  Estimate e =
      Compute("gemm", impl.empty() ? "cublas" : impl, kGemmPreference, dtype,
              GemmFeatures(tokens_per_expert, n, k),
              2.0 * tokens_per_expert * n * k, busy_sms, 1.0,
              GemmTraffic(tokens_per_expert, n, k, dtype, busy_sms, false));
  e.seconds *= experts;
  e.seconds /= corrections_.at(Factor::kGroupedGemm);
  e.efficiency *= corrections_.at(Factor::kGroupedGemm);
  return e;
}

Estimate CostModel::Attention(const AttentionShape& shape, bool backward,
                              int busy_sms, std::string_view impl) const {
  AttentionShape s = shape;
  // A windowed kernel reads its own rows where the GPU has rows of about
  // its window (of its class, or 16-bit ones); else the full-attention
  // rows' curve. Within a window the efficiency is flat in sequence length,
  // but not across windows: a query tile's fixed work (loading Q, the
  // output, the softmax state) is spread over the W / tile key tiles of its
  // band, so a far smaller window than the rows' runs at a lower rate than
  // they say (H200 at W = 1024: 336 TFLOPS forward at 4K; GB200 at W = 128:
  // 162 TFLOPS, with twice the dense peak).
  std::string kind = AttentionKind(s, backward);
  if (s.Windowed()) {
    const Family* own = FindFamily(kind, DtypeClass(s.dtype));
    if (own == nullptr) own = FindFamily(kind, 0);
    // Rows within a factor of two of the window (the last attention
    // feature is log2(1 + window)).
    const double w = std::log2(1.0 + static_cast<double>(s.window));
    const bool near = own != nullptr &&
                      std::any_of(own->points.begin(), own->points.end(),
                                  [&](const Point& p) {
                                    return std::abs(p.features.back() - w) <= 1;
                                  });
    if (!near) kind = AttentionKind(s, backward, false);
  }
  // Low-precision attention without rows of its class (and direction) runs
  // at the 16-bit rows' rate: unlike a GEMM, nothing says an FP8 attention
  // kernel reaches the FP8 peak's share the 16-bit one reaches of its own.
  const bool fallback = DtypeClass(s.dtype) != 0 &&
                        FindFamily(kind, DtypeClass(s.dtype)) == nullptr;
  if (fallback) s.dtype = Dtype::kBf16;
  Estimate e =
      Compute(kind, impl, kAttentionPreference, s.dtype, AttentionFeatures(s),
              s.ForwardFlops() * (backward ? 2.5 : 1), busy_sms,
              corrections_.at(Factor::kAttention), {});
  if (fallback)
    e.sources.insert(
        e.sources.begin(),
        "(no low-precision attention rows: the 16-bit rows' rate)");
  return e;
}

Estimate CostModel::MemoryBound(std::string_view kernel, double bytes,
                                int busy_sms) const {
  Estimate e = TableMemoryBound(kernel, bytes, busy_sms);
  e.seconds /= corrections_.at(Factor::kMemoryBound);
  e.efficiency *= corrections_.at(Factor::kMemoryBound);
  return e;
}

Estimate CostModel::TableMemoryBound(std::string_view kernel, double bytes,
                                     int busy_sms) const {
  Estimate e;
  std::vector<const MemoryPoint*> rows;
  for (std::string_view name : {kernel, std::string_view("copy")}) {
    for (const MemoryPoint& p : tables_.memory_bound) {
      if (p.kernel == name) rows.push_back(&p);
    }
    if (!rows.empty()) break;
  }
  const double hbm = peaks_.hbm_tb_s * 1e12;
  if (rows.empty()) {
    e.method = "spec";
    e.efficiency = 1;
    e.seconds = bytes / std::max(hbm, 1.0) * SmShare(busy_sms);
    e.sources.push_back("(no memory-bound rows: HBM spec)");
    return e;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const MemoryPoint* a, const MemoryPoint* b) {
                     return a->bytes < b->bytes;
                   });
  double gb_s;
  if (bytes <= rows.front()->bytes) {
    gb_s = rows.front()->gb_s;
    e.sources.push_back(rows.front()->from.ToString());
  } else if (bytes >= rows.back()->bytes) {
    gb_s = rows.back()->gb_s;
    e.sources.push_back(rows.back()->from.ToString());
  } else {
    size_t i = 1;
    while (rows[i]->bytes < bytes) ++i;
    const MemoryPoint& a = *rows[i - 1];
    const MemoryPoint& b = *rows[i];
    const double t = std::log(bytes / a.bytes) / std::log(b.bytes / a.bytes);
    gb_s =
        std::exp(std::log(a.gb_s) + t * (std::log(b.gb_s) - std::log(a.gb_s)));
    e.sources.push_back(a.from.ToString());
    e.sources.push_back(b.from.ToString());
  }
  e.method = "interpolated";
  e.efficiency = hbm > 0 ? gb_s * kGiga / hbm : 0;
  e.seconds = bytes / (gb_s * kGiga) * SmShare(busy_sms);
  return e;
}

std::optional<Estimate> CostModel::Collective(std::string_view collective,
                                              std::string_view tier,
                                              int64_t group_size,
                                              double bytes) const {
  std::vector<const CollectivePoint*> rows;
  for (const CollectivePoint& p : tables_.collectives) {
    if (p.collective == collective && p.tier == tier &&
        p.group_size == group_size && p.algorithm == "auto") {
      rows.push_back(&p);
    }
  }
  if (rows.empty()) return std::nullopt;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const CollectivePoint* a, const CollectivePoint* b) {
                     return a->bytes < b->bytes;
                   });
  // Interpolate time in log-log (latency-bound small sizes included).
  auto time = [&](const CollectivePoint& p) {
    return p.bytes * util::NcclBusFactor(collective, group_size) /
           (p.bus_gb_s * kGiga);
  };
  Estimate e;
  e.method = "interpolated";
  const CollectivePoint* lo = rows.front();
  const CollectivePoint* hi = rows.back();
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    if (rows[i]->bytes <= bytes && bytes <= rows[i + 1]->bytes) {
      lo = rows[i];
      hi = rows[i + 1];
      break;
    }
  }
  if (bytes <= rows.front()->bytes) {
    e.seconds = time(*rows.front());  // latency floor
    e.sources.push_back(rows.front()->from.ToString());
  } else if (bytes >= rows.back()->bytes) {
    e.seconds = time(*rows.back()) * bytes / rows.back()->bytes;
    e.sources.push_back(rows.back()->from.ToString());
  } else {
    const double t =
        std::log(bytes / lo->bytes) / std::log(hi->bytes / lo->bytes);
    e.seconds = std::exp(std::log(time(*lo)) +
                         t * (std::log(time(*hi)) - std::log(time(*lo))));
    e.sources.push_back(lo->from.ToString());
    e.sources.push_back(hi->from.ToString());
  }
  e.seconds /= corrections_.at(tier == "nvlink" ? Factor::kNvlinkComm
                                                : Factor::kNetworkComm);
  return e;
}

std::optional<CostModel::DispatchRate> CostModel::Dispatch(
    std::string_view dispatcher, std::string_view phase, std::string_view tier,
    int64_t ep_size, int64_t tokens, Dtype dtype, int sms) const {
  const DispatchPoint* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (const DispatchPoint& p : tables_.dispatch) {
    if (p.dispatcher != dispatcher || p.phase != phase || p.tier != tier)
      continue;
    const double sm_d =
        p.sms > 0 && sms > 0 ? std::log2(static_cast<double>(p.sms) / sms) : 1;
    const double d = std::sqrt(
        std::pow(std::log2(static_cast<double>(p.ep_size) / ep_size), 2) +
        std::pow(std::log2(static_cast<double>(p.tokens) / tokens), 2) +
        sm_d * sm_d + (p.dtype == dtype ? 0.0 : 4.0));
    if (d < best_d - 1e-12) {
      best_d = d;
      best = &p;
    }
  }
  if (best == nullptr) return std::nullopt;
  return DispatchRate{best->gb_s * corrections_.at(Factor::kDispatcher),
                      static_cast<int>(best->sms), best->from.ToString()};
}

std::optional<double> CostModel::Host(std::string_view quantity) const {
  for (const HostQuantity& h : tables_.host) {
    if (h.quantity == quantity) {
      // host_overhead_scale corrects host times; ratios (a fraction, a
      // factor) are dimensionless and stay as the table says.
      return h.unit == "us" ? h.value * corrections_.at(Factor::kHostOverhead)
                            : h.value;
    }
  }
  return std::nullopt;
}

std::vector<KernelCheck> LeaveOneOut(const Tables& tables,
                                     const GpuPeaks& peaks) {
  std::vector<KernelCheck> checks;
  auto shape_text = [](auto... dims) {
    std::string s;
    ((s += (s.empty() ? "" : "x") + std::to_string(dims)), ...);
    return s;
  };
  for (size_t i = 0; i < tables.gemm.size(); ++i) {
    const GemmPoint& g = tables.gemm[i];
    if (!g.from.measured()) continue;
    Tables rest = tables;
    rest.gemm.erase(rest.gemm.begin() + i);
    const CostModel model(std::move(rest), peaks);
    const Estimate e = model.Gemm(g.m, g.n, g.k, g.dtype, 0, g.impl);
    const double predicted = 2.0 * g.m * g.n * g.k / e.seconds / kTera;
    checks.push_back({tables.gpu, "gemm", g.impl,
                      shape_text(g.m, g.n, g.k) + " " + DtypeName(g.dtype),
                      g.from.ToString(), g.tflops, predicted,
                      (predicted - g.tflops) / g.tflops * 100});
  }
  for (size_t i = 0; i < tables.grouped_gemm.size(); ++i) {
    const GroupedGemmPoint& g = tables.grouped_gemm[i];
    if (!g.from.measured()) continue;
    Tables rest = tables;
    rest.grouped_gemm.erase(rest.grouped_gemm.begin() + i);
    const CostModel model(std::move(rest), peaks);
    const Estimate e = model.GroupedGemm(g.experts, g.tokens_per_expert, g.n,
                                         g.k, g.dtype, 0, g.impl);
    const double work = 2.0 * g.experts * g.tokens_per_expert * g.n * g.k;
    const double predicted = work / e.seconds / kTera;
    checks.push_back({tables.gpu, "grouped_gemm", g.impl,
                      shape_text(g.experts, g.tokens_per_expert, g.n, g.k) +
                          " " + DtypeName(g.dtype),
                      g.from.ToString(), g.tflops, predicted,
                      (predicted - g.tflops) / g.tflops * 100});
  }
  for (size_t i = 0; i < tables.attention.size(); ++i) {
    const AttentionPoint& a = tables.attention[i];
    if (!a.from.measured()) continue;
    Tables rest = tables;
    rest.attention.erase(rest.attention.begin() + i);
    const CostModel model(std::move(rest), peaks);
    const Estimate e = model.Attention(a.shape, a.backward, 0, a.impl);
    const double work = a.shape.ForwardFlops() * (a.backward ? 2.5 : 1);
    const double predicted = work / e.seconds / kTera;
    const AttentionShape& s = a.shape;
    checks.push_back(
        {tables.gpu, AttentionKind(s, a.backward), a.impl,
         "b" + std::to_string(s.batch) + " s" + std::to_string(s.seq_q) + " h" +
             std::to_string(s.heads_q) + "/" + std::to_string(s.heads_kv) +
             " d" + std::to_string(s.head_dim_qk) +
             (s.causal ? " causal" : "") +
             (s.Windowed() ? " window" + std::to_string(s.window) : "") + " " +
             DtypeName(s.dtype),
         a.from.ToString(), a.tflops, predicted,
         (predicted - a.tflops) / a.tflops * 100});
  }
  for (size_t i = 0; i < tables.memory_bound.size(); ++i) {
    const MemoryPoint& m = tables.memory_bound[i];
    if (!m.from.measured()) continue;
    Tables rest = tables;
    rest.memory_bound.erase(rest.memory_bound.begin() + i);
    const CostModel model(std::move(rest), peaks);
    const Estimate e = model.MemoryBound(m.kernel, m.bytes);
    const double predicted = m.bytes / e.seconds / kGiga;
    checks.push_back({tables.gpu, "memory_bound", m.kernel,
                      std::to_string(static_cast<int64_t>(m.bytes)) + " B",
                      m.from.ToString(), m.gb_s, predicted,
                      (predicted - m.gb_s) / m.gb_s * 100});
  }
  return checks;
}

}  // namespace moesim::calibration
