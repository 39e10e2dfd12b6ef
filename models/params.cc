#include "models/params.h"

#include "models/architecture.h"

namespace moesim::models {
namespace {

// RMSNorm has one weight vector (Megatron norm_size = 1); all zoo models use
// it.
constexpr int64_t kNormWeights = 1;

ParamGroups AttentionParams(const Model& m) {
  const int64_t h = m.hidden_size(), a = m.num_attention_heads();
  const int64_t g = QueryGroups(m), d = HeadDim(m);
  ParamGroups p;
  const int64_t q = a * d, kv = 2 * g * d;
  const int64_t gate = m.attention_output_gate() ? a * d : 0;
  p.tp += h * (q + kv + gate) +
          q * h;  // linear_qkv (+ output gate) and linear_proj
  if (m.add_bias_linear()) {
    p.tp += q + kv + gate;  // column-parallel qkv bias, sharded
    p.replicated += h;      // row-parallel proj bias, replicated
  }
  if (m.qk_layernorm())
    p.replicated += 2 * d;  // q_layernorm, k_layernorm (per head dim)
  if (m.learnable_softmax_offset()) p.tp += a;  // attention sinks, one per head
  p.replicated += kNormWeights * h;             // input_layernorm
  return p;
}

// MLM multi_latent_attention.py: q/kv down-projections are duplicated across
// TP (TELinear parallel_mode="duplicated"), up-projections and the output
// projection are TP-sharded.
ParamGroups MlaParams(const Model& m) {
  const int64_t h = m.hidden_size(), a = m.num_attention_heads();
  const int64_t dn = m.qk_head_dim(), r = m.qk_pos_emb_head_dim(),
                dv = m.v_head_dim();
  ParamGroups p;
  if (m.q_lora_rank() > 0) {
    p.replicated +=
        h * m.q_lora_rank() + kNormWeights * m.q_lora_rank();  // q_down, q_norm
    p.tp += m.q_lora_rank() * a * (dn + r);                    // q_up
  } else {
    p.tp += h * a * (dn + r);  // linear_q_proj
  }
  p.replicated += h * (m.kv_lora_rank() + r) +
                  kNormWeights * m.kv_lora_rank();  // kv_down, kv_norm
  p.tp += m.kv_lora_rank() * a * (dn + dv);         // kv_up
  p.tp += a * dv * h;                               // linear_proj
  p.replicated += kNormWeights * h;                 // input_layernorm
  return p;
}

// Gated DeltaNet (MLM gated_delta_net.py; HF modeling_qwen3_next.py):
// in_proj h -> (2 qk_dim + 2 v_dim + 2 n_v) [q, k, v, z, b, a], a depthwise
// causal conv over q, k, v, A_log and dt_bias per value head, a gated
// RMSNorm over the value head dim, out_proj v_dim -> h.
ParamGroups GdnParams(const Model& m) {
  const int64_t h = m.hidden_size();
  const int64_t qk_dim = m.linear_num_key_heads() * m.linear_key_head_dim();
  const int64_t v_dim = m.linear_num_value_heads() * m.linear_value_head_dim();
  const int64_t n_v = m.linear_num_value_heads();
  ParamGroups p;
  p.tp += h * (2 * qk_dim + 2 * v_dim + 2 * n_v);             // in_proj
  p.tp += m.linear_conv_kernel_dim() * (2 * qk_dim + v_dim);  // conv1d, no bias
  p.tp += 2 * n_v;                                            // A_log, dt_bias
  p.replicated += m.linear_value_head_dim();                  // output norm
  p.tp += v_dim * h;                                          // out_proj
  p.replicated += kNormWeights * h;                           // input_layernorm
  return p;
}

// fc1 (h -> f, or 2f when gated) + fc2 (f -> h), with biases when present.
int64_t MlpWeights(const Model& m, int64_t f) {
  const int64_t h = m.hidden_size();
  const int64_t fc1 = IsGated(m) ? 2 * f : f;
  int64_t n = h * fc1 + f * h;
  if (m.add_bias_linear()) n += fc1 + h;
  return n;
}

ParamGroups MlpParams(const Model& m, bool moe) {
  const int64_t h = m.hidden_size();
  ParamGroups p;
  p.replicated += kNormWeights * h;  // pre_mlp_layernorm
  if (!moe) {
    p.tp += MlpWeights(m, m.ffn_hidden_size());
    return p;
  }
  const int64_t e = m.num_moe_experts();
  p.replicated += h * e + (m.moe_router_bias() ? e : 0);  // router
  const int64_t expert = MlpWeights(m, MoeFfnHidden(m));
  p.experts += e * expert;
  p.active_experts += m.moe_router_topk() * expert;
  if (m.moe_shared_expert_intermediate_size() > 0) {
    p.tp += MlpWeights(m, m.moe_shared_expert_intermediate_size());
    if (m.moe_shared_expert_gate()) p.replicated += h;  // sigmoid gate h -> 1
  }
  return p;
}

ParamGroups LayerParams(const Model& m, LayerKind kind) {
  ParamGroups p;
  switch (kind.mixer) {
    case Mixer::kAttention:
      p = AttentionParams(m);
      break;
    case Mixer::kMla:
      p = MlaParams(m);
      break;
    case Mixer::kGatedDeltaNet:
      p = GdnParams(m);
      break;
  }
  p += MlpParams(m, kind.moe);
  return p;
}

// Tensors of the mixer; the input norm is the first linear's
// layer_norm_weight (GQA, GDN: TELayerNormColumnParallelLinear) or a TENorm
// (MLA), one tensor either way.
ParamTensors MixerTensors(const Model& m, Mixer mixer) {
  ParamTensors t;
  const int64_t bias = m.add_bias_linear() ? 1 : 0;
  switch (mixer) {
    case Mixer::kAttention:
      t.dense = 2 + bias + 1 + bias;  // qkv weight + norm (+bias), proj
      t.replicated = 1 + bias;        // input norm, proj bias
      if (m.qk_layernorm()) {         // q_layernorm, k_layernorm
        t.dense += 2;
        t.replicated += 2;
      }
      if (m.learnable_softmax_offset()) t.dense += 1;  // sinks
      break;
    case Mixer::kMla:
      // [q_down, q_up + q_norm] or linear_q_proj; kv_down, kv_up + kv_norm,
      // linear_proj, input_layernorm.
      t.dense = (m.q_lora_rank() > 0 ? 3 : 1) + 3 + 1 + 1;
      t.replicated = (m.q_lora_rank() > 0 ? 1 : 0) + 1 + 1;
      break;
    case Mixer::kGatedDeltaNet:
      // in_proj + input norm, conv1d, A_log, dt_bias, out_norm, out_proj.
      t.dense = 7;
      t.replicated = 2;
      break;
  }
  return t;
}

ParamTensors MlpTensors(const Model& m, bool moe, int64_t local_experts) {
  const int64_t bias = m.add_bias_linear() ? 1 : 0;
  ParamTensors t;
  if (!moe) {
    t.dense = 3 + 2 * bias;  // fc1 weight + pre-MLP norm (+bias), fc2
    t.replicated = 1 + bias;
    return t;
  }
  // pre_mlp_layernorm (a TENorm before the router), router weight (+bias).
  const int64_t router = 1 + (m.moe_router_bias() ? 1 : 0);
  t.dense = 1 + router;
  t.replicated = 1 + router;
  t.expert = 2 * local_experts * (1 + bias);  // GroupedLinear fc1, fc2
  if (m.moe_shared_expert_intermediate_size() > 0) {
    t.dense += 2 * (1 + bias);
    t.replicated += bias;
    if (m.moe_shared_expert_gate()) {
      t.dense += 1;
      t.replicated += 1;
    }
  }
  return t;
}

ParamTensors LayerTensors(const Model& m, LayerKind kind,
                          int64_t local_experts) {
  ParamTensors t = MixerTensors(m, kind.mixer);
  t += MlpTensors(m, kind.moe, local_experts);
  return t;
}

}  // namespace

ParamGroups DecoderLayerParams(const Model& m, int64_t i) {
  return LayerParams(m, DecoderLayer(m, i));
}

ParamGroups MtpLayerParams(const Model& m) {
  const int64_t h = m.hidden_size();
  ParamGroups p = LayerParams(m, MtpLayer(m));
  p.replicated += 2 * kNormWeights * h;  // enorm, hnorm
  p.tp += 2 * h * h;                     // eh_proj (column parallel)
  p.replicated += kNormWeights * h;      // final_layernorm of the MTP block
  return p;
}

ParamTensors DecoderLayerTensors(const Model& m, int64_t i,
                                 int64_t local_experts) {
  return LayerTensors(m, DecoderLayer(m, i), local_experts);
}

ParamTensors MtpLayerTensors(const Model& m, int64_t local_experts) {
  ParamTensors t = LayerTensors(m, MtpLayer(m), local_experts);
  t.dense += 4;       // enorm, hnorm, eh_proj, final_layernorm
  t.replicated += 3;  // the three norms
  return t;
}

int64_t EmbeddingParams(const Model& m, int64_t vocab) {
  return vocab * m.hidden_size();
}

ParamSummary CountParams(const Model& m) {
  ParamGroups layers;
  for (int64_t i = 0; i < m.num_layers(); ++i)
    layers += DecoderLayerParams(m, i);
  const int64_t vocab = EmbeddingParams(m, m.vocab_size());
  const int64_t embeddings =
      m.untie_embeddings_and_output_weights() ? 2 * vocab : vocab;
  const int64_t final_norm = kNormWeights * m.hidden_size();
  ParamSummary s;
  s.total = layers.total() + embeddings + final_norm;
  s.active = layers.active() + embeddings + final_norm;
  ParamGroups mtp;
  for (int64_t i = 0; i < m.mtp_num_layers(); ++i) mtp += MtpLayerParams(m);
  s.total_with_mtp = s.total + mtp.total();
  s.active_with_mtp = s.active + mtp.active();
  return s;
}

}  // namespace moesim::models
