// Rank placement in Megatron-Core order and group spans, on the seed layouts.
#include "topology/placement.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "topology/system.h"

namespace moesim::topology {
namespace {

Cluster MakeCluster(const std::string& system, int gpus) {
  auto s = LoadSystem(system);
  EXPECT_TRUE(s) << s.error().message;
  auto c = Cluster::Build(*s, gpus);
  if (!c) {
    ADD_FAILURE() << c.error().message;
    std::abort();  // the test cannot go on without a cluster
  }
  return std::move(*c);
}

// Megatron-Core's default order tp-cp-ep-dp-pp: TP varies fastest.
TEST(Placement, DefaultOrderPutsTpInConsecutiveRanks) {
  const Cluster cluster = MakeCluster("dgx-h100", 32);
  auto p = Placement::Build(
      {.tp = 2, .cp = 2, .dp = 4, .pp = 2, .ep = 4, .etp = 1, .edp = 4},
      "tp-cp-ep-dp-pp", cluster);
  ASSERT_TRUE(p) << p.error().message;
  // rank = tp + 2*cp + 4*dp + 16*pp.
  EXPECT_EQ(p->Group(GroupKind::kTp, 5), (std::vector<int>{4, 5}));
  EXPECT_EQ(p->Group(GroupKind::kCp, 5), (std::vector<int>{5, 7}));
  EXPECT_EQ(p->Group(GroupKind::kDp, 5), (std::vector<int>{1, 5, 9, 13}));
  EXPECT_EQ(p->Group(GroupKind::kDpCp, 0),
            (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(p->Group(GroupKind::kPp, 5), (std::vector<int>{5, 21}));
  // Expert mesh: rank = etp + ep*1 + 4*edp + 16*pp (etp = 1).
  EXPECT_EQ(p->Group(GroupKind::kEp, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(p->Group(GroupKind::kEdp, 5), (std::vector<int>{1, 5, 9, 13}));
  EXPECT_EQ(p->Group(GroupKind::kEtp, 5), (std::vector<int>{5}));
}

// --rank-order tp-dp-cp-ep-pp puts DP before CP: CP ranks are dp apart.
TEST(Placement, RankOrderChangesGroups) {
  const Cluster cluster = MakeCluster("dgx-h100", 32);
  auto p = Placement::Build(
      {.tp = 2, .cp = 2, .dp = 4, .pp = 2, .ep = 4, .etp = 1, .edp = 4},
      "tp-dp-cp-ep-pp", cluster);
  ASSERT_TRUE(p) << p.error().message;
  // rank = tp + 2*dp + 8*cp + 16*pp.
  EXPECT_EQ(p->Group(GroupKind::kCp, 0), (std::vector<int>{0, 8}));
  EXPECT_EQ(p->Group(GroupKind::kDp, 0), (std::vector<int>{0, 2, 4, 6}));
}

// Seed layout (seeds_notes.md): DeepSeek-V3 128K, TP1 CP32 EP32 PP8 on 256
// H100 (DGX H100, 8 GPUs per NVLink domain). Derived by hand:
// - dp = 256 / (1 * 32 * 8) = 1; a CP group is 32 consecutive ranks = 4
//   nodes x 8 GPUs; its members sit on all 8 rails (different leaves), so
//   its traffic crosses the spine.
// - edp = 256 / (32 * 8) = 1: an EP group is the same 32 ranks.
// - PP stride = 32: stages 0, 32, ..., 224 are GPU 0 of nodes 0, 4, ..., 28:
//   one per node, all on rail 0 of SU 0 (32 nodes), so one leaf switch.
TEST(Placement, DeepSeekV3SeedLayoutSpans) {
  const Cluster cluster = MakeCluster("dgx-h100", 256);
  auto p = Placement::Build(
      {.tp = 1, .cp = 32, .dp = 1, .pp = 8, .ep = 32, .etp = 1, .edp = 1},
      "tp-cp-ep-dp-pp", cluster);
  ASSERT_TRUE(p) << p.error().message;
  const GroupSpan& cp = p->span(GroupKind::kCp);
  EXPECT_EQ(cp.size, 32);
  EXPECT_EQ(cp.num_groups, 8);
  EXPECT_EQ(cp.domains_spanned, 4);
  EXPECT_EQ(cp.members_per_domain, 8);
  EXPECT_EQ(cp.tier, Tier::kSpine);
  EXPECT_EQ(cp.groups_per_nic, 1);
  EXPECT_TRUE(cp.uniform);
  const GroupSpan& ep = p->span(GroupKind::kEp);
  EXPECT_EQ(ep.domains_spanned, 4);
  EXPECT_EQ(ep.tier, Tier::kSpine);
  const GroupSpan& pp = p->span(GroupKind::kPp);
  EXPECT_EQ(pp.size, 8);
  EXPECT_EQ(pp.domains_spanned, 8);
  EXPECT_EQ(pp.members_per_domain, 1);
  EXPECT_EQ(pp.tier, Tier::kLeaf);
  const GroupSpan& tp = p->span(GroupKind::kTp);
  EXPECT_EQ(tp.size, 1);
  EXPECT_EQ(tp.groups_per_nic, 0);
}

// Seed layout (seeds_notes.md): Qwen3-235B 128K, TP4 CP4 EP32 PP4 (VPP12) on
// 128 GB200. By default the job gets 16 trays (64 GPUs) of each of two NVL72
// racks (cluster.h: Slurm segments): GPUs 0-63 rack 0, 64-127 rack 1.
// - dp = 128 / (4 * 4 * 4) = 2. TP = ranks {4k..4k+3}: one tray. CP = ranks
//   {0, 4, 8, 12} + offset: within 16 aligned consecutive ranks, one rack.
// - PP stride = tp*cp*dp = 32: stages {r, r+32, r+64, r+96}: r and r+32 in
//   rack 0, r+64 and r+96 in rack 1: every pipeline spans both racks.
// - EP = 32 aligned consecutive ranks (etp 1, edp 1): inside one rack.
// Packed into full racks instead (72 + 56), CP group {64, 68, 72, 76} would
// straddle them: why NVL72 jobs take whole 16-tray segments.
TEST(Placement, Qwen3SeedLayoutKeepsTpCpInRackPpAcrossRacks) {
  const Cluster cluster = MakeCluster("gb200-nvl72", 128);
  auto p = Placement::Build(
      {.tp = 4, .cp = 4, .dp = 2, .pp = 4, .ep = 32, .etp = 1, .edp = 1},
      "tp-cp-ep-dp-pp", cluster);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->span(GroupKind::kTp).domains_spanned, 1);
  EXPECT_EQ(p->span(GroupKind::kTp).tier, Tier::kNvlink);
  EXPECT_EQ(p->span(GroupKind::kCp).domains_spanned, 1);
  EXPECT_EQ(p->span(GroupKind::kCp).tier, Tier::kNvlink);
  EXPECT_EQ(p->span(GroupKind::kDp).domains_spanned, 1);
  EXPECT_EQ(p->span(GroupKind::kPp).domains_spanned, 2);
  EXPECT_NE(p->span(GroupKind::kPp).tier, Tier::kNvlink);
  EXPECT_EQ(p->span(GroupKind::kEp).domains_spanned, 1);
  EXPECT_TRUE(p->span(GroupKind::kEp).uniform);

  auto s = LoadSystem("gb200-nvl72");
  ASSERT_TRUE(s);
  auto packed = Cluster::Build(*s, 128, {}, 72);
  ASSERT_TRUE(packed);
  auto q = Placement::Build(
      {.tp = 4, .cp = 4, .dp = 2, .pp = 4, .ep = 32, .etp = 1, .edp = 1},
      "tp-cp-ep-dp-pp", *packed);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->span(GroupKind::kCp).domains_spanned, 2);
  EXPECT_FALSE(q->span(GroupKind::kCp).uniform);
}

TEST(Placement, BadInputIsRefused) {
  const Cluster cluster = MakeCluster("dgx-h100", 16);
  const MeshSizes ok{
      .tp = 2, .cp = 1, .dp = 8, .pp = 1, .ep = 8, .etp = 1, .edp = 2};
  for (const char* order : {"tp-cp-dp-pp", "tp-cp-ep-dp-pp-pp",
                            "tp-cp-ep-xx-pp", "", "tp-tp-ep-dp-pp"}) {
    auto p = Placement::Build(ok, order, cluster);
    ASSERT_FALSE(p) << order;
    EXPECT_NE(p.error().message.find("--rank-order"), std::string::npos);
  }
  MeshSizes bad = ok;
  bad.dp = 4;  // 2 * 1 * 4 * 1 = 8 != 16
  auto p = Placement::Build(bad, "tp-cp-ep-dp-pp", cluster);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("must equal the GPU count 16"),
            std::string::npos);
  bad = ok;
  bad.edp = 1;  // 1 * 8 * 1 * 1 = 8 != 16
  p = Placement::Build(bad, "tp-cp-ep-dp-pp", cluster);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("parallel folding"), std::string::npos);
}

}  // namespace
}  // namespace moesim::topology
