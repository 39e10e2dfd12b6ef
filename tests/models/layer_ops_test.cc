// The per-layer op graph: op order and shapes per architecture, the
// backward and recompute lists, collectives per layout, and FLOPs summed over
// every op of the model against Megatron-Bridge's count (models/flops.h).
#include "models/layer_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "models/architecture.h"
#include "models/flops.h"
#include "models/params.h"
#include "models/zoo.h"

namespace moesim::models {
namespace {

Model Load(const char* name) {
  auto model = LoadModel(name);
  EXPECT_TRUE(model) << name << ": " << model.error().message;
  return model ? *model : Model{};
}

Parallelism Layout(int tp, bool sp, int cp = 1, int ep = 1, int etp = 1) {
  Parallelism p;
  p.tp = tp;
  p.sequence_parallel = sp;
  p.cp = cp;
  p.ep = ep;
  p.etp = etp;
  return p;
}

TrainingOptions Training(int64_t seq = 4096, int64_t mbs = 1) {
  TrainingOptions t;
  t.seq_length = seq;
  t.micro_batch_size = mbs;
  return t;
}

std::vector<std::string> Names(const std::vector<LayerOp>& ops) {
  std::vector<std::string> names;
  for (const LayerOp& op : ops) names.push_back(op.name);
  return names;
}

const LayerOp& Find(const std::vector<LayerOp>& ops, std::string_view name) {
  for (const LayerOp& op : ops) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  static const LayerOp kNone;
  return kNone;
}

int Count(const std::vector<LayerOp>& ops, OpKind kind) {
  int n = 0;
  for (const LayerOp& op : ops) n += op.kind == kind;
  return n;
}

bool IsGemmLike(const LayerOp& op) {
  return op.kind == OpKind::kGemm || op.kind == OpKind::kGroupedGemm;
}

// Every op list of the model on one GPU (one micro-batch, as if one stage
// held every layer): decoder layers, MTP layers, embedding, output heads.
std::vector<LayerOps> AllOps(const Model& m, const Parallelism& par,
                             const TrainingOptions& tr) {
  std::vector<LayerOps> all;
  for (int64_t i = 0; i < m.num_layers(); ++i)
    all.push_back(BuildLayerOps(m, i, false, par, tr, false));
  for (int64_t i = 0; i < m.mtp_num_layers(); ++i)
    all.push_back(BuildLayerOps(m, 0, true, par, tr, false));
  all.push_back(BuildEmbeddingOps(m, par, tr));
  all.push_back(BuildOutputOps(m, par, tr, 1 + m.mtp_num_layers()));
  return all;
}

// Forward plus backward FLOPs of one GPU, without the router GEMM (Bridge
// does not count it).
double OpFlops(const Model& m, const Parallelism& par,
               const TrainingOptions& tr) {
  double total = 0;
  for (const LayerOps& ops : AllOps(m, par, tr)) {
    for (const auto* list : {&ops.forward, &ops.backward}) {
      for (const LayerOp& op : *list) {
        if (op.role != OpRole::kRouter) total += op.flops;
      }
    }
  }
  return total;
}

// Bridge's FLOPs of the micro-batch share of one GPU: mbs sequences split
// over TP x CP.
double BridgeFlopsPerGpu(const Model& m, const Parallelism& par,
                         const TrainingOptions& tr) {
  return ModelFlopsPerSequence(m, tr.seq_length, par.tp) * tr.micro_batch_size /
         (double(par.tp) * par.cp);
}

TEST(LayerOps, DenseGqaLayerWithoutTp) {
  // llama3-8b, tp 1: input norm (fused into linear_qkv), qkv, rope, core
  // attention, proj, pre-MLP norm (fused into fc1), fc1, SwiGLU, fc2.
  const Model m = Load("llama3-8b");
  const LayerOps ops =
      BuildLayerOps(m, 0, false, Layout(1, false), Training(), false);
  EXPECT_EQ(
      Names(ops.forward),
      (std::vector<std::string>{"input_norm", "qkv", "rope", "core_attn",
                                "proj", "pre_mlp_norm", "fc1", "act", "fc2"}));
  EXPECT_EQ(Count(ops.forward, OpKind::kGemm), 4);
  EXPECT_EQ(Count(ops.forward, OpKind::kAttention), 1);
  EXPECT_EQ(Count(ops.forward, OpKind::kMemoryBound), 4);
  EXPECT_EQ(Count(ops.forward, OpKind::kCollective), 0);
  // QKV: n = 32 x 128 + 2 x 8 x 128 = 6144 over k = h = 4096, m = T = 4096.
  const LayerOp& qkv = Find(ops.forward, "qkv");
  EXPECT_EQ(qkv.m, 4096);
  EXPECT_EQ(qkv.n, 6144);
  EXPECT_EQ(qkv.k, 4096);
  // fc1 of SwiGLU: 2 x 14336.
  EXPECT_EQ(Find(ops.forward, "fc1").n, 2 * 14336);
  EXPECT_EQ(Find(ops.forward, "act").kernel, "swiglu_fwd");
  const AttentionWork& w = Find(ops.forward, "core_attn").attention;
  EXPECT_EQ(w.heads_q, 32);
  EXPECT_EQ(w.heads_kv, 8);
  EXPECT_EQ(w.seq_q, 4096);
  EXPECT_EQ(w.seq_kv, 4096);
  EXPECT_EQ(w.window, 0);
  EXPECT_TRUE(w.causal);
  // Backward: the reverse, each GEMM as dgrad then wgrad.
  EXPECT_EQ(Names(ops.backward),
            (std::vector<std::string>{
                "fc2.dgrad", "fc2.wgrad", "act.bwd", "fc1.dgrad", "fc1.wgrad",
                "pre_mlp_norm.bwd", "proj.dgrad", "proj.wgrad", "core_attn.bwd",
                "rope.bwd", "qkv.dgrad", "qkv.wgrad", "input_norm.bwd"}));
  EXPECT_TRUE(ops.recompute.empty());
}

TEST(LayerOps, DenseGqaLayerWithTpAndSequenceParallel) {
  // tp 2 + SP: all-gather before qkv and fc1, reduce-scatter after proj and
  // fc2, each T x h x 2 bytes = 4096 x 4096 x 2; norms on T/2 tokens.
  const Model m = Load("llama3-8b");
  const LayerOps ops =
      BuildLayerOps(m, 0, false, Layout(2, true), Training(), false);
  EXPECT_EQ(
      Names(ops.forward),
      (std::vector<std::string>{"input_norm", "qkv.ag", "qkv", "rope",
                                "core_attn", "proj", "proj.rs", "pre_mlp_norm",
                                "fc1.ag", "fc1", "act", "fc2", "fc2.rs"}));
  const double row_bytes = 4096.0 * 4096 * 2;
  for (const char* name : {"qkv.ag", "proj.rs", "fc1.ag", "fc2.rs"}) {
    const LayerOp& op = Find(ops.forward, name);
    EXPECT_EQ(op.kind, OpKind::kCollective) << name;
    EXPECT_EQ(op.group, Group::kTp) << name;
    EXPECT_DOUBLE_EQ(op.bytes, row_bytes) << name;
  }
  EXPECT_EQ(Find(ops.forward, "qkv.ag").collective, CollectiveKind::kAllGather);
  EXPECT_EQ(Find(ops.forward, "proj.rs").collective,
            CollectiveKind::kReduceScatter);
  // Backward swaps them: the all-gather's backward reduce-scatters.
  EXPECT_EQ(Find(ops.backward, "qkv.ag.bwd").collective,
            CollectiveKind::kReduceScatter);
  EXPECT_EQ(Find(ops.backward, "fc2.rs.bwd").collective,
            CollectiveKind::kAllGather);
  // rmsnorm forward reads and writes T/2 x h x 2 bytes.
  EXPECT_DOUBLE_EQ(Find(ops.forward, "input_norm").bytes,
                   2 * 2048.0 * 4096 * 2);
  // QKV per rank: 16 x 128 + 2 x 4 x 128 = 3072 on the gathered 4096 tokens.
  EXPECT_EQ(Find(ops.forward, "qkv").m, 4096);
  EXPECT_EQ(Find(ops.forward, "qkv").n, 3072);
  EXPECT_EQ(Find(ops.forward, "proj").k, 2048);
  EXPECT_EQ(Find(ops.forward, "core_attn").attention.heads_q, 16);
  EXPECT_EQ(Find(ops.forward, "core_attn").attention.heads_kv, 4);
}

TEST(LayerOps, DenseGqaLayerWithTpWithoutSequenceParallel) {
  // tp 2 without SP: all-reduce after the row-parallel layers in forward,
  // and after the column-parallel layers' dgrad in backward; no AG / RS.
  const Model m = Load("llama3-8b");
  const LayerOps ops =
      BuildLayerOps(m, 0, false, Layout(2, false), Training(), false);
  EXPECT_EQ(Names(ops.forward),
            (std::vector<std::string>{"input_norm", "qkv", "rope", "core_attn",
                                      "proj", "proj.ar", "pre_mlp_norm", "fc1",
                                      "act", "fc2", "fc2.ar"}));
  EXPECT_EQ(Names(ops.backward),
            (std::vector<std::string>{
                "fc2.dgrad", "fc2.wgrad", "act.bwd", "fc1.dgrad", "fc1.wgrad",
                "fc1.ar.bwd", "pre_mlp_norm.bwd", "proj.dgrad", "proj.wgrad",
                "core_attn.bwd", "rope.bwd", "qkv.dgrad", "qkv.wgrad",
                "qkv.ar.bwd", "input_norm.bwd"}));
  for (const auto* list : {&ops.forward, &ops.backward}) {
    for (const LayerOp& op : *list) {
      if (op.kind == OpKind::kCollective) {
        EXPECT_EQ(op.collective, CollectiveKind::kAllReduce) << op.name;
      }
    }
  }
  // Norms run on all T = 4096 tokens.
  EXPECT_DOUBLE_EQ(Find(ops.forward, "input_norm").bytes,
                   2 * 4096.0 * 4096 * 2);
}

TEST(LayerOps, DeepSeekV3MlaShapesAtTp2) {
  // DeepSeek-V3 layer 3 (MLA + MoE), tp 2 + SP, T = 4096, T/tp = 2048;
  // h 7168, 128 heads -> 64 per rank, q_lora 1536, kv_lora 512,
  // dn 128, r 64, dv 128.
  const Model m = Load("deepseek-v3");
  const LayerOps ops =
      BuildLayerOps(m, 3, false, Layout(2, true, 1, 8), Training(), false);
  EXPECT_EQ(Names(ops.forward),
            (std::vector<std::string>{
                "input_norm",  "q_down",     "kv_down",       "k_pos_emb.ag",
                "q_norm",      "q_up.ag",    "q_up",          "kv_norm",
                "kv_up.ag",    "kv_up",      "rope",          "core_attn",
                "proj",        "proj.rs",    "pre_mlp_norm",  "router",
                "router_topk", "dispatch",   "experts_fc1",   "experts_act",
                "experts_fc2", "combine",    "shared_fc1.ag", "shared_fc1",
                "shared_act",  "shared_fc2", "shared_fc2.rs"}));
  struct Shape {
    const char* name;
    int64_t m, n, k;
  };
  // Down-projections (duplicated over TP) on the 2048 SP tokens; up- and
  // output projections on the gathered 4096 with heads / 2:
  // q_up n = 64 x (128 + 64), kv_up n = 64 x (128 + 128), proj k = 64 x 128.
  const Shape shapes[] = {{"q_down", 2048, 1536, 7168},
                          {"kv_down", 2048, 512 + 64, 7168},
                          {"q_up", 4096, 64 * 192, 1536},
                          {"kv_up", 4096, 64 * 256, 512},
                          {"proj", 4096, 7168, 64 * 128}};
  for (const Shape& s : shapes) {
    const LayerOp& op = Find(ops.forward, s.name);
    EXPECT_EQ(op.kind, OpKind::kGemm) << s.name;
    EXPECT_EQ(op.m, s.m) << s.name;
    EXPECT_EQ(op.n, s.n) << s.name;
    EXPECT_EQ(op.k, s.k) << s.name;
  }
  for (const char* name :
       {"q_norm", "q_up.ag", "q_up", "kv_norm", "kv_up.ag", "kv_up", "rope"}) {
    EXPECT_EQ(Find(ops.forward, name).module, RecomputeModule::kMlaUpProj)
        << name;
  }
  // The gathered latents: T x rank x 2 bytes.
  EXPECT_DOUBLE_EQ(Find(ops.forward, "q_up.ag").bytes, 4096.0 * 1536 * 2);
  EXPECT_DOUBLE_EQ(Find(ops.forward, "kv_up.ag").bytes, 4096.0 * 512 * 2);
  const AttentionWork& w = Find(ops.forward, "core_attn").attention;
  EXPECT_EQ(w.heads_q, 64);
  EXPECT_EQ(w.heads_kv, 64);
  EXPECT_EQ(w.head_dim_qk, 192);
  EXPECT_EQ(w.head_dim_v, 128);
}

TEST(LayerOps, MoeGroupedGemmRowsBalance) {
  // DeepSeek-V3 layer 3, tp 2 + SP, ep 8: the MoE layer keeps the 2048 SP
  // tokens; each GPU receives 2048 x topk 8 = 16384 rows over 256 / 8 = 32
  // local experts: 512 rows each.
  const Model m = Load("deepseek-v3");
  {
    const LayerOps ops =
        BuildLayerOps(m, 3, false, Layout(2, true, 1, 8), Training(), false);
    const LayerOp& fc1 = Find(ops.forward, "experts_fc1");
    const LayerOp& fc2 = Find(ops.forward, "experts_fc2");
    EXPECT_EQ(fc1.kind, OpKind::kGroupedGemm);
    EXPECT_EQ(fc1.groups, 32);
    EXPECT_EQ(fc1.m, 512);
    EXPECT_EQ(fc1.groups * fc1.m, 2048 * 8);  // tokens x topk
    EXPECT_EQ(fc1.n, 2 * 2048);               // gated moe_ffn_hidden
    EXPECT_EQ(fc1.k, 7168);
    EXPECT_EQ(fc2.m, 512);
    EXPECT_EQ(fc2.n, 7168);
    EXPECT_EQ(fc2.k, 2048);
    const LayerOp& dispatch = Find(ops.forward, "dispatch");
    EXPECT_EQ(dispatch.kind, OpKind::kDispatch);
    EXPECT_FALSE(dispatch.dispatch.combine);
    EXPECT_EQ(dispatch.dispatch.tokens, 2048);
    EXPECT_EQ(dispatch.dispatch.topk, 8);
    EXPECT_EQ(dispatch.dispatch.experts, 256);
    EXPECT_TRUE(Find(ops.forward, "combine").dispatch.combine);
    // Backward of dispatch is a combine and vice versa.
    EXPECT_TRUE(Find(ops.backward, "dispatch.bwd").dispatch.combine);
    EXPECT_FALSE(Find(ops.backward, "combine.bwd").dispatch.combine);
    // Router: 16-bit GEMM over all 256 experts; top-k 3 x T x E x 4 bytes.
    EXPECT_EQ(Find(ops.forward, "router").precision, GemmPrecision::k16Bit);
    EXPECT_EQ(Find(ops.forward, "router").n, 256);
    EXPECT_DOUBLE_EQ(Find(ops.forward, "router_topk").bytes,
                     3.0 * 2048 * 256 * 4);
    // Shared experts: TP-sharded dense MLP on the gathered 4096 tokens.
    EXPECT_EQ(Find(ops.forward, "shared_fc1").m, 4096);
    EXPECT_EQ(Find(ops.forward, "shared_fc1").n, 2 * 1024);
    EXPECT_EQ(Find(ops.forward, "shared_fc2").k, 1024);
  }
  {
    // etp 2: the received rows are all-gathered over ETP (x 2 = 32768, 1024
    // per expert) with the expert FFN split in two: fc1 n = 2 x 1024, fc2
    // k = 1024; reduce-scatter after fc2.
    const LayerOps ops =
        BuildLayerOps(m, 3, false, Layout(2, true, 1, 8, 2), Training(), false);
    const LayerOp& fc1 = Find(ops.forward, "experts_fc1");
    EXPECT_EQ(fc1.groups * fc1.m, 2048 * 8 * 2);
    EXPECT_EQ(fc1.n, 2 * 1024);
    EXPECT_EQ(Find(ops.forward, "experts_fc2").k, 1024);
    const LayerOp& ag = Find(ops.forward, "experts.ag");
    EXPECT_EQ(ag.group, Group::kEtp);
    EXPECT_EQ(ag.collective, CollectiveKind::kAllGather);
    EXPECT_DOUBLE_EQ(ag.bytes, 32768.0 * 7168 * 2);
    EXPECT_EQ(Find(ops.forward, "experts.rs").collective,
              CollectiveKind::kReduceScatter);
  }
  {
    // Token drop (qwen3-30b: E 128, topk 8, ep 8, T 4096; balanced routing
    // sends 4096 x 8 / 128 = 256 rows per expert from each rank, 2048 per
    // local expert from the 8 ranks, 16 local experts). Capacity factor
    // 1.25: capacity ceil(4096 x 8 x 1.25 / 128) = 320 per source rank;
    // padded to it (--moe-pad-expert-input-to-capacity) 8 x 320 = 2560 rows
    // per local expert, else the 2048 routed rows (none over capacity).
    // Capacity factor 0.5: 128 per source rank, 1024 rows either way.
    const Model q = Load("qwen3-30b-a3b");
    struct Case {
      double factor;
      bool pad;
      int64_t rows;
    };
    for (const Case& c : {Case{1.25, true, 2560}, Case{1.25, false, 2048},
                          Case{0.5, true, 1024}, Case{0.5, false, 1024}}) {
      SCOPED_TRACE(std::to_string(c.factor) + (c.pad ? " pad" : ""));
      TrainingOptions tr = Training();
      tr.routing = Routing::kTokenDrop;
      tr.moe_expert_capacity_factor = c.factor;
      tr.moe_pad_expert_input_to_capacity = c.pad;
      const LayerOps ops =
          BuildLayerOps(q, 0, false, Layout(1, false, 1, 8), tr, false);
      const LayerOp& fc1 = Find(ops.forward, "experts_fc1");
      EXPECT_EQ(fc1.groups, 16);
      EXPECT_EQ(fc1.m, c.rows);
    }
  }
}

TEST(LayerOps, BackwardHasDgradAndWgradPerGemm) {
  struct Case {
    const char* model;
    int64_t layer;
    Parallelism par;
  };
  const Case cases[] = {{"llama3-8b", 0, Layout(2, true)},
                        {"deepseek-v3", 0, Layout(2, true, 1, 8)},
                        {"deepseek-v3", 3, Layout(2, true, 1, 8, 2)},
                        {"qwen3-next-80b-a3b", 0, Layout(2, true, 1, 8)},
                        {"qwen3-next-80b-a3b", 3, Layout(2, true, 1, 8)},
                        {"gpt-oss-20b", 0, Layout(1, false, 1, 8)}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.model) + " layer " + std::to_string(c.layer));
    const Model m = Load(c.model);
    const LayerOps ops =
        BuildLayerOps(m, c.layer, false, c.par, Training(), false);
    int gemms = 0, dgrads = 0, wgrads = 0;
    for (const LayerOp& op : ops.backward) {
      if (!IsGemmLike(op)) continue;
      (op.pass == Pass::kDgrad ? dgrads : wgrads) += 1;
    }
    for (const LayerOp& op : ops.forward) {
      if (!IsGemmLike(op)) continue;
      ++gemms;
      const LayerOp& dgrad = Find(ops.backward, op.name + ".dgrad");
      const LayerOp& wgrad = Find(ops.backward, op.name + ".wgrad");
      EXPECT_EQ(dgrad.pass, Pass::kDgrad);
      EXPECT_EQ(wgrad.pass, Pass::kWgrad);
      // dgrad: m x k x n; wgrad: n x k x m (out features x in, over tokens).
      EXPECT_EQ(dgrad.m, op.m);
      EXPECT_EQ(dgrad.n, op.k);
      EXPECT_EQ(dgrad.k, op.n);
      EXPECT_EQ(wgrad.m, op.n);
      EXPECT_EQ(wgrad.n, op.k);
      EXPECT_EQ(wgrad.k, op.m);
      EXPECT_EQ(dgrad.groups, op.groups);
      EXPECT_EQ(wgrad.groups, op.groups);
      EXPECT_DOUBLE_EQ(dgrad.flops + wgrad.flops, 2 * op.flops);
      EXPECT_LT(&dgrad, &wgrad);  // dgrad first
    }
    EXPECT_GT(gemms, 0);
    EXPECT_EQ(dgrads, gemms);
    EXPECT_EQ(wgrads, gemms);
  }
}

