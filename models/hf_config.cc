#include "models/hf_config.h"

#include <google/protobuf/struct.pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "models/zoo.h"
#include "util/json_check.h"

namespace moesim::models {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr std::string_view kSupportedTypes[] = {
    "deepseek_v3", "kimi_k2", "qwen3_moe", "qwen3_next",
    "gpt_oss",     "mixtral", "llama",     "qwen3"};

std::string SupportedList() {
  std::string out;
  for (std::string_view type : kSupportedTypes) {
    if (!out.empty()) out += ", ";
    out += type;
  }
  return out;
}

// Typed access to the top-level keys of one config.json. Accessors never fail
// outright: the first problem (a missing required key, a value of the wrong
// type) is kept in error() and later calls return neutral values, so a family
// mapper reads all its keys and checks error() once at the end.
class ConfigReader {
 public:
  ConfigReader(const Struct& json, std::string_view file,
               std::string_view model_type)
      : json_(json), file_(file), model_type_(model_type) {}

  // The value of `key`, or nullptr when the key is absent or JSON null.
  const Value* Find(std::string_view key) const {
    auto it = json_.fields().find(std::string(key));
    if (it == json_.fields().end() || it->second.has_null_value())
      return nullptr;
    return &it->second;
  }
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // True when `key` is written in the file, even as null.
  bool Present(std::string_view key) const {
    return json_.fields().contains(std::string(key));
  }

  // Required integer. Records "<key>: missing (required for model_type X)".
  int64_t Int(std::string_view key) {
    const Value* v = Find(key);
    if (v == nullptr) {
      Fail(key, "missing (required for model_type " + model_type_ + ")");
      return 0;
    }
    return AsInt(key, *v);
  }
  // Required integer that counts something (heads, widths): >= 1.
  int64_t PositiveInt(std::string_view key) { return Positive(key, Int(key)); }
  // Optional count: `fallback` when absent or null, else >= 1 (a 0 would
  // read as moesim's "derive it" default, silently).
  int64_t PositiveIntOr(std::string_view key, int64_t fallback) {
    return Find(key) == nullptr ? fallback : Positive(key, IntOr(key, 0));
  }
  // Optional integer: `fallback` when absent or null.
  int64_t IntOr(std::string_view key, int64_t fallback) {
    const Value* v = Find(key);
    return v == nullptr ? fallback : AsInt(key, *v);
  }
  // Optional boolean: `fallback` when absent or null.
  bool BoolOr(std::string_view key, bool fallback) {
    const Value* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->has_bool_value()) {
      Fail(key, "expected true or false, got " + Describe(*v));
      return fallback;
    }
    return v->bool_value();
  }
  // Optional string: `fallback` when absent or null.
  std::string StringOr(std::string_view key, std::string_view fallback) {
    const Value* v = Find(key);
    if (v == nullptr) return std::string(fallback);
    if (!v->has_string_value()) {
      Fail(key, "expected a string, got " + Describe(*v));
      return std::string(fallback);
    }
    return v->string_value();
  }
  // Optional list of integers: empty when absent or null.
  std::vector<int64_t> IntList(std::string_view key) {
    std::vector<int64_t> out;
    const Value* v = Find(key);
    if (v == nullptr) return out;
    if (!v->has_list_value()) {
      Fail(key, "expected a list of integers, got " + Describe(*v));
      return out;
    }
    for (const Value& item : v->list_value().values())
      out.push_back(AsInt(key, item));
    return out;
  }

  // Records `<file>: <key>: <rule>` unless an earlier error is kept.
  void Fail(std::string_view key, const std::string& rule) {
    if (!error_)
      error_ = util::Error{file_ + ": " + std::string(key) + ": " + rule};
  }
  const std::optional<util::Error>& error() const { return error_; }
  const std::string& model_type() const { return model_type_; }

  // Short rendering of a JSON value for error messages.
  static std::string Describe(const Value& v) {
    switch (v.kind_case()) {
      case Value::kNumberValue: {
        std::ostringstream out;
        out.precision(17);
        out << v.number_value();
        return out.str();
      }
      case Value::kStringValue:
        return "'" + v.string_value() + "'";
      case Value::kBoolValue:
        return v.bool_value() ? "true" : "false";
      case Value::kListValue:
        return "a list";
      case Value::kStructValue:
        return "an object";
      default:
        return "null";
    }
  }

