// Calibration profiles: loading and its one-line errors, and each factor
// applied at its CostModel seam.
#include "calibration/profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "calibration/cost_model.h"

namespace moesim::calibration {
namespace {

// H100 SXM spec peaks (topology/systems/dgx-h100.textproto).
const GpuPeaks kH100{989, 1979, 0, 494.5, 3.35, 132};

Tables H100Tables() {
  auto t = LoadTables("h100");
  EXPECT_TRUE(t) << t.error().message;
  return *t;
}

Corrections One(Factor f, double value) {
  Corrections c;
  c.at(f) = value;
  return c;
}

TEST(Profile, ParsesFactorsAndMultipliesPerGpuEntries) {
  auto p = ParseProfile(
      "name: \"lab\"\n"
      "factors { gemm_efficiency: 0.8 host_overhead_scale: 1.5 }\n"
      "gpu { gpu: \"b200\" factors { gemm_efficiency: 0.5 } }\n",
      "p.textproto");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->name, "lab");
  EXPECT_EQ(p->For("h100").at(Factor::kGemm), 0.8);
  EXPECT_EQ(p->For("h100").at(Factor::kHostOverhead), 1.5);
  EXPECT_EQ(p->For("h100").at(Factor::kAttention), 1);
  // b200: 0.8 for every GPU times its own 0.5.
  EXPECT_DOUBLE_EQ(p->For("b200").at(Factor::kGemm), 0.4);
  EXPECT_EQ(p->For("b200").at(Factor::kHostOverhead), 1.5);
}

TEST(Profile, EmptyProfileIsTheIdentity) {
  auto p = ParseProfile("", "empty.textproto");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(p->For("gb200").IsIdentity());
}

TEST(Profile, FormatParsesBackToTheSameFactors) {
  Profile p;
  p.name = "round \"trip\"";
  p.all.at(Factor::kNvlinkComm) = 0.9123;
  p.by_gpu.push_back({"gb200", One(Factor::kDispatcher, 1.25)});
  const std::string text = FormatProfile(p, {"a header", ""});
  EXPECT_EQ(text.rfind("# a header\n#\n", 0), 0u) << text;
  auto back = ParseProfile(text, "formatted");
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(back->name, p.name);
  EXPECT_EQ(back->all.values, p.all.values);
  ASSERT_EQ(back->by_gpu.size(), 1u);
  EXPECT_EQ(back->by_gpu[0].second.at(Factor::kDispatcher), 1.25);
  EXPECT_EQ(FormatProfile(*back, {"a header", ""}), text);
}

struct BadProfile {
  const char* name;
  const char* text;
  const char* error;             // the message starts with it
  const char* detail = nullptr;  // and contains it, when set
};

// Each error names the file, the line, the field and the rule.
TEST(Profile, BadInputsNameFileLineFieldAndRule) {
  const BadProfile cases[] = {
      {"AboveBound", "name: \"x\"\nfactors {\n  gemm_efficiency: 4.5\n}\n",
       "p.textproto:3: factors.gemm_efficiency: must be a finite factor in "
       "[0.25, 4], got 4.5"},
      {"BelowBound", "factors { attention_efficiency: 0.2 }\n",
       "p.textproto:1: factors.attention_efficiency: must be a finite factor "
       "in [0.25, 4], got 0.2"},
      {"NotFinite", "factors {\n  host_overhead_scale: inf\n}\n",
       "p.textproto:2: factors.host_overhead_scale: must be a finite factor "
       "in [0.25, 4], got inf"},
      {"NotANumber", "factors { gemm_efficiency: nan }\n",
       "p.textproto:1: factors.gemm_efficiency: must be a finite factor"},
      {"UnknownField", "factors {\n  gemm_speed: 1\n}\n", "p.textproto:2:",
       "Message type \"moesim.calibration.Factors\" has no field named "
       "\"gemm_speed\""},
      {"Malformed", "factors { gemm_efficiency: fast }\n", "p.textproto:1:"},
      {"UnknownGpu", "gpu {\n  gpu: \"a100\"\n}\n",
       "p.textproto:2: gpu[0].gpu: unknown GPU 'a100'"},
      {"GpuTwice", "gpu { gpu: \"h100\" }\ngpu { gpu: \"h100\" }\n",
       "p.textproto:2: gpu[1].gpu: GPU 'h100' listed twice"},
      {"GpuFactorOutOfRange",
       "gpu {\n  gpu: \"h100\"\n  factors {\n    dispatcher_efficiency: 8\n  "
       "}\n}\n",
       "p.textproto:4: gpu[0].factors.dispatcher_efficiency: must be a finite "
       "factor in [0.25, 4], got 8"},
  };
  for (const BadProfile& c : cases) {
    auto p = ParseProfile(c.text, "p.textproto");
    ASSERT_FALSE(p) << c.name;
    EXPECT_EQ(p.error().message.rfind(c.error, 0), 0u)
        << c.name << ": " << p.error().message;
    if (c.detail != nullptr) {
      EXPECT_NE(p.error().message.find(c.detail), std::string::npos)
          << c.name << ": " << p.error().message;
    }
    EXPECT_EQ(p.error().message.find('\n'), std::string::npos) << c.name;
  }
}

TEST(Profile, FactorNamesRoundTrip) {
  for (Factor f : kFactors) {
    auto parsed = ParseFactor(FactorName(f));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, f);
  }
  auto bad = ParseFactor("gemm");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("host_overhead_scale"), std::string::npos);
}

