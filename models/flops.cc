#include "models/flops.h"

#include <utility>

#include "models/architecture.h"

namespace moesim::models {
namespace {

// 3 passes (forward, dgrad, wgrad) x 2 FLOPs per multiply-add.
constexpr double kPassesTimesFma = 3.0 * 2.0;

// Per-token multiply-adds of one softmax-attention layer's projections and
// core attention with average causal context `context` (s/2 for full causal).
// Core: QK^T over a*d and PV over a*d -> 2 * a * d * context.
double AttentionMacs(const Model& m, double context) {
  const double h = m.hidden_size(), a = m.num_attention_heads();
  const double g = QueryGroups(m), d = HeadDim(m);
  const double q = a * d, gate = m.attention_output_gate() ? q : 0.0;
  const double projections = h * (q + 2 * g * d + gate) + q * h;
  return projections + q * context * 2;
}

double MlaMacs(const Model& m, double context) {
  const double h = m.hidden_size(), a = m.num_attention_heads();
  const double dn = m.qk_head_dim(), r = m.qk_pos_emb_head_dim(),
               dv = m.v_head_dim();
  const double q = m.q_lora_rank() > 0
                       ? m.q_lora_rank() * (h + a * (dn + r) + 1)
                       : h * a * (dn + r);
  const double kv = m.kv_lora_rank() * (h + a * (dn + dv) + 1);
  return q + kv + h * r + a * dv * h + context * a * (dn + r) +
         context * a * dv;
}

double GdnMacs(const Model& m) {
  const double h = m.hidden_size();
  const double qk_dim = m.linear_num_key_heads() * m.linear_key_head_dim();
  const double v_dim = m.linear_num_value_heads() * m.linear_value_head_dim();
  const double n_v = m.linear_num_value_heads(), dv = m.linear_value_head_dim();
  return h * (2 * qk_dim + 2 * v_dim + 2 * n_v) +
         m.linear_conv_kernel_dim() * (2 * qk_dim + v_dim) + n_v * dv * dv * 4 +
         h * v_dim;
}

// Bridge's sliding-window context: the exact average over a causal sequence,
// W - W(W-1)/(2s) when W < s, else full causal s/2.
double SlidingContext(const Model& m, double s) {
  const double w = m.window_size();
  return w < s ? w - w * (w - 1) / (2 * s) : s / 2;
}

}  // namespace

double ModelFlopsPerSequence(const Model& m, int64_t seq_length, int tp) {
  const double s = static_cast<double>(seq_length);
  const double h = m.hidden_size();
  const int64_t mtp = m.mtp_num_layers();
  const int64_t layers =
      m.num_layers() + mtp;  // Bridge's num_layers includes MTP

  // MLP: dense layers, routed experts (top-k) and shared experts. MTP layers
  // count as the kind of the last decoder layer.
  const double ffn_factor = IsGated(m) ? 3 : 2;
  int64_t moe_layers = NumMoeLayers(m);
  int64_t dense_layers = m.num_layers() - moe_layers;
  if (MtpLayer(m).moe) {
    moe_layers += mtp;
  } else {
    dense_layers += mtp;
  }
  const double mlp_macs =
      h * ffn_factor *
      (static_cast<double>(m.ffn_hidden_size()) * dense_layers +
       (static_cast<double>(MoeFfnHidden(m)) * m.moe_router_topk() +
        static_cast<double>(m.moe_shared_expert_intermediate_size())) *
           moe_layers);

  // Attention, layer by layer with Bridge's patterns over all `layers`.
  double attention_macs = 0;
  for (int64_t i = 0; i < layers; ++i) {
    if (m.multi_latent_attention()) {
      attention_macs += MlaMacs(m, s / 2);
    } else if (m.linear_attention_freq() > 0 &&
               (i + 1) % m.linear_attention_freq() != 0) {
      attention_macs += GdnMacs(m);
    } else if (m.window_size() > 0 &&
               (m.window_attn_skip_freq() <= 0 ||
                (i + 1) % m.window_attn_skip_freq() != 0)) {
      attention_macs += AttentionMacs(m, SlidingContext(m, s));
    } else {
      attention_macs += AttentionMacs(m, s / 2);
    }
  }

  const double mtp_macs =
      mtp * (3 * h + 2 * h * h);  // eh norms + final norm, eh_proj
  const double logits_macs = h * PaddedVocab(m, tp) * (1 + mtp);
  return s * kPassesTimesFma *
         (mlp_macs + attention_macs + mtp_macs + logits_macs);
}

namespace {
constexpr std::pair<FlopsFormula, std::string_view> kFormulaWords[] = {
    {FlopsFormula::kMegatronBridge, "megatron-bridge"},
    {FlopsFormula::kNemo2024, "nemo-2024"}};
}  // namespace

std::optional<FlopsFormula> ParseFlopsFormula(std::string_view word) {
  for (auto [formula, name] : kFormulaWords) {
    if (name == word) return formula;
  }
  return std::nullopt;
}

std::string_view FlopsFormulaName(FlopsFormula formula) {
  for (auto [f, name] : kFormulaWords) {
    if (f == formula) return name;
  }
  return "";
}

std::string FlopsFormulaWords() {
  std::string out;
  for (auto [formula, name] : kFormulaWords) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool CanCountAs(const Model& m, FlopsFormula formula) {
  if (formula == FlopsFormula::kMegatronBridge) return true;
  return m.num_moe_experts() == 0 && !m.multi_latent_attention() &&
         m.linear_attention_freq() == 0 && m.window_size() == 0 &&
         m.mtp_num_layers() == 0 && m.activation() == "swiglu" &&
         HeadDim(m) * m.num_attention_heads() == m.hidden_size();
}

double FlopsPerSequence(const Model& m, int64_t seq_length, int tp,
                        FlopsFormula formula) {
  if (formula == FlopsFormula::kMegatronBridge) {
    return ModelFlopsPerSequence(m, seq_length, tp);
  }
  const double s = static_cast<double>(seq_length);
  const double L = static_cast<double>(m.num_layers());
  const double h = m.hidden_size(), a = m.num_attention_heads();
  const double g = QueryGroups(m), f = m.ffn_hidden_size();
  const double V = m.vocab_size();
  return s * L * h * h *
         (12 + 12 * g / a + 18 * f / h + 12 * s / h + 6 * V / (L * h));
}

}  // namespace moesim::models