 private:
  int64_t Positive(std::string_view key, int64_t value) {
    if (Find(key) != nullptr && value < 1)
      Fail(key, "must be >= 1, got " + std::to_string(value));
    return value;
  }
  int64_t AsInt(std::string_view key, const Value& v) {
    // JSON numbers arrive as doubles; integers up to 2^53 are exact.
    constexpr double kMaxExact = 9007199254740992.0;
    if (!v.has_number_value() ||
        std::trunc(v.number_value()) != v.number_value() ||
        std::fabs(v.number_value()) > kMaxExact) {
      Fail(key, "expected an integer, got " + Describe(v));
      return 0;
    }
    return static_cast<int64_t>(v.number_value());
  }

  const Struct& json_;
  std::string file_;
  std::string model_type_;
  std::optional<util::Error> error_;
};

// Stores a per-layer MoE pattern (1 = MoE layer) as Megatron's explicit
// --moe-layer-freq list; an all-MoE pattern is stored as the empty list,
// which model.proto defines as "every layer is MoE".
void SetMoeLayerPattern(const std::vector<int32_t>& pattern, Model& model) {
  model.clear_moe_layer_freq();
  bool all_moe = true;
  for (int32_t flag : pattern) all_moe = all_moe && flag == 1;
  if (all_moe) return;
  for (int32_t flag : pattern) model.add_moe_layer_freq(flag);
}

// YaRN RoPE (transformers' modeling_rope_utils.py: rope_scaling with "type"
// or "rope_type" "yarn", its "factor", and optionally "mscale" and
// "mscale_all_dim", the keys Megatron-Bridge's bridges copy into
// yarn_rotary_scaling_factor / yarn_mscale / yarn_mscale_all_dim). Other
// rope_scaling types (Llama 3.1's "llama3") only rescale the frequencies at
// initialization: nothing the step's cost depends on.
void ReadRopeScaling(ConfigReader& cfg, Model& model) {
  const Value* v = cfg.Find("rope_scaling");
  if (v == nullptr) return;
  if (!v->has_struct_value()) {
    cfg.Fail("rope_scaling",
             "expected an object or null, got " + ConfigReader::Describe(*v));
    return;
  }
  const auto& f = v->struct_value().fields();
  auto text = [&](const char* key) -> std::string {
    auto it = f.find(key);
    return it != f.end() && it->second.has_string_value()
               ? it->second.string_value()
               : "";
  };
  if (text("type") != "yarn" && text("rope_type") != "yarn") return;
  auto number = [&](const char* key, bool required) -> std::optional<double> {
    auto it = f.find(key);
    if (it == f.end() || it->second.has_null_value()) {
      if (required)
        cfg.Fail(std::string("rope_scaling.") + key,
                 "missing (required for yarn)");
      return std::nullopt;
    }
    if (!it->second.has_number_value() || it->second.number_value() < 0) {
      cfg.Fail(
          std::string("rope_scaling.") + key,
          "expected a number >= 0, got " + ConfigReader::Describe(it->second));
      return std::nullopt;
    }
    return it->second.number_value();
  };
  if (auto s = number("factor", true)) model.set_yarn_rotary_scaling_factor(*s);
  if (auto m = number("mscale", false)) model.set_yarn_mscale(*m);
  if (auto m = number("mscale_all_dim", false))
    model.set_yarn_mscale_all_dim(*m);
}

// Fields every supported family carries under the same HF names
// (transformers' configuration_<family>.py).
void ReadCommon(ConfigReader& cfg, Model& model) {
  // Bounded here: the families' readers build per-layer patterns from it.
  int64_t layers = cfg.Int("num_hidden_layers");
  if (layers > kMaxModelLayers) {
    cfg.Fail("num_hidden_layers", std::to_string(layers) +
                                      " is above the limit of " +
                                      std::to_string(kMaxModelLayers));
    layers = 0;
  }
  model.set_num_layers(layers);
  model.set_hidden_size(cfg.Int("hidden_size"));
  model.set_ffn_hidden_size(cfg.PositiveInt("intermediate_size"));
  model.set_num_attention_heads(cfg.Int("num_attention_heads"));
  model.set_vocab_size(cfg.Int("vocab_size"));
  // Every supported family defaults tie_word_embeddings to false in HF, and
  // Megatron's --untie-embeddings-and-output-weights is its negation.
  model.set_untie_embeddings_and_output_weights(
      !cfg.BoolOr("tie_word_embeddings", false));
  ReadRopeScaling(cfg, model);
  if (cfg.model_type() == "gpt_oss") {
    // GPT-OSS's clamped SwiGLU (alpha 1.702, limit 7) is Megatron's
    // quick_geglu (Megatron-Bridge gpt_oss_provider.py); HF still writes
    // hidden_act "silu" for it, so the key is not consulted.
    model.set_activation("quick_geglu");
  } else {
    std::string act =
        cfg.StringOr("hidden_act", "silu");  // HF default for all families here
    if (act != "silu")
      cfg.Fail("hidden_act", "unsupported '" + act + "'; expected 'silu'");
    model.set_activation(
        "swiglu");  // gated SiLU MLP (gate_proj/up_proj/down_proj)
  }
}

