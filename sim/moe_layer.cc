#include "sim/moe_layer.h"

#include "models/layer_ops.h"
#include "scenarios/vocabulary.h"
#include "sim/op_pricing.h"

namespace moesim::sim {

namespace {

bool InMoeBlock(const models::LayerOp& op) {
  return (op.scope == models::GraphScope::kMoeRouter ||
          op.scope == models::GraphScope::kMoePreprocess ||
          op.scope == models::GraphScope::kMoe) &&
         op.role != models::OpRole::kPreMlpNorm;
}

}  // namespace

util::Result<MoeLayerTime> EstimateMoeLayer(
    const MoeLayerSpec& s, const calibration::CostModel& costs,
    const topology::NetworkParams& network,
    const topology::GroupShape& ep_group) {
  if (s.ep <= 0 || s.experts % s.ep != 0) {
    return util::Fail("moe layer: experts " + std::to_string(s.experts) +
                      " must be a multiple of ep " + std::to_string(s.ep));
  }
  // The scenario's dispatcher words (scenarios/vocabulary.h), one list.
  const util::Result<models::Dispatcher> dispatcher =
      scenarios::ParseDispatcher(s.dispatcher);
  if (!dispatcher) {
    return util::Fail("moe layer: dispatcher: " + dispatcher.error().message);
  }
  // A one-layer MoE model of the spec's sizes; its attention block is built
  // and left out.
  models::Model model;
  model.set_name("moe layer");
  model.set_num_layers(1);
  model.set_hidden_size(s.hidden);
  model.set_ffn_hidden_size(s.moe_ffn_hidden);
  model.set_num_attention_heads(8);
  model.set_vocab_size(32000);
  model.set_activation(s.gated ? "swiglu" : "gelu");
  model.set_num_moe_experts(s.experts);
  model.set_moe_router_topk(s.topk);
  model.set_moe_ffn_hidden_size(s.moe_ffn_hidden);
  model.set_moe_shared_expert_intermediate_size(s.shared_expert_hidden);
  models::Parallelism par;
  par.ep = static_cast<int>(s.ep);
  par.dp = static_cast<int>(s.ep);
  models::TrainingOptions tr;
  tr.seq_length = s.tokens_per_gpu;
  tr.precision = s.dtype == calibration::Dtype::kBf16
                     ? models::Precision::kBf16
                     : models::Precision::kFp8Blockwise;
  tr.dispatcher = *dispatcher;
  models::LayerOps layer = models::BuildLayerOps(model, 0, false, par, tr,
                                                 /*full_recompute=*/false);

  RankContext rank;
  rank.costs = &costs;
  rank.network = &network;
  for (auto& group : rank.groups) group = {0};
  auto& ep = rank.groups[static_cast<int>(models::Group::kEp)];
  ep.clear();
  for (int g = 0; g < s.ep; ++g) ep.push_back(g);
  rank.shapes[static_cast<int>(models::Group::kEp)] = ep_group;
  rank.training_dtype = TrainingDtype(tr.precision);
  rank.attention_dtype = AttentionDtype(tr);
  rank.dispatcher = *dispatcher;
  rank.ep = static_cast<int>(s.ep);
  rank.local_experts = s.experts / s.ep;

  MoeLayerTime out;
  for (const bool backward : {false, true}) {
    std::vector<models::LayerOp> ops;
    for (models::LayerOp op : backward ? layer.backward : layer.forward) {
      if (!InMoeBlock(op)) continue;
      op.dispatch.router_groups = s.router_groups;
      op.dispatch.router_group_topk = s.router_group_topk;
      ops.push_back(std::move(op));
    }
    auto priced = PriceOps(ops, rank);
    if (!priced) return std::unexpected(priced.error());
    for (const TimedOp& op : priced->ops) {
      const double seconds = op.duration.seconds();
      out.ops.push_back({op.name, backward, seconds});
      (backward ? out.backward_s : out.forward_s) += seconds;
    }
  }
  return out;
}

}  // namespace moesim::sim
