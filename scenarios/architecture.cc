#include "scenarios/architecture.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "models/zoo.h"

namespace moesim::scenarios::internal {
namespace {

using util::Result;

// `text` cut to `limit` characters, in single quotes. (Built by append:
// GCC 12 warns, wrongly, on "'" + std::string(...) here, -Wrestrict.)
std::string Quoted(std::string_view text, size_t limit) {
  std::string out;
  out.reserve(std::min(text.size(), limit) + 2);
  out.push_back('\'');
  out.append(text.substr(0, limit));
  out.push_back('\'');
  return out;
}

// A recursive-descent reader of the list expressions Megatron's
// moe_freq_type evaluates with Python's eval: sums of products of
// bracketed 0/1 lists, parenthesized groups and integer repeat counts.
// Nesting is bounded (kMaxDepth), so hostile input cannot exhaust the stack;
// each rule returns false with error_ set.
class ListExpr {
 public:
  explicit ListExpr(std::string_view text) : text_(text) {}

  Result<std::vector<int32_t>> Parse() {
    std::vector<int32_t> value;
    if (Sum(value)) {
      Skip();
      if (pos_ == text_.size()) return value;
      Fail("unexpected '" + Rest() + "'");
    }
    return util::Fail(Quoted(text_, 80) + ": " + error_);
  }

 private:
  bool Sum(std::vector<int32_t>& out) {
    if (!Product(out)) return false;
    while (Eat('+')) {
      std::vector<int32_t> right;
      if (!Product(right)) return false;
      if (out.size() + right.size() > kMaxEntries) return TooLong();
      out.insert(out.end(), right.begin(), right.end());
    }
    return true;
  }

  // factor ('*' count)* or count '*' factor.
  bool Product(std::vector<int32_t>& out) {
    Skip();
    if (pos_ < text_.size() && std::isdigit(text_[pos_])) {
      int64_t count = 0;
      if (!Count(count)) return false;
      if (!Eat('*')) return Fail("a bare number is not a list");
      if (!Factor(out)) return false;
      if (!Repeat(out, count)) return false;
    } else if (!Factor(out)) {
      return false;
    }
    while (Eat('*')) {
      int64_t count = 0;
      if (!Count(count) || !Repeat(out, count)) return false;
    }
    return true;
  }

  bool Factor(std::vector<int32_t>& out) {
    if (Eat('(')) {
      if (++depth_ > kMaxDepth)
        return Fail("nests more than " + std::to_string(kMaxDepth) +
                    " parentheses");
      if (!Sum(out)) return false;
      --depth_;
      return Eat(')') || Fail("missing ')'");
    }
    if (!Eat('[')) return Fail("expected '[' or '(' at '" + Rest() + "'");
    if (Eat(']')) return true;
    do {
      int64_t item = 0;
      if (!Count(item)) return false;
      if (item > 1) return Fail("entries must be 0 or 1");
      out.push_back(static_cast<int32_t>(item));
      if (out.size() > kMaxEntries) return TooLong();
    } while (Eat(','));
    return Eat(']') || Fail("missing ']'");
  }

  bool Count(int64_t& value) {
    Skip();
    const size_t start = pos_;
    value = 0;
    while (pos_ < text_.size() && std::isdigit(text_[pos_])) {
      value = value * 10 + (text_[pos_++] - '0');
      if (value > static_cast<int64_t>(kMaxEntries)) return TooLong();
    }
    return pos_ != start || Fail("expected a number at '" + Rest() + "'");
  }

  bool Repeat(std::vector<int32_t>& items, int64_t count) {
    if (static_cast<size_t>(count) * items.size() > kMaxEntries)
      return TooLong();
    const size_t n = items.size();
    items.reserve(n * static_cast<size_t>(count));
    for (int64_t i = 1; i < count; ++i)
      items.insert(items.end(), items.begin(), items.begin() + n);
    if (count == 0) items.clear();
    return true;
  }

  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(text_[pos_])) ++pos_;
  }
  std::string Rest() const {
    return std::string(
        text_.substr(pos_, std::min<size_t>(20, text_.size() - pos_)));
  }
  bool Fail(std::string rule) {
    error_ = std::move(rule);
    return false;
  }
  bool TooLong() {
    return Fail("expands to more than " + std::to_string(kMaxEntries) +
                " entries");
  }