// GQA attention: num_key_value_heads and head_dim. HF's rule for both
// defaults: KV heads = attention heads (MHA), head_dim = hidden / heads.
void ReadGqa(ConfigReader& cfg, Model& model) {
  int64_t heads = model.num_attention_heads();
  model.set_num_query_groups(cfg.PositiveIntOr("num_key_value_heads", heads));
  int64_t default_head_dim = heads > 0 ? model.hidden_size() / heads : 0;
  model.set_kv_channels(cfg.PositiveIntOr("head_dim", default_head_dim));
}

// DeepSeek-V3 and Kimi-K2 (same keys; HF configuration_deepseek_v3.py).
// Megatron mapping: Megatron-Bridge deepseek_provider.py / kimi_provider.py.
void ReadDeepSeekV3(ConfigReader& cfg, Model& model) {
  model.set_multi_latent_attention(true);
  // q_lora_rank null (Moonlight, DeepSeek-V2-Lite) = no q compression = 0.
  if (!cfg.Present("q_lora_rank")) {
    cfg.Fail("q_lora_rank", "missing (required for model_type " +
                                cfg.model_type() +
                                "; null means no q compression)");
  }
  model.set_q_lora_rank(cfg.IntOr("q_lora_rank", 0));
  model.set_kv_lora_rank(cfg.Int("kv_lora_rank"));
  model.set_qk_head_dim(cfg.Int("qk_nope_head_dim"));
  model.set_qk_pos_emb_head_dim(cfg.Int("qk_rope_head_dim"));
  model.set_v_head_dim(cfg.Int("v_head_dim"));

  int64_t experts = cfg.PositiveInt("n_routed_experts");
  int64_t expert_ffn = cfg.PositiveInt("moe_intermediate_size");
  model.set_num_moe_experts(experts);
  model.set_moe_router_topk(cfg.Int("num_experts_per_tok"));
  model.set_moe_ffn_hidden_size(expert_ffn);
  // Megatron's shared-expert size is the total over shared experts.
  model.set_moe_shared_expert_intermediate_size(
      cfg.IntOr("n_shared_experts", 0) * expert_ffn);

  // Layer i is MoE iff i >= first_k_dense_replace and i % moe_layer_freq == 0
  // (DeepSeek-V3 modeling_deepseek.py, DeepseekV3DecoderLayer). A list-valued
  // moe_layer_freq is taken as Megatron's explicit 0/1 pattern.
  int64_t layers = model.num_layers();
  int64_t first_dense = cfg.IntOr("first_k_dense_replace", 0);
  std::vector<int32_t> pattern;
  const Value* freq_value = cfg.Find("moe_layer_freq");
  if (freq_value != nullptr && freq_value->has_list_value()) {
    for (int64_t flag : cfg.IntList("moe_layer_freq")) {
      if (flag != 0 && flag != 1)
        cfg.Fail("moe_layer_freq", "list entries must be 0 or 1");
      pattern.push_back(static_cast<int32_t>(flag));
    }
    if (static_cast<int64_t>(pattern.size()) != layers) {
      cfg.Fail("moe_layer_freq", "has " + std::to_string(pattern.size()) +
                                     " entries, expected num_hidden_layers = " +
                                     std::to_string(layers));
    }
  } else {
    int64_t freq = cfg.IntOr("moe_layer_freq", 1);
    if (freq <= 0) cfg.Fail("moe_layer_freq", "must be > 0");
    for (int64_t i = 0; i < layers && freq > 0; ++i) {
      pattern.push_back(i >= first_dense && i % freq == 0 ? 1 : 0);
    }
  }
  SetMoeLayerPattern(pattern, model);
  model.set_mtp_num_layers(cfg.IntOr("num_nextn_predict_layers", 0));
}

