// The bad-input catalogue (issue 9): every row runs the real `moesim` binary
// on one invalid input (a file under tests/robustness/inputs/, or flags) and
// expects what tools/main.cc promises for bad input: exit code 2, exactly one
// line on stderr, "moesim: <message>", naming the file (with its line where
// the parser knows it) or the flag, the field and the rule; here, in
// addition, no signal (no crash, no failed CHECK), done within a few seconds
// and within 1 GiB of address space (the child runs under RLIMIT_AS, so a
// runaway allocation is a std::bad_alloc abort, i.e. a signal).
//
// Each row's fragment is the message moesim prints for it, with the inputs
// folder spelled {in}; the inputs are named for what they break (README.md
// beside them lists the families). Rows marked "limit" exercise the limits of
// scenarios/rules.h and models/zoo.cc ValidateModel: a scenario beyond what
// moesim can hold is refused up front with the limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <string.h>

#include <chrono>
#include <string>
#include <vector>

#include "child_process.h"

namespace {

using moesim::testing_util::BuiltWithAsan;
using moesim::testing_util::ChildLimits;
using moesim::testing_util::ChildResult;
using moesim::testing_util::RunChild;

struct BadInput {
  const char* name;
  std::vector<std::string> args;  // after `moesim`; "{in}": the inputs folder
  const char* fragment;           // must occur in the one stderr line
};

std::ostream& operator<<(std::ostream& os, const BadInput& c) {
  return os << c.name;
}

const BadInput kCatalogue[] = {
    {"ScnCapacityInf",
     {"memory", "{in}/scenario/capacity_inf.textproto"},
     "{in}/scenario/capacity_inf.textproto:5: moe_expert_capacity_factor: must "
     "be > 0 and at most 1e9, got inf"},
    {"ScnCapacityNan",
     {"memory", "{in}/scenario/capacity_nan.textproto"},
     "{in}/scenario/capacity_nan.textproto:5: moe_expert_capacity_factor: must "
     "be > 0 and at most 1e9, got nan"},
    {"ScnCapacityNegative",
     {"memory", "{in}/scenario/capacity_negative.textproto"},
     "{in}/scenario/capacity_negative.textproto:5: moe_expert_capacity_factor: "
     "must be > 0 and at most 1e9, got -1"},
    {"ScnCudaGraphUnknown",
     {"memory", "{in}/scenario/cuda_graph_unknown.textproto"},
     "{in}/scenario/cuda_graph_unknown.textproto:4: cuda_graph: unknown "
     "'always'"},
    {"ScnDuplicateField",
     {"memory", "{in}/scenario/duplicate_field.textproto"},
     "{in}/scenario/duplicate_field.textproto:4:9: Non-repeated field "
     "\"num_gpus\" is specified multiple times."},
    {"ScnDuplicateLayout",
     {"memory", "{in}/scenario/duplicate_layout.textproto"},
     "{in}/scenario/duplicate_layout.textproto:5:8: Non-repeated field "
     "\"layout\" is specified multiple times."},
    {"ScnEmpty",
     {"memory", "{in}/scenario/empty.textproto"},
     "{in}/scenario/empty.textproto: model: required"},
    {"ScnGarbage",
     {"memory", "{in}/scenario/garbage.textproto"},
     "{in}/scenario/garbage.textproto:1:1: Interpreting non ascii codepoint "
     "237."},
    {"ScnGbsHuge",
     {"memory", "{in}/scenario/gbs_huge.textproto"},
     "{in}/scenario/gbs_huge.textproto: layout.global_batch_size: 2147483647 "
     "is above the limit of 1048576 sequences"},
    {"ScnGpus1e18",
     {"memory", "{in}/scenario/gpus_1e18.textproto"},
     "{in}/scenario/gpus_1e18.textproto:3:11: Integer out of range "
     "(1000000000000000000)"},
    {"ScnGpus1e9",
     {"memory", "{in}/scenario/gpus_1e9.textproto"},
     "{in}/scenario/gpus_1e9.textproto:3: num_gpus: 1000000000 is above the "
     "limit of 1000000 GPUs"},
    {"ScnGpusFraction",
     {"memory", "{in}/scenario/gpus_fraction.textproto"},
     "{in}/scenario/gpus_fraction.textproto:3:11: Expected integer, got: 8.5"},
    {"ScnGpusNegative",
     {"memory", "{in}/scenario/gpus_negative.textproto"},
     "{in}/scenario/gpus_negative.textproto:3: num_gpus: must be >= 1, got -8"},
    {"ScnGpusString",
     {"memory", "{in}/scenario/gpus_string.textproto"},
     "{in}/scenario/gpus_string.textproto:3:11: Expected integer, got: "
     "\"eight\""},
    {"ScnHierCpZero",
     {"memory", "{in}/scenario/hier_cp_zero.textproto"},
     "{in}/scenario/hier_cp_zero.textproto:6: "
     "hierarchical_context_parallel_sizes: every size must be >= 1, got [0, "
     "2]"},
    {"ScnInvalidUtf8",
     {"memory", "{in}/scenario/invalid_utf8.textproto"},
     "{in}/scenario/invalid_utf8.textproto:1: model: unknown model 'llama3-8b"},
    {"ScnLayersHuge",
     {"memory", "{in}/scenario/layers_huge.textproto"},
     "{in}/scenario/layers_huge.textproto:4: num_layers: 2000000000 is above "
     "the limit of 1024 layers"},
    {"ScnMbsHuge",
     {"memory", "{in}/scenario/mbs_huge.textproto"},
     "{in}/scenario/mbs_huge.textproto: layout.micro_batch_size: 2000000000 is "
     "above the limit of 1048576 sequences"},
    {"ScnModelAbsentPath",
     {"memory", "{in}/scenario/model_absent_path.textproto"},
     "{in}/scenario/model_absent_path.textproto:1: model: "
     "/nonexistent/model/config.json: cannot read file"},
    {"ScnModelDevZero",
     {"memory", "{in}/scenario/model_dev_zero.textproto"},
     "{in}/scenario/model_dev_zero.textproto:1: model: /dev/zero: a model "
     "file must end in .textproto (moesim's format) or .json (an HF "
     "config.json)"},
    {"ScnMtpNegative",
     {"memory", "{in}/scenario/mtp_negative.textproto"},
     "{in}/scenario/mtp_negative.textproto:4: mtp_num_layers: must be >= 0, "
     "got -1"},
    {"ScnNulBytes",
     {"memory", "{in}/scenario/nul_bytes.textproto"},
     "{in}/scenario/nul_bytes.textproto:2:1: Invalid control characters "
     "encountered in text."},
    {"ScnOffloadInf",
     {"memory", "{in}/scenario/offload_inf.textproto"},
     "{in}/scenario/offload_inf.textproto:4: optimizer_offload_fraction: must "
     "be in [0, 1], got inf"},
    {"ScnOffloadNan",
     {"memory", "{in}/scenario/offload_nan.textproto"},
     "{in}/scenario/offload_nan.textproto:4: optimizer_offload_fraction: must "
     "be in [0, 1], got nan"},
    {"ScnRecomputeFullAndModules",
     {"memory", "{in}/scenario/recompute_full_and_modules.textproto"},
     "{in}/scenario/recompute_full_and_modules.textproto: recompute.method: "
     "full recompute needs method uniform or block"},
    {"ScnRecomputeUnknownGranularity",
     {"memory", "{in}/scenario/recompute_unknown_granularity.textproto"},
     "{in}/scenario/recompute_unknown_granularity.textproto: "
     "recompute.granularity: unknown 'partial'"},
    {"ScnSeq1e12",
     {"memory", "{in}/scenario/seq_1e12.textproto"},
     "{in}/scenario/seq_1e12.textproto:4:13: Integer out of range "
     "(1000000000000)"},
    {"ScnSeq2e9",
     {"memory", "{in}/scenario/seq_2e9.textproto"},
     "{in}/scenario/seq_2e9.textproto:4: seq_length: 2000000000 is above the "
     "limit of 16777216 tokens"},
    {"ScnSeqNegative",
     {"memory", "{in}/scenario/seq_negative.textproto"},
     "{in}/scenario/seq_negative.textproto:4: seq_length: must be >= 1, got "
     "-4096"},
    {"ScnSkewNan",
     {"memory", "{in}/scenario/skew_nan.textproto"},
     "{in}/scenario/skew_nan.textproto:5: moe_routing_skew: must be a Zipf "
     "exponent in [0, 10], got nan"},
    {"ScnSkewNegative",
     {"memory", "{in}/scenario/skew_negative.textproto"},
     "{in}/scenario/skew_negative.textproto:5: moe_routing_skew: must be a "
     "Zipf exponent in [0, 10], got -1"},
    {"ScnSystemDevZero",
     {"memory", "{in}/scenario/system_dev_zero.textproto"},
     "{in}/scenario/system_dev_zero.textproto:2: system: /dev/zero: a system "
     "file must end in .textproto"},
    {"ScnTpNegative",
     {"memory", "{in}/scenario/tp_negative.textproto"},
     "{in}/scenario/tp_negative.textproto: layout.tensor_model_parallel_size: "
     "must be >= 1, got -2"},
    {"ScnTruncated",
     {"memory", "{in}/scenario/truncated.textproto"},
     "{in}/scenario/truncated.textproto:6:1: Expected identifier, got: "},
    {"ScnUnknownCpComm",
     {"memory", "{in}/scenario/unknown_cp_comm.textproto"},
     "{in}/scenario/unknown_cp_comm.textproto:4: cp_comm_type: unknown 'ring'"},
    {"ScnUnknownDispatcher",
     {"memory", "{in}/scenario/unknown_dispatcher.textproto"},
     "{in}/scenario/unknown_dispatcher.textproto:4: dispatcher: unknown "
     "'nccl'"},
    {"ScnUnknownPrecision",
     {"memory", "{in}/scenario/unknown_precision.textproto"},
     "{in}/scenario/unknown_precision.textproto:4: precision: unknown 'fp7'"},
    {"ScnUnknownRouting",
     {"memory", "{in}/scenario/unknown_routing.textproto"},
     "{in}/scenario/unknown_routing.textproto:4: routing: unknown 'random'"},
    {"HfDeepNesting",
     {"memory", "--model", "{in}/hf/deep_nesting/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/deep_nesting/config.json:1:61: malformed J"
     "SON: nested deeper than 32 levels"},
    {"HfDuplicateKey",
     {"memory", "--model", "{in}/hf/duplicate_key/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     // The strict check finds the repeat before protobuf's parser does, so
     // the line names where the second key starts.
     "flags: --model: {in}/hf/duplicate_key/config.json:5:3: malformed JSON: "
     "key \"hidden_size\" twice in one object"},
    {"HfEmpty",
     {"memory", "--model", "{in}/hf/empty/config.json", "--system", "dgx-h100",
      "--gpus", "8"},
     "flags: --model: {in}/hf/empty/config.json:1:1: malformed JSON: une"
     "xpected end of input"},
    {"HfExpertsNegative",
     {"memory", "--model", "{in}/hf/experts_negative/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/experts_negative/config.json: num_experts: "
     "must be >= 1, got -128"},
    {"HfGarbage",
     {"memory", "--model", "{in}/hf/garbage/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/garbage/config.json:1:1: malformed JSON: e"
     "xpected a value"},
    {"HfHeadsHuge",
     {"memory", "--model", "{in}/hf/heads_huge/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/heads_huge/config.json: num_attention_heads: "
     "4294967296 is above the limit of 65536"},
    {"HfHiddenActGelu",
     {"memory", "--model", "{in}/hf/hidden_act_gelu/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_act_gelu/config.json: hidden_act: "
     "unsupported 'gelu'; expected 'silu'"},
    {"HfHiddenSize1e400",
     {"memory", "--model", "{in}/hf/hidden_size_1e400/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_size_1e400/config.json: malformed JSON: "
     "Number exceeds the range of double."},
    {"HfHiddenSizeFraction",
     {"memory", "--model", "{in}/hf/hidden_size_fraction/config.json",
      "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_size_fraction/config.json: hidden_size: "
     "expected an integer, got 4096.5"},
    {"HfHiddenSizeInfinity",
     {"memory", "--model", "{in}/hf/hidden_size_infinity/config.json",
      "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_size_infinity/config.json:4:18: mal"
     "formed JSON: expected a value"},
    {"HfHiddenSizeNan",
     {"memory", "--model", "{in}/hf/hidden_size_nan/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_size_nan/config.json:4:18: malforme"
     "d JSON: expected a value"},
    {"HfHiddenSizeNegative",
     {"memory", "--model", "{in}/hf/hidden_size_negative/config.json",
      "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_size_negative/config.json: hidden_size: "
     "must be > 0, got -4096"},
    {"HfHiddenSizeString",
     {"memory", "--model", "{in}/hf/hidden_size_string/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_size_string/config.json: hidden_size: "
     "expected an integer, got '4096'"},
    {"HfHiddenSizeZero",
     {"memory", "--model", "{in}/hf/hidden_size_zero/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/hidden_size_zero/config.json: hidden_size: must "
     "be > 0, got 0"},
    {"HfIntermediateNegative",
     {"memory", "--model", "{in}/hf/intermediate_negative/config.json",
      "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/intermediate_negative/config.json: "
     "intermediate_size: must be >= 1, got -1"},
    {"HfKvHeadsNotDividing",
     {"memory", "--model", "{in}/hf/kv_heads_not_dividing/config.json",
      "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/kv_heads_not_dividing/config.json: "
     "num_query_groups: must divide num_attention_heads (32)"},
    {"HfLayers1e15",
     {"memory", "--model", "{in}/hf/layers_1e15/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/layers_1e15/config.json: num_hidden_layers: "
     "1000000000000000 is above the limit of 1024"},
    {"HfModelTypeNumber",
     {"memory", "--model", "{in}/hf/model_type_number/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/model_type_number/config.json: model_type: "
     "missing"},
    {"HfNulBytes",
     {"memory", "--model", "{in}/hf/nul_bytes/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/nul_bytes/config.json:1:24: malformed JSON"
     ": expected a quoted key"},
    {"HfTieString",
     {"memory", "--model", "{in}/hf/tie_string/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/tie_string/config.json: tie_word_embeddings: "
     "expected true or false, got 'yes'"},
    {"HfTopLevelArray",
     {"memory", "--model", "{in}/hf/top_level_array/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/top_level_array/config.json: malformed JSON: : "
     "Root element must be a message."},
    {"HfTopkAboveExperts",
     {"memory", "--model", "{in}/hf/topk_above_experts/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/topk_above_experts/config.json: moe_router_topk: "
     "must not exceed num_moe_experts (128)"},
    {"HfTruncated",
     {"memory", "--model", "{in}/hf/truncated/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/truncated/config.json:5:30: malformed JSON"
     ": unexpected end of input"},
    {"HfVocab1e18",
     {"memory", "--model", "{in}/hf/vocab_1e18/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/vocab_1e18/config.json: vocab_size: expected an "
     "integer, got 1e+18"},
    {"RunsDuplicateColumn",
     {"validate", "{in}/runs/duplicate_column.csv", "-j1"},
     "{in}/runs/duplicate_column.csv:1: duplicate column 'gpu'"},
    {"RunsDuplicateId",
     {"validate", "{in}/runs/duplicate_id.csv", "-j1"},
     "{in}/runs/duplicate_id.csv:3: id: 'ps2511-qwen3-30b-a3b-b200-8g-mxfp8' "
     "duplicates line 2"},
    {"RunsEmpty",
     {"validate", "{in}/runs/empty.csv", "-j1"},
     "{in}/runs/empty.csv: empty CSV, a header is required"},
    {"RunsEmptyId",
     {"validate", "{in}/runs/empty_id.csv", "-j1"},
     "{in}/runs/empty_id.csv:2: id: is empty"},
    {"RunsGarbage",
     {"validate", "{in}/runs/garbage.csv", "-j1"},
     "{in}/runs/garbage.csv:2: expected 3 fields, found 2"},
    {"RunsGpus1e18",
     {"validate", "{in}/runs/gpus_1e18.csv", "-j1"},
     "{in}/runs/gpus_1e18.csv:2: num_gpus: '1e18' is not a whole number"},
    {"RunsGpusInf",
     {"validate", "{in}/runs/gpus_inf.csv", "-j1"},
     "{in}/runs/gpus_inf.csv:2: num_gpus: 'inf' is not a number"},
    {"RunsGpusNan",
     {"validate", "{in}/runs/gpus_nan.csv", "-j1"},
     "{in}/runs/gpus_nan.csv:2: num_gpus: 'nan' is not a number"},
    {"RunsGpusNegative",
     {"validate", "{in}/runs/gpus_negative.csv", "-j1"},
     "{in}/runs/gpus_negative.csv:2: num_gpus: '-8' is not a whole number"},
    {"RunsOffloadNan",
     {"validate", "{in}/runs/offload_nan.csv", "-j1"},
     "{in}/runs/offload_nan.csv:2: cpu_offload: 'nan' is not a number"},
    {"RunsOffloadText",
     {"validate", "{in}/runs/offload_text.csv", "-j1"},
     "{in}/runs/offload_text.csv:2: cpu_offload: 'half' is not a number"},
    {"RunsSeq1e12",
     {"validate", "{in}/runs/seq_1e12.csv", "-j1"},
     "{in}/runs/seq_1e12.csv:2: seq_len: '1000000000000' is not a whole "
     "number"},
    {"RunsStepTimeInf",
     {"validate", "{in}/runs/step_time_inf.csv", "-j1"},
     "{in}/runs/step_time_inf.csv:2: measured_step_time_s: 'inf' is not a "
     "number"},
    {"RunsTflopsNegative",
     {"validate", "{in}/runs/tflops_negative.csv", "-j1"},
     "{in}/runs/tflops_negative.csv:2: measured_tflops_per_gpu: must be > 0 "
     "and at most 100000 TFLOPS per GPU, got -214"},
    {"RunsTflopsZero",
     {"validate", "{in}/runs/tflops_zero.csv", "-j1"},
     "{in}/runs/tflops_zero.csv:2: measured_tflops_per_gpu: must be > 0 and "
     "at most 100000 TFLOPS per GPU, got 0"},
    {"RunsTruncated",
     {"validate", "{in}/runs/truncated.csv", "-j1"},
     "{in}/runs/truncated.csv:2: expected 32 fields, found 29"},
    {"RunsUnterminatedQuote",
     {"validate", "{in}/runs/unterminated_quote.csv", "-j1"},
     "{in}/runs/unterminated_quote.csv:2: unterminated quote"},
    {"TblAttentionDirection",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/attention_direction"},
     "{in}/tables/attention_direction/attention.csv:2: direction: unknown "
     "'sideways'"},
    {"TblAttentionNegative",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/attention_negative"},
     "{in}/tables/attention_negative/attention.csv:2: tflops: must be > 0 and "
     "finite, got -400"},
    {"TblCollectivesNegative",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/collectives_negative"},
     "{in}/tables/collectives_negative/collectives.csv:2: bus_gb_s: must be > "
     "0 and finite, got -100"},
    {"TblCollectivesUnknown",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/collectives_unknown"},
     "{in}/tables/collectives_unknown/collectives.csv:2: collective: unknown "
     "'all_to_some'"},
    {"TblDuplicateColumn",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/duplicate_column"},
     "{in}/tables/duplicate_column/gemm.csv:1: duplicate column 'tflops'"},
    {"TblEmpty",
     {"validate-kernels", "--gpu", "h100", "--tables", "{in}/tables/empty"},
     "{in}/tables/empty/gemm.csv: empty CSV, a header is required"},
    {"TblEmptySource",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/empty_source"},
     "{in}/tables/empty_source/gemm.csv:2: source: must start with published:, "
     "measured: or derived:, got ''"},
    {"TblFieldCount",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/field_count"},
     "{in}/tables/field_count/gemm.csv:2: expected 7 fields, found 6"},
    {"TblGarbage",
     {"validate-kernels", "--gpu", "h100", "--tables", "{in}/tables/garbage"},
     "{in}/tables/garbage/gemm.csv:2: expected 3 fields, found 2"},
    {"TblHostNegative",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/host_negative"},
     "{in}/tables/host_negative/host.csv:2: value: must be > 0 and finite, got "
     "-13"},
    {"TblM1e30",
     {"validate-kernels", "--gpu", "h100", "--tables", "{in}/tables/m_1e30"},
     "{in}/tables/m_1e30/gemm.csv:2: m: must be an integer, got '1e30'"},
    {"TblMFraction",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/m_fraction"},
     "{in}/tables/m_fraction/gemm.csv:2: m: must be an integer, got '4096.5'"},
    {"TblMNegative",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/m_negative"},
     "{in}/tables/m_negative/gemm.csv:2: m: must be >= 1, got -4096"},
    {"TblMZero",
     {"validate-kernels", "--gpu", "h100", "--tables", "{in}/tables/m_zero"},
     "{in}/tables/m_zero/gemm.csv:2: m: must be >= 1, got 0"},
    {"TblMemoryBoundNan",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/memory_bound_nan"},
     "{in}/tables/memory_bound_nan/memory_bound.csv:2: gb_s: must be > 0 and "
     "finite, got nan"},
    {"TblTflops1e400",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/tflops_1e400"},
     "{in}/tables/tflops_1e400/gemm.csv:2: tflops: must be a number, got "
     "'1e400'"},
    {"TblTflopsInf",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/tflops_inf"},
     "{in}/tables/tflops_inf/gemm.csv:2: tflops: must be > 0 and finite, got "
     "inf"},
    {"TblTflopsNan",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/tflops_nan"},
     "{in}/tables/tflops_nan/gemm.csv:2: tflops: must be > 0 and finite, got "
     "nan"},
    {"TblUnterminatedQuote",
     {"validate-kernels", "--gpu", "h100", "--tables",
      "{in}/tables/unterminated_quote"},
     "{in}/tables/unterminated_quote/gemm.csv:2: unterminated quote"},
    {"NcclBusbwNegative",
     {"calibrate", "import-nccl-tests", "{in}/nccl/busbw_negative.log",
      "--system", "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/busbw_negative.log:7: busbw (out-of-place) '-73.1': must be a "
     "number >= 0 (not NaN)"},
    {"NcclTwoNodesAsNvlink",
     {"calibrate", "import-nccl-tests", "{in}/nccl/two_nodes_16_ranks.log",
      "--system", "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/two_nodes_16_ranks.log: --tier nvlink: 16 ranks cannot share "
     "one NVLink domain of dgx-h100 (8 GPUs); use --tier net"},
    {"NcclGpuNotTheSystems",
     {"calibrate", "import-nccl-tests", "{in}/nccl/a100_gpus.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/a100_gpus.log: GPU 'NVIDIA A100-SXM4-80GB' is not dgx-h100's "
     "H100 SXM5 80GB (--system)"},
    {"NcclOneHostAsNet",
     {"calibrate", "import-nccl-tests", "{in}/nccl/one_host_2_ranks.log",
      "--system", "dgx-h100", "--tier", "net"},
     "{in}/nccl/one_host_2_ranks.log: --tier net: 2 ranks on one host never "
     "leave its NVLink domain; use --tier nvlink"},
    {"NcclGroupSizeZero",
     {"calibrate", "import-nccl-tests", "{in}/nccl/a100_gpus.log", "--system",
      "dgx-h100", "--tier", "net", "--group-size", "0"},
     "flags: --group-size: must be in [1, 1048576], got 0"},
    {"NcclEmpty",
     {"calibrate", "import-nccl-tests", "{in}/nccl/empty.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/empty.log:1: empty log: an nccl-tests log has a table header "
     "and data rows"},
    {"NcclGarbage",
     {"calibrate", "import-nccl-tests", "{in}/nccl/garbage.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/garbage.log:2: no table header: expected a '#  size  count  "
     "type ... time  algbw  busbw ...' line"},
    {"NcclHeaderOnly",
     {"calibrate", "import-nccl-tests", "{in}/nccl/header_only.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/header_only.log:5: no data rows: the table header is followed "
     "by no row of results"},
    {"NcclNoCollective",
     {"calibrate", "import-nccl-tests", "{in}/nccl/no_collective.log",
      "--system", "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/no_collective.log:1: unknown collective: neither the log nor "
     "the file name names an nccl-tests binary"},
    {"NcclSize1e30",
     {"calibrate", "import-nccl-tests", "{in}/nccl/size_1e30.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/size_1e30.log:7: size '1e30': must be a whole number of bytes "
     "(at most 2^53)"},
    {"NcclSizeFraction",
     {"calibrate", "import-nccl-tests", "{in}/nccl/size_fraction.log",
      "--system", "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/size_fraction.log:7: size '1048576.5': must be a whole number "
     "of bytes (at most 2^53)"},
    {"NcclTimeInf",
     {"calibrate", "import-nccl-tests", "{in}/nccl/time_inf.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/time_inf.log:7: time (out-of-place) 'inf': must be a number >= "
     "0 (not NaN)"},
    {"NcclTimeNan",
     {"calibrate", "import-nccl-tests", "{in}/nccl/time_nan.log", "--system",
      "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/time_nan.log:7: time (out-of-place) 'nan': must be a number >= "
     "0 (not NaN)"},
    {"NcclUnknownAlgo",
     {"calibrate", "import-nccl-tests", "{in}/nccl/unknown_algo.log",
      "--system", "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/unknown_algo.log:1: NCCL_ALGO 'collnet': collectives.csv takes "
     "ring, tree, nvls, or a list or exclusion (^x) of them"},
    {"NcclUnknownCollective",
     {"calibrate", "import-nccl-tests", "{in}/nccl/unknown_collective.log",
      "--system", "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/unknown_collective.log:1: unknown collective 'gather_perf'"},
    {"NcclWrongNonzero",
     {"calibrate", "import-nccl-tests", "{in}/nccl/wrong_nonzero.log",
      "--system", "dgx-h100", "--tier", "nvlink"},
     "{in}/nccl/wrong_nonzero.log:7: #wrong (out-of-place) is 17: the run "
     "produced wrong results"},
    {"FlagGpus1e18",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus",
      "1000000000000000000"},
     "flags: --gpus: '1000000000000000000' is out of range (integers up to "
     "2147483647)"},
    {"FlagGpus1e9",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus",
      "1000000000"},
     "flags: --gpus: 1000000000 is above the limit of 1000000 GPUs"},
    {"FlagRunGpus1e9",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus",
      "1000000000"},
     "flags: --gpus: 1000000000 is above the limit of 1000000 GPUs"},
    {"FlagSeq0",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "0"},
     "flags: --seq: must be >= 1, got 0"},
    {"FlagSeq1e12",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "1000000000000"},
     "flags: --seq: '1000000000000' is out of range (integers up to "
     "2147483647)"},
    {"FlagSeq2e9",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "2000000000"},
     "flags: --seq: 2000000000 is above the limit of 16777216 tokens"},
    {"FlagRunSeq2e9",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--seq", "2000000000"},
     "flags: --seq: 2000000000 is above the limit of 16777216 tokens"},
    {"FlagMbsHuge",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--mbs", "1000000000"},
     "flags: --mbs: 1000000000 is above the limit of 1048576 sequences"},
    {"FlagGbsHuge",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--gbs", "2000000000"},
     "flags: --gbs: 2000000000 is above the limit of 1048576 sequences"},
    {"FlagLayersHuge",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "2000000000"},
     "flags: --num-layers: 2000000000 is above the limit of 1024 layers"},
    {"FlagTpNegative",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "-1"},
     "flags: --tp: must be >= 1, got -1"},
    {"FlagCpuOffloadNan",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--cpu-offload", "nan"},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optimizer "
     "state), got nan"},
    {"FlagCpuOffloadInf",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--cpu-offload", "inf"},
     "flags: --cpu-offload: must be in [0, 1] (a fraction of the optimizer "
     "state), got inf"},
    {"FlagSkewInf",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--ep", "8", "--routing", "dropless_natural", "--routing-skew",
      "inf"},
     "flags: --routing-skew: must be a Zipf exponent in [0, 10], got inf"},
    {"FlagValidateJsonMarkdown",
     {"validate", "--json", "--markdown"},
     "--json excludes --markdown"},
    {"FlagValidateJNegative",
     {"validate", "-j", "-1"},
     "flags: --jobs: must be >= 0, got -1"},
    {"FlagModelDevZero",
     {"memory", "--model", "/dev/zero", "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: /dev/zero: a model file must end in .textproto"},
    {"FlagModelDevZeroJson",
     {"memory", "--model", "/dev/zero.json", "--system", "dgx-h100", "--gpus",
      "8"},
     "flags: --model: /dev/zero.json: cannot read file"},
    {"FlagSystemDevZero",
     {"memory", "--model", "llama3-8b", "--system", "/dev/zero", "--gpus", "8"},
     "flags: --system: /dev/zero: a system file must end in .textproto"},
    {"FlagScenarioDir",
     {"memory", "/tmp"},
     "/tmp: cannot read file: is a folder"},
    {"FlagValidateDevZero",
     {"validate", "/dev/zero"},
     "/dev/zero: cannot read file: larger than the 64 MiB limit for input "
     "files"},
    {"FlagNcclDevZero",
     {"calibrate", "import-nccl-tests", "/dev/zero", "--system", "dgx-h100",
      "--tier", "nvlink"},
     "/dev/zero: cannot read file: larger than the 64 MiB limit for input "
     "files"},
    {"FlagNcclUnknownSystem",
     {"calibrate", "import-nccl-tests", "{in}/nccl/time_nan.log", "--system",
      "dgx-a100", "--tier", "nvlink"},
     "system: unknown system 'dgx-a100'"},
    {"FlagTopoGpus1e18",
     {"topo", "dgx-h100", "--gpus", "1000000000000000000"},
     "flags: --gpus: '1000000000000000000' is out of range (integers up to "
     "2147483647)"},
    {"MegaUnterminatedQuote",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--pipeline-model-parallel-layout \"Ett"},
     "flags: --megatron-args: unterminated double quote"},
    {"MegaTrailingBackslash",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--bf16 \\"},
     "flags: --megatron-args: --bf16: takes no value, got '\\'"},
    {"MegaModelContradictsFlags",
     {"memory", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "8",
      "--num-layers", "4", "--megatron-args", "--num-experts 64"},
     "flags: --num-experts: 64 contradicts deepseek-v3's num_moe_experts 256"},
    {"MegaDeeperThanModel",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--num-layers 40"},
     "flags: --num-layers: 40 is more than llama3-8b's 32 layers"},
    {"MegaUnexpandedVariable",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--tensor-model-parallel-size ${TP}"},
     "flags: --megatron-args: --tensor-model-parallel-size: ${TP} is not set "
     "in the launch input"},
    {"MegaLayoutStagesNotMultipleOfPp",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args",
      "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout "
      "'Et*10|t*10|t*12L'"},
     "flags: --pp-layout: has 3 stages, not a multiple of "
     "pipeline_model_parallel_size 2"},
    {"MegaBridgeOverride",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "model.tensor_model_parallel_size=2"},
     "'model.tensor_model_parallel_size=2' is a Megatron-Bridge recipe "
     "override"},
    {"MegaCustomLayerSpec",
     {"memory", "--system", "dgx-h100", "--gpus", "8", "--megatron-args",
      "--spec my.plugin get_spec --num-layers 2"},
     "flags: --megatron-args: --spec: a custom layer spec (my.plugin "
     "get_spec)"},
    {"MegaNoModelAtAll",
     {"memory", "--system", "dgx-h100", "--gpus", "8", "--megatron-args",
      "--tensor-model-parallel-size 2"},
     "flags: --model: required (a zoo name or model file, or the "
     "architecture flags of a Megatron argument list)"},
    {"LaunchUnsetVariable",
     {"memory", "--megatron-args-file", "{in}/launch/unset_variable.sh",
      "--system", "dgx-h100", "--gpus", "8"},
     "{in}/launch/unset_variable.sh: --num-experts: ${NUM_EXPERTS} is not "
     "set in the launch input (define it with --var NAME=VALUE"},
    {"LaunchUnbalancedQuote",
     {"memory", "--megatron-args-file", "{in}/launch/unbalanced_quote.sh",
      "--system", "dgx-h100", "--gpus", "8"},
     "{in}/launch/unbalanced_quote.sh:1: the value of ARGS has no closing "
     "quote"},
    {"LaunchYamlNotAFlag",
     {"memory", "--megatron-args-file", "{in}/launch/yaml_not_a_flag.yaml",
      "--system", "dgx-h100", "--gpus", "8"},
     "{in}/launch/yaml_not_a_flag.yaml:3: MODEL_ARGS: expected '--flag: "
     "value'"},
    {"LaunchNoTrainingCommand",
     {"memory", "--megatron-args-file", "{in}/launch/no_training_command.sh",
      "--system", "dgx-h100", "--gpus", "8"},
     "{in}/launch/no_training_command.sh:1: 'cd' is not a Megatron training "
     "entry point"},
    {"LaunchTwoCommands",
     {"memory", "--megatron-args-file", "{in}/launch/two_commands.sh",
      "--system", "dgx-h100", "--gpus", "8"},
     "{in}/launch/two_commands.sh:2: a second training command with other "
     "arguments"},
    {"LaunchVarNotNameValue",
     {"memory", "--megatron-args-file", "{in}/launch/two_commands.sh", "--var",
      "TP", "--system", "dgx-h100", "--gpus", "8"},
     "flags: --var: 'TP' is not NAME=VALUE"},
    {"MegaTpNegative",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--tensor-model-parallel-size -2"},
     "flags: --megatron-args: --tensor-model-parallel-size: must be >= 1, got "
     "-2"},
    {"MegaTpZero",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--tensor-model-parallel-size 0"},
     "flags: --megatron-args: --tensor-model-parallel-size: must be >= 1, got "
     "0"},
    {"MegaSeqOverflow",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--seq-length 99999999999"},
     "flags: --megatron-args: --seq-length: '99999999999' is not an integer"},
    {"MegaSeqZero",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--seq-length 0"},
     "flags: --megatron-args: --seq-length: must be >= 1, got 0"},
    {"MegaSeq2e9",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--seq-length 2000000000"},
     "flags: --seq: 2000000000 is above the limit of 16777216 tokens"},
    {"MegaMbsEmpty",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--micro-batch-size="},
     "flags: --megatron-args: --micro-batch-size: '' is not an integer"},
    {"MegaFp8Unknown",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--fp8-format e5m3"},
     "flags: --megatron-args: --fp8-format: unknown 'e5m3'"},
    {"MegaDelayWgradWithoutEpOverlap",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "8", "--megatron-args", "--delay-wgrad-compute"},
     "--delay-wgrad-compute: needs EP overlap"},
    {"MegaPadWithoutTokenDrop",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "8", "--megatron-args", "--moe-pad-expert-input-to-capacity"},
     "--moe-pad-expert-input-to-capacity: pads to a capacity: needs routing "
     "tokendrop"},
    {"MegaDispatcherUnknown",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--megatron-args", "--moe-token-dispatcher-type nccl"},
     "flags: --megatron-args: --moe-token-dispatcher-type: unknown 'nccl'"},
    {"MegaOffloadNan",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--megatron-args",
      "--optimizer-cpu-offload --optimizer-offload-fraction nan"},
     "flags: --megatron-args: --optimizer-offload-fraction: 'nan' is out of "
     "range"},
    {"MegaCapacityInf",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--megatron-args", "--moe-expert-capacity-factor inf"},
     "flags: --megatron-args: --moe-expert-capacity-factor: 'inf' is out of "
     "range"},
    {"MegaCapacityNegative",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "8", "--megatron-args", "--moe-expert-capacity-factor -1"},
     "flags: --megatron-args: --moe-expert-capacity-factor: '-1' is out of "
     "range"},
    {"MegaFp4AndFp8",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-b200", "--gpus",
      "8", "--megatron-args",
      "--fp4-format e2m1 --fp4-recipe nvfp4 --fp8-format e4m3"},
     "flags: --megatron-args: --fp4-format: cannot be combined with "
     "--fp8-format"},
    {"MegaVppTwoWays",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args",
      "--pipeline-model-parallel-size 2 "
      "--num-layers-per-virtual-pipeline-stage 4 "
      "--virtual-pipeline-model-parallel-size 2"},
     "flags: --megatron-args: --num-layers-per-virtual-pipeline-stage: cannot "
     "be combined with a virtual pipeline size"},
    {"MegaFullWithModules",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args",
      "--recompute-granularity full --recompute-modules moe"},
     "flags: --recompute: full recompute needs method uniform or block"},
    {"MegaHierCpText",
     {"memory", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
      "16", "--megatron-args",
      "--context-parallel-size 2 --cp-comm-type a2a+p2p "
      "--hierarchical-context-parallel-sizes 2 x"},
     "flags: --megatron-args: --hierarchical-context-parallel-sizes: 'x' is "
     "not an integer"},
    {"MegaRecomputeMethod",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args",
      "--recompute-granularity full --recompute-method diagonal"},
     "flags: --megatron-args: --recompute-method: unknown 'diagonal'"},
    {"MegaManualGcMaybe",
     {"memory", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--manual-gc=maybe"},
     "flags: --megatron-args: --manual-gc: 'maybe' is not true or false"},
    {"MegaLayersHuge",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--megatron-args", "--num-layers 2000000000"},
     "flags: --num-layers: 2000000000 is above the limit of 1024 layers"},
    // Issue 29: layouts Megatron refuses, factors past the limit, and
    // messages that would carry the input's control characters or length.
    {"LayoutInterleavedMicroBatches",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--tp", "2", "--pp", "4", "--vpp", "4", "--gbs", "5"},
     "flags: --gbs: with an interleaved pipeline "
     "(virtual_pipeline_model_parallel_size 4), the 5 micro-batches per step "
     "(global_batch_size / (micro_batch_size*DP)) must be a multiple of "
     "pipeline_model_parallel_size 4"},
    {"StragglerFactorHuge",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "0:1e308"},
     "flags: --straggler: factor must be a number in [1, 10], got '1e308'"},
    {"StragglerFactorTimeOverflow",
     {"run", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8",
      "--full", "--straggler", "0:1e8"},
     "flags: --straggler: factor must be a number in [1, 10], got '1e8'"},
    {"HfKvHeadsZero",
     {"memory", "--model", "{in}/hf/kv_heads_zero/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/kv_heads_zero/config.json: "
     "num_key_value_heads: must be >= 1, got 0"},
    {"HfMoeFfnZero",
     {"memory", "--model", "{in}/hf/moe_ffn_zero/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/moe_ffn_zero/config.json: "
     "moe_intermediate_size: must be >= 1, got 0"},
    {"HfHeadDimNegative",
     {"memory", "--model", "{in}/hf/head_dim_negative/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/head_dim_negative/config.json: "
     "head_dim: must be >= 1, got -128"},
    {"HfMlpOnlyOutOfRange",
     {"memory", "--model", "{in}/hf/mlp_only_out_of_range/config.json",
      "--system", "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/mlp_only_out_of_range/config.json: "
     "mlp_only_layers: layer 48 is not in [0, 48)"},
    {"HfTrailingComma",
     {"memory", "--model", "{in}/hf/trailing_comma/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/trailing_comma/config.json:"
     "37:1: malformed JSON: trailing comma before '}'"},
    {"HfSingleQuotes",
     {"memory", "--model", "{in}/hf/single_quotes/config.json", "--system",
      "dgx-h100", "--gpus", "8"},
     "flags: --model: {in}/hf/single_quotes/config.json:"
     "2:3: malformed JSON: single-quoted key"},
    {"ValidateGroupByEmpty",
     {"validate", "--group-by", ""},
     "flags: --group-by: needs at least one key, e.g. model,gpu (got '')"},
    {"TopoGpusPerDomainZero",
     {"topo", "dgx-h100", "--gpus", "16", "--gpus-per-domain", "0"},
     "flags: --gpus-per-domain: must be >= 1, got 0"},
    // A wrong file given as a histogram: described, never echoed.
    {"HistogramOtherFileNotEchoed",
     {"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "8",
      "--ep", "8", "--routing", "dropless_natural", "--routing-histogram",
      "{in}/routing/not_a_histogram.txt"},
     "{in}/routing/not_a_histogram.txt:1: moe_routing_histogram: a token of "
     "49 bytes is not a number"},
    {"MessageControlCharacters",
     {"run",
      "a\rb\x1b[31mc\x07"
      "d"},
     "moesim: a\\rb\\x1B[31mc\\x07d: cannot read file"},
    {"MessageHugeName", {"run", std::string(100'000, 'x')}, " bytes cut] ... "},
};

const std::string kInputs =
    std::string(MOESIM_SOURCE_DIR) + "/tests/robustness/inputs";

std::string Expand(std::string s) {
  for (size_t at; (at = s.find("{in}")) != std::string::npos;)
    s.replace(at, 4, kInputs);
  return s;
}

// 1 GiB of address space: a bad input may not make moesim allocate more.
// 5 s of wall time, the bound (the slowest rows, which read 64 MiB
// of /dev/zero before refusing it, take 0.2 s); sanitized builds run some
// three times slower and get 30 s.
ChildLimits CatalogueLimits() {
  ChildLimits limits;
  limits.address_space_bytes = uint64_t{1} << 30;
  limits.wall = std::chrono::milliseconds(BuiltWithAsan() ? 30'000 : 5'000);
  return limits;
}

ChildResult RunMoesim(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {MOESIM_BINARY};
  for (const std::string& a : args) argv.push_back(Expand(a));
  return RunChild(argv, CatalogueLimits());
}

class BadInputCatalogueTest : public testing::TestWithParam<BadInput> {};

TEST_P(BadInputCatalogueTest, ExitsTwoWithOneLineNamingFieldAndRule) {
  const BadInput& c = GetParam();
  const ChildResult r = RunMoesim(c.args);
  ASSERT_FALSE(r.timed_out)
      << "still running after " << r.elapsed.count() << " ms";
  ASSERT_TRUE(r.exited) << "killed by signal " << r.signal << " ("
                        << strsignal(r.signal) << "); stderr:\n"
                        << r.err;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // One line: a single trailing newline and nothing after it.
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("moesim: ")) << r.err;
  EXPECT_NE(r.err.find(Expand(c.fragment)), std::string::npos)
      << "expected: " << Expand(c.fragment) << "\ngot: " << r.err;
}

INSTANTIATE_TEST_SUITE_P(Rows, BadInputCatalogueTest,
                         testing::ValuesIn(kCatalogue),
                         [](const testing::TestParamInfo<BadInput>& info) {
                           return std::string(info.param.name);
                         });

// The issue asks for at least 60 invalid inputs.
TEST(BadInputCatalogueTableTest, HasAtLeastSixtyRows) {
  EXPECT_GE(std::size(kCatalogue), 60u);
}

// Controls: valid inputs of the same commands succeed under the same limits,
// so a row failing above is about its input, not about the harness.
TEST(BadInputCatalogueTableTest, ValidInputsPassUnderTheSameLimits) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"memory", "--model", "qwen3-30b-a3b",
                                 "--system", "dgx-h100", "--gpus", "8"},
        std::vector<std::string>{"run", "--model", "llama3-8b", "--system",
                                 "dgx-h100", "--gpus", "8"},
        std::vector<std::string>{"memory", "--model",
                                 std::string(MOESIM_SOURCE_DIR) +
                                     "/tests/data/hf/qwen3-30b-a3b/config.json",
                                 "--system", "dgx-h100", "--gpus", "8"}}) {
    const ChildResult r = RunMoesim(args);
    EXPECT_TRUE(r.exited && r.exit_code == 0)
        << args[0] << " " << args[1] << " " << args[2] << ": exit "
        << r.exit_code << ", signal " << r.signal << "\n"
        << r.err;
  }
}

}  // namespace
