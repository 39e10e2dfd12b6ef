// The time of one MoE layer's forward and backward on one GPU, op by op, as
// the step replay prices it (models::BuildLayerOps + sim::PriceOps, the MoE
// block only: router, dispatch, expert grouped GEMMs and activation, combine,
// shared expert), for a layer given by its sizes rather than a zoo model.
// Ops run one after another, as in Megatron's single-layer MoE benchmark
// (tests/functional_tests/test_cases/common/moe_perf) without overlap flags,
// so the benchmark checks the very pricing the replay uses.
#ifndef MOESIM_SIM_MOE_LAYER_H_
#define MOESIM_SIM_MOE_LAYER_H_

#include <string>
#include <vector>

#include "calibration/cost_model.h"
#include "topology/collectives.h"
#include "topology/network_params.h"
#include "util/error.h"

namespace moesim::sim {

struct MoeLayerSpec {
  int64_t tokens_per_gpu = 0;  // seq x mbs / (tp x cp)
  int64_t hidden = 0;
  int64_t moe_ffn_hidden = 0;
  int64_t experts = 0;
  int64_t topk = 0;
  int64_t shared_expert_hidden = 0;  // 0: no shared expert
  bool gated = true;                 // SwiGLU: fc1 is 2 x moe_ffn_hidden wide
  // Group-limited routing (DeepSeek): experts in `router_groups` groups, each
  // token's experts within `router_group_topk` of them; 0 = none.
  int64_t router_groups = 0;
  int64_t router_group_topk = 0;
  int64_t ep = 1;
  std::string dispatcher = "alltoall";  // alltoall, deepep, hybridep
  // Expert GEMMs: kBf16, or kFp8 (FP8 blockwise, the benchmark's recipe).
  calibration::Dtype dtype = calibration::Dtype::kBf16;
};

struct MoeOp {
  std::string name;
  bool backward = false;
  double seconds = 0;
};

struct MoeLayerTime {
  double forward_s = 0;
  double backward_s = 0;
  std::vector<MoeOp> ops;
};

// REQUIRES: experts % ep == 0; `ep_group` is the EP group's placement.
[[nodiscard]] util::Result<MoeLayerTime> EstimateMoeLayer(
    const MoeLayerSpec& spec, const calibration::CostModel& costs,
    const topology::NetworkParams& network,
    const topology::GroupShape& ep_group);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_MOE_LAYER_H_