// Qwen3 MoE layer pattern (configuration_qwen3_moe.py / modeling): layer i is
// sparse iff i is not in mlp_only_layers and (i + 1) % decoder_sparse_step ==
// 0.
void ReadQwenMoeLayers(ConfigReader& cfg, Model& model) {
  int64_t step = cfg.IntOr("decoder_sparse_step", 1);
  if (step <= 0) cfg.Fail("decoder_sparse_step", "must be > 0");
  std::vector<int64_t> dense_only = cfg.IntList("mlp_only_layers");
  for (int64_t layer : dense_only) {
    if (layer < 0 || layer >= model.num_layers()) {
      cfg.Fail("mlp_only_layers", "layer " + std::to_string(layer) +
                                      " is not in [0, " +
                                      std::to_string(model.num_layers()) +
                                      ") (num_hidden_layers)");
      break;
    }
  }
  std::vector<int32_t> pattern;
  for (int64_t i = 0; i < model.num_layers() && step > 0; ++i) {
    bool listed =
        std::find(dense_only.begin(), dense_only.end(), i) != dense_only.end();
    pattern.push_back(!listed && (i + 1) % step == 0 ? 1 : 0);
  }
  SetMoeLayerPattern(pattern, model);
}

// Qwen3-MoE (configuration_qwen3_moe.py; Megatron-Bridge qwen_provider.py
// Qwen3MoEModelProvider sets qk_layernorm).
void ReadQwen3Moe(ConfigReader& cfg, Model& model) {
  ReadGqa(cfg, model);
  model.set_qk_layernorm(true);
  model.set_num_moe_experts(cfg.PositiveInt("num_experts"));
  model.set_moe_router_topk(cfg.Int("num_experts_per_tok"));
  model.set_moe_ffn_hidden_size(cfg.PositiveInt("moe_intermediate_size"));
  model.set_moe_shared_expert_intermediate_size(
      cfg.IntOr("shared_expert_intermediate_size", 0));
  ReadQwenMoeLayers(cfg, model);
}

// Qwen3-Next (configuration_qwen3_next.py; Megatron-Bridge qwen3_next_bridge.py
// and Qwen3NextModelProvider): gated softmax attention every
// full_attention_interval-th layer, Gated DeltaNet elsewhere, gated shared
// expert. The checkpoint's MTP layer is left out, as the Bridge provider
// leaves mtp_num_layers unset.
void ReadQwen3Next(ConfigReader& cfg, Model& model) {
  ReadQwen3Moe(cfg, model);
  model.set_attention_output_gate(
      cfg.BoolOr("attn_output_gate", true));  // HF default true
  model.set_linear_attention_freq(cfg.Int("full_attention_interval"));
  model.set_linear_num_key_heads(cfg.Int("linear_num_key_heads"));
  model.set_linear_key_head_dim(cfg.Int("linear_key_head_dim"));
  model.set_linear_num_value_heads(cfg.Int("linear_num_value_heads"));
  model.set_linear_value_head_dim(cfg.Int("linear_value_head_dim"));
  model.set_linear_conv_kernel_dim(cfg.Int("linear_conv_kernel_dim"));
  model.set_moe_shared_expert_intermediate_size(
      cfg.Int("shared_expert_intermediate_size"));
  model.set_moe_shared_expert_gate(model.moe_shared_expert_intermediate_size() >
                                   0);
  model.set_mtp_num_layers(0);
}

// Period k of a layer_types list in which layer i is "full_attention" iff
// (i + 1) % k == 0 and every other layer is "sliding_attention"; 0 when the
// list does not have that form.
int64_t FullAttentionPeriod(const Value& layer_types) {
  const auto& items = layer_types.list_value().values();
  int64_t period = 0;
  for (int64_t i = 0; i < items.size(); ++i) {
    if (items[i].string_value() == "full_attention") {
      period = i + 1;
      break;
    }
  }
  if (period == 0) return 0;
  for (int64_t i = 0; i < items.size(); ++i) {
    std::string_view expected =
        (i + 1) % period == 0 ? "full_attention" : "sliding_attention";
    if (items[i].string_value() != expected) return 0;
  }
  return period;
}

