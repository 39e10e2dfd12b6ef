// Bad input end to end: every invalid scenario, flag set or input file makes
// `moesim memory` (or the row's command) exit with code 2 and print exactly one
// line on stderr, "moesim: <message>", naming the origin, the field and the
// rule.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// One row: arguments after `moesim memory` ("{tmp}" is the test's scratch
// folder) and a fragment the single stderr line must contain.
struct BadInput {
  const char* name;
  std::vector<std::string> args;
  const char* fragment;
  const char* command = "memory";
};

std::ostream& operator<<(std::ostream& os, const BadInput& c) {
  return os << c.name;
}

// A valid base the rows break one thing of.
std::vector<std::string> Base(const char* model, const char* gpus,
                              std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--model",  model,    "--system",
                                   "dgx-h100", "--gpus", gpus};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

const BadInput kBadInputs[] = {
    // Missing required flags.
    {"MissingGpus",
     {"--model", "llama3-8b", "--system", "dgx-h100"},
     "flags: --gpus: required"},
    {"MissingModel",
     {"--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: required"},
    {"MissingSystem",
     {"--model", "llama3-8b", "--gpus", "8"},
     "flags: --system: required"},
    // Flag values out of range.
    {"TpZero", Base("llama3-8b", "8", {"--tp", "0"}),
     "flags: --tp: must be >= 1, got 0"},
    {"PpZero", Base("llama3-8b", "8", {"--pp", "0"}),
     "flags: --pp: must be >= 1, got 0"},
    {"GbsZero", Base("llama3-8b", "8", {"--gbs", "0"}),
     "flags: --gbs: must be >= 1, got 0"},
    {"GpusZero",
     {"--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "0"},
     "flags: --gpus: must be >= 1, got 0"},
    {"CpuOffloadAboveOne", Base("qwen3-30b-a3b", "8", {"--cpu-offload", "1.5"}),
     "flags: --cpu-offload: must be in [0, 1]"},
    {"TpNotANumber", Base("llama3-8b", "8", {"--tp", "four"}), "--tp"},
    {"EpOverlapTwo", Base("qwen3-30b-a3b", "8", {"--ep-overlap", "2"}),
     "flags: --ep-overlap: must be 0 or 1, got 2"},
    // Unknown vocabulary.
    {"UnknownPrecision", Base("llama3-8b", "8", {"--precision", "fp6"}),
     "flags: --precision: unknown 'fp6'"},
    {"UnknownDispatcher", Base("qwen3-30b-a3b", "8", {"--dispatcher", "nccl"}),
     "flags: --dispatcher: unknown 'nccl'"},
    {"UnknownRouting", Base("qwen3-30b-a3b", "8", {"--routing", "aux_loss"}),
     "flags: --routing: unknown 'aux_loss'"},
    {"UnknownGraphScope",
     Base("qwen3-30b-a3b", "8", {"--cuda-graph", "te:attn;router"}),
     "flags: --cuda-graph: unknown TE scope 'router'"},
    {"UnknownRecomputeModule", Base("llama3-8b", "8", {"--recompute", "attn"}),
     "flags: --recompute: unknown module 'attn'"},
    {"RecomputeFullWithModules",
     Base("llama3-8b", "8", {"--recompute", "full,mlp"}),
     "flags: --recompute: 'full' cannot be combined with modules"},
    {"UnknownModel",
     {"--model", "gpt-5", "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: unknown model 'gpt-5'"},
    {"UnknownSystem",
     {"--model", "llama3-8b", "--system", "tpu-v5", "--gpus", "8"},
     "flags: --system: unknown system 'tpu-v5'"},
    // Impossible layouts.
    {"AttentionMesh", Base("llama3-8b", "12", {"--tp", "8"}),
     "(attention mesh TPxCPxDPxPP)"},
    {"MoeMesh", Base("qwen3-30b-a3b", "16", {"--ep", "32"}),
     "(MoE mesh ETPxEPxEDPxPP)"},
    {"HeadsNotDivisible", Base("qwen3-30b-a3b", "64", {"--tp", "64"}),
     "flags: --tp: num_attention_heads 32 is not divisible by "
     "tensor_model_parallel_size 64"},
    {"ExpertsNotDivisible", Base("qwen3-30b-a3b", "48", {"--ep", "3"}),
     "flags: --ep: num_moe_experts 128 is not divisible by "
     "expert_model_parallel_size 3"},
    {"EpOnDenseModel", Base("llama3-8b", "8", {"--ep", "8"}),
     "needs an MoE model"},
    {"SeqNotDivisibleByCp", Base("qwen3-30b-a3b", "48", {"--cp", "3"}),
     "flags: --cp: seq_length 4096 is not divisible by 2*context_parallel_size "
     "= 6"},
    {"GbsNotDivisible", Base("qwen3-30b-a3b", "16", {"--gbs", "24"}),
     "flags: --gbs: global_batch_size 24 is not divisible by "
     "micro_batch_size*DP"},
    {"VppWithoutPp", Base("qwen3-30b-a3b", "8", {"--vpp", "2"}),
     "flags: --vpp: virtual_pipeline_model_parallel_size 2 needs "
     "pipeline_model_parallel_size > 1"},
    {"LayersNotSplit",
     Base("deepseek-v3", "64", {"--ep", "8", "--pp", "8", "--vpp", "4"}),
     "num_layers 61 is not divisible by pipeline_model_parallel_size*"},
    {"BadPipelineLayout",
     Base("deepseek-v3", "64",
          {"--ep", "8", "--pp", "8", "--vpp", "4", "--pp-layout",
           "Et|(tt|)*29mL"}),
     "flags: --pp-layout:"},
    // Incompatible features.
    {"Mxfp8OnHopper", Base("qwen3-30b-a3b", "8", {"--precision", "mxfp8"}),
     "flags: --precision: mxfp8 needs a Blackwell GPU"},
    {"Nvfp4OnHopper", Base("qwen3-30b-a3b", "8", {"--precision", "nvfp4"}),
     "nvfp4 needs a Blackwell GPU"},
    {"DeepEpWithoutEp", Base("qwen3-30b-a3b", "8", {"--dispatcher", "deepep"}),
     "flags: --dispatcher: deepep needs expert_model_parallel_size > 1"},
    {"MlpRecomputeOnMoeOnlyModel",
     Base("qwen3-30b-a3b", "8", {"--recompute", "mlp"}),
     "mlp recompute has no effect on MoE layers"},
    {"MlaUpProjOnGqaModel",
     Base("llama3-8b", "8", {"--recompute", "mla_up_proj"}),
     "mla_up_proj needs multi-latent attention"},
    {"MoeAndRouterGraphs",
     Base("qwen3-30b-a3b", "8", {"--cuda-graph", "te:moe;moe_router"}),
     "TE scopes moe and moe_router are mutually exclusive"},
    {"PreprocessWithoutRouter",
     Base("qwen3-30b-a3b", "8", {"--cuda-graph", "te:moe_preprocess"}),
     "TE scope moe_preprocess needs moe_router"},
    {"FullRecomputeWithTeGraphs",
     Base("qwen3-30b-a3b", "8",
          {"--recompute", "full", "--cuda-graph", "te:attn"}),
     "full recompute is only supported with full iteration CUDA graph"},
    {"MoeRecomputeWithRouterGraph",
     Base("qwen3-30b-a3b", "8",
          {"--recompute", "moe", "--cuda-graph", "te:moe_router"}),
     "moe recompute is not supported with the moe_router CUDA-graph scope"},
    {"LayernormRecomputeFp8Delayed",
     Base("qwen3-30b-a3b", "8",
          {"--recompute", "layernorm", "--precision", "fp8-delayed"}),
     "layernorm recompute is not supported with fp8-delayed"},
    {"EpOverlapWithoutVpp",
     Base("qwen3-30b-a3b", "16",
          {"--ep", "8", "--pp", "2", "--ep-overlap", "1"}),
     "flags: --ep-overlap: EP overlap needs "
     "virtual_pipeline_model_parallel_size > 1"},
    {"EpOverlapWithFullRecompute",
     Base("qwen3-30b-a3b", "8",
          {"--ep", "8", "--ep-overlap", "1", "--recompute", "full"}),
     "flags: --ep-overlap: EP overlap is incompatible with full recompute"},
    {"EpOverlapWithMoeRecompute",
     Base("qwen3-30b-a3b", "8",
          {"--ep", "8", "--ep-overlap", "1", "--recompute", "moe"}),
     "EP overlap is incompatible with moe recompute"},
    {"ActivationOffloadWithGraphs",
     Base("qwen3-30b-a3b", "8",
          {"--megatron-args", "--cpu-offloading", "--cuda-graph", "te:attn"}),
     "flags: --cpu-offloading: CPU activation offloading is incompatible with "
     "CUDA graphs"},
    {"ActivationOffloadWithPp",
     Base("qwen3-30b-a3b", "8",
          {"--megatron-args", "--cpu-offloading", "--pp", "2"}),
     "CPU activation offloading needs pipeline_model_parallel_size 1"},
    // Fine-grained activation and optimizer-state offloading (Megatron's
    // TransformerConfig checks and the modules a model has).
    {"UnknownOffloadModule",
     Base("qwen3-30b-a3b", "8",
          {"--megatron-args",
           "--fine-grained-activation-offloading "
           "--offload-modules expert_fc2"}),
     "flags: --offload-modules: unknown 'expert_fc2' (attn_norm, qkv_linear, "
     "core_attn, attn_proj, mlp_norm, expert_fc1, moe_act)"},
    {"OffloadExpertsOfADenseModel",
     Base("llama3-8b", "8",
          {"--megatron-args",
           "--fine-grained-activation-offloading "
           "--offload-modules expert_fc1"}),
     "flags: --offload-modules: mlp_norm, expert_fc1 and moe_act need MoE "
     "layers; llama3-8b is dense"},
    {"OffloadFractionOutOfRange",
     Base("qwen3-30b-a3b", "8",
          {"--megatron-args",
           "--fine-grained-activation-offloading "
           "--offload-modules expert_fc1 "
           "--activation-offload-fraction 1.5"}),
     "flags: --megatron-args: --activation-offload-fraction: '1.5' is out of "
     "range"},
    {"OffloadModulesWithoutTheSwitch",
     Base("qwen3-30b-a3b", "8",
          {"--megatron-args", "--offload-modules expert_fc1"}),
     "flags: --offload-modules: has no effect without "
     "fine_grained_activation_offloading"},
    {"OptimizerStatesWithCpuOptimizer",
     Base("qwen3-30b-a3b", "8",
          {"--cpu-offload", "1", "--megatron-args",
           "--offload-optimizer-states"}),
     "flags: --offload-optimizer-states: cannot be combined with the CPU "
     "optimizer"},
    // Context-parallel communication type.
    {"UnknownCpCommType",
     Base("qwen3-30b-a3b", "8", {"--cp-comm-type", "ring"}),
     "flags: --cp-comm-type: unknown 'ring' (p2p, a2a, allgather, a2a+p2p)"},
    {"CpA2aHeadsNotDivisible",
     Base("qwen3-30b-a3b", "64", {"--cp", "8", "--cp-comm-type", "a2a"}),
     "flags: --cp-comm-type: a2a scatters heads over CP: num_query_groups 4 / "
     "tensor_model_parallel_size 1 = 4 heads per TP rank not divisible by "
     "context_parallel_size 8"},
    {"HierarchicalCpSizesNotANumber",
     Base("qwen3-30b-a3b", "64",
          {"--cp", "8", "--cp-comm-type", "a2a+p2p", "--hierarchical-cp-sizes",
           "4,x"}),
     "flags: --hierarchical-cp-sizes: 'x' is not an integer"},
    {"HierarchicalCpSizesProduct",
     Base("qwen3-30b-a3b", "64",
          {"--cp", "8", "--cp-comm-type", "a2a+p2p", "--hierarchical-cp-sizes",
           "4,4"}),
     "flags: --hierarchical-cp-sizes: product 4*4 = 16 is not "
     "context_parallel_size 8"},
    // Bad --megatron-args.
    {"MegatronArgMissingValue",
     Base("llama3-8b", "8",
          {"--megatron-args", "--tensor-model-parallel-size"}),
     "flags: --megatron-args: --tensor-model-parallel-size: needs a value"},
    {"MegatronArgBadNumber",
     Base("llama3-8b", "8", {"--megatron-args", "--micro-batch-size x"}),
     "flags: --megatron-args: --micro-batch-size: 'x' is not an integer"},
    {"Fp8AttentionWithoutFp8Recipe",
     Base("llama3-8b", "8", {"--megatron-args", "--fp8-dot-product-attention"}),
     "flags: --fp8-dot-product-attention: needs an FP8 recipe TE runs "
     "attention under (fp8-cs, fp8-delayed or mxfp8), not bf16"},
    // Bad files.
    {"MissingScenarioFile",
     {"{tmp}/absent.textproto"},
     "{tmp}/absent.textproto: cannot read file"},
    {"MalformedScenarioFile",
     {"{tmp}/malformed.textproto"},
     "{tmp}/malformed.textproto:3:"},
    {"UnknownScenarioField",
     {"{tmp}/unknown_field.textproto"},
     "{tmp}/unknown_field.textproto:2:"},
    {"ScenarioFileRuleCitesLine",
     {"{tmp}/cp.textproto"},
     "{tmp}/cp.textproto:5: layout.context_parallel_size: seq_length 4096 is "
     "not divisible"},
    {"ScenarioFileWithoutModel",
     {"{tmp}/no_model.textproto"},
     "{tmp}/no_model.textproto: model: required"},
    {"MalformedConfigJson",
     {"--model", "{tmp}/broken/config.json", "--system", "dgx-h100", "--gpus",
      "8"},
     "{tmp}/broken/config.json:1:40: malformed JSON: expected a value"},
    {"UnsupportedConfigJson",
     {"--model", "{tmp}/bert/config.json", "--system", "dgx-h100", "--gpus",
      "8"},
     "model_type: unsupported 'bert'"},
    {"MalformedSystemFile",
     {"--model", "llama3-8b", "--system", "{tmp}/system.textproto", "--gpus",
      "8"},
     "{tmp}/system.textproto:"},
    // Routing skew and offload overlap need the feature they modify.
    {"RoutingSkewWithoutNaturalRouting",
     {"--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8", "--ep",
      "8", "--routing-skew", "1"},
     "flags: --routing-skew: skews dropless_natural routing"},
    {"RoutingSkewNaN",
     {"--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8", "--ep",
      "8", "--routing", "dropless_natural", "--routing-skew", "nan"},
     "flags: --routing-skew: must be a Zipf exponent in [0, 10]"},
    {"RoutingHistogramNotANumber",
     {"--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8", "--ep",
      "8", "--routing", "dropless_natural", "--routing-histogram",
      "{tmp}/histogram_bad.txt"},
     "{tmp}/histogram_bad.txt:2: moe_routing_histogram: 'many' is not a "
     "number"},
    {"RoutingHistogramWrongLength",
     {"--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8", "--ep",
      "8", "--routing", "dropless_natural", "--routing-histogram",
      "{tmp}/histogram_short.txt"},
     "flags: --routing-histogram: has 3 values; the model has 128 routed "
     "experts"},
    {"RoutingHistogramWithoutNaturalRouting",
     {"--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8", "--ep",
      "8", "--routing-histogram", "{tmp}/histogram_short.txt"},
     "flags: --routing-histogram: shapes dropless_natural routing"},
    {"OffloadOverlapWithoutOffload",
     {"--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--offload-overlap", "1"},
     "flags: --offload-overlap: overlaps the offloaded optimizer's copies"},
    {"ManualGcNotABool",
     {"--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--manual-gc", "2"},
     "flags: --manual-gc: must be 0 or 1, got 2"},
    {"BatchP2pSyncNotABool",
     {"--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--pp",
      "2", "--batch-p2p-sync", "3"},
     "flags: --batch-p2p-sync: must be 0 or 1, got 3"},
    // `moesim validate`: a runs CSV that does not follow the schema.
    {"ValidateMissingColumn",
     {"{tmp}/runs_no_gpu_column.csv"},
     "{tmp}/runs_no_gpu_column.csv:1: missing column 'gpu'",
     "validate"},
    {"ValidateUnknownGpu",
     {"{tmp}/runs_unknown_gpu.csv"},
     "{tmp}/runs_unknown_gpu.csv:2: gpu: unknown GPU 'a100'",
     "validate"},
    {"ValidateBadNumber",
     {"{tmp}/runs_bad_number.csv"},
     "{tmp}/runs_bad_number.csv:2: num_gpus: '256x' is not a number",
     "validate"},
    {"ValidateUnknownModel",
     {"{tmp}/runs_unknown_model.csv"},
     "{tmp}/runs_unknown_model.csv:2: model: unknown model 'deepseek-v9'",
     "validate"},
    // The CP exchange of a runs row (cp_comm_type column, the hierarchical
    // sizes in extra) and its FLOPs count (flops_formula): checked by the
    // same rules as a scenario's (scenarios::CpExchangeRule), row named.
    {"ValidateUnknownCpCommType",
     {"{tmp}/runs_unknown_cp_comm.csv"},
     "{tmp}/runs_unknown_cp_comm.csv:2: cp_comm_type: unknown 'ring' (p2p, "
     "a2a, allgather, a2a+p2p)",
     "validate"},
    {"ValidateA2aHeadsNotDivisible",
     {"{tmp}/runs_a2a_heads.csv"},
     "{tmp}/runs_a2a_heads.csv:2: cp_comm_type: a2a scatters heads over CP: "
     "num_attention_heads 128 / tensor_model_parallel_size 1 = 128 heads per "
     "TP rank not divisible by context_parallel_size 3",
     "validate"},
    {"ValidateHierarchicalProduct",
     {"{tmp}/runs_hierarchical_product.csv"},
     "{tmp}/runs_hierarchical_product.csv:2: extra "
     "hierarchical_context_parallel_sizes: product 2*4 = 8 is not "
     "context_parallel_size 4",
     "validate"},
    {"ValidateUnknownFlopsFormula",
     {"{tmp}/runs_unknown_flops_formula.csv"},
     "{tmp}/runs_unknown_flops_formula.csv:2: flops_formula: unknown 'nemo' "
     "(megatron-bridge, nemo-2024)",
     "validate"},
    {"ValidateNemoFormulaOnMoe",
     {"{tmp}/runs_nemo_formula_moe.csv"},
     "{tmp}/runs_nemo_formula_moe.csv:2: flops_formula: nemo-2024 counts "
     "dense llama-family models only (NeMo's llama2 / llama3 formula), not "
     "'deepseek-v3'",
     "validate"},
    {"ValidateMissingFile",
     {"{tmp}/absent_runs.csv"},
     "flags: RUNS: {tmp}/absent_runs.csv: cannot read file",
     "validate"},
    // `moesim run`: its own flags, and a cluster the system cannot grow to.
    {"RunUnknownNetwork",
     {"--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--network", "ideal"},
     "--network: ideal not in {analytical,flow}",
     "run"},
    {"RunTraceUnwritable",
     {"--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--trace",
      "{tmp}/missing-dir/trace.json"},
     "flags: --trace: cannot write",
     "run"},
    // `moesim run --full` and `--straggler RANK:FACTOR`.
    {"RunStragglerWithoutFull", Base("llama3-8b", "8", {"--straggler", "1:2"}),
     "flags: --straggler: needs --full", "run"},
    {"RunStragglerMalformed",
     Base("llama3-8b", "8", {"--full", "--straggler", "3"}),
     "flags: --straggler: must be RANK:FACTOR (e.g. 12:1.5), got '3'", "run"},
    {"RunStragglerRankNotANumber",
     Base("llama3-8b", "8", {"--full", "--straggler", "x:2"}),
     "flags: --straggler: must be RANK:FACTOR", "run"},
    {"RunStragglerFactorBelowOne",
     Base("llama3-8b", "8", {"--full", "--straggler", "3:0.5"}),
     "flags: --straggler: factor must be a number in [1, 10], got '0.5'",
     "run"},
    {"RunStragglerFactorNaN",
     Base("llama3-8b", "8", {"--full", "--straggler", "3:nan"}),
     "flags: --straggler: factor must be a number in [1, 10], got 'nan'",
     "run"},
    {"RunStragglerRankBeyondGpus",
     Base("llama3-8b", "8", {"--full", "--straggler", "8:2"}),
     "flags: --straggler: rank 8 must be a GPU rank in [0, 8)", "run"},
    {"RunFullBeyondRankLimit", Base("llama3-8b", "32768", {"--full"}),
     "flags: --full: 32768 GPUs is beyond full mode's limit of 16384 ranks",
     "run"},
    {"RunGpusNotMultipleOfNode",
     {"--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "12"},
     "--gpus: 12 is not a multiple of dgx-h100 gpus_per_node = 8",
     "run"},
    // `moesim topo`: impossible systems and layouts.
    {"TopoMissingGpus", {"dgx-h100"}, "flags: --gpus: is required", "topo"},
    {"TopoGpusZero", {"dgx-h100", "--gpus", "0"}, "--gpus: ", "topo"},
    {"TopoGpusNotMultipleOfNode",
     {"dgx-h100", "--gpus", "12"},
     "--gpus: 12 is not a multiple",
     "topo"},
    {"TopoGpusNotMultipleOfTray",
     {"gb200-nvl72", "--gpus", "6"},
     "--gpus: 6 is not a multiple",
     "topo"},
    {"TopoGpusAbsurd",
     {"dgx-h100", "--gpus", "1000000000"},
     "--gpus: ",
     "topo"},
    {"TopoUnknownSystem",
     {"dgx-a100", "--gpus", "8"},
     "system: unknown system 'dgx-a100'",
     "topo"},
    {"TopoZeroNvlinkBandwidth",
     {"{tmp}/zero_nvlink.textproto", "--gpus", "8"},
     "{tmp}/zero_nvlink.textproto: nvlink.link_gb_s: must be finite and >= 1 "
     "GB/s",
     "topo"},
    {"TopoNegativeNicRate",
     {"{tmp}/negative_nic.textproto", "--gpus", "8"},
     "{tmp}/negative_nic.textproto: nic.gbit_s: must be finite and >= 1 Gb/s",
     "topo"},
    {"TopoUnknownGpuArchitecture",
     {"{tmp}/ampere.textproto", "--gpus", "8"},
     "gpu.architecture: must be",
     "topo"},
    {"TopoOversubscriptionBelowOne",
     {"{tmp}/undersubscribed.textproto", "--gpus", "8"},
     "scale_out.oversubscription: must be >= 1",
     "topo"},
    {"TopoFabricTooSmall",
     {"{tmp}/two_tier.textproto", "--gpus", "32768"},
     "fabric too small",
     "topo"},
    {"TopoBadRankOrder",
     {"dgx-h100", "--gpus", "16", "--tp", "2", "--rank-order", "tp-pp"},
     "flags: --rank-order: must order tp, cp, ep, dp, pp",
     "topo"},
    {"TopoLayoutDoesNotDivide",
     {"dgx-h100", "--gpus", "16", "--tp", "3"},
     "flags: --gpus: 16 is not divisible by tp*cp*pp = 3",
     "topo"},
    // Calibration tables and nccl-tests logs.
    {"TablesMissingColumn",
     {"--gpu", "h100", "--tables", "{tmp}/t_missing"},
     "{tmp}/t_missing/gemm.csv:1: dtype: missing column",
     "validate-kernels"},
    {"TablesNegativeThroughput",
     {"--gpu", "h100", "--tables", "{tmp}/t_negative"},
     "{tmp}/t_negative/gemm.csv:2: tflops: must be > 0",
     "validate-kernels"},
    {"TablesZeroBandwidth",
     {"--gpu", "h100", "--tables", "{tmp}/t_zero"},
     "{tmp}/t_zero/memory_bound.csv:2: gb_s: must be > 0",
     "validate-kernels"},
    {"TablesUnknownDtype",
     {"--gpu", "h100", "--tables", "{tmp}/t_dtype"},
     "{tmp}/t_dtype/gemm.csv:2: dtype: unknown dtype 'int4'",
     "validate-kernels"},
    {"TablesDuplicateGridPoint",
     {"--gpu", "h100", "--tables", "{tmp}/t_duplicate"},
     "{tmp}/t_duplicate/gemm.csv:3: duplicate grid point of line 2",
     "validate-kernels"},
    {"TablesUnknownGpu",
     {"--gpu", "a100"},
     "flags: --gpu: unknown GPU 'a100'",
     "validate-kernels"},
    {"TablesWithoutGpu",
     {"--tables", "{tmp}/t_missing"},
     "flags: --tables: needs --gpu",
     "validate-kernels"},
    {"TablesNotAFolder",
     {"--gpu", "h100", "--tables", "{tmp}/absent"},
     "{tmp}/absent: not a folder of calibration tables",
     "validate-kernels"},
    {"NcclLogTruncated",
     {"import-nccl-tests", "{tmp}/truncated.log", "--system", "dgx-h100",
      "--tier", "nvlink"},
     "{tmp}/truncated.log:",
     "calibrate"},
    {"NcclLogUnknownTier",
     {"import-nccl-tests", "{tmp}/truncated.log", "--system", "dgx-h100",
      "--tier", "pcie"},
     "flags: --tier: must be nvlink or net",
     "calibrate"},
    {"NcclLogMissing",
     {"import-nccl-tests", "{tmp}/absent.log", "--system", "dgx-h100", "--tier",
      "net"},
     "{tmp}/absent.log",
     "calibrate"},
    // `moesim sweep`: bad sweep specs name file:line and the field.
    {"SweepUnknownField",
     {"{tmp}/sweep_unknown.textproto"},
     "{tmp}/sweep_unknown.textproto:2:4: Message type "
     "\"moesim.scenarios.Sweep\" has no field named \"tq\"",
     "sweep"},
    {"SweepEmptyAxis",
     {"{tmp}/sweep_empty_axis.textproto"},
     "{tmp}/sweep_empty_axis.textproto:2: tp: empty axis",
     "sweep"},
    {"SweepEmptyList",
     {"{tmp}/sweep_empty_list.textproto"},
     "{tmp}/sweep_empty_list.textproto:3: precision: empty list",
     "sweep"},
    {"SweepNegativeValue",
     {"{tmp}/sweep_negative.textproto"},
     "{tmp}/sweep_negative.textproto:2: cp: values must be >= 1, got -4",
     "sweep"},
    {"SweepSpaceTooLarge",
     {"{tmp}/sweep_large.textproto"},
     // 100 x 100 x 200 = 2,000,000 > 10^6; ep is the largest axis.
     "{tmp}/sweep_large.textproto:4: ep: the space has 2000000 candidates "
     "(100 tp x 100 cp x 200 ep), more than the limit of 1000000",
     "sweep"},
    {"SweepBadRange",
     {"{tmp}/sweep_range.textproto"},
     "{tmp}/sweep_range.textproto:2: seq_len: a range needs exactly one of "
     "times >= 2 or step >= 1",
     "sweep"},
    {"SweepUnknownConstraintTerm",
     {"{tmp}/sweep_rule.textproto"},
     "{tmp}/sweep_rule.textproto:2: constraints.rule: 'tp*foo <= 8': unknown "
     "term 'foo'",
     "sweep"},
    {"SweepUnknownPrecision",
     {"{tmp}/sweep_precision.textproto"},
     "{tmp}/sweep_precision.textproto:2: precision: unknown 'fp6'",
     "sweep"},
    {"SweepCpuOffloadAboveOne",
     {"{tmp}/sweep_offload.textproto"},
     "{tmp}/sweep_offload.textproto:2: cpu_offload: must be in [0, 1]",
     "sweep"},
    {"SweepUnknownModel",
     {"{tmp}/sweep_model.textproto"},
     "{tmp}/sweep_model.textproto:1: base.model: unknown model 'qwen9'",
     "sweep"},
    {"SweepMissingBaseFile",
     {"{tmp}/sweep_base_file.textproto"},
     "{tmp}/sweep_base_file.textproto:1: base_file: ",
     "sweep"},
    {"SweepBadShard",
     {"{tmp}/sweep_negative.textproto", "--shard", "3/2"},
     "flags: --shard: needs K/N with 0 <= K < N",
     "sweep"},
    {"SweepMergeNotAShard",
     {"merge", "{tmp}/not_a_shard.json"},
     "{tmp}/not_a_shard.json: not a sweep shard",
     "sweep"},
    // Calibration profiles (`--calibration`) and `moesim calibrate fit`.
    {"RunProfileFactorOutOfRange",
     Base("llama3-8b", "8", {"--calibration", "{tmp}/profile_range.textproto"}),
     "{tmp}/profile_range.textproto:3: factors.gemm_efficiency: must be a "
     "finite factor in [0.25, 4], got 5",
     "run"},
    {"RunProfileFactorNotFinite",
     Base("llama3-8b", "8", {"--calibration", "{tmp}/profile_nan.textproto"}),
     "{tmp}/profile_nan.textproto:2: factors.host_overhead_scale: must be a "
     "finite factor in [0.25, 4], got nan",
     "run"},
    {"RunProfileUnknownField",
     Base("llama3-8b", "8", {"--calibration", "{tmp}/profile_field.textproto"}),
     "\"moesim.calibration.Factors\" has no field named \"gemm_speed\"", "run"},
    {"RunProfileMalformed",
     Base("llama3-8b", "8",
          {"--calibration", "{tmp}/profile_malformed.textproto"}),
     "{tmp}/profile_malformed.textproto:1:", "run"},
    {"RunProfileUnknownGpu",
     Base("llama3-8b", "8", {"--calibration", "{tmp}/profile_gpu.textproto"}),
     "{tmp}/profile_gpu.textproto:2: gpu[0].gpu: unknown GPU 'a100'", "run"},
    {"RunProfileMissing",
     Base("llama3-8b", "8", {"--calibration", "{tmp}/absent.textproto"}),
     "{tmp}/absent.textproto: cannot read file", "run"},
    {"ValidateProfileFactorOutOfRange",
     {"--calibration", "{tmp}/profile_range.textproto"},
     "{tmp}/profile_range.textproto:3: factors.gemm_efficiency: must be a "
     "finite factor in [0.25, 4]",
     "validate"},
    {"FitUnknownFactor",
     {"fit", "--out", "{tmp}/fit.textproto", "--factors",
      "gemm_efficiency,gemm"},
     "flags: --factors: unknown factor 'gemm' (gemm_efficiency, ",
     "calibrate"},
    {"FitUnknownConfidence",
     {"fit", "--out", "{tmp}/fit.textproto", "--confidence", "high,certain"},
     "flags: --confidence: unknown level 'certain' (high, medium, low)",
     "calibrate"},
    {"FitOneFold",
     {"fit", "--out", "{tmp}/fit.textproto", "--folds", "1"},
     "--folds",
     "calibrate"},
    {"FitWithoutOut", {"fit"}, "--out", "calibrate"},
    {"FitUnknownLoss",
     {"fit", "--out", "{tmp}/fit.textproto", "--loss", "huber"},
     "--loss",
     "calibrate"},
    {"FitMissingRuns",
     {"fit", "--out", "{tmp}/fit.textproto", "--runs", "{tmp}/absent.csv"},
     "flags: --runs: {tmp}/absent.csv: cannot read file",
     "calibrate"},
    {"FitBadRunsFile",
     {"fit", "--out", "{tmp}/fit.textproto", "--runs",
      "{tmp}/runs_bad_number.csv"},
     "{tmp}/runs_bad_number.csv:2: num_gpus: '256x' is not a number",
     "calibrate"},
    {"TopoExpertLayoutDoesNotDivide",
     {"dgx-h100", "--gpus", "16", "--ep", "32"},
     "flags: --ep: etp*ep*pp = 32 does not divide --gpus 16",
     "topo"},
};

class BadInputTest : public testing::TestWithParam<BadInput> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("moesim_bad_input_" + std::to_string(::getpid())));
    fs::create_directories(*dir_ / "broken");
    fs::create_directories(*dir_ / "bert");
    WriteInputFiles();
    WriteSweepSpecs();
    WriteSystemVariants();
    WriteRunsVariants();
    WriteProfilesAndTables();
  }
  // Scenario, histogram, HF config and system files, each broken.
  static void WriteInputFiles() {
    Write("malformed.textproto",
          "model: \"llama3-8b\"\nsystem: \"dgx-h100\"\nnum_gpus: eight\n");
    Write("unknown_field.textproto", "model: \"llama3-8b\"\nnum_nodes: 4\n");
    Write("cp.textproto",
          "model: \"qwen3-30b-a3b\"\nsystem: \"dgx-h100\"\nnum_gpus: "
          "48\nlayout {\n"
          "  context_parallel_size: 3\n}\n");
    Write("no_model.textproto", "system: \"dgx-h100\"\nnum_gpus: 8\n");
    Write("histogram_bad.txt", "# tokens per expert\n1, 2, many\n");
    Write("histogram_short.txt", "1 2 3\n");
    Write("broken/config.json",
          "{\"model_type\": \"llama\", \"hidden_size\": }");
    Write("bert/config.json",
          "{\"model_type\": \"bert\", \"hidden_size\": 768}");
    Write("system.textproto", "name: \"x\"\ngpu { memory_gib: lots }\n");
  }
  // Sweep specs and a file that is not a shard.
  static void WriteSweepSpecs() {
    // Sweep specs, each with one thing wrong after a valid base line.
    const std::string sweep_base =
        "base { model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8 "
        "}\n";
    Write("sweep_unknown.textproto", sweep_base + "tq { values: [1] }\n");
    Write("sweep_empty_axis.textproto", sweep_base + "tp {}\n");
    Write("sweep_empty_list.textproto",
          sweep_base + "tp { values: [1] }\nprecision: []\n");
    Write("sweep_negative.textproto", sweep_base + "cp { values: [2, -4] }\n");
    Write("sweep_large.textproto",
          sweep_base +
              "tp { from: 1 to: 100 step: 1 }\ncp { from: 1 to: 100 step: 1 "
              "}\nep { from: 1 to: 200 step: 1 }\n");
    Write("sweep_range.textproto",
          sweep_base + "seq_len { from: 4096 to: 65536 }\n");
    Write("sweep_rule.textproto",
          sweep_base + "constraints { rule: \"tp*foo <= 8\" }\n");
    Write("sweep_precision.textproto", sweep_base + "precision: [\"fp6\"]\n");
    Write("sweep_offload.textproto", sweep_base + "cpu_offload: [0, 1.5]\n");
    Write("sweep_model.textproto",
          "base { model: \"qwen9\" system: \"dgx-h100\" num_gpus: 8 }\n");
    Write("sweep_base_file.textproto", "base_file: \"absent.textproto\"\n");
    Write("not_a_shard.json", "{\"shards\": 3}\n");
  }
  // The shipped dgx-h100 system with one field broken.
  static void WriteSystemVariants() {
    // Shipped dgx-h100 with one field broken.
    std::ifstream in(std::string(MOESIM_SOURCE_DIR) +
                     "/topology/systems/dgx-h100.textproto");
    std::stringstream shipped;
    shipped << in.rdbuf();
    auto variant = [&](const std::string& name, const std::string& from,
                       const std::string& to) {
      std::string text = shipped.str();
      const size_t at = text.find(from);
      ASSERT_NE(at, std::string::npos) << from;
      Write(name, text.replace(at, from.size(), to));
    };
    variant("zero_nvlink.textproto", "link_gb_s: 25", "link_gb_s: 0");
    variant("negative_nic.textproto", "gbit_s: 400", "gbit_s: -400");
    variant("ampere.textproto", "architecture: \"hopper\"",
            "architecture: \"ampere\"");
    variant("undersubscribed.textproto", "oversubscription: 1",
            "oversubscription: 0.5");
    variant("two_tier.textproto", "max_tiers: 3", "max_tiers: 2");
  }
  // Runs CSVs for `moesim validate`.
  static void WriteRunsVariants() {
    // Runs CSVs for `moesim validate`: the shipped file's header and first
    // row, each broken in one way.
    std::ifstream runs_in(std::string(MOESIM_SOURCE_DIR) +
                          "/calibration/runs/runs.csv");
    std::string header, first;
    std::getline(runs_in, header);
    std::getline(runs_in, first);
    auto runs_variant = [&](const std::string& name, const std::string& from,
                            const std::string& to, bool in_header) {
      std::string h = header, r = first;
      std::string& text = in_header ? h : r;
      const size_t at = text.find(from);
      ASSERT_NE(at, std::string::npos) << from;
      text.replace(at, from.size(), to);
      Write(name, h + "\n" + r + "\n");
    };
    runs_variant("runs_no_gpu_column.csv", ",gpu,", ",gpu_kind,", true);
    runs_variant("runs_unknown_gpu.csv", ",b200,", ",a100,", false);
    runs_variant("runs_bad_number.csv", ",256,", ",256x,", false);
    runs_variant("runs_unknown_model.csv", ",deepseek-v3,", ",deepseek-v9,",
                 false);
    // The first row is TP1 CP1 PP16 with vpp and cp_comm_type empty
    // (",16,,,mxfp8,"); flops_formula sits after the empty peak memory.
    auto runs_edits =
        [&](const std::string& name,
            std::vector<std::pair<std::string, std::string>> edits) {
          std::string r = first;
          for (const auto& [from, to] : edits) {
            const size_t at = r.find(from);
            ASSERT_NE(at, std::string::npos) << from;
            r.replace(at, from.size(), to);
          }
          Write(name, header + "\n" + r + "\n");
        };
    runs_edits("runs_unknown_cp_comm.csv",
               {{",1,1,8,1,16,,,", ",1,2,8,1,16,,ring,"}});
    runs_edits("runs_a2a_heads.csv", {{",1,1,8,1,16,,,", ",1,3,8,1,16,,a2a,"}});
    runs_edits("runs_hierarchical_product.csv",
               {{",1,1,8,1,16,,,", ",1,4,8,1,16,,a2a+p2p,"},
                {",manual_gc=True;",
                 ",hierarchical_context_parallel_sizes=2 4;manual_gc=True;"}});
    runs_edits("runs_unknown_flops_formula.csv",
               {{",15.1774,,,25.09,", ",15.1774,,nemo,25.09,"}});
    runs_edits("runs_nemo_formula_moe.csv",
               {{",15.1774,,,25.09,", ",15.1774,,nemo-2024,25.09,"}});
  }
  // Calibration profiles, table folders and an nccl-tests log.
  static void WriteProfilesAndTables() {
    // Calibration profiles, each broken in one way.
    Write("profile_range.textproto",
          "name: \"lab\"\nfactors {\n  gemm_efficiency: 5\n}\n");
    Write("profile_nan.textproto",
          "factors {\n  host_overhead_scale: nan\n}\n");
    Write("profile_field.textproto", "factors {\n  gemm_speed: 1\n}\n");
    Write("profile_malformed.textproto", "factors { gemm_efficiency: fast }\n");
    Write("profile_gpu.textproto", "gpu {\n  gpu: \"a100\"\n}\n");
    // Calibration table folders with one thing wrong.
    const std::string gemm_header = "impl,m,n,k,dtype,tflops,source\n";
    auto table = [&](const std::string& dir, const std::string& file,
                     const std::string& text) {
      fs::create_directories(*dir_ / dir);
      Write(dir + "/" + file, text);
    };
    table("t_missing", "gemm.csv", "impl,m,n,k,tflops,source\n");
    table("t_negative", "gemm.csv",
          gemm_header + "cublas,4096,4096,4096,bf16,-700,measured:h100:x\n");
    table("t_zero", "memory_bound.csv",
          "kernel,bytes,dtype,gb_s,source\ncopy,1048576,bf16,0,measured:x\n");
    table("t_dtype", "gemm.csv",
          gemm_header + "cublas,4096,4096,4096,int4,700,measured:h100:x\n");
    table("t_duplicate", "gemm.csv",
          gemm_header + "cublas,4096,4096,4096,bf16,700,measured:h100:x\n" +
              "cublas,4096,4096,4096,bf16,710,measured:h100:y\n");
    Write("truncated.log",
          "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) "
          "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
          "#\n#  Rank  0 Group  0 Pid   1234 on node0 device  0 [0x18] "
          "NVIDIA H100 80GB HBM3\n"
          "#       size         count      type   redop    root     time   "
          "algbw   busbw #wrong     time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  "
          "(GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
          "     1048576        262144     float     sum      -1    25.1\n");
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    fs::remove_all(*dir_, ignored);
    delete dir_;
    dir_ = nullptr;
  }

  static void Write(const std::string& name, const std::string& content) {
    std::ofstream(*dir_ / name) << content;
  }
  static std::string Expand(std::string s) {
    for (size_t at; (at = s.find("{tmp}")) != std::string::npos;) {
      s.replace(at, 5, dir_->string());
    }
    return s;
  }
  static std::string Quote(const std::string& s) {
    std::string out = "'";
    for (char c : s)
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }

  static fs::path* dir_;
};

fs::path* BadInputTest::dir_ = nullptr;

TEST_P(BadInputTest, ExitsTwoWithOneLine) {
  const BadInput& c = GetParam();
  const fs::path err = *dir_ / (std::string(c.name) + ".stderr");
  std::string command = Quote(MOESIM_BINARY) + " " + c.command;
  for (const std::string& arg : c.args) {
    command += ' ';
    command += Quote(Expand(arg));
  }
  command += " >/dev/null 2>";
  command += Quote(err.string());
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  const std::string stderr_text = text.str();
  EXPECT_EQ(WEXITSTATUS(status), 2) << command << "\n" << stderr_text;
  // One line: a single trailing newline and nothing after it.
  ASSERT_FALSE(stderr_text.empty()) << command;
  EXPECT_EQ(stderr_text.find('\n'), stderr_text.size() - 1) << stderr_text;
  EXPECT_TRUE(stderr_text.starts_with("moesim: ")) << stderr_text;
  EXPECT_NE(stderr_text.find(Expand(c.fragment)), std::string::npos)
      << "expected: " << Expand(c.fragment) << "\ngot: " << stderr_text;
}

INSTANTIATE_TEST_SUITE_P(Rows, BadInputTest, testing::ValuesIn(kBadInputs),
                         [](const testing::TestParamInfo<BadInput>& info) {
                           return std::string(info.param.name);
                         });

TEST(BadInputTableTest, HasAtLeastThirtyRows) {
  EXPECT_GE(std::size(kBadInputs), 30u);
}

}  // namespace
