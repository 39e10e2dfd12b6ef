#include "models/architecture.h"

#include <cmath>

namespace moesim::models {

LayerKind DecoderLayer(const Model& m, int64_t i) {
  LayerKind kind;
  if (m.multi_latent_attention()) {
    kind.mixer = Mixer::kMla;
  } else if (m.linear_attention_freq() > 0 &&
             (i + 1) % m.linear_attention_freq() != 0) {
    // HF configuration_qwen3_next.py layer_types; MLM linear_attention_freq.
    kind.mixer = Mixer::kGatedDeltaNet;
  }
  if (kind.mixer == Mixer::kAttention && m.window_size() > 0) {
    // Megatron window_attn_skip_freq: every freq-th layer (1-based) is full.
    kind.sliding_window = m.window_attn_skip_freq() <= 0 ||
                          (i + 1) % m.window_attn_skip_freq() != 0;
  }
  if (m.num_moe_experts() > 0) {
    kind.moe = m.moe_layer_freq_size() == 0 ||
               m.moe_layer_freq(static_cast<int>(i)) == 1;
  }
  return kind;
}

LayerKind MtpLayer(const Model& m) {
  return DecoderLayer(m, m.num_layers() - 1);
}

int64_t QueryGroups(const Model& m) {
  return m.num_query_groups() > 0 ? m.num_query_groups()
                                  : m.num_attention_heads();
}

int64_t HeadDim(const Model& m) {
  return m.kv_channels() > 0 ? m.kv_channels()
                             : m.hidden_size() / m.num_attention_heads();
}

int64_t MoeFfnHidden(const Model& m) {
  return m.moe_ffn_hidden_size() > 0 ? m.moe_ffn_hidden_size()
                                     : m.ffn_hidden_size();
}

bool IsGated(const Model& m) { return m.activation() != "gelu"; }

bool IsClampedQuickGeglu(const Model& m) {
  return m.activation() == "quick_geglu";
}

double RotaryConcentrationFactor(const Model& m) {
  const double s = m.yarn_rotary_scaling_factor();
  if (s <= 1) return 1;
  auto mscale = [s](double factor) { return 0.1 * factor * std::log(s) + 1; };
  if (!m.has_yarn_mscale() || !m.has_yarn_mscale_all_dim()) return mscale(1);
  return mscale(m.yarn_mscale()) / mscale(m.yarn_mscale_all_dim());
}

int64_t NumMoeLayers(const Model& m) {
  int64_t n = 0;
  for (int64_t i = 0; i < m.num_layers(); ++i)
    n += DecoderLayer(m, i).moe ? 1 : 0;
  return n;
}

int64_t PaddedVocab(const Model& m, int tp) {
  const int64_t divisible_by = m.make_vocab_size_divisible_by() > 0
                                   ? m.make_vocab_size_divisible_by()
                                   : 128;
  const int64_t multiple = divisible_by * tp;
  return (m.vocab_size() + multiple - 1) / multiple * multiple;
}

}  // namespace moesim::models
