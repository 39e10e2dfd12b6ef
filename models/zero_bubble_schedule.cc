// ZB-H1, the zero-bubble schedule of Qi, Wan, Huang and Lin, "Zero Bubble
// Pipeline Parallelism" (ICLR 2024), sec. 3.1, in the form of the authors'
// quick implementation on Megatron-LM (sail-sg/zero-bubble-pipeline-
// parallelism, branch zb-h1-quick-start: WeightGradStore and
// schedules.py). Each backward is split into B, the input gradient the
// previous stage waits for, and W, the linear layers' weight gradients,
// which nothing waits for until the optimizer. Rank r keeps 1F1B's warm-up
// (pp - r - 1 forwards) and its order of F and B; after each B it runs the
// oldest pending W once more than r are pending, and runs the pending ones
// after its last B. So the last stage, which finishes its backwards first,
// fills its tail with pp - 1 W's, and the first, which finishes last, runs
// each W right after its B. The bubble falls from 1F1B's (pp - 1)(F + B + W)
// to (pp - 1)(F + B - W) (sec. 3.1), at 1F1B's peak of stored forwards plus
// up to r micro-batches waiting only for their W.
#include <algorithm>
#include <memory>

#include "models/pipeline.h"
#include "util/check.h"

namespace moesim::models {
namespace {

class ZeroBubbleH1Schedule final : public PipelineSchedule {
 public:
  ZeroBubbleH1Schedule(int rank, int pp, int64_t microbatches)
      : m_(microbatches),
        warmup_(std::min<int64_t>(pp - rank - 1, microbatches)),
        delay_(rank) {}

  int64_t size() const override { return 3 * m_; }
  int64_t warmup() const override { return warmup_; }

  ScheduleStep operator[](int64_t i) const override {
    if (i < warmup_) return {StepKind::kForward, i, 0};
    if (i >= Start(m_)) {  // the pending W's, oldest first
      return {StepKind::kWeightGrad,
              std::max<int64_t>(0, m_ - delay_) + (i - Start(m_)), 0};
    }
    // The unit of backward k: a forward (steady phase only), B_k, then
    // W_{k - delay} once k >= delay. The last unit starting at or before i.
    int64_t lo = 0, hi = m_ - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (Start(mid) <= i) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const int64_t k = lo, at = i - Start(k);
    const bool steady = k < m_ - warmup_;
    if (steady && at == 0) return {StepKind::kForward, warmup_ + k, 0};
    if (at == (steady ? 1 : 0)) return {StepKind::kInputGrad, k, 0};
    return {StepKind::kWeightGrad, k - delay_, 0};
  }

 private:
  // The position of backward k's unit: the warm-up, one forward per earlier
  // steady unit, one B per earlier unit, one W per earlier unit past the
  // delay.
  int64_t Start(int64_t k) const {
    return warmup_ + std::min(k, m_ - warmup_) + k +
           std::max<int64_t>(0, k - delay_);
  }

  int64_t m_, warmup_, delay_;
};

}  // namespace

std::unique_ptr<PipelineSchedule> MakeZeroBubbleH1(int rank, int pp, int vpp,
                                                   int64_t microbatches) {
  util::CheckOrDie(vpp == 1, "ZB-H1 runs without interleaving");
  return std::make_unique<ZeroBubbleH1Schedule>(rank, pp, microbatches);
}

}  // namespace moesim::models