TEST(LayerOps, RecomputeListsTheSelectedModules) {
  // DeepSeek-V3 layer 3 (MLA + MoE with shared experts) and layer 0 (dense
  // MLP), tp 2 + SP, ep 8.
  const Model m = Load("deepseek-v3");
  auto recompute = [&](int64_t layer, auto select) {
    TrainingOptions tr = Training();
    select(tr.recompute);
    return Names(
        BuildLayerOps(m, layer, false, Layout(2, true, 1, 8), tr, false)
            .recompute);
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(recompute(3, [](Recompute&) {}), V{});
  // The separate TENorm modules only: MLA input norm and MoE pre-MLP norm.
  EXPECT_EQ(recompute(3, [](Recompute& r) { r.layernorm = true; }),
            (V{"input_norm", "pre_mlp_norm"}));
  EXPECT_EQ(recompute(3, [](Recompute& r) { r.moe_act = true; }),
            V{"experts_act"});
  EXPECT_EQ(recompute(3, [](Recompute& r) { r.core_attn = true; }),
            V{"core_attn"});
  EXPECT_EQ(
      recompute(3, [](Recompute& r) { r.mla_up_proj = true; }),
      (V{"q_norm", "q_up.ag", "q_up", "kv_norm", "kv_up.ag", "kv_up", "rope"}));
  EXPECT_EQ(recompute(3, [](Recompute& r) { r.shared_experts = true; }),
            (V{"shared_fc1.ag", "shared_fc1", "shared_act", "shared_fc2",
               "shared_fc2.rs"}));
  // `moe`: the whole MoE layer, dispatch and combine, activation and shared
  // experts included; not the pre-MLP norm (outside MoELayer).
  EXPECT_EQ(recompute(3, [](Recompute& r) { r.moe = true; }),
            (V{"router", "router_topk", "dispatch", "experts_fc1",
               "experts_act", "experts_fc2", "combine", "shared_fc1.ag",
               "shared_fc1", "shared_act", "shared_fc2", "shared_fc2.rs"}));
  // `mlp` on a dense layer: the norm fused into fc1, the TP collectives.
  EXPECT_EQ(recompute(0, [](Recompute& r) { r.mlp = true; }),
            (V{"pre_mlp_norm", "fc1.ag", "fc1", "act", "fc2", "fc2.rs"}));
  // `layernorm` on a dense layer: only the MLA input norm (the MLP's is
  // fused into fc1).
  EXPECT_EQ(recompute(0, [](Recompute& r) { r.layernorm = true; }),
            V{"input_norm"});
}

TEST(LayerOps, FullRecomputeReplaysEveryForwardOp) {
  for (const char* name : {"llama3-8b", "deepseek-v3", "qwen3-next-80b-a3b"}) {
    SCOPED_TRACE(name);
    const Model m = Load(name);
    TrainingOptions tr = Training();
    tr.precision = Precision::kFp8Blockwise;
    for (int64_t layer : {int64_t{0}, m.num_layers() - 1}) {
      const LayerOps ops =
          BuildLayerOps(m, layer, false, Layout(2, true, 1, 1), tr, true);
      EXPECT_EQ(Names(ops.recompute), Names(ops.forward));
      for (const LayerOp& op : ops.recompute)
        EXPECT_EQ(op.pass, Pass::kForward);
    }
  }
}

TEST(LayerOps, Llama3FlopsMatchBridgeExactly) {
  // Every FLOP Bridge counts for a dense GQA model is a GEMM or the core
  // attention: the per-GPU sum over all layers, embedding and output equals
  // ModelFlopsPerSequence x mbs / (tp x cp) exactly.
  const Model m = Load("llama3-8b");
  for (const auto& [par, tr] :
       {std::pair{Layout(1, false), Training(4096, 1)},
        std::pair{Layout(2, true, 2), Training(8192, 2)},
        std::pair{Layout(4, false), Training(4096, 1)}}) {
    const double expected = BridgeFlopsPerGpu(m, par, tr);
    EXPECT_NEAR(OpFlops(m, par, tr), expected, 1e-9 * expected)
        << "tp " << par.tp << " cp " << par.cp;
  }
}

TEST(LayerOps, MoeFlopsMatchBridgeExactly) {
  // Balanced routing gives every GPU tokens x topk rows: the routed FLOPs
  // equal Bridge's topk x experts term, shared experts and sliding windows
  // (GPT-OSS, W - W(W-1)/2s) included. Router excluded (Bridge omits it).
  struct Case {
    const char* model;
    Parallelism par;
  };
  const Case cases[] = {{"mixtral-8x7b", Layout(1, false)},
                        {"mixtral-8x7b", Layout(2, true, 1, 4)},
                        {"qwen3-30b-a3b", Layout(2, true, 2, 8, 2)},
                        {"gpt-oss-20b", Layout(1, false, 1, 8)},
                        {"gpt-oss-20b", Layout(2, true, 1, 8)}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    const Model m = Load(c.model);
    const TrainingOptions tr = Training(4096, 1);
    const double expected = BridgeFlopsPerGpu(m, c.par, tr);
    EXPECT_NEAR(OpFlops(m, c.par, tr), expected, 1e-9 * expected);
  }
}

TEST(LayerOps, DeepSeekV3FlopsMatchBridgeUpToNorms) {
  // Bridge counts the MLA q/kv norms as q_lora_rank + kv_lora_rank
  // multiply-adds per token and layer (the "+1" of MlaMacs) and the MTP
  // enorm/hnorm/final norm as 3h per token and MTP layer; the op graph gives
  // norms no FLOPs. Everything else matches exactly, so the difference is
  // exactly 6 x s x [(1536 + 512) x (61 + 1) + 3 x 7168 x 1] per sequence
  // (3.4e-6 of the total for DeepSeek-V3).
  for (const char* name : {"deepseek-v3", "kimi-k2", "moonlight-16b-a3b"}) {
    SCOPED_TRACE(name);
    const Model m = Load(name);
    for (const auto& [par, tr] :
         {std::pair{Layout(1, false), Training(4096, 1)},
          std::pair{Layout(2, true, 2, 8), Training(4096, 2)}}) {
      const double norm_macs = double(m.q_lora_rank() + m.kv_lora_rank()) *
                                   (m.num_layers() + m.mtp_num_layers()) +
                               3.0 * m.hidden_size() * m.mtp_num_layers();
      const double gap = 6.0 * tr.seq_length * norm_macs * tr.micro_batch_size /
                         (double(par.tp) * par.cp);
      const double expected = BridgeFlopsPerGpu(m, par, tr) - gap;
      EXPECT_NEAR(OpFlops(m, par, tr), expected, 1e-9 * expected);
    }
  }
}

TEST(LayerOps, Qwen3NextFlopsDifferFromBridgeByTheChunkedScan) {
  // Gated DeltaNet layers (36 of 48): the op graph lists FLA's chunked
  // algorithm, 3 C dk + 2 C dv + 3 dk dv multiply-adds per token and value
  // head (C = 64, dk = dv = 128: 90112), where Bridge counts 4 dv^2 = 65536.
  // With 32 value heads the op graph has 6 x s x 36 x 32 x 24576 FLOPs more
  // per sequence (+0.75% of the model's); the rest (in/out projections, conv,
  // gated attention, MoE, shared experts, logits) matches exactly.
  const Model m = Load("qwen3-next-80b-a3b");
  int64_t gdn_layers = 0;
  for (int64_t i = 0; i < m.num_layers(); ++i)
    gdn_layers += DecoderLayer(m, i).mixer == Mixer::kGatedDeltaNet;
  ASSERT_EQ(gdn_layers, 36);
  const double c = 64, dk = m.linear_key_head_dim(),
               dv = m.linear_value_head_dim();
  const double per_head = 3 * c * dk + 2 * c * dv + 3 * dk * dv - 4 * dv * dv;
  EXPECT_EQ(per_head, 24576);
  for (const Parallelism& par : {Layout(1, false), Layout(2, true, 1, 8)}) {
    const TrainingOptions tr = Training(4096, 1);
    const double gap = 6.0 * tr.seq_length * gdn_layers *
                       m.linear_num_value_heads() * per_head / par.tp;
    const double bridge = BridgeFlopsPerGpu(m, par, tr);
    EXPECT_NEAR(OpFlops(m, par, tr), bridge + gap, 1e-9 * bridge);
    EXPECT_NEAR(gap / bridge, 0.0075, 0.0002);
  }
}

// With CP, a Gated DeltaNet layer trades the sequence split for a head
// split (Megatron-LM gated_delta_net/gdn.py a2a_cp_to_hp / a2a_hp_to_cp):
// an all-to-all over CP of the projections (q, k, v, z of 16 key and 32
// value heads of 128, b and a of the 32 value heads: 2 x 2048 + 2 x 4096 +
// 64 = 12352 per token, 16-bit) before the scan and one of the gated norm's
// output (32 x 128 per token) after it; the scan runs on the whole sequence
// (T x cp tokens) with 32 / cp value heads, the same FLOPs as without CP.
TEST(LayerOps, Qwen3NextDeltaNetUnderCpTradesSequenceForHeads) {
  const Model m = Load("qwen3-next-80b-a3b");
  const int cp = 4;
  const TrainingOptions tr = Training(16384, 1);
  const LayerOps split =
      BuildLayerOps(m, 0, false, Layout(1, false, cp), tr, false);
  const int64_t T = 16384 / cp;
  const LayerOp& in = Find(split.forward, "gdn.a2a_cp2hp");
  EXPECT_EQ(in.kind, OpKind::kCollective);
  EXPECT_EQ(in.group, Group::kCp);
  EXPECT_EQ(in.collective, CollectiveKind::kAllToAll);
  EXPECT_DOUBLE_EQ(in.bytes, double(T) * 12352 * 2);
  EXPECT_DOUBLE_EQ(Find(split.forward, "gdn.a2a_hp2cp").bytes,
                   double(T) * 32 * 128 * 2);
  Find(split.backward, "gdn.a2a_cp2hp.bwd");
  Find(split.backward, "gdn.a2a_hp2cp.bwd");
  const LayerOp& scan = Find(split.forward, "gdn.state_update");
  EXPECT_EQ(scan.groups, 32 / cp);
  EXPECT_EQ(scan.k, T * cp);
  const LayerOps whole =
      BuildLayerOps(m, 0, false, Layout(1, false), tr, false);
  EXPECT_EQ(Count(whole.forward, OpKind::kCollective), 0);
  EXPECT_DOUBLE_EQ(scan.flops * cp,
                   Find(whole.forward, "gdn.state_update").flops);
}

TEST(LayerOps, Qwen3NextDeltaNetLayersHaveNoSoftmaxAttention) {
  const Model m = Load("qwen3-next-80b-a3b");
  const Parallelism par = Layout(2, true, 1, 8);
  for (int64_t i = 0; i < m.num_layers(); ++i) {
    const LayerOps ops = BuildLayerOps(m, i, false, par, Training(), false);
    const bool gdn = DecoderLayer(m, i).mixer == Mixer::kGatedDeltaNet;
    EXPECT_EQ(Count(ops.forward, OpKind::kAttention), gdn ? 0 : 1) << i;
    EXPECT_EQ(Count(ops.backward, OpKind::kAttention), gdn ? 0 : 1) << i;
  }
  // Layer 0 (DeltaNet): the scan as grouped GEMMs over 32 / 2 value heads.
  const LayerOps gdn = BuildLayerOps(m, 0, false, par, Training(), false);
  const LayerOp& scan = Find(gdn.forward, "gdn.state_update");
  EXPECT_EQ(scan.kind, OpKind::kGroupedGemm);
  EXPECT_EQ(scan.groups, 16);
  EXPECT_EQ(scan.precision, GemmPrecision::k16Bit);
  // in_proj split: qkvz n = (2 x 16 x 128 + 2 x 32 x 128) / 2, ba n = 32.
  EXPECT_EQ(Find(gdn.forward, "in_proj_qkvz").n, 6144);
  EXPECT_EQ(Find(gdn.forward, "in_proj_ba").n, 32);
  // Layer 3 (gated softmax attention): qkv n = (16 + 16 gate) x 256 / 2 +
  // 2 x 1 x 256; the gate multiply follows the core attention.
  const LayerOps attn = BuildLayerOps(m, 3, false, par, Training(), false);
  EXPECT_EQ(Find(attn.forward, "qkv").n, 8 * 256 + 8 * 256 + 2 * 256);
  Find(attn.forward, "attn_gate");
  Find(attn.forward, "qk_norm");
}

TEST(LayerOps, GptOssSlidingLayersCarryTheWindow) {
  // window 128, window_attn_skip_freq 2: layer 0 sliding, layer 1 full.
  const Model m = Load("gpt-oss-20b");
  const Parallelism par = Layout(1, false, 1, 8);
  const AttentionWork sliding =
      Find(BuildLayerOps(m, 0, false, par, Training(), false).forward,
           "core_attn")
          .attention;
  const AttentionWork full =
      Find(BuildLayerOps(m, 1, false, par, Training(), false).forward,
           "core_attn")
          .attention;
  EXPECT_EQ(sliding.window, 128);
  EXPECT_EQ(full.window, 0);
  EXPECT_TRUE(sliding.softmax_offset);
  EXPECT_TRUE(full.softmax_offset);
  // Sliding FLOPs: context 128 - 128 x 127 / (2 x 4096) instead of 2048.
  const double per_context = 2.0 * 4096 * 64 * (64 + 64);
  EXPECT_DOUBLE_EQ(
      Find(BuildLayerOps(m, 0, false, par, Training(), false).forward,
           "core_attn")
          .flops,
      per_context * (128 - 128.0 * 127 / (2 * 4096)));
}

TEST(LayerOps, GptOssYarnRopeRunsMegatronsUnfusedPath) {
  // GPT-OSS's YaRN (factor 32, yarn_mscale unset in Bridge's GPTOSSProvider)
  // gives a concentration factor 0.1 ln 32 + 1 (Megatron-LM
  // _yarn_get_concentration_factor), and apply_rotary_pos_emb refuses TE's
  // fused RoPE for mscale != 1. gpt-oss-120b, TP1, seq 4096, MBS 1: Q and K
  // are 4096 x (64 + 8) heads x 64 bf16. The unfused path moves 12 of those
  // forward and 17 backward (derivation at AddUnfusedRope).
  const Model m = Load("gpt-oss-120b");
  EXPECT_NEAR(RotaryConcentrationFactor(m), 1 + 0.1 * std::log(32.0), 1e-12);
  const Parallelism par = Layout(1, false, 1, 8);
  const LayerOps ops = BuildLayerOps(m, 1, false, par, Training(), false);
  const double qk = 4096.0 * (64 + 8) * 64 * 2;
  const LayerOp& rope = Find(ops.forward, "rope_unfused");
  EXPECT_EQ(rope.kind, OpKind::kMemoryBound);
  EXPECT_DOUBLE_EQ(rope.bytes, 12 * qk);
  EXPECT_DOUBLE_EQ(Find(ops.backward, "rope_unfused.bwd").bytes, 17 * qk);
  const std::vector<std::string> names = Names(ops.forward);
  EXPECT_EQ(std::find(names.begin(), names.end(), "rope"), names.end());
  // DeepSeek-V3's YaRN sets mscale = mscale_all_dim = 1 (factor 1), and
  // Qwen3 has no YaRN: both keep the fused kernel's one read and write.
  EXPECT_DOUBLE_EQ(RotaryConcentrationFactor(Load("deepseek-v3")), 1);
  const Model qwen = Load("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(RotaryConcentrationFactor(qwen), 1);
  const LayerOps qwen_ops =
      BuildLayerOps(qwen, 0, false, par, Training(), false);
  EXPECT_DOUBLE_EQ(Find(qwen_ops.forward, "rope").bytes,
                   2 * 4096.0 * (32 + 4) * 128 * 2);
}

TEST(LayerOps, GptOssExpertsRunTheEagerClampAndBiasPasses) {
  // gpt-oss-120b layer 0, TP1, EP8, seq 4096, MBS 1: each GPU's experts see
  // 4096 tokens x top-4 = 16384 rows; fc1 output 16384 x 2 x 2880 bf16.
  // Megatron-Core's weighted_bias_quick_geglu_impl clamps both halves and
  // cats them (fused_bias_geglu.py): forward 4 x, backward 5 x that tensor.
  // _apply_bias (experts.py TEGroupedMLP) adds bias x fp32 probability per
  // expert on the 16384 x 2880 fc2 output: 28 and 40 bytes per element
  // (derivation at AddExpertOutputBias in models/layer_ops.cc).
  const Model m = Load("gpt-oss-120b");
  const Parallelism par = Layout(1, false, 1, 8);
  const double fc1_out = 16384.0 * 2 * 2880 * 2;
  const double fc2_out = 16384.0 * 2880;
  TrainingOptions tr = Training();
  tr.recompute.moe_act = true;
  const LayerOps ops = BuildLayerOps(m, 0, false, par, tr, false);
  const LayerOp& clamp = Find(ops.forward, "experts_act_clamp");
  EXPECT_EQ(clamp.kind, OpKind::kMemoryBound);
  EXPECT_EQ(clamp.kernel, "copy");
  EXPECT_DOUBLE_EQ(clamp.bytes, 4 * fc1_out);
  EXPECT_DOUBLE_EQ(Find(ops.backward, "experts_act_clamp.bwd").bytes,
                   5 * fc1_out);
  const LayerOp& bias = Find(ops.forward, "experts_fc2_bias");
  EXPECT_DOUBLE_EQ(bias.bytes, 28 * fc2_out);
  EXPECT_DOUBLE_EQ(Find(ops.backward, "experts_fc2_bias.bwd").bytes,
                   40 * fc2_out);
  // The clamps sit between fc1 and the activation, the bias after fc2.
  const std::vector<std::string> names = Names(ops.forward);
  auto at = [&](const char* n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  EXPECT_EQ(at("experts_act_clamp") + 1, at("experts_act"));
  EXPECT_EQ(at("experts_fc2") + 1, at("experts_fc2_bias"));
  // moe_act recompute (Megatron checkpoints bias_act_func) replays the
  // clamps with the activation but not _apply_bias, which follows fc2.
  const std::vector<std::string> replayed = Names(ops.recompute);
  EXPECT_NE(std::find(replayed.begin(), replayed.end(), "experts_act_clamp"),
            replayed.end());
  EXPECT_EQ(std::find(replayed.begin(), replayed.end(), "experts_fc2_bias"),
            replayed.end());
  // The torch.tensor(linear_offset) after the clamps is a blocking copy
  // (fused_bias_geglu.py; PyTorch Copy.cu memcpy_and_sync): the clamp op
  // carries the host sync, in the forward and in its moe_act recompute;
  // its backward, the activation and the bias do not.
  EXPECT_TRUE(clamp.host_sync);
  EXPECT_TRUE(std::find_if(ops.recompute.begin(), ops.recompute.end(),
                           [](const LayerOp& op) {
                             return op.name == "experts_act_clamp" &&
                                    op.host_sync;
                           }) != ops.recompute.end());
  EXPECT_FALSE(Find(ops.backward, "experts_act_clamp.bwd").host_sync);
  EXPECT_FALSE(Find(ops.forward, "experts_act").host_sync);
  EXPECT_FALSE(bias.host_sync);
  // Qwen3-30B (SwiGLU, no biases) runs neither.
  const LayerOps qwen_ops =
      BuildLayerOps(Load("qwen3-30b-a3b"), 0, false, par, Training(), false);
  for (const LayerOp& op : qwen_ops.forward) EXPECT_FALSE(op.host_sync);
  const std::vector<std::string> qwen = Names(qwen_ops.forward);
  EXPECT_EQ(std::find(qwen.begin(), qwen.end(), "experts_act_clamp"),
            qwen.end());
  EXPECT_EQ(std::find(qwen.begin(), qwen.end(), "experts_fc2_bias"),
            qwen.end());
}

TEST(LayerOps, NoTpCollectivesAtTp1) {
  // tp 1: nothing over TP, in any layer kind, embedding or output; MoE
  // layers talk over EP through kDispatch ops only.
  for (const std::string& name : ZooNames()) {
    SCOPED_TRACE(name);
    const Model m = Load(name.c_str());
    const int ep = m.num_moe_experts() > 0 ? 8 : 1;
    for (const LayerOps& ops : AllOps(m, Layout(1, false, 1, ep), Training())) {
      EXPECT_EQ(Count(ops.forward, OpKind::kCollective), 0);
      EXPECT_EQ(Count(ops.backward, OpKind::kCollective), 0);
    }
  }
}

TEST(LayerOps, ParamsPerGpu) {
  // llama3-8b layer at tp 2: attention 4096 x (4096 + 2048) + 4096 x 4096
  // and MLP 3 x 4096 x 14336 are TP-sharded, two norms (2 x 4096)
  // replicated: (41943040 + 176160768) / 2 + 8192.
  const Model llama = Load("llama3-8b");
  const LayerOps dense =
      BuildLayerOps(llama, 0, false, Layout(2, true), Training(), false);
  EXPECT_EQ(dense.dense_params, 109060096);
  EXPECT_EQ(dense.expert_params, 0);
  // DeepSeek-V3 MoE layer, ep 8, etp 2: 256 experts x 3 x 7168 x 2048 over
  // 16 GPUs.
  const Model ds = Load("deepseek-v3");
  const LayerOps moe =
      BuildLayerOps(ds, 3, false, Layout(2, true, 1, 8, 2), Training(), false);
  EXPECT_EQ(moe.expert_params, int64_t{256} * 3 * 7168 * 2048 / 16);
  const ParamGroups p = DecoderLayerParams(ds, 3);
  EXPECT_EQ(moe.dense_params, p.tp / 2 + p.replicated);
  const LayerOps mtp =
      BuildLayerOps(ds, 0, true, Layout(2, true, 1, 8, 2), Training(), false);
  const ParamGroups q = MtpLayerParams(ds);
  EXPECT_EQ(mtp.dense_params, q.tp / 2 + q.replicated);
  EXPECT_EQ(mtp.expert_params, q.experts / 16);
}

TEST(LayerOps, EmbeddingAndOutput) {
  // DeepSeek-V3, tp 2 + SP, T = 4096: vocab padded to 130560, 65280 per rank.
  const Model m = Load("deepseek-v3");
  const Parallelism par = Layout(2, true);
  const LayerOps emb = BuildEmbeddingOps(m, par, Training());
  EXPECT_EQ(Names(emb.forward),
            (std::vector<std::string>{"embedding", "embedding.rs"}));
  EXPECT_EQ(Names(emb.backward),
            (std::vector<std::string>{"embedding.rs.bwd", "embedding.bwd"}));
  EXPECT_DOUBLE_EQ(Find(emb.forward, "embedding.rs").bytes, 4096.0 * 7168 * 2);
  EXPECT_EQ(emb.dense_params, int64_t{65280} * 7168);

  const LayerOps out = BuildOutputOps(m, par, Training(), 2);
  EXPECT_EQ(Names(out.forward),
            (std::vector<std::string>{
                "final_norm", "output.ag", "output", "cross_entropy",
                "cross_entropy.ar", "mtp1.final_norm", "mtp1.output.ag",
                "mtp1.output", "mtp1.cross_entropy", "mtp1.cross_entropy.ar"}));
  const LayerOp& logits = Find(out.forward, "output");
  EXPECT_EQ(logits.m, 4096);
  EXPECT_EQ(logits.n, 65280);
  EXPECT_EQ(logits.k, 7168);
  EXPECT_EQ(logits.precision, GemmPrecision::k16Bit);
  EXPECT_DOUBLE_EQ(Find(out.forward, "cross_entropy").bytes,
                   4096.0 * 65280 * 4 * 2);
  EXPECT_DOUBLE_EQ(Find(out.forward, "cross_entropy.ar").bytes, 4096.0 * 12);
  // Untied: its own output weight plus the final norm.
  EXPECT_EQ(out.dense_params, int64_t{65280} * 7168 + 7168);
  // Backward: no all-reduce for the loss statistics.
  for (const LayerOp& op : out.backward) {
    EXPECT_FALSE(op.kind == OpKind::kCollective &&
                 op.collective == CollectiveKind::kAllReduce)
        << op.name;
  }
}

TEST(LayerOps, MtpLayerInput) {
  // DeepSeek-V3 MTP layer, tp 2 + SP: shifted embedding, enorm, hnorm,
  // eh_proj (2h -> h/2 per rank on the 4096 gathered tokens), output gather,
  // then an MLA + MoE layer (the kind of the last decoder layer).
  const Model m = Load("deepseek-v3");
  const LayerOps ops =
      BuildLayerOps(m, 0, true, Layout(2, true, 1, 8), Training(), false);
  const std::vector<std::string> names = Names(ops.forward);
  const std::vector<std::string> head(names.begin(), names.begin() + 8);
  EXPECT_EQ(head, (std::vector<std::string>{
                      "mtp.embedding", "mtp.embedding.rs", "mtp.enorm",
                      "mtp.hnorm", "mtp.eh_proj.ag", "mtp.eh_proj",
                      "mtp.eh_proj.gather", "input_norm"}));
  const LayerOp& eh = Find(ops.forward, "mtp.eh_proj");
  EXPECT_EQ(eh.m, 4096);
  EXPECT_EQ(eh.n, 3584);
  EXPECT_EQ(eh.k, 2 * 7168);
  EXPECT_DOUBLE_EQ(Find(ops.forward, "mtp.eh_proj.ag").bytes,
                   4096.0 * 2 * 7168 * 2);
  Find(ops.forward, "experts_fc1");
}

TEST(LayerOps, LowPrecisionQuantizesEachGemmInput) {
  // FP8: one fp8_quantize of the m x k input before every
  // training-precision GEMM, one per output gradient in backward;
  // none for the 16-bit router. MLA's kv_down shares q_down's input.
  const Model m = Load("deepseek-v3");
  TrainingOptions tr = Training();
  tr.precision = Precision::kFp8Blockwise;
  const LayerOps ops =
      BuildLayerOps(m, 3, false, Layout(2, true, 1, 8), tr, false);
  int training_gemms = 0, quantizes = 0, grad_quantizes = 0;
  for (const LayerOp& op : ops.forward) {
    if (IsGemmLike(op) && op.precision == GemmPrecision::kTraining)
      ++training_gemms;
    quantizes += op.kernel == "fp8_quantize";
  }
  for (const LayerOp& op : ops.backward)
    grad_quantizes += op.kernel == "fp8_quantize";
  // q_down, kv_down, q_up, kv_up, proj, experts fc1/fc2, shared fc1/fc2.
  EXPECT_EQ(training_gemms, 9);
  EXPECT_EQ(quantizes, 8);
  EXPECT_EQ(grad_quantizes, 9);
  // Routed fc1 input: 16384 rows x 7168, blockwise FP8: read 2 bytes, write
  // rowwise and columnwise FP8 copies (2) and an fp32 scale per 128 of each
  // (2 x 4/128).
  EXPECT_DOUBLE_EQ(Find(ops.forward, "experts_fc1.quantize").bytes,
                   (4 + 2 * 4.0 / 128) * 16384 * 7168);
  // Per-tensor current scaling reads the tensor once more for its amax.
  tr.precision = Precision::kFp8CurrentScaling;
  const LayerOps cs =
      BuildLayerOps(m, 3, false, Layout(2, true, 1, 8), tr, false);
  EXPECT_DOUBLE_EQ(Find(cs.forward, "experts_fc1.quantize").bytes,
                   6.0 * 16384 * 7168);
  // NVFP4 quantizes with its own kernel: two 4-bit copies and an E4M3
  // scale per 16 (read 2 + 2 x 0.5 + 2/16 bytes per element).
  tr.precision = Precision::kNvfp4;
  const LayerOps fp4 =
      BuildLayerOps(m, 3, false, Layout(2, true, 1, 8), tr, false);
  const LayerOp& q = Find(fp4.forward, "experts_fc1.quantize");
  EXPECT_EQ(q.kernel, "fp4_quantize");
  EXPECT_DOUBLE_EQ(q.bytes, (3 + 2.0 / 16) * 16384 * 7168);
  for (const LayerOp& op : fp4.forward) EXPECT_NE(op.kernel, "fp8_quantize");
  // BF16: no quantize at all.
  const LayerOps bf16 =
      BuildLayerOps(m, 3, false, Layout(2, true, 1, 8), Training(), false);
  for (const LayerOp& op : bf16.forward) {
    EXPECT_NE(op.kernel, "fp8_quantize");
    EXPECT_NE(op.kernel, "fp4_quantize");
  }
}

// The builder gives every op a role (the host model and pricing key on
// roles, sim/host_calls.cc): no op of any zoo model leaves it kOther, under
// TP2 with SP (collectives), EP, MTP, FP8 (quantizes) and every selective
// recompute module. A routed-expert role is on exactly the ops named
// experts_* (the names the builder gives them).
TEST(LayerOps, EveryBuiltOpHasARole) {
  TrainingOptions tr = Training();
  tr.precision = Precision::kFp8Blockwise;
  tr.recompute = {.core_attn = true,
                  .mla_up_proj = true,
                  .layernorm = true,
                  .moe_act = true,
                  .mlp = true,
                  .moe = true,
                  .shared_experts = true};
  int ops_seen = 0;
  for (const std::string& name : ZooNames()) {
    const Model m = Load(name.c_str());
    const int ep = m.num_moe_experts() > 0 ? 8 : 1;
    for (const LayerOps& ops : AllOps(m, Layout(2, true, 1, ep), tr)) {
      for (const auto* list : {&ops.forward, &ops.recompute, &ops.backward}) {
        for (const LayerOp& op : *list) {
          EXPECT_NE(op.role, OpRole::kOther) << name << " " << op.name;
          EXPECT_EQ(IsRoutedExpert(op.role), op.name.starts_with("experts_"))
              << name << " " << op.name;
          ++ops_seen;
        }
      }
    }
  }
  EXPECT_GT(ops_seen, 10000);
}

}  // namespace
}  // namespace moesim::models
