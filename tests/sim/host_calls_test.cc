// The replay's host thread carries Megatron-Core's eager host calls per
// block (sim/host_calls.h). Expected counts are summed by hand, in each
// comment, from calibration/notes/megatron_host_ops.md (section named), not
// taken from a run of the code under test.
#include "sim/host_calls.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/layer_ops.h"
#include "models/zoo.h"
#include "sim/engine.h"
#include "sim/op_pricing.h"
#include "sim/replay.h"
#include "sim/template_emitter.h"
#include "tests/sim/simulate.h"
#include "topology/system.h"

namespace moesim::sim {
namespace {

using models::GraphScope;

// Distinct per-kind costs, so a call counted under the wrong kind shows.
constexpr double kTorch = 13e-6, kTe = 37e-6, kNode = 1e-6, kKernel = 3e-6;
constexpr double kGraph = 15e-6;

using Fixture = test_support::PlatformFixture;

// Qwen3-30B-A3B (128 experts, QK-norm GQA), EP8 alltoall, BF16, TP1:
// 16 local experts.
constexpr int kLocalExperts = 16;
RankContext Ep8Context(const Fixture& f) {
  RankContext rank;
  rank.costs = f.platform.costs.get();
  rank.network = &f.platform.network;
  rank.cluster = f.platform.cluster.get();
  for (int g = 0; g < kNumGroups; ++g) rank.groups[g] = {0};
  auto& ep = rank.groups[static_cast<int>(models::Group::kEp)];
  ep = {0, 1, 2, 3, 4, 5, 6, 7};
  rank.shapes[static_cast<int>(models::Group::kEp)] =
      topology::ShapeOf(ep, *f.platform.cluster);
  rank.ep = 8;
  rank.local_experts = kLocalExperts;
  rank.dispatcher = models::Dispatcher::kAllToAll;
  rank.launch_s = kTorch;
  rank.te_module_s = kTe;
  rank.autograd_node_s = kNode;
  rank.kernel_launch_s = kKernel;
  rank.graph_launch_s = kGraph;
  return rank;
}

models::LayerOps Qwen3MoeLayer(int64_t seq = 4096) {
  auto model = models::LoadModel("qwen3-30b-a3b");
  EXPECT_TRUE(model) << model.error().message;
  models::Parallelism par;
  par.ep = 8;
  par.dp = 8;
  models::TrainingOptions tr;
  tr.seq_length = seq;
  return models::BuildLayerOps(*model, 0, false, par, tr, false);
}

bool InMoe(const models::LayerOp& op) {
  return op.scope == GraphScope::kMoeRouter ||
         op.scope == GraphScope::kMoePreprocess || op.scope == GraphScope::kMoe;
}

// The ops of one block (by graph scope test) of a pass, priced.
OpTemplate PriceBlock(const std::vector<models::LayerOp>& pass,
                      bool (*in_block)(const models::LayerOp&),
                      const RankContext& rank) {
  std::vector<models::LayerOp> ops;
  for (const models::LayerOp& op : pass) {
    if (in_block(op)) ops.push_back(op);
  }
  auto t = PriceOps(ops, rank);
  EXPECT_TRUE(t) << t.error().message;
  return *t;
}

HostCalls Sum(const OpTemplate& t) {
  HostCalls sum;
  for (const TimedOp& op : t.ops) sum += op.calls;
  return sum;
}
double HostSum(const OpTemplate& t) {
  double s = 0;
  for (const TimedOp& op : t.ops) s += op.host_s;
  return s;
}

// Section 2 (MoE, alltoall, E_local = 16), forward, by function:
//   TE: pre_mlp_norm (te.RMSNorm) + 2 GroupedLinear = 3.
//   torch: router gating 6 (Fn, gemm, 4 views) + routing 11 (3 fused TE
//   calls, sum, ReduceFromTP, /coeff, tracker 3, AuxLossAutoScaler) +
//   preprocess 15 + D2H 8 + stream/event 3 + fused permute 1 + 2 token /
//   probs all-to-alls x 3 + chunk sort 2 + TEGroupedMLP's tolist and
//   unsqueeze 2 + weighted SwiGLU 3 + combine chunk sort 3 + combine
//   all-to-all 3 + unpermute 2 + compiled BDA 2 = 67.
//   kernels: each GroupedLinear launches 16 GEMMs, 1 inside its call: 2 x 15.
// Backward:
//   TE: 2 GroupedLinear + the norm = 3.
//   torch: combine's backward 2 + 3 + 1, SwiGLU 1, dispatch's backward
//   1 + 6 + 1, routing 7 (AuxLossAutoScaler 3, aux loss, ReduceFromTP, aux
//   score, top-k), router gating 7 (Fn, 2 gemms, 3 casts, main_grad add_),
//   norm main_grad add_ 1 = 30.
//   nodes: 1 view (combine bwd) + 2 SwiGLU views + Unsqueeze + 1 view
//   (dispatch bwd) + logits view + 2 fan-in adds + the residual add = 9.
//   kernels: GroupedLinear dgrad 15 + wgrad 16 each = 62, 2 fan-in adds
//   and the residual add = 65.
//   params: 2 + 2 x 16 = 34 AccumulateGrad nodes and 34 DDP hooks.
TEST(HostCalls, EagerMoeLayerHostTimeIsCountedCallsTimesTableCosts) {
  const Fixture f = test_support::H100Platform(8);
  const RankContext rank = Ep8Context(f);
  const models::LayerOps layer = Qwen3MoeLayer();
  const OpTemplate fwd = PriceBlock(layer.forward, InMoe, rank);
  const OpTemplate bwd = PriceBlock(layer.backward, InMoe, rank);
  const HostCalls want_fwd{
      .te = 3, .torch = 67, .kernels = 2 * (kLocalExperts - 1)};
  const HostCalls want_bwd{.te = 3,
                           .torch = 30,
                           .nodes = 9,
                           .kernels = 2 * (2 * kLocalExperts - 1) + 3,
                           .param_nodes = 2 + 2 * kLocalExperts,
                           .param_hooks = 2 + 2 * kLocalExperts};
  EXPECT_EQ(Sum(fwd), want_fwd);
  EXPECT_EQ(Sum(bwd), want_bwd);
  // Host time: 3 x 37 + 67 x 13 + 30 x 3 us forward; backward 3 x 37 +
  // (30 + 34) x 13 + (9 + 34) x 1 + 65 x 3 us.
  EXPECT_NEAR(HostSum(fwd), 3 * kTe + 67 * kTorch + 30 * kKernel, 1e-12);
  EXPECT_NEAR(HostSum(bwd), 3 * kTe + 64 * kTorch + 43 * kNode + 65 * kKernel,
              1e-12);
}

// The per-expert terms: halving the local experts (EP16 of 128 would give
// 8) removes 2 x 8 GEMM launches forward, 2 x (8 + 8) backward, and 16
// AccumulateGrad nodes and DDP hooks; nothing else changes.
TEST(HostCalls, PerExpertTermsScaleWithLocalExperts) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Ep8Context(f);
  models::LayerOps layer = Qwen3MoeLayer();
  const HostCalls bwd16 = Sum(PriceBlock(layer.backward, InMoe, rank));
  rank.local_experts = 8;
  for (models::LayerOp& op : layer.backward) {
    if (op.kind == models::OpKind::kGroupedGemm) op.groups = 8;
  }
  const HostCalls bwd8 = Sum(PriceBlock(layer.backward, InMoe, rank));
  EXPECT_EQ(bwd16.kernels - bwd8.kernels, 2 * (8 + 8));
  EXPECT_EQ(bwd16.param_nodes - bwd8.param_nodes, 16);
  EXPECT_EQ(bwd16.param_hooks - bwd8.param_hooks, 16);
  EXPECT_EQ(bwd16.te, bwd8.te);
  EXPECT_EQ(bwd16.torch, bwd8.torch);
}

bool InAttention(const models::LayerOp& op) {
  return op.scope == GraphScope::kAttn;
}

// Section 1 (GQA with QK-norm, TP1). Forward: TE LayerNormLinear qkv,
// q/k RMSNorm, DotProductAttention, Linear proj = 5; torch: view, split,
// _SplitAlongDim, reshape (4) + 2 fused RoPE + frequency slice (3) +
// compiled BDA (2) = 9. Backward: 5 TE backward Functions; torch: BDA 1 +
// RoPE 2 + 2 q/k norm main_grad add_ + qkv's norm-weight add_ 1 +
// SplitAlongDim backward and its cat 2 = 8; nodes: UnsafeView, Clone, View
// + the residual add = 4; kernels: 2 wgrads inside their module's backward
// + the residual add = 3; params: qkv weight and norm weight, q/k norm
// weights, proj weight = 5 AccumulateGrad + 5 DDP hooks.
TEST(HostCalls, AttentionBlockMatchesTheNoteCounts) {
  const Fixture f = test_support::H100Platform(8);
  const RankContext rank = Ep8Context(f);
  const models::LayerOps layer = Qwen3MoeLayer();
  EXPECT_EQ(Sum(PriceBlock(layer.forward, InAttention, rank)),
            (HostCalls{.te = 5, .torch = 9}));
  EXPECT_EQ(Sum(PriceBlock(layer.backward, InAttention, rank)),
            (HostCalls{.te = 5,
                       .torch = 8,
                       .nodes = 4,
                       .kernels = 3,
                       .param_nodes = 5,
                       .param_hooks = 5}));
}

// TE-scoped graphs attn + moe_router + moe_preprocess: the attention block
// costs 1 graph launch forward (its calls gone); the router's run 1 graph
// launch; the alltoall preprocess + permute 1 graph launch, and the host
// still syncs after it (Megatron moves the D2H sync before the all-to-all,
// section 2). Backward keeps each parameter's AccumulateGrad + DDP hook.
// The `moe` scope (static shapes) drops the sync.
TEST(HostCalls, CudaGraphScopesReplaceCapturedCallsByOneLaunch) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Ep8Context(f);
  rank.graphed[static_cast<int>(GraphScope::kAttn)] = true;
  rank.graphed[static_cast<int>(GraphScope::kMoeRouter)] = true;
  rank.graphed[static_cast<int>(GraphScope::kMoePreprocess)] = true;
  const models::LayerOps layer = Qwen3MoeLayer();
  EXPECT_NEAR(HostSum(PriceBlock(layer.forward, InAttention, rank)), kGraph,
              1e-15);
  // Backward attention: one graph launch + 5 x (node + hook).
  EXPECT_NEAR(HostSum(PriceBlock(layer.backward, InAttention, rank)),
              kGraph + 5 * (kNode + kTorch), 1e-15);
  const OpTemplate moe = PriceBlock(layer.forward, InMoe, rank);
  int syncs = 0;
  for (const TimedOp& op : moe.ops) syncs += op.host_sync;
  EXPECT_EQ(syncs, 1);
  // Eager forward 3 x 37 + 67 x 13 + 30 x 3 us, less the captured pieces:
  // pre_mlp_norm (1 TE), router 6, routing 11, preprocess + permute 27;
  // plus 2 graph launches.
  EXPECT_NEAR(HostSum(moe),
              2 * kTe + (67 - 6 - 11 - 27) * kTorch + 30 * kKernel + 2 * kGraph,
              1e-12);
  rank.graphed[static_cast<int>(GraphScope::kMoe)] = true;
  syncs = 0;
  for (const TimedOp& op : PriceBlock(layer.forward, InMoe, rank).ops) {
    syncs += op.host_sync;
  }
  EXPECT_EQ(syncs, 0);
}

