// Per-GPU memory against measurements:
//  - every run in calibration/runs/runs.csv with a measured peak (allocated
//    memory, as torch.cuda.max_memory_allocated reports it) within 15%;
//  - the DeepSeek-V3 figures of the optimization-workflow skill card
//    (../shared/reference/seeds_notes.md section 2): 199.5 GB/GPU without
//    optimization at PP4 VPP4 EP64 on 256 GPUs, and the savings of selective
//    recompute (mla_up_proj 30.4 GB, layernorm 8.2 GB, moe_act 3.8 GB).
#include "models/memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "topology/system.h"
#include "util/csv.h"

namespace moesim::models {
namespace {

// `key=value;...` of the runs.csv `extra` column.
std::map<std::string, std::string> ParseExtra(const std::string& extra) {
  std::map<std::string, std::string> out;
  for (const std::string& item : util::SplitList(extra, ";")) {
    const size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::string Dtype(const std::string& torch_name) {
  return torch_name == "bfloat16"  ? "bf16"
         : torch_name == "float32" ? "fp32"
                                   : torch_name;
}

// A runs.csv row as a scenario; empty columns stay unset (recipe defaults).
scenarios::Scenario ScenarioFromRow(const util::CsvTable& t, size_t r) {
  scenarios::Scenario s;
  auto get = [&](const char* c) -> const std::string& { return t.Get(r, c); };
  auto num = [&](const char* c) {
    return get(c).empty() ? 0 : std::stoi(get(c));
  };
  s.set_model(get("model"));
  s.set_system(*topology::SystemForGpu(get("gpu")));
  s.set_num_gpus(num("num_gpus"));
  s.set_seq_length(num("seq_len"));
  scenarios::Layout& l = *s.mutable_layout();
  l.set_tensor_model_parallel_size(num("tp"));
  l.set_context_parallel_size(num("cp"));
  l.set_expert_model_parallel_size(num("ep"));
  l.set_expert_tensor_parallel_size(num("etp"));
  l.set_pipeline_model_parallel_size(num("pp"));
  l.set_virtual_pipeline_model_parallel_size(num("vpp"));
  l.set_micro_batch_size(num("mbs"));
  l.set_global_batch_size(num("gbs"));
  l.set_pipeline_model_parallel_layout(get("pp_layout"));
  const std::string& rc = get("recompute");
  if (!rc.empty() && rc != "none") {
    s.mutable_recompute()->set_granularity(rc == "full" ? "full" : "selective");
    if (rc != "full") {
      for (const std::string& m : util::SplitList(rc, ";"))
        s.mutable_recompute()->add_modules(m);
    }
  }
  s.set_precision(get("precision"));
  s.set_dispatcher(get("dispatcher"));
  s.set_cuda_graph(get("cuda_graph"));
  s.set_routing(get("routing"));
  s.set_overlap_moe_expert_parallel_comm(get("ep_overlap") == "1");
  if (!get("cpu_offload").empty())
    s.set_optimizer_offload_fraction(std::stod(get("cpu_offload")));
  if (!get("mtp_layers").empty()) s.set_mtp_num_layers(num("mtp_layers"));
  auto extra = ParseExtra(get("extra"));
  if (extra.count("main_grads_dtype"))
    s.set_main_grads_dtype(Dtype(extra["main_grads_dtype"]));
  if (extra.count("exp_avg_dtype"))
    s.set_exp_avg_dtype(Dtype(extra["exp_avg_dtype"]));
  if (extra["precision_aware_optimizer"] == "True")
    s.set_use_precision_aware_optimizer(true);
  if (extra["fp8_param_gather"] == "True") s.set_fp8_param_gather(true);
  if (extra["fp8_dot_product_attention"] == "True")
    s.set_fp8_dot_product_attention(true);
  if (extra["moe_shared_expert_overlap"] == "True")
    s.set_moe_shared_expert_overlap(true);
  return s;
}

TEST(EstimateMemory, MeasuredPeaksWithinFifteenPercent) {
  auto runs =
      util::CsvTable::Load(MOESIM_SOURCE_DIR "/calibration/runs/runs.csv");
  ASSERT_TRUE(runs) << runs.error().message;
  int checked = 0;
  std::printf("%-52s %9s %9s %7s\n", "run", "measured", "moesim", "err%");
  for (size_t r = 0; r < runs->num_rows(); ++r) {
    const std::string& measured = runs->Get(r, "measured_peak_mem_gib");
    if (measured.empty()) continue;
    const std::string id = runs->Get(r, "id");
    SCOPED_TRACE(id);
    auto scenario = scenarios::Resolve(ScenarioFromRow(*runs, r), id);
    ASSERT_TRUE(scenario) << scenario.error().message;
    const MemoryEstimate m = EstimateMemory(
        scenario->model, scenario->pipeline, scenario->parallel,
        scenario->training, scenario->system.gpu().memory_gib() * kGiB);
    const double ours = m.allocated_peak_bytes / kGiB;
    const double error =
        (ours - std::stod(measured)) / std::stod(measured) * 100;
    std::printf("%-52s %9.2f %9.2f %+7.1f\n", id.c_str(), std::stod(measured),
                ours, error);
    EXPECT_LE(std::abs(error), 15.0);
    ++checked;
  }
  EXPECT_EQ(checked, 15);  // runs.csv rows with measured_peak_mem_gib
}

}  // namespace
}  // namespace moesim::models

namespace moesim::models {
namespace {

// DeepSeek-V3 at PP4 VPP4 EP64 on 256 H100s, seq 4096, MBS 1, no recompute:
// the optimization-workflow card's "199.5 GB/GPU without optimization"
// (NVIDIA/skills@7149a886d5 nemo-mbridge-perf-moe-optimization-workflow
// card.yaml; seeds_notes.md section 2), from arXiv:2603.07685 section 4.1.1
// Table 3, which summaries of the paper give as BF16 with weights and grads
// 36.4, main weights and optimizer states 32.1, activations 131.0, total
// 199.5 (the paper itself was not readable here). The card gives no layout
// string; 61 layers + MTP over 16 virtual stages as 3, 14 x 4, 2 + MTP.
scenarios::ResolvedScenario DeepSeekPaperLayout(
    std::vector<std::string> recompute, const std::string& precision = "bf16") {
  scenarios::Scenario s;
  s.set_model("deepseek-v3");
  s.set_system("dgx-h100");
  s.set_num_gpus(256);
  s.set_seq_length(4096);
  s.set_precision(precision);
  s.mutable_layout()->set_pipeline_model_parallel_size(4);
  s.mutable_layout()->set_virtual_pipeline_model_parallel_size(4);
  s.mutable_layout()->set_expert_model_parallel_size(64);
  s.mutable_layout()->set_pipeline_model_parallel_layout("Ettt|(tttt|)*14ttmL");
  s.mutable_layout()->set_global_batch_size(4096);
  // The card's optimizer row (32.1 GiB) is fp32 main gradients and Adam
  // moments, not the Bridge recipe's bf16 ones (models/zoo/deepseek-v3).
  s.set_main_grads_dtype("fp32");
  s.set_exp_avg_dtype("fp32");
  if (!recompute.empty()) {
    s.mutable_recompute()->set_granularity("selective");
    for (const std::string& m : recompute)
      s.mutable_recompute()->add_modules(m);
  }
  auto r = scenarios::Resolve(s, "test");
  EXPECT_TRUE(r) << r.error().message;
  return *r;
}

// gpt-oss-120b on 8 H100s, TP1 PP1 EP8, seq 4096, MBS 1: the `moe_act`
// activations per layer are the fc2 input (rows x f) and, for the clamped
// quick-GEGLU, the clamped torch.cat copy the fused activation saves
// (rows x 2f), with rows = 4096 x top-4 = 16384, f = 2880, bf16:
// 16384 x 2880 x 2 + 16384 x 5760 x 2 = 283,115,520 bytes, x 36 layers,
// one micro-batch in flight at PP1. `moe_act` recompute stores neither.
double GptOssMoeActBytes(bool recompute_moe_act) {
  scenarios::Scenario s;
  s.set_model("gpt-oss-120b");
  s.set_system("dgx-h100");
  s.set_num_gpus(8);
  s.set_seq_length(4096);
  s.mutable_layout()->set_expert_model_parallel_size(8);
  s.mutable_layout()->set_global_batch_size(8);
  if (recompute_moe_act) {
    s.mutable_recompute()->set_granularity("selective");
    s.mutable_recompute()->add_modules("moe_act");
  }
  auto r = scenarios::Resolve(s, "test");
  EXPECT_TRUE(r) << r.error().message;
  if (!r) return -1;
  const MemoryEstimate m = EstimateMemory(r->model, r->pipeline, r->parallel,
                                          r->training, 80 * kGiB);
  for (const NamedBytes& a : m.stages[0].activations) {
    if (a.name == "moe_act") return a.bytes;
  }
  return 0;
}

TEST(EstimateMemory, GptOssKeepsTheClampedActivationCopy) {
  EXPECT_DOUBLE_EQ(GptOssMoeActBytes(false), 36 * 283115520.0);
  EXPECT_DOUBLE_EQ(GptOssMoeActBytes(true), 0);
}

// FP8 attention's saved tensors (TE FusedAttnFunc.forward, models/memory.cc):
// Llama3-8B on 8 H100s, TP1 PP1, seq 4096, MBS 1 (one micro-batch in
// flight), 32 layers of 32 query heads and 8 KV groups of 128: Q, K, V are
// 4096 x (32 + 2 x 8) x 128 = 25,165,824 elements a layer, 2 bytes each in
// 16 bits, 1 as FP8 under fp8-cs and fp8-delayed; delayed scaling also
// saves O (4096 x 32 x 128 elements) as FP8. MXFP8 attention keeps the 16-bit
// figures (what it saves is not in the TE code at hand).
std::map<std::string, double> AttentionBytes(const char* system,
                                             const char* precision,
                                             bool fp8_attention) {
  scenarios::Scenario s;
  s.set_model("llama3-8b");
  s.set_system(system);
  s.set_num_gpus(8);
  s.set_seq_length(4096);
  s.set_precision(precision);
  s.set_fp8_dot_product_attention(fp8_attention);
  s.mutable_layout()->set_global_batch_size(8);
  auto r = scenarios::Resolve(s, "test");
  EXPECT_TRUE(r) << r.error().message;
  std::map<std::string, double> out;
  if (!r) return out;
  const MemoryEstimate m = EstimateMemory(r->model, r->pipeline, r->parallel,
                                          r->training, 80 * kGiB);
  for (const NamedBytes& a : m.stages[0].activations) out[a.name] = a.bytes;
  return out;
}

TEST(EstimateMemory, Fp8AttentionSavesQkvInFp8) {
  const double qkv = 32 * 4096.0 * (32 + 2 * 8) * 128;  // elements, 32 layers
  const double o = 32 * 4096.0 * 32 * 128;
  for (const char* precision : {"fp8-cs", "fp8-delayed"}) {
    SCOPED_TRACE(precision);
    auto off = AttentionBytes("dgx-h100", precision, false);
    auto on = AttentionBytes("dgx-h100", precision, true);
    EXPECT_DOUBLE_EQ(off["qkv"], 2 * qkv);
    EXPECT_DOUBLE_EQ(on["qkv"], qkv);
    EXPECT_DOUBLE_EQ(off["attention"] - on["attention"],
                     std::string(precision) == "fp8-delayed" ? o : 0.0);
  }
  auto off = AttentionBytes("dgx-b200", "mxfp8", false);
  auto on = AttentionBytes("dgx-b200", "mxfp8", true);
  EXPECT_DOUBLE_EQ(on["qkv"], off["qkv"]);
  EXPECT_DOUBLE_EQ(on["attention"], off["attention"]);
}

// The card's "GB" are GiB: Table 3's static rows match moesim's busiest rank
// (pp1: weights + grads 12.2 + 24.4 = 36.6, optimizer 32.2) in GiB, not in
// 1e9 bytes (39.3, 34.6).
double PeakGib(const scenarios::ResolvedScenario& s) {
  return EstimateMemory(s.model, s.pipeline, s.parallel, s.training, 80 * kGiB)
             .peak_bytes /
         kGiB;
}

TEST(EstimateMemory, DeepSeekV3UnoptimizedMatchesTheCard) {
  const double base = PeakGib(DeepSeekPaperLayout({}));
  // The savings of Table 4 (card: "MLA up-proj 30.4 GB, LayerNorm 8.2 GB,
  // SwiGLU 3.8 GB"). The sources here do not state their precision. The
  // paper's memory stack applies FP8 activations before fine-grained
  // recompute (Megatron-Bridge docs/training/moe-optimization.md, "Memory
  // stack, ordered by overhead"; seeds_notes.md section 4) and its H100
  // DeepSeek-V3 recipe is FP8 blockwise (section 9.2 case study; seeds_notes
  // section 2), so the savings are taken on top of fp8-block. The figures
  // agree: SwiGLU / MLA = 3.8 / 30.4 = 1/8 = (k * f_e * 1 B, the FP8 fc2
  // input) / (2 * a * (2 * (dn + r) + dv) B, the bf16 Q, K, V) = 16384 /
  // 131072, and in bf16 the ratio would be 1/4.
  const double fp8 = PeakGib(DeepSeekPaperLayout({}, "fp8-block"));
  const double mla =
      fp8 - PeakGib(DeepSeekPaperLayout({"mla_up_proj"}, "fp8-block"));
  const double norm =
      fp8 - PeakGib(DeepSeekPaperLayout({"layernorm"}, "fp8-block"));
  const double act =
      fp8 - PeakGib(DeepSeekPaperLayout({"moe_act"}, "fp8-block"));
  std::printf(
      "DeepSeek-V3 PP4 VPP4 EP64: peak %.1f GiB bf16 (card 199.5); savings "
      "on fp8-block mla_up_proj %.1f (30.4), layernorm %.1f (8.2), moe_act "
      "%.1f (3.8)\n",
      base, mla, norm, act);
  EXPECT_NEAR(base, 199.5, 0.10 * 199.5);
  // Known difference (issue 2): all of Table 3's activations and Table 4's
  // savings correspond to 60 stored layer micro-batches of 4096 tokens:
  // 30.4 GiB / 60 / 4096 = 132.8 KB per token (bf16 Q, K, V 131,072 B plus
  // the up-projections' FP8 inputs 2,048 B), layernorm 8.2 GiB -> 35.8 KB =
  // 5h (two FP8 copies of the input norm output for the q and kv
  // down-projections, the bf16 pre-MLP norm output for the router, and the
  // shared experts' FP8 copy), SwiGLU 3.8 GiB -> 16.6 KB = k * f_e * 1 B,
  // and 131.0 GiB of activations -> 572 KB, moesim's bf16 layer plus the
  // k * h * 2 B expert output that the unfused probability multiply keeps
  // (memory- efficient permutation off: 26.3 GiB / 60 / 4096 = 114.9 KB).
  // Megatron's interleaved schedule (schedules.py get_pp_rank_microbatches:
  // warmup 2(p - r - 1) + (v - 1)p, plus one forward) stores 17 chunk forwards
  // x 4 layers = 68 on the busiest rank pp1 (60 is pp2's 15 x 4, and also the
  // non-interleaved 1F1B count, p micro-batches of L/p = 15 layers, that a hand
  // estimate would use), so moesim's three savings are 68/60 of the card's
  // per-layer bytes, +10 to +12%, just outside 10%. The card's stash depth is
  // not published; these bounds guard the mechanism.
  EXPECT_NEAR(mla, 30.4, 0.15 * 30.4);
  EXPECT_NEAR(norm, 8.2, 0.15 * 8.2);
  EXPECT_NEAR(act, 3.8, 0.15 * 3.8);
}

// Transformer Engine's p2p forward (context_parallel.py,
// AttnFuncWithCPAndKVP2P) keeps every step's received K/V buffer and partial
// output until the corrections after its loop: on the seed layout (DeepSeek-
// V3 128K, CP32, 4096 tokens a rank, 128 heads of 192 + 128) that is
// 32 x (4096 x 128 x 320 x 2 B of K/V + 4096 x 128 x (128 x 2 + 4) B of output
// and fp32 statistics) = 15.1 GB a layer's forward. a2a+p2p 8 x 4 holds 4
// steps of 8 x 4096 tokens with 16 heads: the same per step, a quarter in
// all, below the layer's own backward working set.
TEST(MemoryTest, CpRingForwardHoldsEveryStepsKvAndOutput) {
  auto spec = scenarios::LoadScenario(std::string(MOESIM_SOURCE_DIR) +
                                      "/scenarios/default.textproto");
  ASSERT_TRUE(spec) << spec.error().message;
  auto transient = [&](const char* type, std::vector<int> sizes) {
    scenarios::Scenario s = *spec;
    s.set_cp_comm_type(type);
    s.clear_hierarchical_context_parallel_sizes();
    for (int size : sizes) s.add_hierarchical_context_parallel_sizes(size);
    auto r = scenarios::Resolve(s, "test");
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return 0.0;
    const MemoryEstimate m = EstimateMemory(r->model, r->pipeline, r->parallel,
                                            r->training, 80 * kGiB);
    double most = 0;
    for (const auto& st : m.stages) most = std::max(most, st.transient_bytes);
    return most;
  };
  const double per_step = 4096.0 * 128 * 320 * 2 + 4096.0 * 128 * (128 * 2 + 4);
  EXPECT_DOUBLE_EQ(transient("p2p", {}), 32 * per_step);
  const double hierarchical = transient("a2a+p2p", {8, 4});
  EXPECT_GE(hierarchical, 4 * per_step);
  EXPECT_LT(hierarchical, 32 * per_step / 4);
}

}  // namespace
}  // namespace moesim::models