  static constexpr size_t kMaxEntries = models::kMaxModelLayers;
  static constexpr int kMaxDepth = 64;
  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
};

// A tokenizer id or path read for matching: its last path part, lowercased,
// with '-', '.' and '_' dropped and a leading "meta" cut ("Meta-Llama-3-8B"
// reads as "llama38b").
std::string SquashTokenizer(std::string_view tokenizer) {
  while (!tokenizer.empty() && tokenizer.back() == '/')
    tokenizer.remove_suffix(1);
  if (size_t slash = tokenizer.rfind('/'); slash != std::string_view::npos)
    tokenizer.remove_prefix(slash + 1);
  std::string out;
  for (char c : tokenizer) {
    if (c == '-' || c == '.' || c == '_') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.starts_with("meta")) out.erase(0, 4);
  return out;
}

// The zoo model a Hugging Face tokenizer id names ("Qwen/Qwen3-30B-A3B",
// "moonshotai/Kimi-K2-Instruct"): the longest zoo name that, squashed the
// same way, begins the squashed tokenizer.
std::optional<std::string> ZooNameOfTokenizer(std::string_view tokenizer) {
  const std::string base = SquashTokenizer(tokenizer);
  std::optional<std::string> best;
  size_t best_size = 0;
  for (const std::string& name : models::ZooNames()) {
    std::string key = SquashTokenizer(name);
    if (base.starts_with(key) && key.size() > best_size) {
      best = name;
      best_size = key.size();
    }
  }
  return best;
}

// Vocabularies of Hugging Face model families outside the zoo whose
// checkpoints share one tokenizer, by squashed id prefix; each is the
// vocab_size of the family's config.json on huggingface.co.
struct FamilyVocab {
  std::string_view prefix;
  int64_t vocab;
};
constexpr FamilyVocab kFamilyVocabs[] = {
    {"deepseekr1", 129280},  // deepseek-ai/DeepSeek-R1 (DeepSeek-V3's)
    {"deepseekv2", 102400},  // deepseek-ai/DeepSeek-V2, DeepSeek-V2-Lite
    {"llama3", 128256},      // meta-llama/Llama-3.1-8B and every Llama 3.x
    {"llama4", 202048},      // meta-llama/Llama-4-Scout-17B-16E text_config
    {"qwen3", 151936},       // Qwen/Qwen3-* (dense and MoE)
    {"qwen2", 151936},       // Qwen/Qwen2-57B-A14B
    {"glm4", 151552},        // zai-org/GLM-4.5
    {"gptoss", 201088},      // openai/gpt-oss-20b, gpt-oss-120b
};

// The vocabulary of a tokenizer Megatron loads from a file whose size is
// published: GPT-2's BPE (50,257 entries, openai/gpt-2 encoder.json;
// Radford et al. 2019, section 2.2), Llama 2's SentencePiece model (32,000,
// Touvron et al. 2023, arXiv 2307.09288, section 2.1; Mixtral uses it, HF
// mistralai/Mixtral-8x7B-v0.1 config.json vocab_size) and the Nemotron
// tokenizer that Megatron-LM's functional tests load as
// nemotron_2_256k.model (256,000 entries, Nemotron-4 15B report, arXiv
// 2402.16819, section 2.1).
std::optional<int64_t> KnownTokenizerVocab(const Architecture& a) {
  if (a.tokenizer_type() == "GPT2BPETokenizer") return 50257;
  if (a.tokenizer_type() == "Llama2Tokenizer") return 32000;
  if (a.tokenizer_model().ends_with("nemotron_2_256k.model")) return 256000;
  return std::nullopt;
}

std::optional<int64_t> FamilyVocabOf(std::string_view tokenizer) {
  if (tokenizer.empty()) return std::nullopt;
  const std::string base = SquashTokenizer(tokenizer);
  for (const FamilyVocab& f : kFamilyVocabs) {
    if (base.starts_with(f.prefix)) return f.vocab;
  }
  return std::nullopt;
}