// Token drop padded to capacity: the alltoall dispatcher's split sizes are
// static, so its preprocess sets no sync point (Megatron-LM
// MoEAlltoAllTokenDispatcher.preprocess returns early under drop_and_pad)
// and the eager MoE forward has no host wait; DeepEP still waits for its
// receive counter inside the dispatch.
TEST(HostCalls, PaddedTokenDropDropsTheAlltoallSync) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Ep8Context(f);
  const models::LayerOps layer = Qwen3MoeLayer();
  auto syncs = [&] {
    int n = 0;
    for (const TimedOp& op : PriceBlock(layer.forward, InMoe, rank).ops)
      n += op.host_sync;
    return n;
  };
  EXPECT_EQ(syncs(), 1);
  rank.static_token_counts = true;
  EXPECT_EQ(syncs(), 0);
  rank.dispatcher = models::Dispatcher::kDeepEp;
  EXPECT_EQ(syncs(), 1);
}

// GPT-OSS-120B's first layer at EP8 (16 local experts), seq 4096.
models::LayerOps GptOssEp8Layer(bool moe_act_recompute) {
  auto model = models::LoadModel("gpt-oss-120b");
  EXPECT_TRUE(model) << model.error().message;
  models::Parallelism par;
  par.ep = 8;
  par.dp = 8;
  models::TrainingOptions tr;
  tr.seq_length = 4096;
  tr.recompute.moe_act = moe_act_recompute;
  return models::BuildLayerOps(*model, 0, false, par, tr, false);
}

