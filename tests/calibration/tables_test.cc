// The table loader: every shipped GPU's tables load, every row has a source,
// and malformed tables are refused with file:line, column and rule.
#include "calibration/tables.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "calibration/cost_model.h"

namespace moesim::calibration {
namespace {

TEST(Tables, EveryShippedGpuLoadsWithSourcedRows) {
  for (const std::string& gpu : TableGpus()) {
    SCOPED_TRACE(gpu);
    auto t = LoadTables(gpu);
    ASSERT_TRUE(t) << t.error().message;
    // Every GPU needs at least GEMM, attention and memory-bound rows for the
    // replay (measured, published or derived).
    EXPECT_FALSE(t->gemm.empty());
    EXPECT_FALSE(t->attention.empty());
    EXPECT_FALSE(t->memory_bound.empty());
  }
}

// The sustained-load table: B200's compute_rate is the published
// flashinfer PR 2899 figure (fully throttled 1237 / peak 1450 TFLOPS =
// 0.853) and GB200 takes it by the same-die rule; B300's is derived from a
// published sustained GEMM scan (next test); every other GPU has no row and
// keeps its benchmark rates (1).
TEST(Tables, SustainedComputeRateRows) {
  for (const std::string& gpu : TableGpus()) {
    SCOPED_TRACE(gpu);
    auto t = LoadTables(gpu);
    ASSERT_TRUE(t) << t.error().message;
    if (gpu == "b200" || gpu == "gb200") {
      ASSERT_EQ(t->sustained.size(), 1u);
      EXPECT_DOUBLE_EQ(t->SustainedComputeRate(), 0.853);
      EXPECT_NE(t->sustained[0].from.source.find(
                    gpu == "b200" ? "published:" : "derived:the B200 row"),
                std::string::npos);
      EXPECT_NE(t->sustained[0].from.source.find("flashinfer"),
                std::string::npos);
    } else if (gpu == "b300") {
      ASSERT_EQ(t->sustained.size(), 1u);
      EXPECT_NE(
          t->sustained[0].from.source.find("derived:ademeure/QuickRunCUDA"),
          std::string::npos);
    } else {
      EXPECT_TRUE(t->sustained.empty());
      EXPECT_DOUBLE_EQ(t->SustainedComputeRate(), 1.0);
    }
  }
}

// B300's compute_rate is the median, over the shapes of a published
// sustained-load scan (ademeure/QuickRunCUDA: cuBLAS GEMMs of random data
// back to back at the 1100 W cap), of the scan's TFLOPS over the b300
// table's own rate at each shape. The row lists each shape as
// "DTYPE MxNxK sustained/table"; here the table rate is recomputed from
// the shipped GEMM surface (B300 peaks: topology/systems/dgx-b300.textproto)
// and the median from the ratios, so a change to the GEMM rows that moves
// the surface under the scan fails until the row is regenerated.
TEST(Tables, B300SustainedRateIsTheScanOverTheTablesOwnRates) {
  auto t = LoadTables("b300");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->sustained.size(), 1u);
  const std::string& source = t->sustained[0].from.source;
  const CostModel model(*t, GpuPeaks{2250, 4500, 13125, 1125, 8.0, 148});
  const std::regex entry(R"((BF16|FP8) (\d+)x(\d+)x(\d+) (\d+)/(\d+))");
  std::vector<double> ratios;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), entry);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& e = *it;
    const int64_t m = std::stoll(e[2]), n = std::stoll(e[3]),
                  k = std::stoll(e[4]);
    const Dtype dtype = e[1] == "FP8" ? Dtype::kFp8 : Dtype::kBf16;
    const double table =
        2.0 * m * n * k / model.Gemm(m, n, k, dtype, 0).seconds / 1e12;
    SCOPED_TRACE(e.str());
    EXPECT_NEAR(table, std::stod(e[6]), 0.5);  // the row's rounded rate
    ratios.push_back(std::stod(e[5]) / table);
  }
  ASSERT_EQ(ratios.size(), 12u);
  std::sort(ratios.begin(), ratios.end());
  const double median = (ratios[5] + ratios[6]) / 2;
  EXPECT_NEAR(t->SustainedComputeRate(), median, 0.001);
  // A throttled share: inside the scan's range, and below 1.
  EXPECT_GT(t->SustainedComputeRate(), ratios.front());
  EXPECT_LT(t->SustainedComputeRate(), std::min(1.0, ratios.back()));
}

TEST(Tables, UnknownGpuIsRefused) {
  auto t = LoadTables("a100");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message,
            "calibration: unknown GPU 'a100' (tables exist for h100, h200, "
            "b200, b300, gb200, gb300)");
}

// The format sample of the CUDA benchmarks' output (calibration/cuda/sample/,
// hand-written, labelled measured:sample:format-only) loads through the same
// loader the measured tables will.
TEST(Tables, CudaBenchmarkSampleOutputLoads) {
  auto t = LoadTablesFromDir(
      std::string(MOESIM_SOURCE_DIR) + "/calibration/cuda/sample", "h200");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_GT(t->num_rows(), 0u);
  // sustained_bench's row (sample/sustained.csv, 0.88 written by hand).
  EXPECT_DOUBLE_EQ(t->SustainedComputeRate(), 0.88);
}