std::string ShortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Str(int64_t v) { return std::to_string(v); }

}  // namespace

Result<std::vector<int32_t>> ExpandLayerFreq(std::string_view text,
                                             int64_t num_layers) {
  std::string_view trimmed = text;
  while (!trimmed.empty() && std::isspace(trimmed.front()))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() && std::isspace(trimmed.back()))
    trimmed.remove_suffix(1);
  // One level of quotes that a YAML value kept ("'([0]*1+[1]*60)'", the
  // MoE model zoo's Kimi-K2 config) is the same expression.
  if (trimmed.size() >= 2 &&
      (trimmed.front() == '\'' || trimmed.front() == '"') &&
      trimmed.back() == trimmed.front()) {
    trimmed.remove_prefix(1);
    trimmed.remove_suffix(1);
  }
  const bool integer =
      !trimmed.empty() && std::all_of(trimmed.begin(), trimmed.end(),
                                      [](char c) { return std::isdigit(c); });
  if (integer) {
    // Megatron-LM gpt_layer_specs.py get_moe_layer_pattern: layer i is MoE
    // when i % N == 0.
    if (trimmed.size() > 6 || std::stoll(std::string(trimmed)) < 1)
      return util::Fail(Quoted(trimmed, 20) +
                        ": an integer frequency must be >= 1");
    const int64_t n = std::stoll(std::string(trimmed));
    std::vector<int32_t> pattern;
    for (int64_t i = 0; i < num_layers; ++i)
      pattern.push_back(i % n == 0 ? 1 : 0);
    return pattern;
  }
  auto pattern = ListExpr(trimmed).Parse();
  if (!pattern) return pattern;
  if (static_cast<int64_t>(pattern->size()) != num_layers) {
    // Megatron asserts the same (gpt_layer_specs.py get_moe_layer_pattern).
    return util::Fail(Quoted(trimmed, 80) + " has " +
                      Str(static_cast<int64_t>(pattern->size())) +
                      " entries, expected one per layer (num_layers " +
                      Str(num_layers) + ")");
  }
  return pattern;
}

bool HasArchitecture(const Scenario& s) {
  const Architecture& a = s.architecture();
  return a.ByteSizeLong() > 0;
}

