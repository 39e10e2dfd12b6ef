// CostModel: the time of a kernel of a given shape on one GPU, from that
// GPU's calibration tables (calibration/tables.h).
//
// Design. Compute kernels (GEMM, grouped GEMM, attention) are answered in
// efficiency space: efficiency = achieved TFLOPS / the GPU's dense peak for
// the dtype. Each family of rows (one implementation, one dtype class, one
// direction) gets a saturating efficiency curve in the kernel's work W
// (FLOPs), e(W) = e_max / (1 + (W0 / W)^a), fitted by least squares on log
// efficiency. A query then takes the curve at its W and corrects it by the
// residuals of its nearest rows in log-shape space (inverse-distance weights
// over log2 of every shape dimension); the correction fades with distance, so
// far outside the table's grid the answer is the fitted roofline curve alone.
// A query on a grid point returns that row. Grouped GEMM rows join the GEMM
// surface at their per-expert shape; a grouped GEMM is its experts' GEMMs.
// In the 8-bit class an implementation's MXFP8 rows have their own level
// (block-scaled kernels are slower than per-tensor FP8 ones at the same
// shape); the per-tensor rows still shape the curve.
// Memory-bound kernels interpolate achieved bandwidth linearly in log(bytes)
// and clamp outside the measured range.
//
// GEMM time = compute and HBM traffic combined. A GEMM reads its inputs
// (m k + k n elements at the dtype's width) and writes a 16-bit output (2 m
// n bytes), each at the measured copy bandwidth: t_in and t_out. The inputs
// stream into shared memory while the tensor cores work, so compute t_c and
// streaming overlap, partly: they combine as a p-norm, (t_c^p + s^p)^(1/p),
// p = 1 a plain sum (no overlap), p = inf the max (full overlap). The output
// is written by the epilogue after a tile's main loop: a kernel that does
// not overlap the epilogue with the next tile's loads adds it (serial share
// 1: t = pnorm(t_c, t_in) + t_out, DeepGEMM's FP8 GEMM at K = 512 on H800,
// whose 268 MB BF16 output takes about as long as its FLOPs and whose
// measured time is their sum); one that does streams it with the inputs
// (serial share 0: t = pnorm(t_c, t_in + t_out)). p (1, 1.5, 2, 3, 4 or
// inf) and the serial share (0 or 1) are fitted per family by least squares
// on log time over all its rows, memory-bound rows included; an
// implementation with at least 3 rows then gets its own pair where that
// lowers the family's squared error (overlap is a property of the kernel:
// DeepGEMM's epilogue, cuBLAS's). Weight-read-bound GEMMs (M = 64, 128:
// t_in dominates) and output-bound ones (large M n, small K) thus follow
// from their bytes, not from a FLOPs curve. The efficiency curve and the
// residuals live in compute space: each row's compute time is what its
// measured time leaves after the traffic, inverted through its
// implementation's combination (a row its traffic alone explains says
// nothing of compute: no residual, only weight), and the curve is fitted on
// the rows that are not memory-bound. With no traffic (attention) the
// combination is the compute time itself. On the shipped tables the fit
// gives H100 FP8 DeepGEMM p 1.5 with the output serial, H100 cuBLAS FP8 the
// max (p inf, output overlapped), H100 BF16 the max plus the output, TF32
// p 2, and the Blackwell families the max (B300 FP8 p 4), about the old
// max-only floor.
//
// SM sharing: a kernel running beside communication kernels that occupy
// `busy_sms` of the GPU's SMs (DeepEP, HybridEP, NCCL channels) runs on the
// rest: its time scales by sm_count / (sm_count - busy_sms).
//
// Corrections (calibration/profile.h): a profile's factors scale each
// answer where it is produced: a GEMM's compute time by gemm_efficiency (its
// HBM traffic times by memory_bound_efficiency, before they are combined), a
// grouped GEMM's whole time by grouped_gemm_efficiency, attention by
// attention_efficiency, memory-bound kernels by memory_bound_efficiency, a
// measured collective by the NVLink or network factor of its tier, a
// dispatcher's rate by dispatcher_efficiency, host quantities by
// host_overhead_scale. Rates are multiplied, times divided, so the identity
// changes no bit. The table fits (curves, the memory-bound classification of
// GEMM rows) never see the corrections.
//
// Every answer names the rows it came from. The model is immutable; queries
// are const and deterministic.
#ifndef MOESIM_CALIBRATION_COST_MODEL_H_
#define MOESIM_CALIBRATION_COST_MODEL_H_

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/profile.h"
#include "calibration/tables.h"