struct BadTable {
  const char* name;
  const char* table;
  const char* text;
  const char* error;  // exact message; the file is "t.csv"
};

const BadTable kBadTables[] = {
    {"MissingColumn", "gemm", "impl,m,n,k,tflops,source\n",
     "t.csv:1: dtype: missing column"},
    {"UnknownColumn", "gemm", "impl,m,n,k,dtype,tflops,source,gpu\n",
     "t.csv:1: gpu: unknown column (gemm has only the columns of "
     "tables/README.md)"},
    {"NegativeThroughput", "gemm",
     "impl,m,n,k,dtype,tflops,source\ncublas,1,2,3,bf16,-5,published:x\n",
     "t.csv:2: tflops: must be > 0 and finite, got -5"},
    {"ZeroThroughput", "memory_bound",
     "kernel,bytes,dtype,gb_s,source\ncopy,1024,bf16,0,measured:h200:x\n",
     "t.csv:2: gb_s: must be > 0 and finite, got 0"},
    {"NanThroughput", "memory_bound",
     "kernel,bytes,dtype,gb_s,source\ncopy,1024,bf16,nan,measured:h200:x\n",
     "t.csv:2: gb_s: must be > 0 and finite, got nan"},
    {"UnknownDtype", "gemm",
     "impl,m,n,k,dtype,tflops,source\ncublas,1,2,3,int4,5,published:x\n",
     "t.csv:2: dtype: unknown dtype 'int4' (known: bf16, fp16, fp8, mxfp8, "
     "nvfp4, tf32, fp32)"},
    {"UnknownImpl", "gemm",
     "impl,m,n,k,dtype,tflops,source\nmagma,1,2,3,bf16,5,published:x\n",
     "t.csv:2: impl: unknown 'magma' (known: cublas, deepgemm, "
     "thunderkittens)"},
    {"NonIntegerShape", "gemm",
     "impl,m,n,k,dtype,tflops,source\ncublas,1.5,2,3,bf16,5,published:x\n",
     "t.csv:2: m: must be an integer, got '1.5'"},
    {"ZeroShape", "gemm",
     "impl,m,n,k,dtype,tflops,source\ncublas,0,2,3,bf16,5,published:x\n",
     "t.csv:2: m: must be >= 1, got 0"},
    {"DuplicateGridPoint", "gemm",
     "impl,m,n,k,dtype,tflops,source\ncublas,1,2,3,bf16,5,published:x\n"
     "cublas,1,2,3,bf16,6,measured:y\n",
     "t.csv:3: duplicate grid point of line 2"},
    {"SourceWithoutKind", "gemm",
     "impl,m,n,k,dtype,tflops,source\ncublas,1,2,3,bf16,5,my laptop\n",
     "t.csv:2: source: must start with published:, measured: or derived:, "
     "got 'my laptop'"},
    {"ShortRow", "gemm", "impl,m,n,k,dtype,tflops,source\ncublas,1,2,3,bf16\n",
     "t.csv:2: expected 7 fields, found 5"},
    {"SustainedShareAboveOne", "sustained",
     "quantity,value,unit,source\ncompute_rate,1.2,fraction,published:x\n",
     "t.csv:2: value: must be a share in (0, 1], got 1.2"},
    {"UnknownTier", "collectives",
     "collective,algorithm,tier,group_size,bytes,bus_gb_s,latency_us,source\n"
     "all_reduce,ring,pcie,8,1024,5,,published:x\n",
     "t.csv:2: tier: unknown 'pcie' (known: nvlink, net)"},
};

class BadTableTest : public testing::TestWithParam<BadTable> {};

TEST_P(BadTableTest, IsRefusedWithFileLineColumnAndRule) {
  const BadTable& c = GetParam();
  Tables tables;
  auto ok = ParseTable(c.table, c.text, "t.csv", tables);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message.substr(0, std::string(c.error).size()), c.error);
}

INSTANTIATE_TEST_SUITE_P(Rows, BadTableTest, testing::ValuesIn(kBadTables),
                         [](const testing::TestParamInfo<BadTable>& info) {
                           return std::string(info.param.name);
                         });

// Attention FLOPs convention (tables/README.md, FlashAttention papers):
// 2 * b * h * s_q * s_kv * (d_qk + d_v), halved for a causal square block.
TEST(Tables, AttentionFlopsConvention) {
  AttentionShape s{.batch = 2,
                   .seq_q = 4096,
                   .seq_kv = 4096,
                   .heads_q = 16,
                   .heads_kv = 16,
                   .head_dim_qk = 128,
                   .head_dim_v = 128};
  EXPECT_DOUBLE_EQ(s.ForwardFlops(), 2.0 * 2 * 16 * 4096 * 4096 * 256);
  s.causal = true;
  EXPECT_DOUBLE_EQ(s.ForwardFlops(), 2.0 * 2 * 16 * 4096 * 4096 * 256 / 2);
  s.causal = false;
  s.window = 1024;  // sliding window: 1024 keys per query
  EXPECT_DOUBLE_EQ(s.ForwardFlops(), 2.0 * 2 * 16 * 4096 * 1024 * 256);
}

}  // namespace
}  // namespace moesim::calibration
