// The model zoo and model loading.
//
// A model comes from one of three places: a shipped zoo name
// ("deepseek-v3", compiled into the binary from models/zoo/*.textproto), a path
// to a .textproto of the `Model` message, or a path to a Hugging Face
// config.json of a supported family (see hf_config.h). Every loaded model is
// checked by ValidateModel before anyone computes with it.
#ifndef MOESIM_MODELS_ZOO_H_
#define MOESIM_MODELS_ZOO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/model.pb.h"
#include "util/error.h"

namespace moesim::models {

// The most decoder layers a model or scenario may have: 1,024, eight times
// the deepest published model (Llama 3.1 405B, 126 layers). Checked as the
// HF config is read, before anything is built per layer.
inline constexpr int64_t kMaxModelLayers = 1024;

// The most multi-token-prediction layers a model or scenario may have: 16,
// sixteen times what the published MTP models train with (DeepSeek-V3,
// Qwen3-Next: 1). scenarios/rules.h uses the same limit.
inline constexpr int64_t kMaxMtpLayers = 16;

// Names of the shipped zoo models, sorted.
std::vector<std::string> ZooNames();

// Loads a zoo name, a .textproto path or a config.json path.
// Errors: unknown name (listing the zoo), unreadable file, parse errors with
// file:line, missing or inconsistent fields (ValidateModel).
[[nodiscard]] util::Result<Model> LoadModel(std::string_view name_or_path);

// Every numeric field of a model, in a model file or given as architecture
// flags, is finite, >= 0 and at most 2^31 (util::CheckNumericRanges): counts
// times sizes then stay in int64. ValidateModel's per-field rules are
// tighter where a field has one.
inline constexpr double kMaxModelFieldValue = 2147483648.0;

// Checks that the fields every computation needs are present and consistent,
// e.g. "deepseek-v3.textproto: hidden_size: must be > 0". `origin` names the
// file in the message.
[[nodiscard]] util::Result<void> ValidateModel(const Model& model,
                                               std::string_view origin);

// Returns `model` with its depth set to `num_layers` (a trimmed model): the
// MoE layer pattern keeps its leading dense layers and is cut or extended with
// MoE layers. REQUIRES: num_layers > 0.
Model WithNumLayers(const Model& model, int64_t num_layers);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_ZOO_H_
