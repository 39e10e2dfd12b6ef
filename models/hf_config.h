// Import of Hugging Face config.json files into `Model`.
//
// Supported model_type values: deepseek_v3, kimi_k2, qwen3_moe, qwen3_next,
// gpt_oss, mixtral, llama, qwen3 (dense). Field mapping follows HF
// transformers' configuration_<family>.py; what Megatron-Bridge's bridges do
// with it is cited at each family. An unsupported model_type or a missing key
// is an error naming the file and the key.
#ifndef MOESIM_MODELS_HF_CONFIG_H_
#define MOESIM_MODELS_HF_CONFIG_H_

#include <string_view>

#include "models/model.pb.h"
#include "util/error.h"

namespace moesim::models {

// `json` is the text of a config.json; `file` names it in errors. The model's
// name is taken from `name` (the caller passes the file's folder name).
[[nodiscard]] util::Result<Model> ParseHfConfig(std::string_view json,
                                                std::string_view file,
                                                std::string_view name);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_HF_CONFIG_H_
