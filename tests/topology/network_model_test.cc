// The NetworkModel seam: analytical and flow models agree on a transfer alone
// on the wire; the flow model slows transfers that share links.
#include "topology/network_model.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/topology/network_fixture.h"
#include "topology/system.h"

namespace moesim::topology {
namespace {

using Fixture = moesim::testing::Net;
constexpr auto Make = moesim::testing::MakeNet;

std::vector<int> Range(int begin, int end) {
  std::vector<int> v;
  for (int g = begin; g < end; ++g) v.push_back(g);
  return v;
}

// Runs `model` until everything finished; returns each transfer's end time.
std::vector<double> RunAll(NetworkModel& model, int transfers) {
  std::vector<double> end(transfers, -1);
  while (auto t = model.NextEventTime()) {
    for (int id : model.AdvanceTo(*t)) end[id] = *t;
  }
  return end;
}

double Alone(NetworkModel& model, const CollectiveRequest& r) {
  model.Start(0, r);
  return RunAll(model, 1)[0];
}

// A collective alone on the wire: the flow model's rings, NVLS flows and
// all-to-all pairs reproduce the analytical time (same bandwidths, same
// latency), within 1%.
TEST(NetworkModel, FlowMatchesAnalyticalForATransferAlone) {
  const double gib = 1 << 30;
  const struct {
    const char* system;
    int cluster_gpus;
    CollectiveRequest request;
  } kCases[] = {
      {"dgx-h100", 8, {Collective::kAllReduce, Range(0, 8), gib}},  // NVLS
      {"dgx-h100", 8, {Collective::kAllGather, Range(0, 8), gib}},  // ring
      {"dgx-h100", 32, {Collective::kAllToAll, Range(0, 32), gib}},
      {"dgx-h100", 32, {Collective::kReduceScatter, {0, 8, 16, 24}, gib}},
      {"gb200-nvl72", 72, {Collective::kAllToAll, Range(0, 32), gib}},
      {"dgx-h100", 16, {Collective::kSendRecv, {0, 8}, gib}},
  };
  for (const auto& c : kCases) {
    Fixture f = Make(c.system, c.cluster_gpus);
    AnalyticalNetwork analytical(f.cluster, f.params);
    FlowNetwork flow(f.cluster, f.params);
    const double a = Alone(analytical, c.request);
    const double b = Alone(flow, c.request);
    EXPECT_NEAR(b / a, 1.0, 0.01)
        << c.system << " " << CollectiveName(c.request.collective);
  }
}

// Two 1 GiB sends out of GPU 0's NIC (to GPUs 8 and 16 on other nodes) share
// it: each runs at half the NIC rate and takes twice as long as alone.
TEST(NetworkModel, TransfersSharingANicEachGetHalf) {
  Fixture f = Make("dgx-h100", 24);
  const double gib = 1 << 30;
  FlowNetwork alone(f.cluster, f.params);
  const double t1 = Alone(alone, {Collective::kSendRecv, {0, 8}, gib});
  FlowNetwork both(f.cluster, f.params);
  both.Start(0, {Collective::kSendRecv, {0, 8}, gib});
  both.Start(0, {Collective::kSendRecv, {0, 16}, gib});
  const std::vector<double> end = RunAll(both, 2);
  const double latency = t1 - gib / (f.params.nic_gb_s * 1e9);
  EXPECT_NEAR(end[0] - latency, 2 * (t1 - latency), 1e-9);
  EXPECT_NEAR(end[1], end[0], 1e-12);
}

// Late in a long step (t = 10^5 s) a flow's remaining bytes / rate can fall
// below the spacing of doubles near t; the model must still end it rather
// than report the same next-event time forever. 1 MiB over NVLink ends
// within a few events and at about t + the time alone.
TEST(NetworkModel, FlowsEndLateInALongStep) {
  Fixture f = Make("dgx-h100", 8);
  const double start = 1e5, mib = 1 << 20;
  FlowNetwork alone(f.cluster, f.params);
  const double t1 = Alone(alone, {Collective::kSendRecv, {0, 1}, mib});
  FlowNetwork late(f.cluster, f.params);
  late.Start(start, {Collective::kSendRecv, {0, 1}, mib});
  late.Start(start, {Collective::kSendRecv, {2, 3}, 3 * mib});
  int events = 0;
  double end = -1;
  while (auto t = late.NextEventTime()) {
    ASSERT_LT(++events, 10) << "no progress at " << *t;
    for (int id : late.AdvanceTo(*t)) {
      if (id == 0) end = *t;
    }
  }
  EXPECT_NEAR(end - start, t1, 1e-9 * start);
}

// Arrival and departure: A (1 GiB, alone time T) starts at 0, B (1 GiB) at
// T/2 on the same NIC. From T/2 both get half: A's last half takes T, so A's
// data ends at 1.5T; B has then sent half and finishes its last half alone by
// 2T. Each adds the same NCCL latency L at the end.
TEST(NetworkModel, ResolvesOnArrivalAndDeparture) {
  Fixture f = Make("dgx-h100", 24);
  const double gib = 1 << 30;
  const double T = gib / (f.params.nic_gb_s * 1e9);
  FlowNetwork probe(f.cluster, f.params);
  const double L = Alone(probe, {Collective::kSendRecv, {0, 8}, gib}) - T;
  FlowNetwork net(f.cluster, f.params);
  net.Start(0, {Collective::kSendRecv, {0, 8}, gib});
  std::vector<double> end(2, -1);
  // Run to T/2, then start B.
  while (auto t = net.NextEventTime()) {
    if (*t > T / 2) break;
    for (int id : net.AdvanceTo(*t)) end[id] = *t;
  }
  net.AdvanceTo(T / 2);
  net.Start(T / 2, {Collective::kSendRecv, {0, 16}, gib});
  EXPECT_NEAR(net.Rates(0)[0], f.params.nic_gb_s * 1e9 / 2, 1);
  while (auto t = net.NextEventTime()) {
    for (int id : net.AdvanceTo(*t)) end[id] = *t;
  }
  EXPECT_NEAR(end[0], 1.5 * T + L, 1e-9);
  EXPECT_NEAR(end[1], 2 * T + L, 1e-9);
}

// An EP all-to-all over 4 nodes and a DP reduce-scatter over the same nodes'
// NICs run concurrently: each is slower than alone (they share every NIC),
// and the analytical model, which does not see the other, is not.
TEST(NetworkModel, EpAllToAllAndDpReduceScatterShareNics) {
  Fixture f = Make("dgx-h100", 32);
  const double gib = 1 << 30;
  const CollectiveRequest ep{Collective::kAllToAll, Range(0, 32), gib};
  const CollectiveRequest dp{Collective::kReduceScatter, {0, 8, 16, 24}, gib};
  FlowNetwork a(f.cluster, f.params), b(f.cluster, f.params);
  const double ep_alone = Alone(a, ep);
  const double dp_alone = Alone(b, dp);
  FlowNetwork both(f.cluster, f.params);
  both.Start(0, ep);
  both.Start(0, dp);
  const std::vector<double> end = RunAll(both, 2);
  EXPECT_GT(end[0], ep_alone * 1.01);
  EXPECT_GT(end[1], dp_alone * 1.2);
}

TEST(NetworkModel, SameCallsGiveIdenticalTimes) {
  Fixture f = Make("dgx-h100", 32);
  auto run = [&] {
    FlowNetwork net(f.cluster, f.params);
    net.Start(0, {Collective::kAllToAll, Range(0, 32), 1e8});
    net.Start(1e-4, {Collective::kAllReduce, {0, 8, 16, 24}, 3e8});
    return RunAll(net, 2);
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace moesim::topology
