// The Megatron argument list of a launch input as users keep it: a launch
// script (bash: variables, arrays, a torchrun/python line running
// pretrain_gpt.py), a Megatron-LM functional test's model_config.yaml or a
// Megatron MoE model zoo config (a MODEL_ARGS mapping), or a bare argument
// list. The result is handed to ApplyMegatronArgs.
//
// Shell: simple assignments (NAME=word, export NAME=word, NAME=(...) arrays,
// NAME+=(...)) are recorded in file order, each right side expanded with the
// variables known so far; the training command is the line that runs
// pretrain_gpt.py / pretrain_mamba.py / train.py, with $NAME, ${NAME},
// ${NAME:-default} and ${NAME[@]} expanded. A script with no such line (a
// model file that other scripts source) gives the concatenation of its
// *ARGS arrays. Nothing is executed: loops, conditions and command
// substitutions are not evaluated; a variable they would set stays
// unexpanded, and ApplyMegatronArgs refuses it where a modelled flag uses it.
//
// YAML: the MODEL_ARGS mapping, converted as Megatron-LM's functional-test
// runner does (tests/functional_tests/shell_test_utils/_run_training.sh):
// `--flag: true` is the bare flag; a value in [..] loses its brackets
// ("[attn mlp]" -> attn mlp); any other value follows its flag; comments
// are dropped.
#ifndef MOESIM_SCENARIOS_LAUNCH_FILE_H_
#define MOESIM_SCENARIOS_LAUNCH_FILE_H_

#include <map>
#include <string>
#include <string_view>

#include "util/error.h"

namespace moesim::scenarios {

// `vars` are defined before the file is read and take precedence over the
// file's own assignments (the command line's --var NAME=VALUE). Errors name
// `file` and, where it has one, the line.
[[nodiscard]] util::Result<std::string> ExtractMegatronArgs(
    std::string_view text, std::string_view file,
    const std::map<std::string, std::string>& vars = {});

}  // namespace moesim::scenarios

#endif  // MOESIM_SCENARIOS_LAUNCH_FILE_H_