// GPT-OSS-120B, EP8 alltoall, TP1: Megatron-Core's
// weighted_bias_quick_geglu_impl builds torch.tensor(linear_offset) on the
// GPU after its clamps, a blocking copy (fused_bias_geglu.py; PyTorch
// Copy.cu memcpy_and_sync), so an eager MoE forward syncs twice: the
// dispatcher's D2H sync (section 2) and the clamp op. With the recipes'
// TE-scoped graphs (attn, moe_router, moe_preprocess) the experts stay
// eager: still 2. With the `moe` scope captured (static shapes) neither
// remains. The backward syncs once under moe_act recompute (the replayed
// clamps), never in its own gradient ops.
TEST(HostCalls, GptOssQuickGegluOffsetTensorSyncsTheHost) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Ep8Context(f);
  rank.local_experts = 128 / 8;
  const models::LayerOps layer = GptOssEp8Layer(/*moe_act_recompute=*/true);
  auto syncs = [&](const std::vector<models::LayerOp>& pass) {
    int n = 0;
    for (const TimedOp& op : PriceBlock(pass, InMoe, rank).ops) {
      n += op.host_sync;
    }
    return n;
  };
  auto named_sync = [&](const std::vector<models::LayerOp>& pass) {
    for (const TimedOp& op : PriceBlock(pass, InMoe, rank).ops) {
      if (op.host_sync &&
          op.name.find("experts_act_clamp") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_EQ(syncs(layer.forward), 2);
  EXPECT_TRUE(named_sync(layer.forward));
  std::vector<models::LayerOp> backward = layer.recompute;
  backward.insert(backward.end(), layer.backward.begin(), layer.backward.end());
  EXPECT_EQ(syncs(backward), 1);
  EXPECT_EQ(syncs(layer.backward), 0);
  rank.graphed[static_cast<int>(GraphScope::kAttn)] = true;
  rank.graphed[static_cast<int>(GraphScope::kMoeRouter)] = true;
  rank.graphed[static_cast<int>(GraphScope::kMoePreprocess)] = true;
  EXPECT_EQ(syncs(layer.forward), 2);
  rank.graphed[static_cast<int>(GraphScope::kMoe)] = true;
  EXPECT_EQ(syncs(layer.forward), 0);
  EXPECT_EQ(syncs(backward), 0);
}

// Runs a template alone with the host model; returns the makespan.
Time RunWithHost(const OpTemplate& t, const RankContext& rank) {
  Engine engine;
  StageStreams streams;
  for (int k = 0; k < kNumStreamKinds; ++k) {
    streams[k] = engine.Stream(std::string("s/") +
                               StreamKindName(static_cast<StreamKind>(k)));
  }
  TemplateEmitter emitter(engine, false);
  emitter.Emit(streams, t, HostSegments(t, rank), {});
  EXPECT_TRUE(engine.Run());
  return engine.makespan();
}

// GPT-OSS's linear biases (add_bias_linear) on the host, per local expert
// (EP8 of 128 experts: 16 on the GPU). _apply_bias runs split, 16 x (b x p,
// add), cat and cast: 2 x 16 + 3 = 35 eager calls forward, 35 autograd nodes
// and 4 x 16 + 2 = 66 kernels backward. TE GroupedLinear registers one bias
// Parameter per GEMM beside each weight (grouped_linear.py @0069563f), so
// each expert GEMM's backward has 2 x 16 AccumulateGrads and DDP hooks, and
// each TE linear one more than without biases. Qwen3-30B has no biases.
TEST(HostCalls, GptOssBiasesAddPerExpertCallsAndParameters) {
  const models::LayerOps layer = GptOssEp8Layer(/*moe_act_recompute=*/false);
  const HostCallContext fwd = ContextOf(layer.forward, 16, false);
  const HostCallContext bwd = ContextOf(layer.backward, 16, false);
  EXPECT_TRUE(fwd.linear_bias);
  EXPECT_TRUE(bwd.linear_bias);
  int bias_ops = 0, expert_dgrads = 0, te_linears = 0;
  for (const models::LayerOp& op : layer.forward) {
    if (op.name != "experts_fc2_bias") continue;
    EXPECT_EQ(LayerOpHostCalls(op, fwd).torch, 35);
    ++bias_ops;
  }
  for (const models::LayerOp& op : layer.backward) {
    const HostCalls h = LayerOpHostCalls(op, bwd);
    if (op.name == "experts_fc2_bias.bwd") {
      EXPECT_EQ(h.nodes, 35);
      EXPECT_EQ(h.kernels, 66);
      ++bias_ops;
    } else if (op.kind == models::OpKind::kGroupedGemm &&
               op.pass == models::Pass::kDgrad) {
      EXPECT_EQ(h.param_nodes, 32) << op.name;
      EXPECT_EQ(h.param_hooks, 32) << op.name;
      ++expert_dgrads;
    } else if (op.name == "proj.dgrad") {
      EXPECT_EQ(h.param_nodes, 2);  // weight and bias
      ++te_linears;
    }
  }
  EXPECT_EQ(bias_ops, 2);
  EXPECT_EQ(expert_dgrads, 2);
  EXPECT_EQ(te_linears, 1);
  const models::LayerOps qwen = Qwen3MoeLayer();
  EXPECT_FALSE(ContextOf(qwen.backward, 16, false).linear_bias);
}

// GPT-OSS's YaRN RoPE runs Megatron's unfused path on q and k
// (calibration/notes/megatron_host_ops.md section 8): forward 15 eager calls
// per tensor plus the frequency slice (31, against the fused kernel's 3);
// backward 9 autograd nodes and 2 gradient sums per tensor, launching 9
// kernels (22 nodes and 18 kernels, against the fused path's 2 calls).
TEST(HostCalls, GptOssUnfusedRopeCountsItsEagerCalls) {
  const models::LayerOps layer = GptOssEp8Layer(/*moe_act_recompute=*/false);
  const HostCallContext fwd = ContextOf(layer.forward, 16, false);
  const HostCallContext bwd = ContextOf(layer.backward, 16, false);
  int seen = 0;
  for (const models::LayerOp& op : layer.forward) {
    if (op.name != "rope_unfused") continue;
    EXPECT_EQ(LayerOpHostCalls(op, fwd), (HostCalls{.torch = 31}));
    ++seen;
  }
  for (const models::LayerOp& op : layer.backward) {
    if (op.name != "rope_unfused.bwd") continue;
    EXPECT_EQ(LayerOpHostCalls(op, bwd),
              (HostCalls{.nodes = 22, .kernels = 18}));
    ++seen;
  }
  EXPECT_EQ(seen, 2);
}

// The alltoall dispatcher's D2H sync stops the host from running ahead.
// One MoE forward with the router and preprocess graphed (the measured
// recipes' scopes): GPU time G1 up to the synced permute, host time H1 of
// the two graph launches before it and H2 of the eager calls after it.
// Without the sync the host issues the H2 calls while the GPU is still in
// G1, so the last kernel waits for H1 + H2; with it the host starts them
// only once the permute is done, so the step is at least G1 + H2: the sync
// adds G1 - H1 (plus the first graph launch the GPU chain starts after).
// Eager host costs are 20x the test's so that H2 exceeds the GPU work after
// the sync.
TEST(HostCalls, AllToAllSyncMakesHostTimeVisible) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Ep8Context(f);
  rank.launch_s *= 20;
  rank.te_module_s *= 20;
  rank.kernel_launch_s *= 20;
  rank.graphed[static_cast<int>(GraphScope::kMoeRouter)] = true;
  rank.graphed[static_cast<int>(GraphScope::kMoePreprocess)] = true;
  const models::LayerOps layer = Qwen3MoeLayer();
  OpTemplate t = PriceBlock(layer.forward, InMoe, rank);
  int sync = -1;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    if (t.ops[i].host_sync) sync = static_cast<int>(i);
  }
  ASSERT_GE(sync, 0);
  double g1 = 0, g2 = 0, h1 = 0, h2 = 0;
  for (int i = 0; i < static_cast<int>(t.ops.size()); ++i) {
    (i <= sync ? g1 : g2) += t.ops[i].duration.seconds();
    (i <= sync ? h1 : h2) += t.ops[i].host_s;
  }
  ASSERT_LT(h1, g1);
  ASSERT_GT(h2, g2);
  const double with_sync = RunWithHost(t, rank).seconds();
  EXPECT_GE(with_sync, g1 + h2 - 1e-9);
  for (TimedOp& op : t.ops) op.host_sync = false;
  const double without = RunWithHost(t, rank).seconds();
  EXPECT_GE(with_sync - without, 0.9 * (g1 - h1));
}

}  // namespace
}  // namespace moesim::sim