// GPT-OSS (configuration_gpt_oss.py; Megatron-Bridge gpt_oss_provider.py):
// biases on every linear and the router, attention sinks, alternating
// sliding-window / full attention.
void ReadGptOss(ConfigReader& cfg, Model& model) {
  ReadGqa(cfg, model);
  model.set_add_bias_linear(true);  // q/k/v/o and expert fc1/fc2 biases
  model.set_learnable_softmax_offset(true);  // per-head attention sinks
  model.set_moe_router_bias(true);
  model.set_num_moe_experts(cfg.PositiveInt("num_local_experts"));
  // The hub config.json writes experts_per_token; transformers' config class
  // names it num_experts_per_tok. Either is accepted.
  model.set_moe_router_topk(cfg.Has("experts_per_token")
                                ? cfg.Int("experts_per_token")
                                : cfg.Int("num_experts_per_tok"));
  model.set_moe_ffn_hidden_size(
      model.ffn_hidden_size());  // experts use intermediate_size
  model.set_window_size(cfg.Int("sliding_window"));
  int64_t period =
      2;  // HF default layer_types: sliding on even 0-based layers, full on odd
  if (const Value* types = cfg.Find("layer_types")) {
    if (!types->has_list_value() ||
        types->list_value().values_size() != model.num_layers()) {
      cfg.Fail("layer_types", "expected a list of num_hidden_layers = " +
                                  std::to_string(model.num_layers()) +
                                  " entries");
    } else {
      period = FullAttentionPeriod(*types);
      if (period == 0) {
        cfg.Fail(
            "layer_types",
            "unsupported pattern; expected full_attention exactly at "
            "layers i with (i + 1) % k == 0 and sliding_attention elsewhere");
      }
    }
  }
  model.set_window_attn_skip_freq(period);
}

// Mixtral (configuration_mixtral.py; NeMo MixtralConfig): every layer is MoE,
// experts are intermediate_size wide.
void ReadMixtral(ConfigReader& cfg, Model& model) {
  ReadGqa(cfg, model);
  model.set_num_moe_experts(cfg.PositiveInt("num_local_experts"));
  model.set_moe_router_topk(cfg.Int("num_experts_per_tok"));
  model.set_moe_ffn_hidden_size(model.ffn_hidden_size());
  if (cfg.Has("sliding_window")) {
    cfg.Fail("sliding_window",
             "unsupported for model_type mixtral (null in the Mixtral "
             "8x7B/8x22B configs)");
  }
}

// HF configs nest three levels (rope_scaling, quantization_config).
constexpr int kMaxJsonDepth = 32;

}  // namespace

util::Result<Model> ParseHfConfig(std::string_view json, std::string_view file,
                                  std::string_view name) {
  auto parsed = util::ParseStrictJsonObject(json, file, kMaxJsonDepth);
  if (!parsed) return std::unexpected(parsed.error());
  const Struct& root = *parsed;
  auto type_it = root.fields().find("model_type");
  if (type_it == root.fields().end() || !type_it->second.has_string_value()) {
    return util::Fail(std::string(file) +
                      ": model_type: missing; supported: " + SupportedList());
  }
  const std::string& model_type = type_it->second.string_value();
  if (std::find(std::begin(kSupportedTypes), std::end(kSupportedTypes),
                model_type) == std::end(kSupportedTypes)) {
    return util::Fail(std::string(file) + ": model_type: unsupported '" +
                      model_type + "'; supported: " + SupportedList());
  }

  Model model;
  model.set_name(std::string(name));
  model.set_hf_model_type(model_type);
  model.set_source(std::string(file));
  ConfigReader cfg(root, file, model_type);
  ReadCommon(cfg, model);
  if (model_type == "deepseek_v3" || model_type == "kimi_k2") {
    // Kimi-K2's config.json uses model_type kimi_k2 with DeepSeek-V3 keys
    // (architectures: DeepseekV3ForCausalLM).
    ReadDeepSeekV3(cfg, model);
  } else if (model_type == "qwen3_moe") {
    ReadQwen3Moe(cfg, model);
  } else if (model_type == "qwen3_next") {
    ReadQwen3Next(cfg, model);
  } else if (model_type == "gpt_oss") {
    ReadGptOss(cfg, model);
  } else if (model_type == "mixtral") {
    ReadMixtral(cfg, model);
  } else if (model_type == "qwen3") {
    // Dense Qwen3 (configuration_qwen3.py): GQA with per-head RMSNorm on
    // q and k (Qwen3ModelProvider qk_layernorm=True).
    ReadGqa(cfg, model);
    model.set_qk_layernorm(true);
  } else {  // llama: dense, no MoE fields
    ReadGqa(cfg, model);
  }
  if (cfg.error()) return std::unexpected(*cfg.error());
  return model;
}

}  // namespace moesim::models