// The identity changes no bit of any answer (cost_model.h).
TEST(CostModelCorrections, IdentityIsBitIdentical) {
  const CostModel plain(H100Tables(), kH100);
  const CostModel identity(H100Tables(), kH100, Corrections{});
  EXPECT_EQ(plain.Gemm(4096, 5120, 1536, Dtype::kBf16).seconds,
            identity.Gemm(4096, 5120, 1536, Dtype::kBf16).seconds);
  EXPECT_EQ(plain.GroupedGemm(16, 512, 768, 2048, Dtype::kBf16).seconds,
            identity.GroupedGemm(16, 512, 768, 2048, Dtype::kBf16).seconds);
  EXPECT_EQ(plain.MemoryBound("rmsnorm", 3e7).seconds,
            identity.MemoryBound("rmsnorm", 3e7).seconds);
  EXPECT_EQ(*plain.Host("kernel_launch_us"),
            *identity.Host("kernel_launch_us"));
}

// gemm_efficiency 0.5 halves the compute rate of a compute-bound GEMM:
// 4096^3 bf16 is the h100 table's 726.4 TFLOPS row (cost_model_test.cc),
// 0.19 ms, of which its HBM traffic (3 x 32 MiB at the 3015 GB/s copy rate,
// 0.033 ms) is not compute: the compute term doubles, the traffic does not
// (cost_model.h), so the time grows by less than 2x but by at least 2x less
// the traffic, and the compute efficiency halves exactly.
TEST(CostModelCorrections, GemmEfficiencyHalfDoublesAComputeBoundGemm) {
  const CostModel plain(H100Tables(), kH100);
  const CostModel slow(H100Tables(), kH100, One(Factor::kGemm, 0.5));
  const Estimate a = plain.Gemm(4096, 4096, 4096, Dtype::kBf16);
  const Estimate b = slow.Gemm(4096, 4096, 4096, Dtype::kBf16);
  const double traffic = 3.0 * 4096 * 4096 * 2 / 3015e9;
  EXPECT_LT(b.seconds, 2 * a.seconds);
  EXPECT_GE(b.seconds, 2 * a.seconds - traffic);
  EXPECT_DOUBLE_EQ(b.efficiency, 0.5 * a.efficiency);
  // Other kernel classes do not move.
  EXPECT_EQ(slow.MemoryBound("copy", 1e9).seconds,
            plain.MemoryBound("copy", 1e9).seconds);
  EXPECT_EQ(slow.GroupedGemm(8, 1024, 4096, 4096, Dtype::kBf16).seconds,
            plain.GroupedGemm(8, 1024, 4096, 4096, Dtype::kBf16).seconds);
}