namespace {

// The vocabulary size (ModelFromArchitecture).
Result<void> SetVocabulary(const Architecture& a, const FieldNamer& at,
                           models::Model& m) {
  // Vocabulary: --vocab-size, else a tokenizer of known size, else the zoo
  // model a Hugging Face tokenizer id names (its config.json vocab_size;
  // Megatron pads the tokenizer's own length, which for the zoo's models is
  // within 0.2% of it: Qwen3 151,669 of 151,936).
  if (a.has_vocab_size()) {
    m.set_vocab_size(a.vocab_size());
  } else if (auto known = KnownTokenizerVocab(a)) {
    m.set_vocab_size(*known);
  } else if (auto name = ZooNameOfTokenizer(a.tokenizer_model());
             name && !a.tokenizer_model().empty()) {
    auto zoo = models::LoadModel(*name);
    if (!zoo) return std::unexpected(at.Wrap("model", zoo.error().message));
    m.set_vocab_size(zoo->vocab_size());
  } else if (auto family = FamilyVocabOf(a.tokenizer_model())) {
    m.set_vocab_size(*family);
  } else {
    return std::unexpected(at.Error(
        "architecture.vocab_size",
        a.tokenizer_model().empty()
            ? "required to build the model from architecture flags (give "
              "--vocab-size, or --tokenizer-model with a Hugging Face id of a "
              "zoo model)"
            : "tokenizer '" + a.tokenizer_model().substr(0, 80) +
                  "' is not one moesim knows the size of; give --vocab-size"));
  }
  return {};
}

// MLA, YaRN, sliding-window and linear attention (ModelFromArchitecture).
Result<void> SetAttentionFields(const Architecture& a, const FieldNamer& at,
                                models::Model& m) {
  if (a.multi_latent_attention()) {
    // arguments.py MLA defaults: q_lora_rank None, kv_lora_rank 32,
    // qk_head_dim 128, qk_pos_emb_head_dim 64, v_head_dim 128.
    m.set_multi_latent_attention(true);
    m.set_q_lora_rank(a.has_q_lora_rank() ? a.q_lora_rank() : 0);
    m.set_kv_lora_rank(a.has_kv_lora_rank() ? a.kv_lora_rank() : 32);
    m.set_qk_head_dim(a.has_qk_head_dim() ? a.qk_head_dim() : 128);
    m.set_qk_pos_emb_head_dim(
        a.has_qk_pos_emb_head_dim() ? a.qk_pos_emb_head_dim() : 64);
    m.set_v_head_dim(a.has_v_head_dim() ? a.v_head_dim() : 128);
  } else {
    for (auto [given, path] :
         {std::pair{a.has_q_lora_rank(), "architecture.q_lora_rank"},
          std::pair{a.has_kv_lora_rank(), "architecture.kv_lora_rank"},
          std::pair{a.has_qk_head_dim(), "architecture.qk_head_dim"},
          std::pair{a.has_v_head_dim(), "architecture.v_head_dim"}}) {
      if (given)
        return std::unexpected(
            at.Error(path, "needs --multi-latent-attention"));
    }
  }
  if (a.has_yarn_rotary_scaling_factor()) {
    m.set_yarn_rotary_scaling_factor(a.yarn_rotary_scaling_factor());
    m.set_yarn_mscale(a.yarn_mscale());
    m.set_yarn_mscale_all_dim(a.yarn_mscale_all_dim());
  }
  m.set_window_size(a.window_size());
  m.set_window_attn_skip_freq(a.window_attn_skip_freq());
  if (a.has_linear_attention_freq()) {
    // TransformerConfig Gated DeltaNet defaults: 16 key heads of 128, 32
    // value heads of 128, convolution kernel 4.
    m.set_linear_attention_freq(a.linear_attention_freq());
    m.set_linear_num_key_heads(
        a.has_linear_num_key_heads() ? a.linear_num_key_heads() : 16);
    m.set_linear_key_head_dim(
        a.has_linear_key_head_dim() ? a.linear_key_head_dim() : 128);
    m.set_linear_num_value_heads(
        a.has_linear_num_value_heads() ? a.linear_num_value_heads() : 32);
    m.set_linear_value_head_dim(
        a.has_linear_value_head_dim() ? a.linear_value_head_dim() : 128);
    m.set_linear_conv_kernel_dim(
        a.has_linear_conv_kernel_dim() ? a.linear_conv_kernel_dim() : 4);
  }
  return {};
}

// The MoE fields and which layers are MoE (ModelFromArchitecture).
Result<void> SetMoeFields(const Scenario& s, const Architecture& a,
                          const FieldNamer& at, models::Model& m) {
  if (a.num_moe_experts() > 0) {
    m.set_num_moe_experts(a.num_moe_experts());
    // TransformerConfig.moe_router_topk defaults to 2; arguments.py sets
    // moe_ffn_hidden_size = ffn_hidden_size when it is not given.
    m.set_moe_router_topk(a.has_moe_router_topk() ? a.moe_router_topk() : 2);
    m.set_moe_ffn_hidden_size(a.has_moe_ffn_hidden_size()
                                  ? a.moe_ffn_hidden_size()
                                  : m.ffn_hidden_size());
    m.set_moe_shared_expert_intermediate_size(
        a.moe_shared_expert_intermediate_size());
    m.set_moe_shared_expert_gate(a.moe_shared_expert_gate());
    if (!a.moe_layer_freq().empty()) {
      auto pattern = ExpandLayerFreq(a.moe_layer_freq(), s.num_layers());
      if (!pattern)
        return std::unexpected(
            at.Error("architecture.moe_layer_freq", pattern.error().message));
      if (std::any_of(pattern->begin(), pattern->end(),
                      [](int32_t f) { return f == 0; })) {
        for (int32_t f : *pattern) m.add_moe_layer_freq(f);
      }
    }
  } else {
    for (auto [given, path] :
         {std::pair{a.has_moe_router_topk(), "architecture.moe_router_topk"},
          std::pair{a.has_moe_ffn_hidden_size(),
                    "architecture.moe_ffn_hidden_size"},
          std::pair{!a.moe_layer_freq().empty(),
                    "architecture.moe_layer_freq"}}) {
      if (given) return std::unexpected(at.Error(path, "needs --num-experts"));
    }
  }
  return {};
}

}  // namespace

