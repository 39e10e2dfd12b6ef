// Derived architecture facts shared by the accounting and the op graph:
// what kind each layer is and the effective sizes Megatron uses.
#ifndef MOESIM_MODELS_ARCHITECTURE_H_
#define MOESIM_MODELS_ARCHITECTURE_H_

#include <cstdint>

#include "models/model.pb.h"

namespace moesim::models {

enum class Mixer {
  kAttention,      // softmax attention, MHA / GQA (full or sliding window)
  kMla,            // multi-latent attention
  kGatedDeltaNet,  // linear attention (Qwen3-Next)
};

struct LayerKind {
  Mixer mixer = Mixer::kAttention;
  bool sliding_window =
      false;         // softmax attention restricted to window_size tokens
  bool moe = false;  // MoE MLP (else dense MLP)
};

// Decoder layer `i` (0-based, i < num_layers).
LayerKind DecoderLayer(const Model& model, int64_t i);

// An MTP layer: Megatron builds it with the spec of the last decoder layer
// (MLM gpt_layer_specs.py get_gpt_mtp_block_spec; theoretical_memory_usage.py
// "MTP block = one layer of the type of the last decoder layer").
LayerKind MtpLayer(const Model& model);

int64_t QueryGroups(const Model& model);  // num_query_groups, or heads (MHA)
int64_t HeadDim(const Model& model);      // kv_channels, or hidden / heads
int64_t MoeFfnHidden(
    const Model& model);           // moe_ffn_hidden_size, or ffn_hidden_size
bool IsGated(const Model& model);  // SwiGLU-style GLU: fc1 is 2x wide
// GPT-OSS's clamped quick-GEGLU ("quick_geglu"): Megatron-Bridge's
// GPTOSSProvider always pairs it with activation_func_clamp_value 7, which
// Megatron-Core applies with eager clamps before its fused activation.
bool IsClampedQuickGeglu(const Model& model);
int64_t NumMoeLayers(const Model& model);  // decoder layers only
// The factor Megatron multiplies RoPE's cos and sin by (Megatron-LM
// attention.py passes _yarn_get_concentration_factor_from_config to
// apply_rotary_pos_emb): 1 without YaRN; with it 0.1 ln s + 1 when
// yarn_mscale or yarn_mscale_all_dim is unset, else the ratio of
// 0.1 m ln s + 1 at the two (1 for s <= 1).
double RotaryConcentrationFactor(const Model& model);

// Megatron's vocabulary padding (MLM build_tokenizer.py
// vocab_size_with_padding): multiple = make_vocab_size_divisible_by (128
// default) x tp; padded = ceil(vocab / multiple) x multiple.
int64_t PaddedVocab(const Model& model, int tp);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_ARCHITECTURE_H_
