// A model from a scenario's `architecture` (the Megatron architecture flags):
// built when the scenario names no model, checked against the named model
// otherwise. Each default is Megatron's, cited to megatron/training/
// arguments.py or TransformerConfig where it is applied.
#ifndef MOESIM_SCENARIOS_ARCHITECTURE_H_
#define MOESIM_SCENARIOS_ARCHITECTURE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "models/model.pb.h"
#include "scenarios/rules.h"
#include "scenarios/scenario.pb.h"
#include "util/error.h"

namespace moesim::scenarios::internal {

// Megatron's --moe-layer-freq: an integer N (layer i is MoE when i % N == 0,
// MLM gpt_layer_specs.py get_moe_layer_pattern) or a Python list expression
// of 0s and 1s built with [..], +, * and parentheses ("([0]*3+[1]*58)"),
// which must give one entry per layer. Errors name the rule, not the flag.
[[nodiscard]] util::Result<std::vector<int32_t>> ExpandLayerFreq(
    std::string_view text, int64_t num_layers);

// True when the scenario gives any architecture field.
bool HasArchitecture(const Scenario& s);

// The model the scenario's architecture describes, with s.num_layers()
// layers and s.mtp_num_layers() MTP layers. Errors name the field through
// `at` (an architecture field, or num_layers when it is missing).
[[nodiscard]] util::Result<models::Model> ModelFromArchitecture(
    const Scenario& s, const FieldNamer& at);

// Checks every architecture field the scenario gives against `model` (the
// named zoo or file model, before any num_layers override): a field that
// differs is an error naming both values, e.g. "flags: --num-experts: 64
// contradicts deepseek-v3's num_moe_experts 256".
[[nodiscard]] util::Result<void> CheckArchitecture(const Scenario& s,
                                                   const models::Model& model,
                                                   const FieldNamer& at);

}  // namespace moesim::scenarios::internal

#endif  // MOESIM_SCENARIOS_ARCHITECTURE_H_