Result<models::Model> ModelFromArchitecture(const Scenario& s,
                                            const FieldNamer& at) {
  const Architecture& a = s.architecture();
  auto missing = [&](std::string_view path) {
    return std::unexpected(
        at.Error(path,
                 "required to build the model from architecture flags (or name "
                 "a zoo model with --model)"));
  };
  if (s.num_layers() <= 0) return missing("num_layers");
  if (!a.has_hidden_size()) return missing("architecture.hidden_size");
  if (!a.has_num_attention_heads())
    return missing("architecture.num_attention_heads");
  for (auto [value, path] :
       {std::pair{a.hidden_size(), "architecture.hidden_size"},
        std::pair{a.num_attention_heads(),
                  "architecture.num_attention_heads"}}) {
    if (value < 1)
      return std::unexpected(at.Error(path, "must be >= 1, got " + Str(value)));
  }
  models::Model m;
  const int64_t h = a.hidden_size();
  m.set_num_layers(s.num_layers());
  m.set_mtp_num_layers(s.has_mtp_num_layers() ? s.mtp_num_layers() : 0);
  m.set_hidden_size(h);
  m.set_num_attention_heads(a.num_attention_heads());
  // Without --swiglu / --quick-geglu Megatron's MLP is GeLU.
  m.set_activation(a.activation().empty() ? "gelu" : a.activation());
  // megatron/training/arguments.py validate_args: ffn_hidden_size defaults to
  // 4h, or int(4h * 2/3 / 64) * 64 with --swiglu.
  if (a.has_ffn_hidden_size()) {
    m.set_ffn_hidden_size(a.ffn_hidden_size());
  } else {
    m.set_ffn_hidden_size(m.activation() == "swiglu"
                              ? static_cast<int64_t>(4 * h * 2 / 3.0 / 64) * 64
                              : 4 * h);
  }
  if (a.has_num_query_groups()) m.set_num_query_groups(a.num_query_groups());
  if (a.has_kv_channels()) {
    m.set_kv_channels(a.kv_channels());
  } else if (!a.multi_latent_attention() && h % a.num_attention_heads() != 0) {
    // arguments.py: kv_channels = hidden_size // num_attention_heads, with
    // an assert that the heads divide the hidden size.
    return std::unexpected(at.Error("architecture.kv_channels",
                                    "required when num_attention_heads (" +
                                        Str(a.num_attention_heads()) +
                                        ") does not divide hidden_size (" +
                                        Str(h) + "), as Megatron asserts"));
  }
  if (auto ok = SetVocabulary(a, at, m); !ok)
    return std::unexpected(ok.error());
  // Megatron's default padding multiple (arguments.py) is 128.
  m.set_make_vocab_size_divisible_by(a.has_make_vocab_size_divisible_by()
                                         ? a.make_vocab_size_divisible_by()
                                         : 128);
  m.set_untie_embeddings_and_output_weights(
      a.untie_embeddings_and_output_weights());
  // TransformerConfig.add_bias_linear defaults to True.
  m.set_add_bias_linear(a.has_add_bias_linear() ? a.add_bias_linear() : true);
  m.set_qk_layernorm(a.qk_layernorm());
  m.set_attention_output_gate(a.attention_output_gate());
  m.set_learnable_softmax_offset(a.learnable_softmax_offset());
  if (auto ok = SetAttentionFields(a, at, m); !ok)
    return std::unexpected(ok.error());
  if (auto ok = SetMoeFields(s, a, at, m); !ok)
    return std::unexpected(ok.error());
  std::string name = "custom-";
  name.append(Str(s.num_layers())).append("L-").append(Str(h)).append("h");
  if (m.num_moe_experts() > 0) {
    name.append("-").append(Str(m.num_moe_experts())).append("e");
    name.append(Str(m.moe_router_topk()));
  }
  m.set_name(name);
  m.set_source("Megatron architecture flags");
  if (auto valid = models::ValidateModel(m, "architecture"); !valid) {
    // "architecture: <field>: <rule>" -> named through the scenario field.
    const std::string& message = valid.error().message;
    const size_t colon = message.find(": ", 14);
    const std::string field =
        colon == std::string::npos ? "" : message.substr(14, colon - 14);
    return std::unexpected(at.Error(
        "architecture." + field,
        colon == std::string::npos ? message : message.substr(colon + 2)));
  }
  return m;
}

