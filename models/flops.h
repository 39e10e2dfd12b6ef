// Model FLOPs exactly as Megatron-Bridge counts them for its TFLOP/s/GPU log.
//
// Source: NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/utils/
// flop_utils.py::num_floating_point_operations (transformer path), which
// extends MLM training.py::num_floating_point_operations: forward x 3
// (forward, dgrad, wgrad), 2 FLOPs per multiply-add, causal core attention at
// s/2, MLA with its projections, GQA with the optional output gate, gated
// (3 projections) or plain (2) MLPs, MoE top-k plus shared experts, logits per
// output head (1 + MTP), MTP norms and eh-projection, Gated DeltaNet layers by
// linear_attention_freq, sliding-window layers with the exact average causal
// window W - W(W-1)/(2s). Not counted (by design, as in Bridge): router,
// norms, softmax, recompute. MTP layers take the kind of the last decoder
// layer for the MLP, and Bridge's layer pattern rules for attention.
#ifndef MOESIM_MODELS_FLOPS_H_
#define MOESIM_MODELS_FLOPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "models/model.pb.h"

namespace moesim::models {

// FLOPs of one sequence of `seq_length` tokens through forward and backward,
// the vocabulary padded for tensor-parallel size `tp`. A step's FLOPs are
// this times the global batch size.
double ModelFlopsPerSequence(const Model& model, int64_t seq_length, int tp);

// The FLOPs count a published TFLOPS figure was computed with, when it is
// not today's Megatron-Bridge count above.
enum class FlopsFormula {
  kMegatronBridge,  // ModelFlopsPerSequence: causal attention at s/2
  // NeMo's llama2 / llama3 model-FLOPs formula from its TFLOPs callback
  // (NVIDIA/NeMo@d8995496 nemo/collections/common/metrics/perf_metrics.py,
  // Aug 2024; nemo/utils/flops_formulas.py until NVIDIA/NeMo#14424, Aug
  // 2025, which added the causal 0.5): per sequence
  // s L h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(L h)), attention scores
  // over all s keys, V the unpadded vocabulary. NeMo's performance tables
  // of that year (NeMo 24.03 to 25.04 containers) are in this count: its
  // 24.07 summary's Llama2-7B row, 780 TFLOPS at 16,934 tokens/s, is
  // 46.06 GFLOPs a token, this formula's 46.09 at s = 4096 (the causal
  // count gives 42.9).
  kNemo2024,
};

// "megatron-bridge", "nemo-2024": the words of the runs CSV's
// flops_formula column; nullopt for any other. FlopsFormulaName is the
// inverse, FlopsFormulaWords all of them, comma-separated.
std::optional<FlopsFormula> ParseFlopsFormula(std::string_view word);
std::string_view FlopsFormulaName(FlopsFormula formula);
std::string FlopsFormulaWords();

// FLOPs of one sequence in `formula`. kNemo2024 applies to dense,
// non-MLA models with SwiGLU and head dim h/a (NeMo's llama families);
// CanCountAs says whether it does.
bool CanCountAs(const Model& model, FlopsFormula formula);
double FlopsPerSequence(const Model& model, int64_t seq_length, int tp,
                        FlopsFormula formula);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_FLOPS_H_