namespace moesim::calibration {

// Spec peaks of the GPU (the System's gpu fields).
struct GpuPeaks {
  double bf16_tflops = 0;
  double fp8_tflops = 0;
  double fp4_tflops = 0;
  double tf32_tflops = 0;
  double hbm_tb_s = 0;
  int sm_count = 0;
  // Dense peak for a dtype: fp16/bf16 -> bf16, fp8/mxfp8 -> fp8, nvfp4 ->
  // fp4, tf32/fp32 -> tf32.
  double PeakTflops(Dtype dtype) const;
};

struct Estimate {
  double seconds = 0;
  // Of the dtype's peak (compute: of the compute term, before the traffic
  // is combined) or of HBM (memory).
  double efficiency = 0;
  // "table" (a grid point), "interpolated" (curve + nearby residuals),
  // "curve" (fitted curve only, far from the grid), "spec" (no rows: peak).
  std::string method;
  std::vector<std::string> sources;  // "file:line (source)" of rows used
};

class CostModel {
 public:
  CostModel(Tables tables, GpuPeaks peaks, Corrections corrections = {});

  // `impl` empty: the implementation Megatron's Transformer Engine layers
  // use (cuBLAS, cuBLAS grouped, cuDNN attention), else the first present.

  // C[m x n] = A[m x k] B[k x n]. REQUIRES: m, n, k > 0.
  Estimate Gemm(int64_t m, int64_t n, int64_t k, Dtype dtype, int busy_sms = 0,
                std::string_view impl = "") const;
  // `experts` GEMMs of tokens_per_expert x n x k each (balanced).
  Estimate GroupedGemm(int64_t experts, int64_t tokens_per_expert, int64_t n,
                       int64_t k, Dtype dtype, int busy_sms = 0,
                       std::string_view impl = "") const;
  // A low-precision shape.dtype (FP8 attention) is priced from the rows of
  // its class and direction; where the table has none, at the 16-bit rows'
  // rate (sources say so).
  Estimate Attention(const AttentionShape& shape, bool backward,
                     int busy_sms = 0, std::string_view impl = "") const;
  // `kernel` as in memory_bound.csv; `bytes` read + written.
  Estimate MemoryBound(std::string_view kernel, double bytes,
                       int busy_sms = 0) const;
  // A measured collective of the same kind, tier and group size,
  // interpolated in log(bytes); nullopt when the table has none.
  std::optional<Estimate> Collective(std::string_view collective,
                                     std::string_view tier, int64_t group_size,
                                     double bytes) const;
  // Bottleneck bandwidth (GB/s) and SMs of a dispatcher phase from the
  // nearest row of the same dispatcher, phase and tier: nearest EP size,
  // tokens and SM count in log2 units, another dtype 2 units away, a row
  // without an SM count 1 unit away. nullopt when the table has none.
  struct DispatchRate {
    double gb_s = 0;
    int sms = 0;
    std::string source;
  };
  std::optional<DispatchRate> Dispatch(std::string_view dispatcher,
                                       std::string_view phase,
                                       std::string_view tier, int64_t ep_size,
                                       int64_t tokens, Dtype dtype,
                                       int sms) const;
  // A host.csv quantity in its unit (microseconds, or a dimensionless
  // fraction or factor); host_overhead_scale applies to the times only;
  // nullopt when absent.
  std::optional<double> Host(std::string_view quantity) const;

  const Tables& tables() const { return tables_; }
  const GpuPeaks& peaks() const { return peaks_; }
  const Corrections& corrections() const { return corrections_; }

