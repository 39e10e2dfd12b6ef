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

#include "models/model.pb.h"

namespace moesim::models {

// FLOPs of one sequence of `seq_length` tokens through forward and backward,
// the vocabulary padded for tensor-parallel size `tp`. A step's FLOPs are
// this times the global batch size.
double ModelFlopsPerSequence(const Model& model, int64_t seq_length, int tp);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_FLOPS_H_