namespace moesim::sim {
namespace {

// The step's host time with host.csv's python_call_factor set to `factor`
// (the shipped h100 tables otherwise).
double HostBusyWithFactor(const scenarios::ResolvedScenario& s, double factor) {
  auto platform = BuildPlatform(s);
  EXPECT_TRUE(platform);
  auto tables = calibration::LoadTables("h100");
  EXPECT_TRUE(tables);
  for (calibration::HostQuantity& h : tables->host) {
    if (h.quantity == "python_call_factor") h.value = factor;
  }
  platform->costs = std::make_unique<calibration::CostModel>(std::move(*tables),
                                                             PeaksOf(s.system));
  auto r = Replay(s, *platform, ReplayOptions{});
  EXPECT_TRUE(r) << r.error().message;
  return r ? r->host_busy_s : 0;
}

// python_call_factor scales the Python-side calls (eager ops, TE module
// calls, autograd nodes) and not the driver's launches: the step's host
// time is linear in it, P x factor + D, with D > 0 the raw cuBLAS launches
// of TE's grouped GEMM loop. From factor 1 and 2: P and D; a third factor,
// 2.3, must give D + 2.3 P.
TEST(HostCalls, PythonCallFactorScalesThePythonCallsOnly) {
  const scenarios::ResolvedScenario s =
      test_support::Resolve(R"(model: "qwen3-30b-a3b" system: "dgx-h100"
        num_gpus: 8 seq_length: 4096 precision: "bf16"
        layout { expert_model_parallel_size: 8 global_batch_size: 16 })");
  const double one = HostBusyWithFactor(s, 1.0);
  const double two = HostBusyWithFactor(s, 2.0);
  const double python = two - one, driver = one - python;
  EXPECT_GT(python, 0);
  EXPECT_GT(driver, 0);
  EXPECT_NEAR(HostBusyWithFactor(s, 2.3), driver + 2.3 * python, 1e-6 * two);
}

}  // namespace
}  // namespace moesim::sim

