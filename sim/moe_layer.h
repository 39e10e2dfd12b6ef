// The time of one MoE layer's forward and backward on one GPU, op by op, from
// the calibration tables (calibration::CostModel) and the network model
// (topology collectives): router, dispatch (NCCL all-to-all with permute and
// chunk sort, or DeepEP / HybridEP with their fused paths), expert grouped
// GEMMs and activation, combine, shared expert. Ops run one after another on
// one stream, as in Megatron's single-layer MoE benchmark
// (tests/functional_tests/test_cases/common/moe_perf) without overlap flags.
//
// This is the layer-level check of the calibration tables and a first piece
// of the replay's MoE op graph; the event engine will schedule the same ops
// on compute and EP streams.
#ifndef MOESIM_SIM_MOE_LAYER_H_
#define MOESIM_SIM_MOE_LAYER_H_

#include <string>
#include <vector>

#include "calibration/cost_model.h"
#include "topology/collectives.h"
#include "topology/network_params.h"

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
  // SMs DeepEP / HybridEP kernels use: Megatron's --moe-deepep-num-sms
  // (default 20) and --moe-hybridep-num-sms (default 16).
  int dispatcher_sms = 0;  // 0: Megatron's default for the dispatcher
  calibration::Dtype dtype = calibration::Dtype::kBf16;  // expert GEMMs
};

struct MoeOp {
  std::string name;
  bool backward = false;
  double seconds = 0;
  std::string detail;  // shape and where the time came from
};

struct MoeLayerTime {
  double forward_s = 0;
  double backward_s = 0;
  std::vector<MoeOp> ops;
};

// Expected number of distinct EP ranks a token's top-k experts live on
// (balanced, uniformly random routing; group-limited routing counted).
double DistinctRanksPerToken(const MoeLayerSpec& spec);

// REQUIRES: experts % ep == 0; `ep_group` is the EP group's placement.
[[nodiscard]] util::Result<MoeLayerTime> EstimateMoeLayer(
    const MoeLayerSpec& spec, const calibration::CostModel& costs,
    const topology::NetworkParams& network,
    const topology::GroupShape& ep_group);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_MOE_LAYER_H_