// A GEMM limited by its HBM traffic follows memory_bound_efficiency, not
// gemm_efficiency: 8 x 8 x 2^24 bf16 reads 2 x 8 x 2^24 x 2 bytes = 512 MiB,
// ~0.18 ms at the copy rate, while the GEMM curve answers ~10 us for its
// 2^31 FLOPs, ~40 us even at gemm_efficiency 0.25.
TEST(CostModelCorrections, GemmTrafficFloorFollowsMemoryBandwidth) {
  constexpr int64_t kK = int64_t{1} << 24;
  const CostModel plain(H100Tables(), kH100);
  const Estimate a = plain.Gemm(8, 8, kK, Dtype::kBf16);
  ASSERT_NE(a.method.find("memory-bound"), std::string::npos) << a.method;
  EXPECT_GT(a.seconds, 1.5e-4);
  const CostModel slow_gemm(H100Tables(), kH100, One(Factor::kGemm, 0.25));
  EXPECT_EQ(slow_gemm.Gemm(8, 8, kK, Dtype::kBf16).seconds, a.seconds);
  const CostModel slow_hbm(H100Tables(), kH100, One(Factor::kMemoryBound, 0.5));
  EXPECT_DOUBLE_EQ(slow_hbm.Gemm(8, 8, kK, Dtype::kBf16).seconds,
                   2 * a.seconds);
}

// Each remaining seam: grouped GEMM and attention times divide by their
// factor, dispatcher rates and host quantities multiply.
TEST(CostModelCorrections, EachFactorScalesItsOwnAnswer) {
  const CostModel plain(H100Tables(), kH100);
  const CostModel grouped(H100Tables(), kH100, One(Factor::kGroupedGemm, 2));
  EXPECT_DOUBLE_EQ(
      grouped.GroupedGemm(8, 1024, 4096, 4096, Dtype::kBf16).seconds,
      plain.GroupedGemm(8, 1024, 4096, 4096, Dtype::kBf16).seconds / 2);
  AttentionShape shape;
  shape.seq_q = shape.seq_kv = 4096;
  shape.heads_q = shape.heads_kv = 32;
  shape.head_dim_qk = shape.head_dim_v = 128;
  shape.causal = true;
  const CostModel attention(H100Tables(), kH100, One(Factor::kAttention, 0.8));
  EXPECT_DOUBLE_EQ(attention.Attention(shape, true).seconds,
                   plain.Attention(shape, true).seconds / 0.8);
  const CostModel dispatch(H100Tables(), kH100, One(Factor::kDispatcher, 0.5));
  auto fast =
      plain.Dispatch("deepep", "dispatch", "nvlink", 8, 4096, Dtype::kBf16, 20);
  auto slow = dispatch.Dispatch("deepep", "dispatch", "nvlink", 8, 4096,
                                Dtype::kBf16, 20);
  ASSERT_TRUE(fast && slow);
  EXPECT_DOUBLE_EQ(slow->gb_s, 0.5 * fast->gb_s);
  // h100/host.csv: kernel_launch_us 3.3, torch_op_us 13.48, te_module_us
  // 36.5.
  const CostModel host(H100Tables(), kH100, One(Factor::kHostOverhead, 1.5));
  ASSERT_TRUE(host.Host("kernel_launch_us") && host.Host("torch_op_us") &&
              host.Host("te_module_us"));
  EXPECT_DOUBLE_EQ(*host.Host("kernel_launch_us"), 1.5 * 3.3);
  EXPECT_DOUBLE_EQ(*host.Host("torch_op_us"), 1.5 * 13.48);
  EXPECT_DOUBLE_EQ(*host.Host("te_module_us"), 1.5 * 36.5);
  // Ratios are not times: the fraction and the factor stay as the table says.
  for (const char* ratio : {"auto_gc_stall_fraction", "python_call_factor"}) {
    ASSERT_TRUE(host.Host(ratio) && plain.Host(ratio)) << ratio;
    EXPECT_DOUBLE_EQ(*host.Host(ratio), *plain.Host(ratio)) << ratio;
  }
  // A measured collective on NVLink follows the NVLink factor only.
  const CostModel nvlink(H100Tables(), kH100, One(Factor::kNvlinkComm, 0.5));
  const CostModel net(H100Tables(), kH100, One(Factor::kNetworkComm, 0.5));
  auto base = plain.Collective("all_gather", "nvlink", 8, 1e9);
  ASSERT_TRUE(base);
  EXPECT_DOUBLE_EQ(nvlink.Collective("all_gather", "nvlink", 8, 1e9)->seconds,
                   2 * base->seconds);
  EXPECT_EQ(net.Collective("all_gather", "nvlink", 8, 1e9)->seconds,
            base->seconds);
}

}  // namespace
}  // namespace moesim::calibration
