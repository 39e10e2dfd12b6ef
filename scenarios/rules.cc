#include "scenarios/rules.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <tuple>
#include <utility>

#include "models/architecture.h"
#include "models/dispatchers.h"
#include "models/flops.h"
#include "models/pipeline.h"
#include "models/pipeline_schedules.h"
#include "models/zoo.h"
#include "util/textproto.h"

namespace moesim::scenarios::internal {
namespace {

using util::Result;

// Scenario field paths, as errors name them.
constexpr std::string_view kTp = "layout.tensor_model_parallel_size";
constexpr std::string_view kCp = "layout.context_parallel_size";
constexpr std::string_view kEp = "layout.expert_model_parallel_size";
constexpr std::string_view kEtp = "layout.expert_tensor_parallel_size";
constexpr std::string_view kPp = "layout.pipeline_model_parallel_size";
constexpr std::string_view kVpp = "layout.virtual_pipeline_model_parallel_size";
constexpr std::string_view kGbs = "layout.global_batch_size";
constexpr std::string_view kModules = "recompute.modules";
constexpr std::string_view kGranularity = "recompute.granularity";

// Command-line flag per field path; fields only --megatron-args sets are
// named by their Megatron argument (the fallback in FlagName).
constexpr std::pair<std::string_view, std::string_view> kFlagNames[] = {
    {"model", "--model"},
    {"system", "--system"},
    {"num_gpus", "--gpus"},
    {"seq_length", "--seq"},
    {"num_layers", "--num-layers"},
    {"layout.tensor_model_parallel_size", "--tp"},
    {"layout.context_parallel_size", "--cp"},
    {"layout.expert_model_parallel_size", "--ep"},
    {"layout.expert_tensor_parallel_size", "--etp"},
    {"layout.pipeline_model_parallel_size", "--pp"},
    {"layout.virtual_pipeline_model_parallel_size", "--vpp"},
    {"layout.pipeline_model_parallel_layout", "--pp-layout"},
    {"layout.micro_batch_size", "--mbs"},
    {"layout.global_batch_size", "--gbs"},
    {"recompute.granularity", "--recompute"},
    {"recompute.modules", "--recompute"},
    {"recompute.method", "--recompute"},
    {"recompute.num_layers", "--recompute"},
    {"precision", "--precision"},
    {"dispatcher", "--dispatcher"},
    {"pipeline_schedule", "--pipeline-schedule"},
    {"cuda_graph", "--cuda-graph"},
    {"optimizer_offload_fraction", "--cpu-offload"},
    {"overlap_moe_expert_parallel_comm", "--ep-overlap"},
    {"routing", "--routing"},
    {"moe_routing_skew", "--routing-skew"},
    {"moe_routing_histogram", "--routing-histogram"},
    {"overlap_cpu_optimizer_d2h_h2d", "--offload-overlap"},
    {"manual_gc", "--manual-gc"},
    {"batch_p2p_sync", "--batch-p2p-sync"},
    {"cp_comm_type", "--cp-comm-type"},
    {"hierarchical_context_parallel_sizes", "--hierarchical-cp-sizes"},
    // Architecture fields come from Megatron's flags of another name.
    {"architecture.num_moe_experts", "--num-experts"},
    {"architecture.activation", "--swiglu"},
    {"architecture.add_bias_linear", "--disable-bias-linear"},
    {"architecture.learnable_softmax_offset", "--softmax-type"},
    {"architecture.yarn_rotary_scaling_factor", "--rotary-scaling-factor"},
    {"architecture.yarn_mscale", "--mscale"},
    {"architecture.yarn_mscale_all_dim", "--mscale-all-dim"},
};

std::string Num(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

// GPU generation: the system file's gpu.architecture (LoadSystem accepts
// only these two).
enum class Arch { kUnknown, kHopper, kBlackwell };

Arch ArchOf(const topology::System& system) {
  const std::string& arch = system.gpu().architecture();
  if (arch == "hopper") return Arch::kHopper;
  if (arch == "blackwell") return Arch::kBlackwell;
  return Arch::kUnknown;
}

bool IsMoe(const models::Model& m) { return m.num_moe_experts() > 0; }

// Decoder layers with a dense MLP: all of a dense model, the 0 entries of
// moe_layer_freq for an MoE model (an empty pattern means every layer is MoE).
int64_t NumDenseLayers(const models::Model& m) {
  if (!IsMoe(m)) return m.num_layers();
  int64_t dense = 0;
  for (int i = 0; i < m.moe_layer_freq_size() && i < m.num_layers(); ++i) {
    if (m.moe_layer_freq(i) == 0) ++dense;
  }
  return dense;
}

std::string ModelName(const models::Model& m) {
  return m.name().empty() ? std::string("the model") : m.name();
}

std::string SizesProduct(
    std::initializer_list<std::pair<std::string_view, int>> sizes) {
  std::string names, values;
  int64_t product = 1;
  for (auto [name, value] : sizes) {
    if (!names.empty()) {
      names += "*";
      values += "*";
    }
    names += name;
    values += std::to_string(value);
    product *= value;
  }
  return names + " = " + values + " = " + std::to_string(product);
}

// ---- Rules -----------------------------------------------------------------

Result<void> CheckMeshes(const ResolvedScenario& r, const FieldNamer& at) {
  const Layout& l = r.spec.layout();
  const int gpus = r.spec.num_gpus();
  const int attention = l.tensor_model_parallel_size() *
                        l.context_parallel_size() *
                        l.pipeline_model_parallel_size();
  if (gpus % attention != 0) {
    return std::unexpected(at.Error(
        "num_gpus",
        std::to_string(gpus) + " GPUs are not divisible by " +
            SizesProduct(
                {{"tensor_model_parallel_size", l.tensor_model_parallel_size()},
                 {"context_parallel_size", l.context_parallel_size()},
                 {"pipeline_model_parallel_size",
                  l.pipeline_model_parallel_size()}}) +
            " (attention mesh TPxCPxDPxPP)"));
  }
  const int moe = l.expert_tensor_parallel_size() *
                  l.expert_model_parallel_size() *
                  l.pipeline_model_parallel_size();
  if (gpus % moe != 0) {
    return std::unexpected(at.Error(
        "num_gpus", std::to_string(gpus) + " GPUs are not divisible by " +
                        SizesProduct({{"expert_tensor_parallel_size",
                                       l.expert_tensor_parallel_size()},
                                      {"expert_model_parallel_size",
                                       l.expert_model_parallel_size()},
                                      {"pipeline_model_parallel_size",
                                       l.pipeline_model_parallel_size()}}) +
                        " (MoE mesh ETPxEPxEDPxPP)"));
  }
  return {};
}

Result<void> CheckModelSplit(const ResolvedScenario& r, const FieldNamer& at) {
  const models::Model& m = r.model;
  const int tp = r.parallel.tp, ep = r.parallel.ep, etp = r.parallel.etp;
  const std::string tp_text =
      "tensor_model_parallel_size " + std::to_string(tp);
  auto divides = [&](int64_t value, std::string_view what) -> Result<void> {
    if (value > 0 && value % tp != 0) {
      return std::unexpected(
          at.Error(kTp, std::string(what) + " " + std::to_string(value) +
                            " is not divisible by " + tp_text));
    }
    return {};
  };
  if (auto ok = divides(m.num_attention_heads(), "num_attention_heads"); !ok)
    return ok;
  if (auto ok = divides(m.num_query_groups(), "num_query_groups"); !ok)
    return ok;
  if (auto ok = divides(m.linear_num_key_heads(), "linear_num_key_heads"); !ok)
    return ok;
  if (auto ok = divides(m.linear_num_value_heads(), "linear_num_value_heads");
      !ok)
    return ok;
  if (NumDenseLayers(m) > 0) {
    if (auto ok = divides(m.ffn_hidden_size(), "ffn_hidden_size"); !ok)
      return ok;
  }
  if (auto ok = divides(m.moe_shared_expert_intermediate_size(),
                        "moe_shared_expert_intermediate_size");
      !ok) {
    return ok;
  }
  if (!IsMoe(m)) {
    if (ep > 1) {
      return std::unexpected(at.Error(
          kEp, "expert_model_parallel_size " + std::to_string(ep) +
                   " needs an MoE model; " + ModelName(m) + " is dense"));
    }
    if (etp > 1) {
      return std::unexpected(at.Error(
          kEtp, "expert_tensor_parallel_size " + std::to_string(etp) +
                    " needs an MoE model; " + ModelName(m) + " is dense"));
    }
    return {};
  }
  if (m.num_moe_experts() % ep != 0) {
    return std::unexpected(
        at.Error(kEp, "num_moe_experts " + std::to_string(m.num_moe_experts()) +
                          " is not divisible by expert_model_parallel_size " +
                          std::to_string(ep)));
  }
  if (m.moe_ffn_hidden_size() % etp != 0) {
    return std::unexpected(at.Error(
        kEtp, "moe_ffn_hidden_size " + std::to_string(m.moe_ffn_hidden_size()) +
                  " is not divisible by expert_tensor_parallel_size " +
                  std::to_string(etp)));
  }
  return {};
}

Result<void> CheckSequenceAndBatch(const ResolvedScenario& r,
                                   const FieldNamer& at) {
  const models::Parallelism& p = r.parallel;
  const int64_t seq = r.training.seq_length;
  if (p.cp > 1 && seq % (2 * p.cp) != 0) {
    return std::unexpected(
        at.Error(kCp, "seq_length " + std::to_string(seq) +
                          " is not divisible by 2*context_parallel_size = " +
                          std::to_string(2 * p.cp)));
  }
  if (p.sequence_parallel && (seq / p.cp) % p.tp != 0) {
    return std::unexpected(at.Error(
        kTp, "with sequence parallel, seq_length/context_parallel_size = " +
                 std::to_string(seq / p.cp) +
                 " is not divisible by tensor_model_parallel_size " +
                 std::to_string(p.tp)));
  }
  const int64_t mbs = r.training.micro_batch_size,
                gbs = r.training.global_batch_size;
  if (gbs % (mbs * p.dp) != 0) {
    return std::unexpected(
        at.Error(kGbs, "global_batch_size " + std::to_string(gbs) +
                           " is not divisible by micro_batch_size*DP = " +
                           std::to_string(mbs) + "*" + std::to_string(p.dp) +
                           " = " + std::to_string(mbs * p.dp)));
  }
  if (p.vpp > 1 && p.pp == 1) {
    return std::unexpected(at.Error(
        kVpp, "virtual_pipeline_model_parallel_size " + std::to_string(p.vpp) +
                  " needs pipeline_model_parallel_size > 1"));
  }
  // Megatron-Core's interleaved schedule takes micro-batches in groups of
  // microbatch_group_size_per_vp_stage (default PP) and refuses a count of
  // fewer than one group or with a last group shorter than PP
  // (pipeline_parallel/schedules.py, forward_backward_pipelining_with_
  // interleaving: "The number of contiguous micro-batches ..." and "The
  // remainder of M ..."); with the default group size, a multiple of PP.
  const int64_t micro_batches = gbs / (mbs * p.dp);
  if (p.vpp > 1 && micro_batches % p.pp != 0) {
    return std::unexpected(at.Error(
        kGbs,
        "with an interleaved pipeline (virtual_pipeline_model_parallel_"
        "size " +
            std::to_string(p.vpp) + "), the " + std::to_string(micro_batches) +
            " micro-batches per step (global_batch_size / "
            "(micro_batch_size*DP)) must be a multiple of "
            "pipeline_model_parallel_size " +
            std::to_string(p.pp) +
            ", as Megatron-Core's interleaved schedule requires"));
  }
  // Without a layout string the decoder layers split evenly over PP x VPP
  // (the pipeline helper enforces it too; this names the knob to change).
  const int64_t layers = r.model.num_layers();
  if (r.spec.layout().pipeline_model_parallel_layout().empty() &&
      layers % (p.pp * p.vpp) != 0 &&
      models::AccountedLayout(layers, r.model.mtp_num_layers(), p.pp, p.vpp)
          .empty()) {
    return std::unexpected(at.Error(
        p.vpp > 1 ? kVpp : kPp,
        "num_layers " + std::to_string(layers) + " is not divisible by " +
            SizesProduct({{"pipeline_model_parallel_size", p.pp},
                          {"virtual_pipeline_model_parallel_size", p.vpp}}) +
            "; set pipeline_model_parallel_layout for an uneven split"));
  }
  return {};
}

// --cp-comm-type and --hierarchical-context-parallel-sizes: the rules are
// CpExchangeRule's (scenarios/scenario.h), shared with the runs loader.
Result<void> CheckCpCommType(const ResolvedScenario& r, const FieldNamer& at) {
  const std::optional<FieldRule> broken = CpExchangeRule(
      r.model, r.parallel.tp, r.parallel.cp, r.training.cp_comm_type,
      r.spec.cp_comm_type(), r.training.hierarchical_cp_sizes);
  if (!broken) return {};
  return std::unexpected(at.Error(broken->field, broken->rule));
}

// The pipeline schedule against the layout and the features its order
// cannot host. A schedule that is not interleaved runs VPP 1. One that
// splits the backward (ZB-H1) runs each backward as two steps, which
// Megatron's merged EP-overlap schedule (one forward beside one whole
// backward) and --delay-wgrad-compute (weight gradients moved inside that
// backward) do not have; and Megatron-FSDP's weights, gathered again for
// each backward and freed after it, would be gone for the weight gradients
// (the zero-bubble authors' implementation supports neither VPP nor
// overlapped gradient sharding: sail-sg/zero-bubble-pipeline-parallelism,
// WeightGradStore.is_supported).
Result<void> CheckPipelineSchedule(const ResolvedScenario& r,
                                   const FieldNamer& at) {
  const models::PipelineScheduleTraits& s =
      models::TraitsOf(r.training.pipeline_schedule);
  const std::string word(s.word);
  if (!s.interleaved && r.parallel.vpp > 1) {
    return std::unexpected(at.Error(
        "pipeline_schedule", word +
                                 " runs without interleaving; needs "
                                 "virtual_pipeline_model_parallel_size 1, "
                                 "got " +
                                 std::to_string(r.parallel.vpp)));
  }
  if (!s.splits_backward) return {};
  if (r.training.ep_overlap) {
    return std::unexpected(
        at.Error("pipeline_schedule",
                 word + " splits each backward; Megatron's EP overlap "
                        "(overlap_moe_expert_parallel_comm) runs whole ones"));
  }
  if (r.training.shard_params) {
    return std::unexpected(at.Error(
        "pipeline_schedule",
        word + " runs the weight gradients after the backward; Megatron-FSDP "
               "(optim_grads_params) frees the gathered weights after it"));
  }
  return {};
}

// Recompute modules against the architecture and the other features.
Result<void> CheckRecompute(const ResolvedScenario& r, const FieldNamer& at) {
  const models::Recompute& rc = r.training.recompute;
  const models::Model& m = r.model;
  const std::string name = ModelName(m);
  if (rc.mla_up_proj && !m.multi_latent_attention()) {
    return std::unexpected(at.Error(
        kModules,
        "mla_up_proj needs multi-latent attention; " + name + " has none"));
  }
  if (rc.moe_act && !IsMoe(m)) {
    return std::unexpected(at.Error(
        kModules, "moe_act needs an MoE model; " + name + " is dense"));
  }
  if (rc.moe && !IsMoe(m)) {
    return std::unexpected(
        at.Error(kModules, "moe needs an MoE model; " + name + " is dense"));
  }
  if (rc.shared_experts && m.moe_shared_expert_intermediate_size() <= 0) {
    return std::unexpected(at.Error(
        kModules, "shared_experts needs a model with shared experts; " + name +
                      " has none"));
  }
  if (rc.mlp && NumDenseLayers(m) == 0) {
    return std::unexpected(at.Error(
        kModules, "mlp recompute has no effect on MoE layers, and " + name +
                      " has no dense MLP layer (use moe or moe_act)"));
  }
  if (r.training.precision == models::Precision::kFp8Delayed) {
    if (rc.layernorm) {
      return std::unexpected(at.Error(
          kModules, "layernorm recompute is not supported with fp8-delayed"));
    }
    if (rc.moe_act) {
      return std::unexpected(at.Error(
          kModules, "moe_act recompute is not supported with fp8-delayed"));
    }
  }
  if (rc.shared_experts && r.spec.moe_shared_expert_overlap()) {
    return std::unexpected(at.Error(kModules,
                                    "shared_experts recompute is incompatible "
                                    "with moe_shared_expert_overlap"));
  }
  return {};
}

// fp8_dot_product_attention: Megatron hands fp8_dpa to TE's per-tensor
// recipes (TEDelayedScaling; Float8CurrentScaling in
// megatron/core/fp8_utils.py get_fp8_recipe) and, in newer Megatron, to
// MXFP8BlockScaling (older versions build it from fp8_format alone, so the
// flag is a no-op under mxfp8 there; moesim assumes the newer stack, whose
// cuDNN 9.2x runs MXFP8 attention, for the validation rows that set it, all
// from 26.06+ containers). Without an FP8 recipe there is no FP8
// autocast for the attention to run under, and TE's DotProductAttention
// refuses FP8 attention under blockwise and NVFP4 recipes
// (init_fp8_metadata: "DotProductAttention does not support ... recipe").
// cuDNN's FP8 attention takes d_qk <= 128 (a multiple of 16), or d_qk 192
// with d_v 128 (cuDNN 9.19+; the error cuDNN prints in
// NVIDIA/cudnn-frontend@63447f2 benchmark/sdpa_benchmark_training/results/
// deepseek_v4/b300/deepseek_v4_20260812_173800.csv).
Result<void> CheckFp8Attention(const ResolvedScenario& r,
                               const FieldNamer& at) {
  constexpr std::string_view kField = "fp8_dot_product_attention";
  const models::Precision p = r.training.precision;
  if (p != models::Precision::kFp8CurrentScaling &&
      p != models::Precision::kFp8Delayed && p != models::Precision::kMxfp8) {
    return std::unexpected(
        at.Error(kField,
                 "needs an FP8 recipe TE runs attention under (fp8-cs, "
                 "fp8-delayed or mxfp8), not " +
                     (r.spec.precision().empty() ? std::string("bf16")
                                                 : r.spec.precision())));
  }
  const models::Model& m = r.model;
  const int64_t qk = m.multi_latent_attention()
                         ? m.qk_head_dim() + m.qk_pos_emb_head_dim()
                         : models::HeadDim(m);
  const int64_t v = m.multi_latent_attention() ? m.v_head_dim() : qk;
  if (!((qk <= 128 && qk % 16 == 0) || (qk == 192 && v == 128))) {
    return std::unexpected(
        at.Error(kField,
                 "cuDNN's FP8 attention needs head dims d_qk <= 128 (a "
                 "multiple of 16) or d_qk 192 with d_v 128; " +
                     ModelName(r.model) + " has d_qk " + std::to_string(qk) +
                     ", d_v " + std::to_string(v)));
  }
  return {};
}

// The routing fields: the capacity factor, tokendrop and padding, and the
// skew or histogram of dropless_natural routing.
Result<void> CheckRouting(const ResolvedScenario& r, const FieldNamer& at) {
  const models::TrainingOptions& t = r.training;
  if (const double factor = r.spec.moe_expert_capacity_factor();
      !(factor >= 0 && factor <= 1e9)) {  // NaN and inf too
    return std::unexpected(
        at.Error("moe_expert_capacity_factor",
                 "must be > 0 and at most 1e9, got " + Num(factor)));
  }
  if (t.routing == models::Routing::kTokenDrop &&
      r.spec.moe_expert_capacity_factor() <= 0) {
    return std::unexpected(
        at.Error("routing", "tokendrop needs moe_expert_capacity_factor > 0"));
  }
  // Megatron's dispatchers assert a capacity factor under drop_and_pad.
  if (t.moe_pad_expert_input_to_capacity &&
      t.routing != models::Routing::kTokenDrop) {
    return std::unexpected(at.Error(
        "moe_pad_expert_input_to_capacity",
        "pads to a capacity: needs routing tokendrop with "
        "moe_expert_capacity_factor > 0 (--moe-expert-capacity-factor)"));
  }
  const double skew = r.spec.moe_routing_skew();
  if (!(skew >= 0 && skew <= 10)) {
    return std::unexpected(
        at.Error("moe_routing_skew",
                 "must be a Zipf exponent in [0, 10], got " + Num(skew)));
  }
  if (skew > 0 && t.routing != models::Routing::kDroplessNatural) {
    return std::unexpected(at.Error(
        "moe_routing_skew",
        "skews dropless_natural routing; routing is " + r.spec.routing()));
  }
  const auto& histogram = r.spec.moe_routing_histogram();
  if (!histogram.empty()) {
    constexpr std::string_view kHistogram = "moe_routing_histogram";
    if (t.routing != models::Routing::kDroplessNatural) {
      return std::unexpected(at.Error(
          kHistogram,
          "shapes dropless_natural routing; routing is " + r.spec.routing()));
    }
    if (skew > 0) {
      return std::unexpected(at.Error(
          kHistogram, "and moe_routing_skew both set; give one of them"));
    }
    if (static_cast<int64_t>(histogram.size()) != r.model.num_moe_experts()) {
      return std::unexpected(
          at.Error(kHistogram, "has " + std::to_string(histogram.size()) +
                                   " values; the model has " +
                                   std::to_string(r.model.num_moe_experts()) +
                                   " routed experts"));
    }
    double total = 0;
    for (int i = 0; i < histogram.size(); ++i) {
      if (!(histogram[i] >= 0 && histogram[i] <= 1e300)) {
        return std::unexpected(
            at.Error(kHistogram, "value " + std::to_string(i + 1) +
                                     " must be a finite count >= 0, got " +
                                     Num(histogram[i])));
      }
      total += histogram[i];
    }
    if (!(total > 0)) {
      return std::unexpected(
          at.Error(kHistogram, "routes no tokens (every value is 0)"));
    }
  }
  return {};
}

Result<void> CheckPrecisionAndRouting(const ResolvedScenario& r,
                                      const FieldNamer& at) {
  const models::TrainingOptions& t = r.training;
  const Arch arch = ArchOf(r.system);
  const std::string gpu = "system " + r.system.name() +
                          " has gpu.architecture '" +
                          r.system.gpu().architecture() + "'";
  // Transformer Engine support matrix
  // (https://nvidia.github.io/TransformerEngine/support_matrix.html): MXFP8
  // and NVFP4 need Blackwell (SM 10.x); per-tensor and blockwise FP8 run on
  // Hopper and Blackwell.
  if ((t.precision == models::Precision::kMxfp8 ||
       t.precision == models::Precision::kNvfp4) &&
      arch != Arch::kBlackwell) {
    return std::unexpected(
        at.Error("precision", r.spec.precision() +
                                  " needs a Blackwell GPU (b200, b300, gb200, "
                                  "gb300); " +
                                  gpu));
  }
  if (models::IsLowPrecision(t.precision) && arch == Arch::kUnknown) {
    return std::unexpected(at.Error(
        "precision",
        r.spec.precision() + " needs a Hopper or Blackwell GPU; " + gpu));
  }
  if (t.fp8_param_gather && !models::IsLowPrecision(t.precision)) {
    return std::unexpected(
        at.Error("fp8_param_gather",
                 "needs an FP8 or FP4 precision, not " + r.spec.precision()));
  }
  if (t.fp8_dot_product_attention) {
    if (auto fp8_attention = CheckFp8Attention(r, at); !fp8_attention)
      return fp8_attention;
  }
  if (auto schedule = CheckPipelineSchedule(r, at); !schedule) return schedule;
  const bool moe = IsMoe(r.model);
  if (models::TraitsOf(t.dispatcher).fused) {
    if (!moe) {
      return std::unexpected(
          at.Error("dispatcher", r.spec.dispatcher() + " needs an MoE model; " +
                                     ModelName(r.model) + " is dense"));
    }
    if (r.parallel.ep <= 1) {
      return std::unexpected(at.Error(
          "dispatcher",
          r.spec.dispatcher() + " needs expert_model_parallel_size > 1"));
    }
  }
  if (auto routing = CheckRouting(r, at); !routing) return routing;
  // A recipe needs the tensor cores it runs on: a system file whose FP8 or
  // FP4 peak is 0 (none) cannot price it.
  if (t.precision == models::Precision::kNvfp4 &&
      r.system.gpu().fp4_dense_tflops() == 0) {
    return std::unexpected(at.Error(
        "precision", "nvfp4 needs FP4 tensor cores; system " + r.system.name() +
                         " has gpu.fp4_dense_tflops 0"));
  }
  if (models::IsLowPrecision(t.precision) &&
      t.precision != models::Precision::kNvfp4 &&
      r.system.gpu().fp8_dense_tflops() == 0) {
    return std::unexpected(at.Error(
        "precision", r.spec.precision() + " needs FP8 tensor cores; system " +
                         r.system.name() + " has gpu.fp8_dense_tflops 0"));
  }
  return {};
}

Result<void> CheckOptimizer(const ResolvedScenario& r, const FieldNamer& at) {
  const Scenario& s = r.spec;
  const double fraction = s.optimizer_offload_fraction();
  if (!(fraction >= 0 && fraction <= 1)) {  // NaN too
    return std::unexpected(at.Error("optimizer_offload_fraction",
                                    "must be in [0, 1], got " + Num(fraction)));
  }
  if (s.overlap_cpu_optimizer_d2h_h2d() && fraction <= 0) {
    return std::unexpected(
        at.Error("overlap_cpu_optimizer_d2h_h2d",
                 "overlaps the offloaded optimizer's copies; needs "
                 "optimizer_offload_fraction > 0"));
  }
  if (fraction > 0 && !s.use_distributed_optimizer()) {
    return std::unexpected(
        at.Error("optimizer_offload_fraction",
                 "optimizer CPU offload needs use_distributed_optimizer"));
  }
  const bool low_precision_state =
      s.main_grads_dtype() != "fp32" && s.main_grads_dtype() != "float32";
  const bool low_precision_moments =
      s.exp_avg_dtype() != "fp32" && s.exp_avg_dtype() != "float32";
  if (!s.use_precision_aware_optimizer()) {
    if (low_precision_state) {
      return std::unexpected(at.Error(
          "main_grads_dtype",
          s.main_grads_dtype() + " needs use_precision_aware_optimizer"));
    }
    if (low_precision_moments) {
      return std::unexpected(
          at.Error("exp_avg_dtype",
                   s.exp_avg_dtype() + " needs use_precision_aware_optimizer"));
    }
  } else if (!s.use_distributed_optimizer()) {
    return std::unexpected(at.Error(
        "use_precision_aware_optimizer",
        "the precision-aware optimizer needs use_distributed_optimizer"));
  }
  return {};
}

Result<void> CheckCudaGraphAndOffload(const ResolvedScenario& r,
                                      const FieldNamer& at) {
  const models::CudaGraph& g = r.training.cuda_graph;
  const models::Recompute& rc = r.training.recompute;
  if (g.moe && g.moe_router) {
    return std::unexpected(at.Error(
        "cuda_graph", "TE scopes moe and moe_router are mutually exclusive"));
  }
  if (g.moe_preprocess && !g.moe_router) {
    return std::unexpected(
        at.Error("cuda_graph", "TE scope moe_preprocess needs moe_router"));
  }
  if ((g.moe || g.moe_router) && !IsMoe(r.model)) {
    return std::unexpected(at.Error(
        "cuda_graph", "TE scopes moe and moe_router need an MoE model; " +
                          ModelName(r.model) + " is dense"));
  }
  if (rc.full && g.any() && !g.full_iteration) {
    return std::unexpected(at.Error(
        kGranularity,
        "full recompute is only supported with full iteration CUDA graph"));
  }
  if (rc.moe && g.moe_router) {
    return std::unexpected(at.Error(
        kModules,
        "moe recompute is not supported with the moe_router CUDA-graph scope"));
  }
  if (r.spec.cpu_offloading()) {
    if (g.any()) {
      return std::unexpected(
          at.Error("cpu_offloading",
                   "CPU activation offloading is incompatible with CUDA graphs "
                   "(cuda_graph " +
                       r.spec.cuda_graph() + ")"));
    }
    if (r.parallel.pp > 1) {
      return std::unexpected(at.Error(
          "cpu_offloading",
          "CPU activation offloading needs pipeline_model_parallel_size "
          "1, got " +
              std::to_string(r.parallel.pp)));
    }
    const bool any_recompute = rc.full || rc.core_attn || rc.mla_up_proj ||
                               rc.layernorm || rc.moe_act || rc.mlp || rc.moe ||
                               rc.shared_experts;
    if (any_recompute) {
      return std::unexpected(
          at.Error("cpu_offloading",
                   "CPU activation offloading is incompatible with recompute"));
    }
    // Megatron TransformerConfig: 0 <= cpu_offloading_num_layers < num_layers.
    const int64_t offloaded = r.spec.cpu_offloading_num_layers();
    if (offloaded < 0 || offloaded >= r.model.num_layers()) {
      return std::unexpected(at.Error("cpu_offloading_num_layers",
                                      "must be in [0, num_layers) = [0, " +
                                          std::to_string(r.model.num_layers()) +
                                          "), got " +
                                          std::to_string(offloaded)));
    }
  } else if (r.spec.cpu_offloading_num_layers() != 0) {
    return std::unexpected(
        at.Error("cpu_offloading_num_layers",
                 "offloads activations only with cpu_offloading"));
  }
  const std::string& sharding = r.spec.data_parallel_sharding_strategy();
  if (!r.spec.use_megatron_fsdp() && !sharding.empty() &&
      sharding != "no_shard") {
    return std::unexpected(
        at.Error("data_parallel_sharding_strategy",
                 "'" + sharding + "' needs use_megatron_fsdp"));
  }
  return {};
}

// Fine-grained activation offloading and optimizer-state offloading, as
// Megatron-Core's TransformerConfig.__post_init__ and OptimizerStateOffloader
// admit them (Megatron-LM@d98e8a64dd transformer_config.py: the
// fine_grained_activation_offloading block and its CUDA-graph asserts;
// docs/user-guide/features/fine_grained_activation_offloading.md).
// offload_optimizer_states: the distributed optimizer on the GPU.
Result<void> CheckOptimizerStateOffload(const ResolvedScenario& r,
                                        const FieldNamer& at) {
  const Scenario& s = r.spec;
  if (s.offload_optimizer_states()) {
    auto fail = [&](const std::string& rule) {
      return std::unexpected(at.Error("offload_optimizer_states", rule));
    };
    if (!r.training.distributed_optimizer || s.use_megatron_fsdp()) {
      return fail(
          "needs the distributed optimizer (use_distributed_optimizer, not "
          "Megatron-FSDP)");
    }
    if (s.optimizer_offload_fraction() > 0) {
      return fail(
          "cannot be combined with the CPU optimizer "
          "(optimizer_offload_fraction): the state offloader needs TE "
          "FusedAdam on the GPU");
    }
  }
  return {};
}

Result<void> CheckActivationOffload(const ResolvedScenario& r,
                                    const FieldNamer& at) {
  const Scenario& s = r.spec;
  const models::Model& m = r.model;
  if (!s.fine_grained_activation_offloading()) {
    for (const auto& [field, set] :
         {std::pair{"offload_modules", s.offload_modules_size() > 0},
          std::pair{"activation_offload_fraction",
                    s.has_activation_offload_fraction()},
          std::pair{"min_offloaded_tensor_size",
                    s.has_min_offloaded_tensor_size()}}) {
      if (set) {
        return std::unexpected(at.Error(
            field, "has no effect without fine_grained_activation_offloading"));
      }
    }
  } else {
    auto fail = [&](const std::string& rule) {
      return std::unexpected(at.Error("offload_modules", rule));
    };
    const models::ActivationOffload& o = r.training.activation_offload;
    using models::OffloadModule;
    if (!o.any())
      return fail(
          "fine-grained activation offloading needs at "
          "least one module (" +
          models::OffloadModuleList() + ")");
    if (s.cpu_offloading()) {
      return std::unexpected(
          at.Error("cpu_offloading",
                   "cannot be combined with fine-grained activation "
                   "offloading (Megatron TransformerConfig)"));
    }
    if (o.has(OffloadModule::kAttnProj) && !o.has(OffloadModule::kCoreAttn)) {
      return fail(
          "attn_proj needs core_attn: attn_proj's input is core attention's "
          "output, which core attention's backward also needs");
    }
    // What the model has: softmax-attention layers (GQA/MHA fuse the input
    // norm into linear_qkv; MLA keeps a separate input_layernorm) and MoE
    // layers (a separate pre_mlp_layernorm; dense MLPs fuse theirs into
    // linear_fc1), per MCore's TE layer specs (gpt_layer_specs.py).
    bool attention = false, separate_input_norm = false, moe = false;
    for (int64_t i = 0; i < m.num_layers(); ++i) {
      const models::LayerKind kind = models::DecoderLayer(m, i);
      if (kind.mixer != models::Mixer::kGatedDeltaNet) attention = true;
      if (kind.mixer == models::Mixer::kMla) separate_input_norm = true;
      if (kind.moe) moe = true;
    }
    const std::string name = ModelName(m);
    if (!attention &&
        (o.has(OffloadModule::kQkvLinear) || o.has(OffloadModule::kCoreAttn) ||
         o.has(OffloadModule::kAttnNorm))) {
      return fail(name + " has no softmax-attention layer to offload from");
    }
    if (o.has(OffloadModule::kAttnNorm) && !separate_input_norm) {
      return fail("attn_norm: " + name +
                  " fuses its input norm into linear_qkv (TE "
                  "LayerNormColumnParallelLinear), so Megatron offloads "
                  "nothing for it; use qkv_linear");
    }
    if (!moe &&
        (o.has(OffloadModule::kMlpNorm) || o.has(OffloadModule::kExpertFc1) ||
         o.has(OffloadModule::kMoeAct))) {
      return fail("mlp_norm, expert_fc1 and moe_act need MoE layers; " + name +
                  " is dense (its MLP norm is fused into linear_fc1)");
    }
    if (r.training.recompute.moe &&
        (o.has(OffloadModule::kExpertFc1) || o.has(OffloadModule::kMoeAct))) {
      return fail(
          "expert_fc1 and moe_act cannot be offloaded while moe recompute "
          "replays the whole MoE layer");
    }
    if (r.training.recompute.full) {
      return fail(
          "full recompute keeps only each layer's input: nothing for "
          "fine-grained offloading to move");
    }
    const models::CudaGraph& g = r.training.cuda_graph;
    if (g.full_iteration || g.local_transformer_layer) {
      return std::unexpected(at.Error(
          "cuda_graph",
          "fine-grained activation offloading with " + s.cuda_graph() +
              " graphs needs --fine-grained-offloading-max-inflight-offloads "
              "or per-module graphs; moesim models it with TE-scoped graphs "
              "or none"));
    }
    if (g.any()) {
      if (g.moe) {
        return std::unexpected(at.Error(
            "cuda_graph",
            "fine-grained activation offloading does not support the TE moe "
            "scope"));
      }
      if (o.has(OffloadModule::kAttnNorm) || o.has(OffloadModule::kMlpNorm)) {
        return fail(
            "attn_norm and mlp_norm cross CUDA-graph boundaries and cannot be "
            "offloaded with CUDA graphs");
      }
    }
    if (!(o.fraction >= 0 && o.fraction <= 1)) {
      return std::unexpected(
          at.Error("activation_offload_fraction",
                   "must be in [0, 1], got " + Num(o.fraction)));
    }
    if (o.min_tensor_elements < 0) {
      return std::unexpected(at.Error(
          "min_offloaded_tensor_size",
          "must be >= 0, got " + std::to_string(o.min_tensor_elements)));
    }
  }
  return CheckOptimizerStateOffload(r, at);
}

// --overlap-moe-expert-parallel-comm (seeds_notes.md §6, "EP overlap
// constraints").
Result<void> CheckEpOverlap(const ResolvedScenario& r, const FieldNamer& at) {
  // Megatron's TransformerConfig: "overlap_moe_expert_parallel_comm must be
  // enabled when enabling delay_wgrad_compute".
  if (r.training.delay_wgrad_compute && !r.training.ep_overlap) {
    return std::unexpected(
        at.Error("delay_wgrad_compute",
                 "needs EP overlap (overlap_moe_expert_parallel_comm, "
                 "--ep-overlap 1): Megatron delays weight gradients only in "
                 "the EP-overlap schedule"));
  }
  if (!r.training.ep_overlap) return {};
  constexpr std::string_view kField = "overlap_moe_expert_parallel_comm";
  auto fail = [&](std::string rule) {
    return std::unexpected(at.Error(kField, "EP overlap " + rule));
  };
  if (!IsMoe(r.model))
    return fail("needs an MoE model; " + ModelName(r.model) + " is dense");
  if (r.parallel.ep <= 1) return fail("needs expert_model_parallel_size > 1");
  if (r.parallel.pp > 1 && r.parallel.vpp <= 1) {
    return fail(
        "needs virtual_pipeline_model_parallel_size > 1 when "
        "pipeline_model_parallel_size > 1");
  }
  if (r.training.recompute.full)
    return fail("is incompatible with full recompute");
  if (r.training.recompute.moe)
    return fail("is incompatible with moe recompute");
  if (r.spec.moe_shared_expert_overlap())
    return fail("needs moe_shared_expert_overlap off");
  if (r.model.mtp_num_layers() > 1) {
    return fail("needs mtp_num_layers <= 1, got " +
                std::to_string(r.model.mtp_num_layers()));
  }
  return {};
}

}  // namespace

std::string FieldNamer::Where(std::string_view path) const {
  if (is_flags()) return std::string(origin_) + ": " + FlagName(path);
  if (std::find(flag_paths_.begin(), flag_paths_.end(), path) !=
      flag_paths_.end())
    return std::string(kFlagsOrigin) + ": " + FlagName(path);
  std::string where(origin_);
  if (!text_.empty()) {
    size_t dot = path.rfind('.');
    std::string_view leaf =
        dot == std::string_view::npos ? path : path.substr(dot + 1);
    if (int line = util::FieldLine(text_, leaf); line > 0) {
      where += ':';
      where += std::to_string(line);
    }
  }
  where += ": ";
  where += path;
  return where;
}

util::Error FieldNamer::Error(std::string_view path,
                              std::string_view rule) const {
  return util::Error{Where(path) + ": " + std::string(rule)};
}

util::Error FieldNamer::Wrap(std::string_view path,
                             std::string_view message) const {
  // Errors are one line; some parsers append a source excerpt and a caret
  // on further lines (protobuf's JSON parser does), which are dropped.
  message = message.substr(0, message.find('\n'));
  size_t dot = path.rfind('.');
  std::string_view leaf =
      dot == std::string_view::npos ? path : path.substr(dot + 1);
  for (std::string_view name : {path, leaf}) {
    if (message.starts_with(name) &&
        message.substr(name.size()).starts_with(": ")) {
      message.remove_prefix(name.size() + 2);
      break;
    }
  }
  return Error(path, message);
}

std::string FlagName(std::string_view path) {
  for (auto [field, flag] : kFlagNames) {
    if (field == path) return std::string(flag);
  }
  size_t dot = path.rfind('.');
  std::string flag =
      "--" +
      std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
  std::replace(flag.begin() + 2, flag.end(), '_', '-');
  return flag;
}

Result<void> CheckLimits(const Scenario& s, const FieldNamer& at) {
  auto above = [&](std::string_view path, int64_t value, int64_t limit,
                   std::string_view what) -> Result<void> {
    if (value <= limit) return {};
    return std::unexpected(
        at.Error(path, std::to_string(value) + " is above the limit of " +
                           std::to_string(limit) + " " + std::string(what)));
  };
  const Layout& l = s.layout();
  const std::tuple<std::string_view, int64_t, int64_t, std::string_view>
      limits[] = {
          {"num_gpus", s.num_gpus(), kMaxGpus, "GPUs"},
          {"seq_length", s.seq_length(), kMaxSeqLength, "tokens"},
          {"num_layers", s.num_layers(), kMaxLayers, "layers"},
          {"mtp_num_layers", s.mtp_num_layers(), kMaxMtpLayers, "layers"},
          {"layout.tensor_model_parallel_size", l.tensor_model_parallel_size(),
           kMaxGpus, "GPUs"},
          {"layout.context_parallel_size", l.context_parallel_size(), kMaxGpus,
           "GPUs"},
          {"layout.expert_model_parallel_size", l.expert_model_parallel_size(),
           kMaxGpus, "GPUs"},
          {"layout.expert_tensor_parallel_size",
           l.expert_tensor_parallel_size(), kMaxGpus, "GPUs"},
          {"layout.pipeline_model_parallel_size",
           l.pipeline_model_parallel_size(), kMaxLayers, "stages"},
          {"layout.virtual_pipeline_model_parallel_size",
           l.virtual_pipeline_model_parallel_size(), kMaxLayers, "stages"},
          {"layout.num_layers_per_virtual_pipeline_stage",
           l.num_layers_per_virtual_pipeline_stage(), kMaxLayers, "layers"},
          {"layout.micro_batch_size", l.micro_batch_size(), kMaxGlobalBatch,
           "sequences"},
          {"layout.global_batch_size", l.global_batch_size(), kMaxGlobalBatch,
           "sequences"},
          {"recompute.num_layers", s.recompute().num_layers(), kMaxLayers,
           "layers"},
      };
  for (const auto& [path, value, limit, what] : limits) {
    if (auto ok = above(path, value, limit, what); !ok) return ok;
  }
  // Architecture flags obey a model file's range rule.
  if (auto bad =
          util::FindOutOfRange(s.architecture(), models::kMaxModelFieldValue)) {
    return std::unexpected(at.Error("architecture." + bad->path, bad->rule));
  }
  // The meshes' products, in int64, so later int arithmetic cannot overflow.
  const int64_t pp = std::max(1, l.pipeline_model_parallel_size());
  const int64_t attention =
      int64_t{std::max(1, l.tensor_model_parallel_size())} *
      std::max(1, l.context_parallel_size()) * pp;
  const int64_t moe = int64_t{std::max(1, l.expert_tensor_parallel_size())} *
                      std::max(1, l.expert_model_parallel_size()) * pp;
  if (auto ok = above("layout", attention, kMaxGpus,
                      "GPUs in the attention mesh TPxCPxPP");
      !ok)
    return ok;
  return above("layout", moe, kMaxGpus, "GPUs in the MoE mesh ETPxEPxPP");
}

Result<void> CheckStepLimits(const ResolvedScenario& r, const FieldNamer& at) {
  const int64_t per_step = int64_t{r.training.micro_batch_size} * r.parallel.dp;
  const int64_t micro_batches =
      per_step > 0 ? r.training.global_batch_size / per_step : 0;
  if (micro_batches > kMaxMicroBatches) {
    return std::unexpected(
        at.Error("layout.global_batch_size",
                 std::to_string(micro_batches) +
                     " micro-batches per step (global_batch_size / "
                     "(micro_batch_size*DP)) is above the limit of " +
                     std::to_string(kMaxMicroBatches)));
  }
  const topology::Gpu& gpu = r.system.gpu();
  const double peak_tflops =
      std::max({gpu.bf16_dense_tflops(), gpu.fp8_dense_tflops(),
                gpu.fp4_dense_tflops()});
  const double flops = models::ModelFlopsPerSequence(
                           r.model, r.training.seq_length, r.parallel.tp) *
                       static_cast<double>(r.training.global_batch_size);
  const double seconds = flops / r.spec.num_gpus() / (peak_tflops * 1e12);
  if (peak_tflops > 0 && !(seconds <= kMaxStepSeconds)) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "a step of %.3g model FLOPs takes at least %.3g s per GPU at "
                  "the GPU's dense peak; above the limit of %.0f s",
                  flops, seconds, kMaxStepSeconds);
    return std::unexpected(at.Error("seq_length", text));
  }
  return {};
}

