// The launch-input corpus (tests/data/megatron_args/, each file's first line
// names its public source, repo@commit:path) through the real binary, with
// no --model: every input simulates the model and layout it states, or is
// refused with one line that says why. Nothing is simulated silently as
// another model.
//
// Expected parameter counts are the model cards' (or papers') stated sizes,
// with the tolerance their rounding allows; where a file describes a model no
// card states (a proxy or test model), the layout and shape fields are
// checked instead, each value written here from the file.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "child_process.h"

namespace moesim {
namespace {

using testing_util::ChildResult;
using testing_util::RunMoesim;

constexpr char kCorpus[] = MOESIM_SOURCE_DIR "/tests/data/megatron_args/";

struct Case {
  const char* file;
  std::vector<std::string> args;  // besides the file; never --model
  // Simulated: total parameters without MTP (billions), the tolerance in
  // percent, and fragments the "scenario" JSON object must hold.
  double params_b = 0;
  double tol_pct = 0;
  std::vector<std::string> fields;
  // Refused: a fragment of the one line on stderr.
  const char* error = nullptr;
};

std::string Field(const char* key, long long value) {
  return std::string("\"") + key + "\": " + std::to_string(value);
}

// The layout fields every simulated case states, from its file.
std::vector<std::string> Layout(int tp, int pp, int ep, int mbs, int gbs,
                                int seq, std::vector<std::string> more = {}) {
  std::vector<std::string> out = {Field("tp", tp),
                                  Field("pp", pp),
                                  Field("ep", ep),
                                  Field("micro_batch_size", mbs),
                                  Field("global_batch_size", gbs),
                                  Field("seq_length", seq)};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

const std::vector<std::string> kH100_8 = {"--system", "dgx-h100", "--gpus",
                                          "8"};

std::vector<std::string> H100(int gpus, std::vector<std::string> more = {}) {
  std::vector<std::string> out = {"--system", "dgx-h100", "--gpus",
                                  std::to_string(gpus)};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

// The variables the MoE model zoo's sbatch_benchmarking.sh exports before it
// reads a model_configs/benchmarking/*.yaml.
std::vector<std::string> ZooVars(int tp, int pp, int ep, int gbs,
                                 std::vector<std::string> more = {}) {
  std::vector<std::string> out = {"--var", "TP=" + std::to_string(tp),
                                  "--var", "PP=" + std::to_string(pp),
                                  "--var", "EP=" + std::to_string(ep),
                                  "--var", "GBS=" + std::to_string(gbs),
                                  "--var", "VPP=1",
                                  "--var", "CP=1",
                                  "--var", "MBS=1",
                                  "--var", "SEQ_LEN=4096",
                                  "--var", "MOE_GROUPED_GEMM=true",
                                  "--var", "MOE_TOKEN_DISPATCHER=alltoall"};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

std::vector<std::string> Concat(std::vector<std::string> a,
                                const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const char kNoVocab[] =
    "flags: --vocab-size: required to build the model from architecture "
    "flags";
const char kBridgeRecipe[] = "selects a recipe";
const char kNotEntry[] = "is not a Megatron training entry point";

// Megatron-Bridge launch inputs: recipes are Python, refused by name.
std::vector<Case> BridgeCases() {
  return {
      // Megatron-Bridge: recipes are Python; refused by name.
      {"mbridge_docs__glm45_355b_sft.args",
       H100(256),
       0,
       0,
       {},
       "Megatron-Bridge's run_recipe.py selects a recipe (--recipe "
       "glm45_355b_sft_config)"},
      {"mbridge_docs__llama3_8b_run_recipe_overrides.args",
       H100(8),
       0,
       0,
       {},
       kBridgeRecipe},
      {"mbridge_examples__deepseek_v4_flash_slurm_pretrain.sh",
       H100(64),
       0,
       0,
       {},
       kBridgeRecipe},
      {"mbridge_examples__gpt_oss_20b_slurm_pretrain.sh",
       H100(8),
       0,
       0,
       {},
       kBridgeRecipe},
      {"mbridge_examples__step35_196b_a11b_slurm_pretrain.sh",
       H100(64),
       0,
       0,
       {},
       kBridgeRecipe},
      {"mbridge_perf__deepseek_v3_gb300_setup_experiment.args",
       H100(256),
       0,
       0,
       {},
       "Megatron-Bridge's setup_experiment.py selects a recipe (-m deepseek "
       "-mr deepseek_v3 -g gb300)"},
  };
}

// Megatron-LM's examples, functional tests, ModelOpt and RL configs.
std::vector<Case> MegatronLmCases() {
  return {
      // Megatron-LM examples.
      {"mlm_examples__gpt3_175b.sh", H100(128), 0, 0, {}, kNoVocab},
      // A 12-layer GPT-OSS-style test model; WORLD_SIZE is torchrun's.
      {"mlm_examples__gptoss_train.sh", H100(8, {"--var", "WORLD_SIZE=4"}), 0,
       0,
       Layout(1, 4, 1, 1, 128, 8192,
              {Field("num_layers", 12), Field("num_moe_experts", 4),
               "\"precision\": \"fp8-delayed\""})},
      // Llama 3 8B: 8.03B (meta-llama/Meta-Llama-3-8B model card).
      {"mlm_examples__llama3_8b_h100_fp8.sh", kH100_8, 8.03, 0.5,
       Layout(1, 1, 1, 1, 128, 8192, {"\"precision\": \"fp8-delayed\""})},
      // DeepSeek-V3: 671B total (DeepSeek-V3 technical report, abstract).
      {"mlm_examples__mfsdp_deepseek_v3.sh", H100(256), 671, 0.5,
       Layout(1, 1, 8, 4, 2048, 4096, {"\"megatron_fsdp\": true"})},
      // Mixtral 8x7B: 46.7B (Mistral AI, "Mixtral of experts", 2023).
      {"mlm_examples__mixtral_8x7b.sh", H100(32), 46.7, 0.5,
       Layout(1, 4, 8, 1, 256, 4096)},
      // Megatron-LM functional tests (model_config.yaml).
      // The DeepSeek-V3 proxy: 14 layers, 64 experts, 3 dense (the file).
      {"mlm_ft__deepseekv3_proxy_flex_release.yaml", H100(64), 0, 0,
       Layout(2, 4, 16, 1, 512, 4096,
              {Field("vpp", 2), Field("num_layers", 14),
               Field("num_moe_experts", 64), "\"dispatcher\": \"hybridep\""})},
      {"mlm_ft__gpt3_15b_8t_release.yaml",
       H100(64),
       0,
       0,
       {},
       "--squared-relu: the squared-ReLU MLP is not modelled"},
      // GPT-3 6.7B's shape (Brown et al. 2020, Table 2.1) with a 131,073
      // NullTokenizer vocabulary.
      {"mlm_ft__gpt3_7b_tp1_pp4_memory_speed.yaml", kH100_8, 6.7, 0.5,
       Layout(1, 4, 1, 1, 8, 8192, {Field("vpp", 8)})},
      {"mlm_ft__gpt3_tp1_pp2_cp4_a2a_p2p.yaml", kH100_8, 0, 0, {}, kNoVocab},
      {"mlm_ft__gpt3_tp2_pp1_gdn.yaml", kH100_8, 0, 0, {}, kNoVocab},
      {"mlm_ft__gpt3_tp2_pp2_dsa.yaml",
       kH100_8,
       0,
       0,
       {},
       "--experimental-attention-variant: 'dsa' is not modelled"},
      {"mlm_ft__gpt3_tp2_pp2_mla.yaml", kH100_8, 0, 0, {}, kNoVocab},
      // Mixtral 8x22B: 141B (Mistral AI, "Cheaper, Better, Faster,
      // Stronger", 2024).
      {"mlm_ft__mixtral_8x22b_release.yaml", H100(64), 141, 0.5,
       Layout(2, 8, 8, 1, 256, 4096)},
      // Mixtral 8x7B with the 256,000-entry Nemotron tokenizer: 46.70B +
      // (256,000 - 32,000) x 4,096 x 2 (untied) = 48.54B.
      {"mlm_ft__mixtral_8x7b_alltoall_release.yaml", H100(64), 48.54, 0.1,
       Layout(2, 4, 4, 1, 1024, 4096)},
      {"mlm_ft__mixtral_8x7b_vpp_release.yaml", H100(32), 46.7, 0.5,
       Layout(2, 4, 8, 1, 256, 4096, {Field("vpp", 8)})},
      {"mlm_ft__moe_tp2_pp2_ep4_mtp_fp8.yaml", kH100_8, 0, 0, {}, kNoVocab},
      {"mlm_ft__moe_tp4_ep2_etp2_pp2_scoped_cudagraph.yaml",
       kH100_8,
       0,
       0,
       {},
       kNoVocab},
      // Megatron-LM's ModelOpt model files (sourced; TOKENIZER_MODEL is the
      // tokenizer the scripts pass).
      {"mlm_modelopt__deepseek_r1.sh",
       H100(256),
       671,
       0.5,
       {Field("num_layers", 61), Field("num_moe_experts", 256)}},
      // DeepSeek-V2-Lite: 15.7B (DeepSeek-V2 paper, appendix B).
      {"mlm_modelopt__deepseek_v2_lite.sh",
       kH100_8,
       15.7,
       0.5,
       {Field("num_layers", 27), Field("seq_length", 1024)}},
      // gpt-oss: 116.83B and 20.91B (OpenAI gpt-oss model card, table 1).
      {"mlm_modelopt__gpt_oss_120b.sh",
       kH100_8,
       116.83,
       0.5,
       {Field("num_moe_experts", 128)}},
      {"mlm_modelopt__gpt_oss_20b.sh",
       kH100_8,
       20.91,
       0.5,
       {Field("num_moe_experts", 32)}},
      // Kimi K2: "1 trillion total parameters" (moonshotai/Kimi-K2 README),
      // a rounded figure: 3% allowed.
      {"mlm_modelopt__kimi_k2_instruct.sh",
       H100(256),
       1000,
       3,
       {Field("num_moe_experts", 384)}},
      {"mlm_modelopt__llama31_8b_instruct.sh", kH100_8, 8.03, 0.5, {}},
      // Llama 4 Scout: 109B total with the vision encoder (Meta model card);
      // its text decoder by hand: 48 x (attention 62.9M + 16 x 125.8M
      // experts + 125.8M shared) + 2 x 202,048 x 5,120 = 107.76B.
      {"mlm_modelopt__llama4_scout_17b_16e.sh",
       kH100_8,
       107.76,
       0.1,
       {Field("num_moe_experts", 16)}},
      // Qwen3: 235B, 30.5B, 8.2B, 32.8B (Qwen3 technical report, tables 1-2).
      {"mlm_modelopt__qwen3_235b_a22b.sh", H100(64), 235, 0.5, {}},
      {"mlm_modelopt__qwen3_30b_a3b.sh", kH100_8, 30.5, 0.5, {}},
      {"mlm_modelopt__qwen3_8b.sh", kH100_8, 8.2, 0.5, {}},
      // Megatron-LM RL model configs.
      {"mlm_rl__llama3p1_8b_instruct.sh", kH100_8, 8.03, 0.5,
       Layout(1, 1, 1, 1, 512, 4096)},
      {"mlm_rl__qwen3_30b_a3b_moe.sh", kH100_8, 30.5, 0.5,
       Layout(4, 1, 2, 1, 256, 8192)},
      {"mlm_rl__qwen3_32b.sh", kH100_8, 32.8, 0.5,
       Layout(1, 1, 1, 1, 256, 8192)},
  };
}

// The Megatron MoE model zoo's configs and scripts.
std::vector<Case> MoeZooCases() {
  return {
      // The Megatron MoE model zoo's benchmarking configs, with the
      // variables its launcher sets.
      // DeepSeek-V2: 236B (DeepSeek-V2 paper, abstract).
      {"moezoo__deepseek_v2.yaml",
       Concat(H100(64), ZooVars(1, 4, 8, 256,
                                {"--var", "PP_FIRST=14", "--var", "PP_LAST=16",
                                 "--var", "LAYERS_PER_VP=15"})),
       236, 0.5,
       Layout(1, 4, 8, 1, 256, 4096,
              {"\"pipeline_layout\": \"Et*14|t*15|t*15|t*16L\""})},
      {"moezoo__deepseek_v3.yaml",
       Concat(H100(256),
              ZooVars(1, 8, 32, 8192,
                      {"--megatron-args",
                       "--pipeline-model-parallel-layout "
                       "'Et*2|(tt|)*22t|(tt|)*7mL' --mtp-num-layers 1"})),
       671, 0.5, Layout(1, 8, 32, 1, 8192, 4096, {Field("vpp", 4)})},
      {"moezoo__deepseek_v3_proxy.yaml",
       Concat(H100(16), ZooVars(1, 2, 8, 256)), 0, 0,
       Layout(1, 2, 8, 1, 256, 4096)},
      {"moezoo__kimi_k2.yaml",
       Concat(H100(256), ZooVars(1, 8, 32, 256,
                                 {"--megatron-args",
                                  "--pipeline-model-parallel-layout "
                                  "'Et*7|(t*8|)*6t*6L'"})),
       1000, 3, Layout(1, 8, 32, 1, 256, 4096)},
      {"moezoo__mixtral_8x22b.yaml",
       Concat(H100(64),
              ZooVars(2, 8, 8, 256,
                      {"--var", "TOKENIZER_MODEL=mistralai/Mixtral-8x22B"})),
       141, 0.5, Layout(2, 8, 8, 1, 256, 4096)},
      // Qwen2-57B-A14B: 57B (Qwen2 technical report, table 1).
      {"moezoo__qwen2_57b_a14b.yaml",
       Concat(H100(32), ZooVars(2, 4, 4, 256, {"--var", "LAYERS_PER_VP=7"})),
       57, 1, Layout(2, 4, 4, 1, 256, 4096)},
      {"moezoo__qwen3_235b_a22b.yaml",
       Concat(H100(128), ZooVars(2, 2, 8, 256, {"--var", "LAYERS_PER_VP=47"})),
       235, 0.5, Layout(2, 2, 8, 1, 256, 4096)},
      {"moezoo__qwen3_30b_a3b.yaml",
       Concat(kH100_8, ZooVars(1, 1, 8, 256, {"--var", "LAYERS_PER_VP=48"})),
       30.5, 0.5, Layout(1, 1, 8, 1, 256, 4096)},
      // Qwen3-Next-80B-A3B: 80B (Qwen model card).
      {"moezoo__qwen3_next_80b_a3b.yaml",
       Concat(H100(64), ZooVars(1, 4, 16, 256, {"--var", "LAYERS_PER_VP=12"})),
       80, 0.5, Layout(1, 4, 16, 1, 256, 4096)},
      // The zoo's best-practice scripts run its harness, not Megatron.
      {"moezoo_bp__deepseek_v3_h100.sh", H100(256), 0, 0, {}, kNotEntry},
      {"moezoo_bp__kimi_k2_gb200_128k.sh", H100(128), 0, 0, {}, kNotEntry},
      {"moezoo_bp__qwen3_30b_a3b.sh", H100(32), 0, 0, {}, kNotEntry},
      {"moezoo_bp__qwen3_next_80b.sh", H100(64), 0, 0, {}, kNotEntry},
  };
}

// NeMo 1.x, Pai-Megatron-Patch and slime launch inputs.
std::vector<Case> OtherFrameworkCases() {
  return {
      // NeMo 1.x Hydra config and Pai-Megatron-Patch's positional scripts.
      {"nemo_launcher__mixtral_8x22b.yaml", H100(64), 0, 0, {}, kNotEntry},
      {"pai__moonlight_a3b.sh",
       kH100_8,
       0,
       0,
       {},
       "--micro-batch-size: ${BATCH_SIZE} is not set in the launch input"},
      {"pai__qwen3_a22b.sh",
       H100(64),
       0,
       0,
       {},
       "--micro-batch-size: ${BATCH_SIZE} is not set in the launch input"},
      {"pai_readme__qwen3_30b_a3b_pretrain.args", kH100_8, 0, 0, {}, kNotEntry},
      // slime's model files: MOE_LAYER_FREQ is built by a bash loop, so the
      // user states it.
      {"slime_models__deepseek_v3.sh",
       H100(256, {"--var", "MOE_LAYER_FREQ=([0]*3+[1]*58)"}),
       671,
       0.5,
       {Field("num_layers", 61)}},
      {"slime_models__glm45_355b_a32b.sh",
       H100(256),
       0,
       0,
       {},
       "is shell arithmetic or a command, which moesim does not run"},
      {"slime_models__kimi_k2.sh",
       H100(256, {"--var", "MOE_LAYER_FREQ=([0]*1+[1]*60)"}),
       1000,
       3,
       {}},
      {"slime_models__moonlight.sh",
       H100(8, {"--var", "MOE_LAYER_FREQ=([0]*1+[1]*26)"}),
       0,
       0,
       {},
       "$MOE_SHARED_EXPERT_INTERMEDIATE_SIZE is not set in the launch input"},
      {"slime_models__qwen3_30b_a3b.sh",
       H100(8, {"--var", "MOE_LAYER_FREQ=([1]*48)"}),
       30.5,
       0.5,
       {}},
      // Its layers come from a plugin's layer spec, not from the flags.
      {"slime_models__qwen3_next_80b_a3b.sh",
       H100(8, {"--var", "MOE_LAYER_FREQ=([1]*48)"}),
       0,
       0,
       {},
       "--spec: a custom layer spec"},
      {"slime_run__deepseek_r1.sh",
       H100(256),
       0,
       0,
       {},
       "${MODEL_ARGS[@]} is an argument list the launch input does not set"},
  };
}

std::vector<Case> Corpus() {
  std::vector<Case> all;
  for (auto part : {BridgeCases(), MegatronLmCases(), MoeZooCases(),
                    OtherFrameworkCases()}) {
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

// The number after "\"key\": " in `json`, or -1.
double JsonNumberAfter(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return -1;
  return std::strtod(json.c_str() + at + key.size() + 4, nullptr);
}

TEST(LaunchCorpusTest, EveryInputSimulatesItsModelOrIsRefusedInOneLine) {
  const std::vector<Case> corpus = Corpus();
  EXPECT_GE(corpus.size(), 30u);
  int simulated = 0;
  for (const Case& c : corpus) {
    std::vector<std::string> args = {"memory", "--megatron-args-file",
                                     std::string(kCorpus) + c.file, "--json"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const ChildResult r = RunMoesim(args, std::chrono::seconds(30));
    ASSERT_TRUE(r.exited) << c.file;
    if (c.error != nullptr) {
      EXPECT_EQ(r.exit_code, 2) << c.file << ": " << r.err;
      EXPECT_NE(r.err.find(c.error), std::string::npos)
          << c.file << ": " << r.err;
      // One line.
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << c.file << ": " << r.err;
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << c.file << ": " << r.err;
    ++simulated;
    const size_t scenario = r.out.find("\"scenario\": {");
    ASSERT_NE(scenario, std::string::npos) << c.file;
    const std::string json =
        r.out.substr(scenario, r.out.find('\n', scenario) - scenario);
    EXPECT_TRUE(json.starts_with("\"scenario\": {\"model\": \"custom-"))
        << c.file << ": built from its flags, not a zoo model: " << json;
    if (c.params_b > 0) {
      const double params = JsonNumberAfter(json, "params_total") / 1e9;
      EXPECT_NEAR(params, c.params_b, c.params_b * c.tol_pct / 100) << c.file;
    }
    for (const std::string& field : c.fields) {
      EXPECT_NE(json.find(field), std::string::npos)
          << c.file << ": " << field << " not in " << json;
    }
  }
  EXPECT_GE(simulated, 30);
  std::printf("corpus: %zu inputs, %d simulated, %zu refused\n", corpus.size(),
              simulated, corpus.size() - static_cast<size_t>(simulated));
}

}  // namespace
}  // namespace moesim