namespace {

// "architecture.<field>: <given> contradicts <model>'s <field> <has>".
Result<void> Contradiction(const FieldNamer& at, const models::Model& model,
                           std::string_view field, const std::string& given,
                           const std::string& has) {
  return std::unexpected(at.Error("architecture." + std::string(field),
                                  given + " contradicts " + model.name() +
                                      "'s " + std::string(field) + " " + has));
}

// architecture.moe_layer_freq against the model's MoE and dense layers.
Result<void> CheckMoeLayerFreq(const Architecture& a,
                               const models::Model& model,
                               const FieldNamer& at) {
  if (!a.moe_layer_freq().empty()) {
    auto pattern = ExpandLayerFreq(a.moe_layer_freq(), model.num_layers());
    if (!pattern)
      return std::unexpected(
          at.Error("architecture.moe_layer_freq", pattern.error().message));
    for (int64_t i = 0; i < model.num_layers(); ++i) {
      const int32_t has =
          model.moe_layer_freq_size() > 0 ? model.moe_layer_freq(i) : 1;
      if ((*pattern)[i] != has) {
        return Contradiction(
            at, model, "moe_layer_freq", Quoted(a.moe_layer_freq(), 40),
            "(layer " + Str(i) + " is " + (has ? "MoE" : "dense") + ")");
      }
    }
  }
  return {};
}

}  // namespace