namespace moesim::sim {
namespace {

// --moe-shared-expert-overlap. Moonlight-16B-A3B (64 experts, one shared
// expert), EP16 over two H100 nodes, alltoall, BF16, TP1, no host costs (so
// only the GPU streams set the times). Without overlap the shared expert
// runs in line (last in the forward, first in the backward); with it, the
// pass's shared-expert ops run beside its first token exchange. While that
// exchange (an all-to-all across the nodes' NICs) takes longer than the
// shared expert's kernels S, the block gets exactly S shorter in each pass.
TEST(SharedExpertOverlap, HidesTheSharedExpertBehindTheFirstExchange) {
  const Fixture f = test_support::H100Platform(16);
  RankContext rank = Ep8Context(f);
  auto& ep = rank.groups[static_cast<int>(models::Group::kEp)];
  ep.clear();
  for (int r = 0; r < 16; ++r) ep.push_back(r);
  rank.shapes[static_cast<int>(models::Group::kEp)] =
      topology::ShapeOf(ep, *f.platform.cluster);
  rank.ep = 16;
  rank.local_experts = 4;
  rank.launch_s = rank.te_module_s = rank.autograd_node_s = 0;
  rank.kernel_launch_s = rank.graph_launch_s = 0;

  auto model = models::LoadModel("moonlight-16b-a3b");
  ASSERT_TRUE(model) << model.error().message;
  models::Parallelism par;
  par.ep = 16;
  par.dp = 16;
  models::TrainingOptions tr;
  tr.seq_length = 4096;
  const models::LayerOps layer =
      models::BuildLayerOps(*model, 1, false, par, tr, false);
  for (const auto* pass : {&layer.forward, &layer.backward}) {
    const OpTemplate plain = PriceBlock(*pass, InMoe, rank);
    rank.shared_expert_overlap = true;
    const OpTemplate overlapped = PriceBlock(*pass, InMoe, rank);
    rank.shared_expert_overlap = false;
    ASSERT_EQ(plain.ops.size(), overlapped.ops.size());
    double shared = 0;
    for (const TimedOp& op : overlapped.ops) {
      if (op.name.find("shared_") != std::string::npos) {
        ASSERT_EQ(op.stream, StreamKind::kCompute) << op.name;
        shared += op.duration.seconds();
      }
    }
    ASSERT_GT(shared, 0);
    const double before = RunWithHost(plain, rank).seconds();
    const double after = RunWithHost(overlapped, rank).seconds();
    EXPECT_NEAR(before - after, shared, 1e-9)
        << (pass == &layer.forward ? "forward" : "backward");
  }
}

// A rank with 10 dense tensors (4 of them norms / router) in one bucket
// over DP 2 and 32 expert tensors in one bucket over expert DP 1, small
// shards (every multi-tensor list fits one launch), the last of 4 stages'
// worth of micro-batches: 4.
StepHostShape SmallShape() {
  StepHostShape x;
  x.dense_tensors = 10;
  x.expert_tensors = 32;
  x.replicated_tensors = 4;
  x.dense_buckets = 1;
  x.expert_buckets = 1;
  x.dense_dp = 2;
  x.expert_dp = 1;
  x.dense_shard_params = 1e6;
  x.expert_shard_params = 1e6;
  x.last_stage = true;
  x.moe = true;
  x.microbatches = 4;
  return x;
}

// Calls summed by hand from the note's section "Per-step host work"
// (views: .view, slices, .data, .detach(), which launch nothing):
// shards: dense ceil(10 / 2) + 1 bucket = 6, expert 32 (DP 1), 38 in all.
//   DDP buckets (2): 6 each (check_grads 3, scale, reduce-scatter, wait) 12
//   prepare_grads: .float() per shard tensor 38; view + slice 76 views    38
//   grad norm                                                             6
//   dense: clip 5 (+ 6 detach views), Adam 2 groups (+ 2 x 6 views),
//          param copies copy_ 6 (+ 3 x 6 views)                          13
//   expert: clip 5 (+ 32 views), Adam 1 group (+ 2 x 32 views),
//           param copies 32 (+ 3 x 32 views)                             38
//   train_step stats 3 + 4, loss reduction 4 + 4 micro-batches           15
//   before the step: 122 torch calls and 76 + 36 + 192 = 304 views;
//   kernels: the l2norm's cleanup (1).
//   after the sync: loss log 1 + MoE tracker 3, 2 buffer zero_, 2 x 2
//   bucket gathers: 10 torch calls.
TEST(StepHostCalls, SmallRankIsCountedCallsTimesTableCosts) {
  const StepHostCalls c = StepHostCallsOf(SmallShape());
  EXPECT_EQ(c.before_step.torch, 122);
  EXPECT_EQ(c.before_step.views, 304);
  EXPECT_EQ(c.before_step.kernels, 1);
  EXPECT_EQ(c.before_step.te + c.before_step.nodes, 0);
  EXPECT_EQ(c.after_sync.torch, 10);
  EXPECT_EQ(c.after_sync.views, 0);
  const HostCallCosts costs{kTorch, kTe, kNode, kKernel};
  EXPECT_NEAR(HostSeconds(c.before_step, costs),
              122 * kTorch + 304 * kNode + kKernel, 1e-12);
  EXPECT_NEAR(HostSeconds(c.after_sync, costs), 10 * kTorch, 1e-12);
}

// Per shard tensor: the grad copy's .float() and the param copy's copy_ (2
// eager ops) and 2 + 1 + 2 + 3 = 8 views (grad copy, clip, Adam, param
// copy); 16 more expert tensors at expert DP 1 add 32 and 128. The
// precision-aware optimizer drops the cast and the param copies but reads
// the master weight: no eager op and 2 + 1 + 3 = 6 views per shard tensor.
TEST(StepHostCalls, GrowWithParameterTensors) {
  StepHostShape x = SmallShape();
  const HostCalls base = StepHostCallsOf(x).before_step;
  x.expert_tensors += 16;
  EXPECT_EQ(StepHostCallsOf(x).before_step.torch, base.torch + 32);
  EXPECT_EQ(StepHostCallsOf(x).before_step.views, base.views + 128);
  x = SmallShape();
  x.precision_aware = true;
  EXPECT_EQ(StepHostCallsOf(x).before_step.torch, base.torch - 38 * 2);
  EXPECT_EQ(StepHostCallsOf(x).before_step.views, base.views - 38 * (8 - 6));
  // More ranks in the expert shard: ceil(32 / 4) + 1 = 9 tensors stepped.
  x = SmallShape();
  x.expert_dp = 4;
  EXPECT_EQ(StepHostCallsOf(x).before_step.torch, base.torch - (32 - 9) * 2);
  EXPECT_EQ(StepHostCallsOf(x).before_step.views, base.views - (32 - 9) * 8);
}

// Large shards launch TE's multi-tensor kernels again every 320 x 65,536
// elements: 1e9 expert elements over 32 tensors -> ceil(1e9 / 20,971,520) =
// 48 launches of each list; Adam (1 group) and the clip scale add 47 each,
// the l2norm (over all 38) 48.
TEST(StepHostCalls, LargeShardsRelaunchMultiTensorKernels) {
  StepHostShape x = SmallShape();
  x.expert_shard_params = 1e9;
  EXPECT_EQ(StepHostCallsOf(x).before_step.kernels, 48 + 47 + 47);
}

// In the replay the optimizer's kernels wait for the host's step work, and
// the host stream opens with the work after the previous step's sync.
TEST(StepHostCalls, ReplayPlacesStepWorkAroundTheOptimizer) {
  const scenarios::ResolvedScenario s =
      test_support::Resolve(R"(model: "qwen3-30b-a3b" system: "dgx-h100"
        num_gpus: 8 seq_length: 4096 precision: "bf16"
        layout { expert_model_parallel_size: 8 global_batch_size: 8 })");
  ReplayOptions options;
  options.trace = true;
  const StepResult r = test_support::Simulate(s, options);
  google::protobuf::Struct trace;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(r.trace, &trace).ok());
  double before_end = -1, after_ts = -1, after_dur = 0, adam_ts = -1;
  double first_gpu_ts = 1e30;
  for (const auto& v : trace.fields().at("traceEvents").list_value().values()) {
    const auto& e = v.struct_value().fields();
    if (e.at("ph").string_value() != "X") continue;
    const std::string& name = e.at("name").string_value();
    const double ts = e.at("ts").number_value();
    const double dur = e.at("dur").number_value();
    if (name == "step host: grad sync, optimizer step" && before_end < 0) {
      before_end = ts + dur;
    } else if (name == "step host: loss log, zero grad, param gather" &&
               after_ts < 0) {
      after_ts = ts;
      after_dur = dur;
    } else if (name == "optimizer adam" && adam_ts < 0) {
      adam_ts = ts;
    }
    if (const auto cat = e.find("cat");
        cat != e.end() && cat->second.string_value() == "gemm") {
      first_gpu_ts = std::min(first_gpu_ts, ts);
    }
  }
  ASSERT_GT(before_end, 0);
  ASSERT_GE(after_ts, 0);
  EXPECT_EQ(after_ts, 0);
  EXPECT_GT(after_dur, 0);
  EXPECT_GE(first_gpu_ts, after_ts + after_dur - 1e-6);
  EXPECT_GE(adam_ts, before_end - 1e-6);
}

// Ops are priced and their host calls counted by role (models::OpRole),
// never by name: renaming every op of a layer changes nothing but the
// names. Layers cover every role the builder sets: DeepSeek-V3 (MLA, MoE
// with shared experts, dense first layers, MTP), GPT-OSS (unfused RoPE,
// the experts' clamp and output bias), Qwen3-Next (Gated DeltaNet, gated
// attention with QK-norm), embedding and output heads, under FP8
// blockwise so every GEMM input has its quantize.
TEST(HostCalls, RenamingOpsChangesNoPriceNorCall) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Ep8Context(f);
  rank.training_dtype = calibration::Dtype::kFp8;
  rank.expert_load = 1.25;  // so the routed-expert byte rule shows
  models::Parallelism par;
  par.ep = 8;
  par.dp = 8;
  models::TrainingOptions tr;
  tr.seq_length = 4096;
  tr.precision = models::Precision::kFp8Blockwise;
  std::vector<std::vector<models::LayerOp>> lists;
  auto add = [&](const models::LayerOps& ops) {
    lists.push_back(ops.forward);
    std::vector<models::LayerOp> backward = ops.recompute;
    backward.insert(backward.end(), ops.backward.begin(), ops.backward.end());
    lists.push_back(backward);
  };
  for (const char* name :
       {"deepseek-v3", "gpt-oss-20b", "qwen3-next-80b-a3b"}) {
    auto model = models::LoadModel(name);
    ASSERT_TRUE(model) << model.error().message;
    tr.recompute = {.core_attn = true, .mla_up_proj = true, .moe_act = true};
    for (int64_t layer = 0; layer < 4; ++layer) {
      add(models::BuildLayerOps(*model, layer, false, par, tr, false));
    }
    if (model->mtp_num_layers() > 0) {
      add(models::BuildLayerOps(*model, 0, true, par, tr, false));
    }
    add(models::BuildEmbeddingOps(*model, par, tr));
    add(models::BuildOutputOps(*model, par, tr, 1 + model->mtp_num_layers()));
  }
  int priced = 0;
  for (const std::vector<models::LayerOp>& ops : lists) {
    std::vector<models::LayerOp> renamed = ops;
    for (size_t i = 0; i < renamed.size(); ++i) {
      renamed[i].name = "op" + std::to_string(i);
    }
    auto a = PriceOps(ops, rank);
    auto b = PriceOps(renamed, rank);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->ops.size(), b->ops.size());
    for (size_t i = 0; i < a->ops.size(); ++i) {
      const TimedOp &x = a->ops[i], &y = b->ops[i];
      SCOPED_TRACE(x.name);
      EXPECT_EQ(x.duration, y.duration);
      EXPECT_EQ(x.calls, y.calls);
      EXPECT_EQ(x.host_s, y.host_s);
      EXPECT_EQ(x.wgrad, y.wgrad);
      EXPECT_EQ(x.host_sync, y.host_sync);
      EXPECT_EQ(x.stream, y.stream);
      EXPECT_EQ(x.deps, y.deps);
      ++priced;
    }
  }
  // About 900 priced ops: a guard that the comparison ran, not a figure.
  EXPECT_GT(priced, 500);
}

}  // namespace
}  // namespace moesim::sim