Result<void> CheckRules(const ResolvedScenario& r, const FieldNamer& at,
                        std::vector<std::string>& warnings) {
  for (auto check :
       {CheckMeshes, CheckModelSplit, CheckSequenceAndBatch, CheckCpCommType,
        CheckRecompute, CheckPrecisionAndRouting, CheckOptimizer,
        CheckCudaGraphAndOffload, CheckActivationOffload, CheckEpOverlap}) {
    if (auto ok = check(r, at); !ok) return ok;
  }
  const models::Recompute& rc = r.training.recompute;
  if (!rc.full && (!r.spec.recompute().method().empty() ||
                   r.spec.recompute().num_layers() != 0)) {
    warnings.push_back(
        at.Where("recompute.method") +
        ": method and num_layers only apply to full recompute; ignored");
  }
  if (rc.full && r.spec.recompute().modules_size() > 0) {
    warnings.push_back(at.Where(kModules) +
                       ": full recompute overrides the selective modules " +
                       Join({r.spec.recompute().modules().begin(),
                             r.spec.recompute().modules().end()},
                            ", "));
  }
  if (r.spec.moe_expert_capacity_factor() > 0 &&
      r.training.routing != models::Routing::kTokenDrop) {
    warnings.push_back(at.Where("moe_expert_capacity_factor") +
                       ": only used with routing tokendrop; ignored");
  }
  return {};
}

}  // namespace moesim::scenarios::internal

