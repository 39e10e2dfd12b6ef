// Collective times on placed groups, against published NCCL measurements.
#include "topology/collectives.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "topology/comm_check.h"
#include "topology/system.h"

namespace moesim::topology {
namespace {

NetworkParams Params(const std::string& system) {
  auto s = LoadSystem(system);
  EXPECT_TRUE(s) << s.error().message;
  auto p = NetworkParamsFor(*s);
  EXPECT_TRUE(p) << p.error().message;
  return *p;
}

// The must-show table: every row of topology/comm_checks.csv (copied with its
// source from ../shared/reference/measured_comm.csv) within 15%.
TEST(CommCheck, PublishedBusBandwidthWithin15Percent) {
  auto checks = RunCommChecks();
  ASSERT_TRUE(checks) << checks.error().message;
  std::printf("%s", FormatCommChecks(*checks).c_str());
  EXPECT_GE(checks->size(), 25u);
  for (const CommCheck& c : *checks) {
    EXPECT_LE(std::abs(c.error_pct), 15.0)
        << c.system << " " << CollectiveName(c.collective) << " " << c.gpus
        << " GPUs " << c.bytes << " B: " << c.source;
  }
}

// 8x H100 ring all-reduce, large message: NCCL's NVLink4 rate 18 links x
// 20.6 GB/s = 370.8 GB/s bus bandwidth (latency negligible at 8 GiB).
TEST(Collectives, RingAllReduceInsideOneNodeRunsAtNcclNvlinkRate) {
  const NetworkParams p = Params("dgx-h100");
  const GroupShape eight{8, 1, 8, Tier::kNvlink};
  const CollectiveEstimate e = EstimateCollective(
      p, Collective::kAllReduce, eight, 8.0 * (1 << 30), Algorithm::kRing);
  EXPECT_NEAR(e.bus_gb_s, 18 * 20.6, 0.01 * 370.8);  // 1%: latency
  EXPECT_EQ(e.algorithm, Algorithm::kRing);
  EXPECT_EQ(e.protocol, Protocol::kSimple);
}

// NCCL picks NVLS for large all-reduce on 8 H100s: algbw = 370.8 x 0.85 x
// 15/16 = 295.5 GB/s, bus = 295.5 x 2 x 7/8 = 517 GB/s > ring's 370.8.
TEST(Collectives, AutoPicksNvlsForLargeAllReduceInOneDomain) {
  const NetworkParams p = Params("dgx-h100");
  const CollectiveEstimate e = EstimateCollective(
      p, Collective::kAllReduce, {8, 1, 8, Tier::kNvlink}, 8.0 * (1 << 30));
  EXPECT_EQ(e.algorithm, Algorithm::kNvls);
  EXPECT_NEAR(e.bus_gb_s, 370.8 * 0.85 * 15 / 16 * 1.75, 1.0);
}

// Small messages are latency-bound: 32 KiB on 8 GPUs picks LL (ring LL
// latency 6.6 + 14 x 0.6 = 15 us beats NVLS's 25 us and Simple's 8.4 + 14 x
// 3.4 = 56 us).
TEST(Collectives, SmallMessagesUseLowLatencyProtocol) {
  const NetworkParams p = Params("dgx-h100");
  const CollectiveEstimate e = EstimateCollective(
      p, Collective::kAllReduce, {8, 1, 8, Tier::kNvlink}, 32768);
  EXPECT_EQ(e.algorithm, Algorithm::kRing);
  EXPECT_EQ(e.protocol, Protocol::kLl);
  EXPECT_NEAR(e.latency_us, 15.0, 1e-9);
}

// The same 32 GPUs, two placements: inside one NVL72 domain the all-to-all
// runs at NVLink speed; over four DGX H100 nodes 24 of every 31 peers are
// behind the 48.5 GB/s NIC. Bus bandwidth ratio > 10.
TEST(Collectives, AllToAllTimeDependsOnPlacementNotSize) {
  const double bytes = 1 << 30;
  const CollectiveEstimate nvl72 =
      EstimateCollective(Params("gb200-nvl72"), Collective::kAllToAll,
                         {32, 1, 32, Tier::kNvlink}, bytes);
  const CollectiveEstimate ib =
      EstimateCollective(Params("dgx-h100"), Collective::kAllToAll,
                         {32, 4, 8, Tier::kSpine}, bytes);
  EXPECT_GT(nvl72.bus_gb_s / ib.bus_gb_s, 10);
  // Inter-node: 48.5 x 0.77 x 31/24 = 48.2 GB/s (collectives.h).
  EXPECT_NEAR(ib.bus_gb_s, 48.5 * 0.77 * 31 / 24, 0.5);
}

// A ring across domains leaves each domain through the NICs of the members
// there: one member per node (a DP group of TP8 ranks) runs at one NIC's
// 48.5 GB/s; eight members per node at min(370.8, 8 x 48.5 = 388).
TEST(Collectives, CrossDomainRingUsesMembersNics) {
  const NetworkParams p = Params("dgx-h100");
  const double bytes = 8.0 * (1 << 30);
  const CollectiveEstimate one = EstimateCollective(
      p, Collective::kReduceScatter, {4, 4, 1, Tier::kLeaf}, bytes);
  const CollectiveEstimate eight = EstimateCollective(
      p, Collective::kReduceScatter, {32, 4, 8, Tier::kSpine}, bytes);
  EXPECT_NEAR(one.bus_gb_s, 48.5, 0.5);
  EXPECT_NEAR(eight.bus_gb_s, 370.8, 0.01 * 370.8);  // 1%: latency
}

// 2:1 oversubscription halves what crosses the spine: a group whose traffic
// stays under one leaf keeps the full NIC rate.
TEST(Collectives, OversubscriptionSlowsSpineTrafficOnly) {
  auto s = LoadSystem("dgx-h100");
  ASSERT_TRUE(s);
  s->mutable_scale_out()->set_oversubscription(2);
  auto p = NetworkParamsFor(*s);
  ASSERT_TRUE(p);
  const double bytes = 8.0 * (1 << 30);
  EXPECT_NEAR(EstimateCollective(*p, Collective::kAllGather,
                                 {4, 4, 1, Tier::kLeaf}, bytes)
                  .bus_gb_s,
              48.5, 0.5);
  EXPECT_NEAR(EstimateCollective(*p, Collective::kAllGather,
                                 {4, 4, 1, Tier::kSpine}, bytes)
                  .bus_gb_s,
              48.5 / 2, 0.3);
}

// Per-peer sizes: 1 GiB to the 7 NVLink peers of GPU 0 takes 1 GiB / (370.8
// x 0.875) GB/s; the same bytes to the 24 peers behind the NIC take 1 GiB /
// (48.5 x 0.77): about 8.7x longer (plus the same latency).
TEST(Collectives, AllToAllVGatesOnTheBusiestTier) {
  auto s = LoadSystem("dgx-h100");
  ASSERT_TRUE(s);
  auto cluster = Cluster::Build(*s, 32);
  ASSERT_TRUE(cluster);
  const NetworkParams p = Params("dgx-h100");
  std::vector<int> gpus(32);
  for (int g = 0; g < 32; ++g) gpus[g] = g;
  const double gib = 1 << 30;
  std::vector<double> near(32, 0), far(32, 0);
  for (int g = 1; g < 8; ++g) near[g] = gib / 7;
  for (int g = 8; g < 32; ++g) far[g] = gib / 24;
  const CollectiveEstimate a = EstimateAllToAllV(p, gpus, 0, near, *cluster);
  const CollectiveEstimate b = EstimateAllToAllV(p, gpus, 0, far, *cluster);
  const double ratio = (370.8 * 0.875) / (48.5 * 0.77);
  EXPECT_NEAR(
      (b.seconds - b.latency_us * 1e-6) / (a.seconds - a.latency_us * 1e-6),
      ratio, 0.01 * ratio);
}

TEST(Collectives, GroupOfOneTakesNoTime) {
  const CollectiveEstimate e =
      EstimateCollective(Params("dgx-h100"), Collective::kAllReduce,
                         {1, 1, 1, Tier::kNvlink}, 1e9);
  EXPECT_EQ(e.seconds, 0);
}

}  // namespace
}  // namespace moesim::topology
