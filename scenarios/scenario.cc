#include "scenarios/scenario.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "models/zoo.h"
#include "scenarios/architecture.h"
#include "scenarios/rules.h"
#include "scenarios/vocabulary.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/textproto.h"

namespace moesim::scenarios {
namespace {

using internal::FieldNamer;
using util::Result;

// Megatron-Bridge pretrain default sequence length.
constexpr int kDefaultSeqLength = 4096;

// Fields that must be >= 1 when set (zero means "not set").
Result<void> CheckSet(const Scenario& s, const FieldNamer& at) {
  const Layout& l = s.layout();
  const std::pair<std::string_view, int64_t> sizes[] = {
      {"seq_length", s.seq_length()},
      {"num_layers", s.num_layers()},
      {"layout.tensor_model_parallel_size", l.tensor_model_parallel_size()},
      {"layout.context_parallel_size", l.context_parallel_size()},
      {"layout.expert_model_parallel_size", l.expert_model_parallel_size()},
      {"layout.expert_tensor_parallel_size", l.expert_tensor_parallel_size()},
      {"layout.pipeline_model_parallel_size", l.pipeline_model_parallel_size()},
      {"layout.virtual_pipeline_model_parallel_size",
       l.virtual_pipeline_model_parallel_size()},
      {"layout.num_layers_per_virtual_pipeline_stage",
       l.num_layers_per_virtual_pipeline_stage()},
      {"layout.micro_batch_size", l.micro_batch_size()},
      {"layout.global_batch_size", l.global_batch_size()},
      {"recompute.num_layers", s.recompute().num_layers()},
  };
  for (auto [path, value] : sizes) {
    if (value < 0)
      return std::unexpected(
          at.Error(path, "must be >= 1, got " + std::to_string(value)));
  }
  if (s.has_mtp_num_layers() && s.mtp_num_layers() < 0) {
    return std::unexpected(
        at.Error("mtp_num_layers",
                 "must be >= 0, got " + std::to_string(s.mtp_num_layers())));
  }
  return {};
}

Result<void> CheckRequired(const Scenario& s, const FieldNamer& at) {
  if (s.model().empty() && !internal::HasArchitecture(s)) {
    return std::unexpected(
        at.Error("model",
                 "required (a zoo name or model file, or the architecture "
                 "flags of a Megatron argument list)"));
  }
  if (s.system().empty())
    return std::unexpected(at.Error("system", "required"));
  if (s.num_gpus() == 0)
    return std::unexpected(at.Error("num_gpus", "required"));
  if (s.num_gpus() < 0) {
    return std::unexpected(at.Error(
        "num_gpus", "must be >= 1, got " + std::to_string(s.num_gpus())));
  }
  return {};
}

// Loads the model (or builds it from the architecture fields when no model
// is named) and applies the num_layers / mtp_num_layers overrides, writing
// the effective values back into `s`. A named model may be trimmed but not
// deepened: the layers beyond its depth have no architecture to copy.
Result<models::Model> LoadOverriddenModel(Scenario& s, const FieldNamer& at) {
  if (s.model().empty()) {
    auto built = internal::ModelFromArchitecture(s, at);
    if (!built) return built;
    s.set_mtp_num_layers(static_cast<int32_t>(built->mtp_num_layers()));
    return built;
  }
  auto model = models::LoadModel(s.model());
  if (!model) return std::unexpected(at.Wrap("model", model.error().message));
  if (s.num_layers() > model->num_layers()) {
    return std::unexpected(at.Error(
        "num_layers",
        std::to_string(s.num_layers()) + " is more than " + model->name() +
            "'s " + std::to_string(model->num_layers()) +
            " layers (a model can be trimmed, not deepened; give the whole "
            "architecture without a model name for another depth)"));
  }
  if (s.num_layers() > 0)
    *model = models::WithNumLayers(*model, s.num_layers());
  if (s.has_mtp_num_layers()) model->set_mtp_num_layers(s.mtp_num_layers());
  if (internal::HasArchitecture(s)) {
    if (auto ok = internal::CheckArchitecture(s, *model, at); !ok)
      return std::unexpected(ok.error());
    // The vocabulary padding is a training setting, not the architecture.
    if (s.architecture().has_make_vocab_size_divisible_by()) {
      model->set_make_vocab_size_divisible_by(
          s.architecture().make_vocab_size_divisible_by());
    }
  }
  s.set_num_layers(static_cast<int32_t>(model->num_layers()));
  s.set_mtp_num_layers(static_cast<int32_t>(model->mtp_num_layers()));
  return model;
}

// Records a Megatron-Bridge default taken by an unset field.
class Defaults {
 public:
  explicit Defaults(std::vector<std::string>& used) : used_(used) {}

  void Int(std::string_view name, int value, void (Layout::*set)(int32_t),
           int32_t current, Layout& layout) {
    if (current != 0) return;
    (layout.*set)(value);
    Note(name, std::to_string(value));
  }
  void String(std::string_view name, std::string_view value,
              std::string* field) {
    if (!field->empty()) return;
    *field = value;
    Note(name, value);
  }
  void Note(std::string_view name, std::string_view value) {
    used_.push_back(std::string(name) + "=" + std::string(value));
  }