 private:
  // The rows of one kernel kind and dtype class and their fitted curve.
  // Implementations share the curve's shape (W0, a) and each has its own
  // level (e_max): size dependence is learnt from every implementation,
  // speed from each one's rows. A row of another implementation counts
  // kImplDistance log2 units farther away. Within the 8-bit class an
  // implementation's MXFP8 rows have a level of their own (`level`, e.g.
  // "cublas mxfp8"): block-scaled GEMMs are other kernels than per-tensor
  // FP8 ones of the same library, slower at the same shape (Transformer
  // Engine's B300 kernel-only sums: 7.161 against 6.812 ms per layer), so
  // the per-tensor rows teach MXFP8 the curve's shape but not its level.
  struct Point {
    std::string impl;
    std::vector<double> features;  // log2 shape dimensions
    double work = 0;               // FLOPs
    double efficiency = 0;         // measured, of the peak
    std::string source;
    // Its measured time is mostly HBM traffic (>= kMemoryBoundShare of it):
    // it says little about compute, so the curve fit leaves it out.
    bool memory_bound = false;
    Dtype dtype = Dtype::kBf16;  // the row's; set by the constructor
    // Input and output traffic times at the copy rate, in units of the
    // time at peak (work / peak); 0 for attention.
    double in = 0, out = 0;
    std::string level = "";  // the key of its e_max: impl, or impl + " mxfp8"
  };
  // How compute and traffic combine (the design comment).
  struct Overlap {
    double p = std::numeric_limits<double>::infinity();
    double serial_out = 0;  // share of the output write after the compute
    double Seconds(double compute, double in, double out) const;
    // The compute time that combines with the traffic into `seconds`; 0
    // when the traffic alone takes that long.
    double ComputeSeconds(double seconds, double in, double out) const;
  };
  struct Traffic {
    double in = 0, out = 0;  // seconds
    std::vector<std::string> sources;
  };
  struct Family {
    std::string kind;  // gemm (with grouped rows), attention_fwd, _bwd
    int dtype_class = 0;
    std::vector<Point> points;
    // e(W) = e_max[level] / (1 + (w0/W)^a); a level without rows takes
    // the mean of the levels that have rows (the geometric mean, each level
    // once: another kernel is like a typical kernel, not like the kernel
    // with the most rows).
    std::vector<std::pair<std::string, double>> e_max;
    double mean_e_max = 0, w0 = 1, a = 0;
    // Per implementation where fitted, else default_overlap.
    std::vector<std::pair<std::string, Overlap>> overlap;
    Overlap default_overlap;
    double Curve(std::string_view level, double work) const;
    // The level a query of `impl` at `dtype` reads: the implementation's
    // MXFP8 level where the family has rows of it, else its own.
    std::string LevelOf(std::string_view impl, Dtype dtype) const;
    const Overlap& OverlapOf(std::string_view impl) const;
    // A row's compute efficiency: its measured time less its traffic; 0
    // when the traffic alone explains the time.
    double ComputeEfficiency(const Point& p) const;
    void Fit();  // the overlaps, then the curve
    void FitCurve();
    // FitCurve's grid of W0 and log(1 + (W0/W)^a) there for `rows` (indices
    // into `points`), by exponent, grid point and row; kept during Fit().
    struct Shapes {
      std::vector<size_t> rows;
      std::vector<double> grid, values;
    } shapes;
    double TimeSse() const;  // squared log-time error over all rows
  };
  const Family* FindFamily(std::string_view kind, int dtype_class) const;
  // `factor` divides the compute time; `traffic` (seconds, corrected)
  // combines with it.
  Estimate Compute(std::string_view kind, std::string_view impl,
                   const std::vector<std::string_view>& preference, Dtype dtype,
                   const std::vector<double>& features, double work,
                   int busy_sms, double factor, const Traffic& traffic) const;
  // A GEMM's input and output traffic times at the copy rate.
  Traffic GemmTraffic(int64_t m, int64_t n, int64_t k, Dtype dtype,
                      int busy_sms, bool corrected) const;
  double SmShare(int busy_sms) const;
  // MemoryBound from the tables alone, before corrections.
  Estimate TableMemoryBound(std::string_view kernel, double bytes,
                            int busy_sms) const;

  Tables tables_;
  GpuPeaks peaks_;
  Corrections corrections_;
  std::vector<Family> families_;
};

// Leave-one-out check of every measured (non-derived) compute and
// memory-bound row: predicted with that row removed from the tables.
struct KernelCheck {
  std::string gpu, kind, impl, shape, source;
  double measured = 0, predicted = 0, error_pct = 0;  // TFLOPS or GB/s
};
std::vector<KernelCheck> LeaveOneOut(const Tables& tables,
                                     const GpuPeaks& peaks);

}  // namespace moesim::calibration

#endif  // MOESIM_CALIBRATION_COST_MODEL_H_