Result<void> CheckArchitecture(const Scenario& s, const models::Model& model,
                               const FieldNamer& at) {
  const Architecture& a = s.architecture();
  auto contradicts = [&](std::string_view field, const std::string& given,
                         const std::string& has) -> Result<void> {
    return Contradiction(at, model, field, given, has);
  };
  auto check = [&](bool set, std::string_view field, int64_t given,
                   int64_t has) -> Result<void> {
    if (!set || given == has) return {};
    return contradicts(field, Str(given), Str(has));
  };
  auto flag = [&](bool set, std::string_view field, bool given,
                  bool has) -> Result<void> {
    if (!set || given == has) return {};
    return contradicts(field, given ? "true" : "false", has ? "true" : "false");
  };
  const int64_t groups = model.num_query_groups() > 0
                             ? model.num_query_groups()
                             : model.num_attention_heads();
  const int64_t kv_channels =
      model.kv_channels() > 0
          ? model.kv_channels()
          : model.hidden_size() / model.num_attention_heads();
  const int64_t moe_ffn = model.moe_ffn_hidden_size() > 0
                              ? model.moe_ffn_hidden_size()
                              : model.ffn_hidden_size();
  const Result<void> checks[] = {
      check(a.has_hidden_size(), "hidden_size", a.hidden_size(),
            model.hidden_size()),
      check(a.has_ffn_hidden_size(), "ffn_hidden_size", a.ffn_hidden_size(),
            model.ffn_hidden_size()),
      check(a.has_num_attention_heads(), "num_attention_heads",
            a.num_attention_heads(), model.num_attention_heads()),
      check(a.has_num_query_groups() && !model.multi_latent_attention(),
            "num_query_groups", a.num_query_groups(), groups),
      check(a.has_kv_channels() && !model.multi_latent_attention(),
            "kv_channels", a.kv_channels(), kv_channels),
      check(a.has_vocab_size(), "vocab_size", a.vocab_size(),
            model.vocab_size()),
      flag(a.has_untie_embeddings_and_output_weights(),
           "untie_embeddings_and_output_weights",
           a.untie_embeddings_and_output_weights(),
           model.untie_embeddings_and_output_weights()),
      flag(a.has_add_bias_linear(), "add_bias_linear", a.add_bias_linear(),
           model.add_bias_linear()),
      // With MLA, Megatron's --qk-layernorm gives the latent norms
      // (q_layernorm, kv_layernorm in multi_latent_attention.py), which
      // moesim's MLA counts always, as every MLA model has them; the zoo's MLA
      // models leave the GQA field unset.
      flag(a.has_qk_layernorm() && !model.multi_latent_attention(),
           "qk_layernorm", a.qk_layernorm(), model.qk_layernorm()),
      flag(a.has_attention_output_gate(), "attention_output_gate",
           a.attention_output_gate(), model.attention_output_gate()),
      flag(a.has_learnable_softmax_offset(), "learnable_softmax_offset",
           a.learnable_softmax_offset(), model.learnable_softmax_offset()),
      flag(a.has_multi_latent_attention(), "multi_latent_attention",
           a.multi_latent_attention(), model.multi_latent_attention()),
      check(a.has_q_lora_rank(), "q_lora_rank", a.q_lora_rank(),
            model.q_lora_rank()),
      check(a.has_kv_lora_rank(), "kv_lora_rank", a.kv_lora_rank(),
            model.kv_lora_rank()),
      check(a.has_qk_head_dim(), "qk_head_dim", a.qk_head_dim(),
            model.qk_head_dim()),
      check(a.has_qk_pos_emb_head_dim(), "qk_pos_emb_head_dim",
            a.qk_pos_emb_head_dim(), model.qk_pos_emb_head_dim()),
      check(a.has_v_head_dim(), "v_head_dim", a.v_head_dim(),
            model.v_head_dim()),
      check(a.has_window_size(), "window_size", a.window_size(),
            model.window_size()),
      check(a.has_window_attn_skip_freq(), "window_attn_skip_freq",
            a.window_attn_skip_freq(), model.window_attn_skip_freq()),
      check(a.has_linear_attention_freq(), "linear_attention_freq",
            a.linear_attention_freq(), model.linear_attention_freq()),
      check(a.has_linear_num_key_heads(), "linear_num_key_heads",
            a.linear_num_key_heads(), model.linear_num_key_heads()),
      check(a.has_linear_key_head_dim(), "linear_key_head_dim",
            a.linear_key_head_dim(), model.linear_key_head_dim()),
      check(a.has_linear_num_value_heads(), "linear_num_value_heads",
            a.linear_num_value_heads(), model.linear_num_value_heads()),
      check(a.has_linear_value_head_dim(), "linear_value_head_dim",
            a.linear_value_head_dim(), model.linear_value_head_dim()),
      check(a.has_linear_conv_kernel_dim(), "linear_conv_kernel_dim",
            a.linear_conv_kernel_dim(), model.linear_conv_kernel_dim()),
      check(a.has_num_moe_experts(), "num_moe_experts", a.num_moe_experts(),
            model.num_moe_experts()),
      check(a.has_moe_router_topk(), "moe_router_topk", a.moe_router_topk(),
            model.moe_router_topk()),
      check(a.has_moe_ffn_hidden_size(), "moe_ffn_hidden_size",
            a.moe_ffn_hidden_size(), moe_ffn),
      check(a.has_moe_shared_expert_intermediate_size(),
            "moe_shared_expert_intermediate_size",
            a.moe_shared_expert_intermediate_size(),
            model.moe_shared_expert_intermediate_size()),
      flag(a.has_moe_shared_expert_gate(), "moe_shared_expert_gate",
           a.moe_shared_expert_gate(), model.moe_shared_expert_gate()),
  };
  for (const Result<void>& result : checks) {
    if (!result) return result;
  }
  if (a.has_yarn_rotary_scaling_factor() &&
      a.yarn_rotary_scaling_factor() != model.yarn_rotary_scaling_factor()) {
    return contradicts("yarn_rotary_scaling_factor",
                       ShortNumber(a.yarn_rotary_scaling_factor()),
                       ShortNumber(model.yarn_rotary_scaling_factor()));
  }
  if (!a.activation().empty() && a.activation() != model.activation())
    return contradicts("activation", a.activation(), model.activation());
  return CheckMoeLayerFreq(a, model, at);
}

}  // namespace moesim::scenarios::internal