 private:
  std::vector<std::string>& used_;
};

// Writes the layout string of `layers[k]` decoder layers in virtual stage k
// (embedding in the first, MTP and loss in the last), sets VPP where unset
// and records the layout among the defaults, saying what it came from.
void SetStageLayout(Scenario& s, const std::vector<int64_t>& layers,
                    int64_t vpp, Defaults& d, std::string_view from) {
  std::string layout;
  for (size_t k = 0; k < layers.size(); ++k) {
    if (k > 0) layout += '|';
    if (k == 0) layout += 'E';
    if (layers[k] == 1) layout += 't';
    if (layers[k] > 1) layout += "t*" + std::to_string(layers[k]);
  }
  layout.append(static_cast<size_t>(s.mtp_num_layers()), 'm');
  layout += 'L';
  Layout& l = *s.mutable_layout();
  l.set_pipeline_model_parallel_layout(layout);
  if (l.virtual_pipeline_model_parallel_size() == 0)
    l.set_virtual_pipeline_model_parallel_size(static_cast<int32_t>(vpp));
  d.Note("pipeline_model_parallel_layout",
         layout + " (from " + std::string(from) + ")");
}

// --account-for-embedding/loss-in-pipeline-split as the layout string they
// give (Megatron-Core transformer_block.py get_num_layers_to_build): the
// decoder layers plus one for the embedding and one for the loss, as
// flagged, split evenly over PP x VPP stages; the first stage builds one
// layer fewer for the embedding, the last one fewer for the loss.
Result<void> AccountedPipelineLayout(Scenario& s, const FieldNamer& at,
                                     Defaults& d) {
  Layout& l = *s.mutable_layout();
  const bool embedding = l.account_for_embedding_in_pipeline_split();
  const bool loss = l.account_for_loss_in_pipeline_split();
  const std::string_view field =
      embedding ? "layout.account_for_embedding_in_pipeline_split"
                : "layout.account_for_loss_in_pipeline_split";
  if (!l.pipeline_model_parallel_layout().empty() ||
      l.has_decoder_first_pipeline_num_layers() ||
      l.has_decoder_last_pipeline_num_layers()) {
    return std::unexpected(
        at.Error(field,
                 "cannot be combined with pipeline_model_parallel_layout or "
                 "decoder_first/last_pipeline_num_layers (Megatron-Core "
                 "refuses both)"));
  }
  const int64_t pp = l.pipeline_model_parallel_size();
  const int64_t vpp = std::max(1, l.virtual_pipeline_model_parallel_size());
  const int64_t stages = pp * vpp;
  const int64_t counted =
      int64_t{s.num_layers()} + (embedding ? 1 : 0) + (loss ? 1 : 0);
  if (counted % stages != 0) {
    return std::unexpected(at.Error(
        field,
        "num_layers " + std::to_string(s.num_layers()) +
            " plus the accounted embedding/loss = " + std::to_string(counted) +
            " is not divisible by PP x VPP = " + std::to_string(stages)));
  }
  const int64_t per = counted / stages;
  std::vector<int64_t> layers(static_cast<size_t>(stages), per);
  if (embedding) --layers.front();
  if (loss) --layers.back();
  if (std::any_of(layers.begin(), layers.end(),
                  [](int64_t n) { return n < 0; })) {
    return std::unexpected(
        at.Error(field, "a stage would hold fewer than zero layers"));
  }
  SetStageLayout(s, layers, vpp, d,
                 "account_for_embedding/loss_in_pipeline_split");
  return {};
}

// --decoder-first/last-pipeline-num-layers as the layout string they give
// (Megatron-Core transformer_layer.py get_transformer_layer_offset): the
// first (last) pipeline rank holds that many decoder layers, split evenly
// over its virtual stages; the other ranks share the rest evenly. The
// embedding goes to the first stage, the MTP layers and the loss to the last
// (the layout string's E, m and L). Layout stage k is pipeline rank k % PP,
// virtual stage k / PP.
Result<void> UnevenPipelineLayout(Scenario& s, const FieldNamer& at,
                                  Defaults& d) {
  Layout& l = *s.mutable_layout();
  const bool account = l.account_for_embedding_in_pipeline_split() ||
                       l.account_for_loss_in_pipeline_split();
  if (account) return AccountedPipelineLayout(s, at, d);
  if (!l.has_decoder_first_pipeline_num_layers() &&
      !l.has_decoder_last_pipeline_num_layers())
    return {};
  constexpr std::string_view kFirst =
      "layout.decoder_first_pipeline_num_layers";
  const std::string_view field =
      l.has_decoder_first_pipeline_num_layers()
          ? kFirst
          : "layout.decoder_last_pipeline_num_layers";
  if (!l.pipeline_model_parallel_layout().empty()) {
    return std::unexpected(
        at.Error(field,
                 "cannot be combined with pipeline_model_parallel_layout "
                 "(Megatron-LM refuses both)"));
  }
  const int64_t pp = l.pipeline_model_parallel_size();
  const int64_t vpp = std::max(1, l.virtual_pipeline_model_parallel_size());
  if (pp < 2)
    return std::unexpected(
        at.Error(field, "needs pipeline_model_parallel_size >= 2"));
  const bool has_first = l.has_decoder_first_pipeline_num_layers();
  const bool has_last = l.has_decoder_last_pipeline_num_layers();
  const int64_t first = l.decoder_first_pipeline_num_layers();
  const int64_t last = l.decoder_last_pipeline_num_layers();
  const int64_t middle_ranks = pp - (has_first ? 1 : 0) - (has_last ? 1 : 0);
  const int64_t middle_layers = int64_t{s.num_layers()} - first - last;
  auto fail = [&](const std::string& rule) {
    return std::unexpected(at.Error(field, rule));
  };
  if (first < 0 || last < 0 || middle_layers < 0)
    return fail("first and last stage layers exceed num_layers " +
                std::to_string(s.num_layers()));
  if (first % vpp != 0 || last % vpp != 0)
    return fail(
        "first and last stage layers must divide by the virtual "
        "pipeline size " +
        std::to_string(vpp));
  if (middle_ranks == 0 ? middle_layers != 0
                        : middle_layers % (middle_ranks * vpp) != 0) {
    return fail("the other " + std::to_string(middle_layers) +
                " layers do not divide evenly over " +
                std::to_string(middle_ranks) + " ranks x " +
                std::to_string(vpp) + " virtual stages");
  }
  const int64_t middle_per_stage =
      middle_ranks == 0 ? 0 : middle_layers / (middle_ranks * vpp);
  std::vector<int64_t> layers;
  for (int64_t k = 0; k < pp * vpp; ++k) {
    const int64_t rank = k % pp;
    int64_t n = middle_per_stage;
    if (rank == 0 && has_first) n = first / vpp;
    if (rank == pp - 1 && has_last) n = last / vpp;
    layers.push_back(n);
  }
  SetStageLayout(s, layers, vpp, d, "decoder_first/last_pipeline_num_layers");
  return {};
}

// num_layers_per_virtual_pipeline_stage sets VPP (FillDefaults).
Result<void> VppFromLayersPerStage(Scenario& s, const FieldNamer& at) {
  Layout& l = *s.mutable_layout();
  if (int per_stage = l.num_layers_per_virtual_pipeline_stage();
      per_stage > 0) {
    constexpr std::string_view kPerStage =
        "layout.num_layers_per_virtual_pipeline_stage";
    if (l.virtual_pipeline_model_parallel_size() > 0) {
      return std::unexpected(at.Error(
          kPerStage,
          "set either this or virtual_pipeline_model_parallel_size, not both"));
    }
    if (!l.pipeline_model_parallel_layout().empty()) {
      return std::unexpected(at.Error(
          kPerStage,
          "set either this or pipeline_model_parallel_layout, not both "
          "(Megatron-LM refuses both)"));
    }
    const int64_t chunk = int64_t{l.pipeline_model_parallel_size()} * per_stage;
    if (s.num_layers() % chunk != 0) {
      return std::unexpected(at.Error(
          kPerStage, "num_layers " + std::to_string(s.num_layers()) +
                         " is not divisible by pipeline_model_parallel_size*" +
                         "num_layers_per_virtual_pipeline_stage = " +
                         std::to_string(chunk)));
    }
    l.set_virtual_pipeline_model_parallel_size(
        static_cast<int32_t>(s.num_layers() / chunk));
  }
  return {};
}

// A layout string sets VPP (FillDefaults).
Result<void> VppFromLayoutString(Scenario& s, const FieldNamer& at,
                                 Defaults& d) {
  Layout& l = *s.mutable_layout();
  // A layout string sets VPP, as Megatron-LM's validate_args does
  // (megatron/training/arguments.py): its stage count must be a multiple of
  // PP, and VPP is their quotient; num_layers_per_virtual_pipeline_stage
  // cannot be given beside it.
  if (const std::string& layout = l.pipeline_model_parallel_layout();
      !layout.empty() && l.virtual_pipeline_model_parallel_size() == 0) {
    constexpr std::string_view kLayout =
        "layout.pipeline_model_parallel_layout";
    auto stages = models::CountLayoutStages(layout);
    if (!stages)
      return std::unexpected(at.Wrap(kLayout, stages.error().message));
    const int pp = l.pipeline_model_parallel_size();
    if (pp == 1 && *stages > 1) {
      return std::unexpected(at.Error(
          kLayout, "has " + std::to_string(*stages) +
                       " stages but pipeline_model_parallel_size is 1: set "
                       "it to the pipeline's ranks (VPP = stages / PP)"));
    }
    if (*stages % pp != 0) {
      return std::unexpected(at.Error(
          kLayout,
          "has " + std::to_string(*stages) +
              " stages, not a multiple of pipeline_model_parallel_size " +
              std::to_string(pp) + " (Megatron-LM sets VPP = stages / PP)"));
    }
    l.set_virtual_pipeline_model_parallel_size(
        static_cast<int32_t>(*stages / pp));
    d.Note("virtual_pipeline_model_parallel_size",
           std::to_string(*stages / pp) + " (the layout's " +
               std::to_string(*stages) + " stages / PP " + std::to_string(pp) +
               ")");
  }
  return {};
}

// The layout's unset sizes, VPP, micro- and global batch (FillDefaults).
Result<void> FillLayoutDefaults(Scenario& s, const FieldNamer& at,
                                Defaults& d) {
  Layout& l = *s.mutable_layout();
  d.Int("tensor_model_parallel_size", 1,
        &Layout::set_tensor_model_parallel_size, l.tensor_model_parallel_size(),
        l);
  d.Int("context_parallel_size", 1, &Layout::set_context_parallel_size,
        l.context_parallel_size(), l);
  d.Int("expert_model_parallel_size", 1,
        &Layout::set_expert_model_parallel_size, l.expert_model_parallel_size(),
        l);
  d.Int("expert_tensor_parallel_size", 1,
        &Layout::set_expert_tensor_parallel_size,
        l.expert_tensor_parallel_size(), l);
  d.Int("pipeline_model_parallel_size", 1,
        &Layout::set_pipeline_model_parallel_size,
        l.pipeline_model_parallel_size(), l);
  if (auto ok = VppFromLayersPerStage(s, at); !ok) return ok;
  if (auto ok = UnevenPipelineLayout(s, at, d); !ok)
    return std::unexpected(ok.error());
  if (auto ok = VppFromLayoutString(s, at, d); !ok) return ok;
  d.Int("virtual_pipeline_model_parallel_size", 1,
        &Layout::set_virtual_pipeline_model_parallel_size,
        l.virtual_pipeline_model_parallel_size(), l);
  d.Int("micro_batch_size", 1, &Layout::set_micro_batch_size,
        l.micro_batch_size(), l);
  // One micro-batch per data-parallel rank; with an interleaved pipeline, PP
  // of them, the fewest Megatron-Core's interleaved schedule accepts (see
  // CheckSequenceAndBatch in rules.cc). DP is only meaningful when the
  // attention mesh divides the GPUs; CheckRules reports it when it does not.
  const int attention = l.tensor_model_parallel_size() *
                        l.context_parallel_size() *
                        l.pipeline_model_parallel_size();
  const int dp = s.num_gpus() % attention == 0 ? s.num_gpus() / attention : 1;
  // micro_batch_size and DP are each within limits (CheckLimits), their
  // product need not be.
  const int64_t default_gbs = int64_t{l.micro_batch_size()} * dp *
                              (l.virtual_pipeline_model_parallel_size() > 1
                                   ? l.pipeline_model_parallel_size()
                                   : 1);
  if (l.global_batch_size() == 0 && default_gbs > kMaxGlobalBatch) {
    return std::unexpected(at.Error(
        "layout.global_batch_size",
        "the default micro_batch_size*DP = " + std::to_string(default_gbs) +
            " is above the limit of " + std::to_string(kMaxGlobalBatch) +
            " sequences"));
  }
  d.Int("global_batch_size", static_cast<int>(default_gbs),
        &Layout::set_global_batch_size, l.global_batch_size(), l);
  return {};
}

// The training options' defaults, by the defaults in force (Megatron-Bridge
// or Megatron-LM; FillDefaults).
Result<void> FillTrainingDefaults(Scenario& s, const models::Model& model,
                                  const FieldNamer& at, Defaults& d,
                                  std::vector<std::string>& warnings) {
  Layout& l = *s.mutable_layout();
  if (s.defaults() != "" && s.defaults() != "megatron-bridge" &&
      s.defaults() != "megatron-lm") {
    return std::unexpected(
        at.Error("defaults", "unknown '" + s.defaults().substr(0, 40) +
                                 "' (megatron-bridge, megatron-lm)"));
  }
  // Megatron-LM's own defaults (megatron/training/arguments.py and
  // TransformerConfig): --sequence-parallel, --use-distributed-optimizer
  // and --manual-gc are store_true flags, off unless given; the router runs
  // as trained (moe_router_force_load_balancing False); the optimizer keeps
  // fp32 main grads and moments; no recipe layouts.
  const bool mlm = s.defaults() == "megatron-lm";
  if (!l.has_sequence_parallel() && mlm) {
    l.set_sequence_parallel(false);
    d.Note("sequence_parallel", "false (Megatron-LM)");
  } else if (!l.has_sequence_parallel()) {
    l.set_sequence_parallel(l.tensor_model_parallel_size() > 1);
    d.Note("sequence_parallel", l.sequence_parallel() ? "true" : "false");
  } else if (l.sequence_parallel() && l.tensor_model_parallel_size() == 1) {
    // Megatron turns sequence parallelism off when TP is 1.
    l.set_sequence_parallel(false);
    warnings.push_back(
        at.Where("layout.sequence_parallel") +
        ": no effect with tensor_model_parallel_size 1; turned off");
  }
  if (s.seq_length() == 0) {
    s.set_seq_length(kDefaultSeqLength);
    d.Note("seq_length", std::to_string(kDefaultSeqLength));
  }
  if (mlm && s.precision().empty()) {
    warnings.push_back(
        "no --bf16, --fp8-format or --fp4-format: Megatron-LM would train in "
        "FP32, which moesim does not model; simulating BF16");
  }
  if (mlm && s.dispatcher().empty() && model.num_moe_experts() > 0) {
    warnings.push_back(
        "no --moe-token-dispatcher-type: Megatron-LM's default is allgather "
        "(TransformerConfig), which moesim does not model; simulating "
        "alltoall");
  }
  d.String("precision", "bf16", s.mutable_precision());
  d.String("dispatcher", "alltoall", s.mutable_dispatcher());
  d.String("pipeline_schedule", "1f1b", s.mutable_pipeline_schedule());
  d.String("routing", mlm ? "dropless_natural" : "force_balanced",
           s.mutable_routing());
  if (s.routing() == "tokendrop" && s.moe_expert_capacity_factor() == 0) {
    // Token drop without a capacity factor: Megatron-Bridge's token-drop
    // helper's defaults, capacity 1.0 padded to capacity
    // (NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/utils/
    // moe_token_drop.py apply_moe_token_drop(moe_expert_capacity_factor=1.0,
    // moe_pad_expert_input_to_capacity=True)). proto3 cannot tell an unset
    // pad flag from false, so both come from the helper together.
    s.set_moe_expert_capacity_factor(1.0);
    s.set_moe_pad_expert_input_to_capacity(true);
    d.Note("moe_expert_capacity_factor", "1.0");
    d.Note("moe_pad_expert_input_to_capacity", "true");
  }
  if (s.routing() == "dropless_natural" && s.moe_routing_skew() == 0 &&
      s.moe_routing_histogram_size() == 0 && model.num_moe_experts() > 0) {
    // Natural routing without a measured distribution: the replay has no
    // skew to apply, so say that the experts come out balanced.
    d.Note("moe_routing_skew", "0 (no skew or histogram: balanced experts)");
  }
  d.String("cuda_graph", "none", s.mutable_cuda_graph());
  d.String("cp_comm_type", "p2p", s.mutable_cp_comm_type());
  Recompute& rc = *s.mutable_recompute();
  if (rc.granularity().empty()) {
    if (rc.modules_size() > 0) {
      rc.set_granularity("selective");
      d.Note("recompute.granularity", "selective");
    } else {
      d.Note("recompute.granularity", "none");
    }
  } else if (rc.granularity() == "selective" && rc.modules_size() == 0) {
    // MCore's default selective list.
    rc.add_modules("core_attn");
    d.Note("recompute.modules", "core_attn");
  }
  if (!s.has_use_distributed_optimizer()) {
    s.set_use_distributed_optimizer(!mlm);
    d.Note("use_distributed_optimizer", mlm ? "false (Megatron-LM)" : "true");
  }
  if (!s.has_manual_gc()) {
    s.set_manual_gc(!mlm);
    d.Note("manual_gc", mlm ? "false (Megatron-LM)" : "true");
  }
  // Only a non-interleaved pipeline batches its exchanges, so only there is
  // the default worth naming.
  if (!s.has_batch_p2p_sync()) {
    s.set_batch_p2p_sync(true);
    if (l.pipeline_model_parallel_size() > 1 &&
        l.virtual_pipeline_model_parallel_size() <= 1) {
      d.Note("batch_p2p_sync", "true");
    }
  }
  if (s.use_megatron_fsdp() && s.data_parallel_sharding_strategy().empty()) {
    s.set_data_parallel_sharding_strategy("no_shard");
    d.Note("data_parallel_sharding_strategy", "no_shard");
  }
  return {};
}

// The model's Megatron-Bridge recipe: its pipeline layout for this (PP,
// VPP) and its optimizer dtypes (FillDefaults).
void FillRecipeDefaults(Scenario& s, const models::Model& model, Defaults& d) {
  Layout& l = *s.mutable_layout();
  const bool mlm = s.defaults() == "megatron-lm";
  // A Megatron-LM launch has no Bridge recipe.
  const models::RecipeDefaults& recipe =
      mlm ? models::RecipeDefaults::default_instance() : model.recipe();
  // The recipe's pipeline layout for this (PP, VPP), where it has one and it
  // fits the effective depth (a num_layers or mtp_num_layers override keeps
  // the even or accounted split of Resolve()).
  if (l.pipeline_model_parallel_layout().empty()) {
    for (const models::PipelineLayoutDefault& entry :
         recipe.pipeline_layouts()) {
      if (entry.pp() != l.pipeline_model_parallel_size() ||
          entry.vpp() != l.virtual_pipeline_model_parallel_size() ||
          !models::ParsePipelineLayout(entry.layout(), s.num_layers(),
                                       s.mtp_num_layers(), entry.pp(),
                                       entry.vpp())) {
        continue;
      }
      l.set_pipeline_model_parallel_layout(entry.layout());
      d.Note("pipeline_model_parallel_layout",
             entry.layout() + " (the Megatron-Bridge recipe's layout for PP " +
                 std::to_string(entry.pp()) + ", VPP " +
                 std::to_string(entry.vpp()) + ")");
      break;
    }
  }
  // Optimizer dtypes: the model's Megatron-Bridge recipe, else fp32.
  if (!s.use_precision_aware_optimizer() &&
      recipe.use_precision_aware_optimizer()) {
    s.set_use_precision_aware_optimizer(true);
    d.Note("use_precision_aware_optimizer", "true");
  }
  d.String(
      "main_grads_dtype",
      recipe.main_grads_dtype().empty() ? "fp32" : recipe.main_grads_dtype(),
      s.mutable_main_grads_dtype());
  d.String("exp_avg_dtype",
           recipe.exp_avg_dtype().empty() ? "fp32" : recipe.exp_avg_dtype(),
           s.mutable_exp_avg_dtype());
}

// Fills every unset field with the Megatron-Bridge recipe default.
// REQUIRES: CheckSet passed and s.num_layers() is the model's depth.
Result<void> FillDefaults(Scenario& s, const models::Model& model,
                          const FieldNamer& at, std::vector<std::string>& used,
                          std::vector<std::string>& warnings) {
  Defaults d(used);
  if (auto ok = FillLayoutDefaults(s, at, d); !ok) return ok;
  if (auto ok = FillTrainingDefaults(s, model, at, d, warnings); !ok) return ok;
  FillRecipeDefaults(s, model, d);
  return {};
}

// ---- The string-valued options -------------------------------------------

constexpr std::string_view kModules = "recompute.modules";
constexpr std::string_view kGranularity = "recompute.granularity";

Result<models::Recompute> ParseRecompute(const Recompute& spec,
                                         const FieldNamer& at) {
  models::Recompute out;
  const std::string& granularity = spec.granularity();
  if (granularity != "" && granularity != "selective" &&
      granularity != "full") {
    return std::unexpected(at.Error(
        kGranularity,
        "unknown '" + granularity + "' (selective, full, or empty for none)"));
  }
  for (const std::string& name : spec.modules()) {
    if (auto ok = AddRecomputeModule(name, out); !ok)
      return std::unexpected(at.Error(kModules, ok.error().message));
  }
  if (granularity == "full") {
    // "full overrides the selective lists" (seeds_notes.md §5): keep the
    // selective flags off so nothing downstream double counts.
    out = models::Recompute{};
    out.full = true;
    if (spec.method() == "block") {
      out.full_block = true;
    } else if (spec.method() != "uniform") {
      return std::unexpected(
          at.Error("recompute.method",
                   spec.method().empty()
                       ? "full recompute needs method uniform or block"
                       : "unknown '" + spec.method() + "' (uniform, block)"));
    }
    if (spec.num_layers() < 1) {
      return std::unexpected(at.Error(
          "recompute.num_layers", "full recompute needs num_layers >= 1, got " +
                                      std::to_string(spec.num_layers())));
    }
    out.full_num_layers = spec.num_layers();
  }
  return out;
}

// Bytes per element of an optimizer dtype; 0 when unknown.
int DtypeBytes(std::string_view dtype) {
  if (dtype == "fp32" || dtype == "float32") return 4;
  if (dtype == "bf16" || dtype == "bfloat16" || dtype == "fp16" ||
      dtype == "float16")
    return 2;
  if (dtype == "fp8") return 1;
  return 0;
}

// Parses precision, dispatcher, pipeline schedule, routing, cuda_graph,
// cp_comm_type, recompute
// and the optimizer dtypes of `spec` (defaults filled) into `out`. Errors name
// the field and list the accepted values.
Result<void> ParseOptions(const Scenario& spec, const FieldNamer& at,
                          models::TrainingOptions& out) {
  auto precision = ParsePrecision(spec.precision());
  if (!precision)
    return std::unexpected(at.Error("precision", precision.error().message));
  out.precision = *precision;
  auto dispatcher = ParseDispatcher(spec.dispatcher());
  if (!dispatcher)
    return std::unexpected(at.Error("dispatcher", dispatcher.error().message));
  out.dispatcher = *dispatcher;
  auto schedule = ParsePipelineSchedule(spec.pipeline_schedule());
  if (!schedule) {
    return std::unexpected(
        at.Error("pipeline_schedule", schedule.error().message));
  }
  out.pipeline_schedule = *schedule;
  auto routing = ParseRouting(spec.routing());
  if (!routing)
    return std::unexpected(at.Error("routing", routing.error().message));
  out.routing = *routing;
  auto graph = ParseCudaGraph(spec.cuda_graph());
  if (!graph)
    return std::unexpected(at.Error("cuda_graph", graph.error().message));
  out.cuda_graph = *graph;
  auto cp_comm = ParseCpCommType(spec.cp_comm_type());
  if (!cp_comm)
    return std::unexpected(at.Error("cp_comm_type", cp_comm.error().message));
  out.cp_comm_type = *cp_comm;
  out.hierarchical_cp_sizes.assign(
      spec.hierarchical_context_parallel_sizes().begin(),
      spec.hierarchical_context_parallel_sizes().end());
  auto recompute = ParseRecompute(spec.recompute(), at);
  if (!recompute) return std::unexpected(recompute.error());
  out.recompute = *recompute;

  const int grad_bytes = DtypeBytes(spec.main_grads_dtype());
  if (grad_bytes != 4 && grad_bytes != 2) {
    return std::unexpected(
        at.Error("main_grads_dtype",
                 "unknown '" + spec.main_grads_dtype() + "' (fp32, bf16)"));
  }
  const int moment_bytes = DtypeBytes(spec.exp_avg_dtype());
  if (moment_bytes == 0) {
    return std::unexpected(at.Error(
        "exp_avg_dtype",
        "unknown '" + spec.exp_avg_dtype() + "' (fp32, bf16, fp16, fp8)"));
  }
  out.main_grad_bytes = grad_bytes;
  out.exp_avg_bytes = moment_bytes;
  out.main_param_bytes = 4;
  out.moe_expert_capacity_factor = spec.moe_expert_capacity_factor();
  out.ep_overlap = spec.overlap_moe_expert_parallel_comm();
  out.shared_expert_overlap = spec.moe_shared_expert_overlap();
  out.delay_wgrad_compute = spec.delay_wgrad_compute();
  out.moe_pad_expert_input_to_capacity =
      spec.moe_pad_expert_input_to_capacity();
  out.distributed_optimizer = spec.use_distributed_optimizer();
  out.precision_aware_optimizer = spec.use_precision_aware_optimizer();
  out.fp8_param_gather = spec.fp8_param_gather();
  out.fp8_dot_product_attention = spec.fp8_dot_product_attention();
  out.optimizer_offload_fraction = spec.optimizer_offload_fraction();
  out.offload_overlap = spec.overlap_cpu_optimizer_d2h_h2d();
  out.routing_skew = spec.moe_routing_skew();
  out.routing_histogram.assign(spec.moe_routing_histogram().begin(),
                               spec.moe_routing_histogram().end());
  out.cpu_offloading = spec.cpu_offloading();
  out.cpu_offloading_num_layers = spec.cpu_offloading_num_layers();
  if (spec.fine_grained_activation_offloading()) {
    models::ActivationOffload& o = out.activation_offload;
    for (const std::string& name : spec.offload_modules()) {
      const int m = models::OffloadModuleIndex(name);
      if (m < 0) {
        return std::unexpected(at.Error(
            "offload_modules",
            "unknown '" + name + "' (" + models::OffloadModuleList() + ")"));
      }
      o.modules[m] = true;
    }
    if (spec.has_activation_offload_fraction())
      o.fraction = spec.activation_offload_fraction();
    if (spec.has_min_offloaded_tensor_size())
      o.min_tensor_elements = spec.min_offloaded_tensor_size();
  }
  out.offload_optimizer_states = spec.offload_optimizer_states();
  const std::string& sharding = spec.data_parallel_sharding_strategy();
  if (!sharding.empty() && sharding != "no_shard" && sharding != "optim" &&
      sharding != "optim_grads" && sharding != "optim_grads_params") {
    return std::unexpected(
        at.Error("data_parallel_sharding_strategy",
                 "unknown '" + sharding +
                     "' (no_shard, optim, optim_grads, optim_grads_params)"));
  }
  if (spec.use_megatron_fsdp()) {
    // Megatron-FSDP's no_shard keeps every state whole on every rank; the
    // other strategies shard the optimizer state at least.
    out.distributed_optimizer = sharding != "no_shard";
    out.shard_grads =
        sharding == "optim_grads" || sharding == "optim_grads_params";
    out.shard_params = sharding == "optim_grads_params";
  }
  out.manual_gc = spec.manual_gc();
  out.batch_p2p_sync = spec.batch_p2p_sync();
  return {};
}

models::Parallelism ParallelismOf(const Scenario& s) {
  const Layout& l = s.layout();
  models::Parallelism p;
  p.tp = l.tensor_model_parallel_size();
  p.cp = l.context_parallel_size();
  p.pp = l.pipeline_model_parallel_size();
  p.vpp = l.virtual_pipeline_model_parallel_size();
  p.ep = l.expert_model_parallel_size();
  p.etp = l.expert_tensor_parallel_size();
  // Exact when the meshes divide num_gpus (CheckRules); 1 keeps the values
  // sane until then.
  const int attention = p.tp * p.cp * p.pp, moe = p.etp * p.ep * p.pp;
  p.dp = s.num_gpus() % attention == 0 ? s.num_gpus() / attention : 1;
  p.edp = s.num_gpus() % moe == 0 ? s.num_gpus() / moe : 1;
  p.sequence_parallel = l.sequence_parallel();
  return p;
}

bool LayoutEmpty(const ResolvedScenario& r) {
  return r.spec.layout().pipeline_model_parallel_layout().empty();
}

Result<models::PipelinePlan> PlanPipeline(const ResolvedScenario& r,
                                          const FieldNamer& at) {
  const std::string& layout = r.spec.layout().pipeline_model_parallel_layout();
  const int64_t layers = r.model.num_layers(), mtp = r.model.mtp_num_layers();
  if (!layout.empty()) {
    auto plan = models::ParsePipelineLayout(layout, layers, mtp, r.parallel.pp,
                                            r.parallel.vpp);
    if (!plan) {
      return std::unexpected(at.Wrap("layout.pipeline_model_parallel_layout",
                                     plan.error().message));
    }
    return plan;
  }
  auto plan =
      models::UniformPipeline(layers, mtp, r.parallel.pp, r.parallel.vpp);
  if (!plan) {
    return std::unexpected(
        at.Wrap("layout.pipeline_model_parallel_size", plan.error().message));
  }
  return plan;
}

}  // namespace

void ResolvePathsAgainst(Scenario& scenario, std::string_view dir) {
  if (dir.empty()) return;
  auto resolve = [dir](const std::string& value) {
    const bool is_path = value.find('/') != std::string::npos ||
                         value.ends_with(".json") ||
                         value.ends_with(".textproto");
    const std::filesystem::path path(value);
    if (!is_path || !path.is_relative()) return value;
    return (std::filesystem::path(dir) / path).string();
  };
  if (!scenario.model().empty()) scenario.set_model(resolve(scenario.model()));
  if (!scenario.system().empty())
    scenario.set_system(resolve(scenario.system()));
}

Result<Scenario> ParseScenario(std::string_view text, std::string_view file) {
  Scenario scenario;
  if (auto ok = util::ParseTextProto(text, file, scenario); !ok)
    return std::unexpected(ok.error());
  ResolvePathsAgainst(scenario,
                      std::filesystem::path(file).parent_path().string());
  return scenario;
}

Result<Scenario> LoadScenario(const std::string& path) {
  auto text = util::ReadFile(path);
  if (!text) return std::unexpected(text.error());
  return ParseScenario(*text, path);
}

Result<ResolvedScenario> Resolve(const Scenario& spec, std::string_view origin,
                                 std::string_view text,
                                 std::span<const std::string> flag_paths) {
  const FieldNamer at(origin, text, flag_paths);
  ResolvedScenario r;
  r.spec = spec;
  Scenario& s = r.spec;
  if (auto ok = CheckRequired(s, at); !ok) return std::unexpected(ok.error());
  if (auto ok = CheckSet(s, at); !ok) return std::unexpected(ok.error());
  if (auto ok = internal::CheckLimits(s, at); !ok)
    return std::unexpected(ok.error());

  auto model = LoadOverriddenModel(s, at);
  if (!model) return std::unexpected(model.error());
  r.model = std::move(*model);
  auto system = topology::LoadSystem(s.system());
  if (!system)
    return std::unexpected(at.Wrap("system", system.error().message));
  r.system = std::move(*system);

  if (auto ok = FillDefaults(s, r.model, at, r.defaults_used, r.warnings);
      !ok) {
    return std::unexpected(ok.error());
  }
  r.parallel = ParallelismOf(s);
  models::TrainingOptions& t = r.training;
  t.seq_length = s.seq_length();
  t.micro_batch_size = s.layout().micro_batch_size();
  t.global_batch_size = s.layout().global_batch_size();
  t.dp_for_gbs = r.parallel.dp;
  if (auto ok = ParseOptions(s, at, t); !ok) return std::unexpected(ok.error());
  if (auto ok = internal::CheckRules(r, at, r.warnings); !ok)
    return std::unexpected(ok.error());
  if (auto ok = internal::CheckStepLimits(r, at); !ok)
    return std::unexpected(ok.error());
  // The net under the fields' own rules above: every number of a scenario
  // is finite and >= 0 (none has a meaning below 0), so no field that a
  // rule forgets reaches the replay negative, NaN or infinite.
  if (auto bad = util::FindOutOfRange(s, kMaxScenarioFieldValue))
    return std::unexpected(at.Error(bad->path, bad->rule));

  // No layout and an uneven split: Megatron-Bridge counts the embedding and
  // the loss as layers (models::AccountedLayout).
  if (LayoutEmpty(r) &&
      r.model.num_layers() % (int64_t{r.parallel.pp} * r.parallel.vpp) != 0) {
    const std::string layout =
        models::AccountedLayout(r.model.num_layers(), r.model.mtp_num_layers(),
                                r.parallel.pp, r.parallel.vpp);
    if (!layout.empty()) {
      r.spec.mutable_layout()->set_pipeline_model_parallel_layout(layout);
      r.defaults_used.push_back(
          "pipeline_model_parallel_layout=" + layout +
          " (account_for_embedding/loss_in_pipeline_split)");
    }
  }
  auto plan = PlanPipeline(r, at);
  if (!plan) return std::unexpected(plan.error());
  r.pipeline = std::move(*plan);
  return r;
}

}  // namespace moesim::scenarios