namespace moesim::scenarios {

// TE context parallelism. a2a scatters the attention heads of each TP rank
// over the CP ranks (TE asserts the query and key/value heads split
// evenly); a2a+p2p does so inside the inner hierarchical group and runs the
// p2p ring across the outer one.
std::optional<FieldRule> CpExchangeRule(const models::Model& model, int tp,
                                        int cp, models::CpCommType type,
                                        std::string_view type_word,
                                        std::span<const int> sizes) {
  constexpr std::string_view kType = "cp_comm_type";
  constexpr std::string_view kSizes = "hierarchical_context_parallel_sizes";
  std::string texts, product_text;
  for (int size : sizes) {
    if (!texts.empty()) {
      texts += ", ";
      product_text += '*';
    }
    texts += std::to_string(size);
    product_text += std::to_string(size);
  }
  const std::string list = "[" + texts + "]";
  auto broken = [](std::string_view field, std::string rule) {
    return std::optional<FieldRule>(FieldRule{std::string(field), rule});
  };
  // Heads and query groups per TP rank divisible by the a2a group size.
  auto heads_split = [&](std::string_view field, std::string_view mode,
                         std::string_view group_name,
                         int group) -> std::optional<FieldRule> {
    const int64_t groups = model.multi_latent_attention()
                               ? model.num_attention_heads()
                               : models::QueryGroups(model);
    const std::pair<std::string_view, int64_t> counts[] = {
        {"num_attention_heads", model.num_attention_heads()},
        {"num_query_groups", groups}};
    for (auto [what, count] : counts) {
      const int64_t per_rank = count / std::max(tp, 1);
      if (per_rank % group == 0) continue;
      return broken(
          field, std::string(mode) +
                     " scatters heads over CP: " + std::string(what) + " " +
                     std::to_string(count) + " / tensor_model_parallel_size " +
                     std::to_string(tp) + " = " + std::to_string(per_rank) +
                     " heads per TP rank not divisible by " +
                     std::string(group_name) + " " + std::to_string(group));
    }
    return std::nullopt;
  };
  for (int size : sizes) {
    if (size < 1) return broken(kSizes, "every size must be >= 1, got " + list);
  }
  // Gated DeltaNet layers trade the sequence split for a head split over CP
  // whatever the exchange type (Megatron-LM gated_delta_net/gdn.py
  // a2a_cp_to_hp), so their key and value heads per TP rank divide by CP.
  if (model.linear_attention_freq() > 0 && cp > 1) {
    const std::pair<std::string_view, int64_t> linear[] = {
        {"linear_num_key_heads", model.linear_num_key_heads()},
        {"linear_num_value_heads", model.linear_num_value_heads()}};
    for (auto [what, count] : linear) {
      const int64_t per_rank = count / std::max(tp, 1);
      if (per_rank % cp == 0) continue;
      return broken(
          "layout.context_parallel_size",
          "Gated DeltaNet scatters heads over CP: " + std::string(what) + " " +
              std::to_string(count) + " / tensor_model_parallel_size " +
              std::to_string(tp) + " = " + std::to_string(per_rank) +
              " not divisible by context_parallel_size " + std::to_string(cp));
    }
  }
  if (!sizes.empty() && type != models::CpCommType::kA2aP2p) {
    return broken(kSizes, "only used with cp_comm_type a2a+p2p, got " +
                              std::string(type_word));
  }
  switch (type) {
    case models::CpCommType::kP2p:
    case models::CpCommType::kAllGather:
      return std::nullopt;
    case models::CpCommType::kA2a:
      // Megatron accepts a2a with CP 1 (nothing to scatter).
      if (cp <= 1) return std::nullopt;
      return heads_split(kType, "a2a", "context_parallel_size", cp);
    case models::CpCommType::kA2aP2p:
      if (sizes.empty()) {
        return broken(kType,
                      "a2a+p2p needs hierarchical_context_parallel_sizes "
                      "(inner a2a size, outer p2p size)");
      }
      if (sizes.size() != 2) {
        return broken(
            kSizes,
            "a2a+p2p takes exactly 2 sizes (inner a2a, outer p2p), got " +
                list);
      }
      if (const int64_t product = int64_t{sizes[0]} * sizes[1]; product != cp) {
        return broken(kSizes, "product " + product_text + " = " +
                                  std::to_string(product) +
                                  " is not context_parallel_size " +
                                  std::to_string(cp));
      }
      return heads_split(kSizes, "a2a+p2p", "the inner a2a size", sizes[0]);
  }
  return std::nullopt;
}

}  // namespace moesim::scenarios
