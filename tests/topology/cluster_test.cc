// Tests of the cluster graph (topology/cluster.h): fabric sizes against the
// NVIDIA DGX SuperPOD reference architectures, edge bandwidths, routes
// (tiers, shortest, deterministic, ECMP spread), bisection, DOT and errors.
// Sizes of the shipped systems come from topology/systems/*.textproto:
//   dgx-h100 / dgx-b200: 8 GPUs per node = one NVLink domain, 8 NICs of
//     400 Gb/s, 2 CPUs, PCIe Gen5 63 GB/s, Quantum-2 radix 64 at 400 Gb/s,
//     SU = 32 nodes; H100 NVLink 18 x 25 GB/s, B200 18 x 50 GB/s.
//   gb200-nvl72: 4 GPUs per tray (host), 72-GPU domain, 4 NICs of 400 Gb/s,
//     2 Grace per tray over NVLink-C2C 450 GB/s, radix 64, SU = 144 trays.
// With oversubscription 1 a 64-port leaf has down = up = 32 ports, and
// NIC-leaf = min(400, 400) / 8 = 50 GB/s.
#include "topology/cluster.h"

#include <gtest/gtest.h>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "topology/system.h"

namespace moesim::topology {
namespace {

System Load(std::string_view name) {
  auto system = LoadSystem(name);
  EXPECT_TRUE(system.has_value()) << system.error().message;
  return system.value_or(System());
}

// dgx-h100 shrunk to 8-port switches and 2-node SUs, so that 64 GPUs need
// three tiers: down = up = 4; an SU has 2 hosts x 8 rails = 16 NIC ports =
// 4 leaves; 64 GPUs = 8 hosts = 4 SUs = 16 leaves > radix 8, so pods of
// 8/2 = 4 leaves: 4 pods x 4 spines = 16 spines; core groups of
// ceil(4 pods * 4 / 8) = 2 cores, 4 groups = 8 cores. At most 8 pods = 32
// leaves = 8 SUs = 128 GPUs.
System TinyThreeTier() {
  System s = Load("dgx-h100");
  s.mutable_scale_out()->set_switch_radix(8);
  s.mutable_scale_out()->set_nodes_per_su(2);
  return s;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Hop counts from `src` over the whole graph.
std::vector<int> HopsFrom(const Cluster& c, VertexId src) {
  std::vector<int> hops(c.num_vertices(), -1);
  hops[src] = 0;
  boost::breadth_first_search(
      c.graph(), src,
      boost::visitor(boost::make_bfs_visitor(
          boost::record_distances(hops.data(), boost::on_tree_edge()))));
  return hops;
}

// Hop counts from GPU `src` over paths that relay through no other GPU and
// no CPU (the paths Route() chooses among).
std::vector<int> NetworkHopsFrom(const Cluster& c, int src) {
  struct NoRelay {
    const Cluster* c = nullptr;
    VertexId src = 0;
    bool operator()(Cluster::Graph::edge_descriptor e) const {
      const Vertex& from = c->graph()[boost::source(e, c->graph())];
      const Vertex& to = c->graph()[boost::target(e, c->graph())];
      if (from.kind == VertexKind::kCpu || to.kind == VertexKind::kCpu) {
        return false;
      }
      return from.kind != VertexKind::kGpu ||
             static_cast<VertexId>(boost::source(e, c->graph())) == src;
    }
  };
  const VertexId v = c.VertexOf(VertexKind::kGpu, src);
  boost::filtered_graph<Cluster::Graph, NoRelay> g(c.graph(), NoRelay{&c, v});
  std::vector<int> hops(c.num_vertices(), -1);
  hops[v] = 0;
  boost::breadth_first_search(
      g, v,
      boost::visitor(boost::make_bfs_visitor(
          boost::record_distances(hops.data(), boost::on_tree_edge()))));
  return hops;
}

// The route is a chain of edges from src's vertex to dst's vertex visiting
// no vertex twice.
void ExpectConnectedPath(const Cluster& c, int src, int dst) {
  const std::vector<EdgeId> path = c.Route(src, dst);
  ASSERT_FALSE(path.empty());
  VertexId at = c.VertexOf(VertexKind::kGpu, src);
  std::set<VertexId> seen = {at};
  for (EdgeId e : path) {
    ASSERT_EQ(c.link(e).src, at);
    at = c.link(e).dst;
    EXPECT_TRUE(seen.insert(at).second) << "vertex " << at << " twice";
  }
  EXPECT_EQ(at, c.VertexOf(VertexKind::kGpu, dst));
}

// --- Fabric sizes against the SuperPOD reference architectures -------------

struct SuperPodRow {
  int sus;
  int leaves;
  int spines;
  int cores;
  int tiers;
};

TEST(ClusterSuperPodTest, DgxB200MatchesReferenceArchitectureTable) {
  // NVIDIA DGX SuperPOD B200 RA, compute fabric table (SU = 32 DGX B200 =
  // 256 GPUs, Quantum-2 QM9700 64 ports). Derivation: an SU has 32 x 8 =
  // 256 NIC ports = 256 / 32 = 8 leaves. Up to 64 leaves (8 SU): two tiers,
  // spines = leaves * 32 up / 64 ports = leaves / 2. Beyond: pods of 32
  // leaves (4 SU), 32 spines per pod, cores = spines * 32 / 64.
  const std::vector<SuperPodRow> rows = {
      {2, 16, 8, 0, 2},      {4, 32, 16, 0, 2},      {8, 64, 32, 0, 2},
      {16, 128, 128, 64, 3}, {32, 256, 256, 128, 3}, {64, 512, 512, 256, 3},
  };
  const System b200 = Load("dgx-b200");
  for (const SuperPodRow& row : rows) {
    SCOPED_TRACE(std::to_string(row.sus) + " SU");
    const int gpus = row.sus * 256;
    auto cluster = Cluster::Build(b200, gpus);
    ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
    const ClusterSummary s = cluster->Summarize();
    EXPECT_EQ(s.gpus, gpus);
    EXPECT_EQ(s.hosts, row.sus * 32);
    EXPECT_EQ(s.nvlink_domains, row.sus * 32);  // one 8-GPU domain per node
    EXPECT_EQ(s.nics, gpus);                    // one NIC per GPU
    EXPECT_EQ(s.cpus, row.sus * 32 * 2);
    EXPECT_EQ(s.nvswitch_chips, row.sus * 32 * 2);  // 2 chips per DGX B200
    EXPECT_EQ(s.scalable_units, row.sus);
    EXPECT_EQ(s.leaf_switches, row.leaves);
    EXPECT_EQ(s.spine_switches, row.spines);
    EXPECT_EQ(s.core_switches, row.cores);
    EXPECT_EQ(s.tiers, row.tiers);
    EXPECT_EQ(s.pods, row.tiers == 3 ? row.leaves / 32 : 0);
    EXPECT_EQ(s.leaf_down_ports, 32);
    EXPECT_EQ(s.leaf_up_ports, 32);
    EXPECT_EQ(cluster->CountOf(VertexKind::kLeaf), row.leaves);
    EXPECT_EQ(cluster->CountOf(VertexKind::kNvSwitch), row.sus * 32);
  }
}

TEST(ClusterSuperPodTest, DgxH100OneSuIsEightLeavesFourSpines) {
  // DGX SuperPOD H100 RA: 1 SU = 32 nodes = 256 GPUs, 8 leaf and 4 spine
  // switches: 256 NIC ports / 32 down = 8 leaves; 8 x 32 up / 64 = 4 spines.
  auto cluster = Cluster::Build(Load("dgx-h100"), 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const ClusterSummary s = cluster->Summarize();
  EXPECT_EQ(s.leaf_switches, 8);
  EXPECT_EQ(s.spine_switches, 4);
  EXPECT_EQ(s.core_switches, 0);
  EXPECT_EQ(s.tiers, 2);
  EXPECT_EQ(s.scalable_units, 1);
  // Rail-optimized: rail r of all 32 hosts fills leaf r (slots 32r..32r+31).
  for (int nic = 0; nic < 256; ++nic) {
    EXPECT_EQ(cluster->LeafOfNic(nic), nic % 8) << "nic " << nic;
  }
}

// --- Counts at small sizes ---------------------------------------------------

TEST(ClusterCountsTest, DgxH100OneNodeIsOneDomainWithoutFabric) {
  auto cluster = Cluster::Build(Load("dgx-h100"), 8);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const ClusterSummary s = cluster->Summarize();
  EXPECT_EQ(s.nvlink_domains, 1);
  EXPECT_EQ(s.hosts, 1);
  EXPECT_EQ(s.nics, 8);  // NICs are listed even without a fabric
  EXPECT_EQ(s.cpus, 2);
  EXPECT_EQ(s.nvswitch_chips, 4);  // DGX H100: 4 NVSwitch chips
  EXPECT_EQ(s.leaf_switches, 0);
  EXPECT_EQ(s.spine_switches, 0);
  EXPECT_EQ(s.core_switches, 0);
  EXPECT_EQ(s.tiers, 0);
  EXPECT_EQ(s.scalable_units, 0);
  // 8 GPUs + 1 NvSwitch + 8 NICs + 2 CPUs; cables: 8 NVLink + 8 host + 8
  // PCIe, two directed edges each.
  EXPECT_EQ(s.vertices, 19);
  EXPECT_EQ(s.edges, 48);
  EXPECT_EQ(cluster->LeafOfNic(0), -1);
}

TEST(ClusterCountsTest, Gb200Nvl72TwoRacks) {
  // 144 GPUs = 2 racks of 72 = 2 domains; 144 / 4 = 36 trays (hosts);
  // 36 x 4 = 144 NICs; 36 x 2 = 72 Grace CPUs; 2 x 18 NVSwitch chips.
  // Leaves: a full SU (144 trays x 4 rails = 576 ports) would take
  // ceil(576 / 32) = 18 leaves; these 36 trays fill slots r*144 + 0..35 of
  // rail r: rail 0 slots 0..35 -> leaves 0, 1; rail 1 144..179 -> 4, 5;
  // rail 2 288..323 -> 9, 10; rail 3 432..467 -> 13, 14: 8 leaves built.
  // Spines: ceil(8 x 32 / 64) = 4, each leaf-spine pair 32 / 4 = 8 cables.
  auto cluster =
      Cluster::Build(Load("gb200-nvl72"), 144, {}, 72);  // full racks
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const ClusterSummary s = cluster->Summarize();
  EXPECT_EQ(s.nvlink_domains, 2);
  EXPECT_EQ(s.hosts, 36);
  EXPECT_EQ(s.nics, 144);
  EXPECT_EQ(s.cpus, 72);
  EXPECT_EQ(s.nvswitch_chips, 36);
  EXPECT_EQ(s.scalable_units, 1);
  EXPECT_EQ(s.leaf_switches, 8);
  EXPECT_EQ(s.spine_switches, 4);
  EXPECT_EQ(s.core_switches, 0);
  EXPECT_EQ(s.tiers, 2);
  // Dense leaf ids in physical order: 0,1 | 4,5 -> 2,3 | 9,10 -> 4,5 | ...
  EXPECT_EQ(cluster->LeafOfNic(0), 0);       // tray 0 rail 0: slot 0
  EXPECT_EQ(cluster->LeafOfNic(35 * 4), 1);  // tray 35 rail 0: slot 35
  EXPECT_EQ(cluster->LeafOfNic(1), 2);       // tray 0 rail 1: slot 144
  EXPECT_EQ(cluster->LeafOfNic(35 * 4 + 3), 7);
}

TEST(ClusterCountsTest, Gb200PartialRackCountIsOneDomain) {
  // 36 GPUs = 9 trays of one NVL72 rack: below one domain, so only a
  // multiple of gpus_per_node (4) is required, and no fabric is built.
  auto cluster = Cluster::Build(Load("gb200-nvl72"), 36);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  EXPECT_EQ(cluster->num_nvlink_domains(), 1);
  EXPECT_EQ(cluster->num_hosts(), 9);
  EXPECT_EQ(cluster->tiers(), 0);
}

TEST(ClusterCountsTest, OneLeafNeedsNoSpine) {
  // 2-node SUs: 2 hosts x 8 rails = 16 NIC ports fit one 32-port leaf.
  System s = Load("dgx-h100");
  s.mutable_scale_out()->set_nodes_per_su(2);
  auto cluster = Cluster::Build(s, 16);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  EXPECT_EQ(cluster->tiers(), 1);
  EXPECT_EQ(cluster->CountOf(VertexKind::kLeaf), 1);
  EXPECT_EQ(cluster->CountOf(VertexKind::kSpine), 0);
  EXPECT_EQ(cluster->PathTier(0, 9), Tier::kLeaf);
  EXPECT_EQ(cluster->Route(0, 9).size(), 4u);
  // 8 GPUs per side x 50 GB/s NIC; no upper tier.
  EXPECT_DOUBLE_EQ(cluster->BisectionGbS(), 400);
}

TEST(ClusterCountsTest, TinyThreeTierInstance) {
  auto cluster = Cluster::Build(TinyThreeTier(), 64);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const ClusterSummary s = cluster->Summarize();  // see TinyThreeTier()
  EXPECT_EQ(s.leaf_switches, 16);
  EXPECT_EQ(s.pods, 4);
  EXPECT_EQ(s.spine_switches, 16);
  EXPECT_EQ(s.core_switches, 8);
  EXPECT_EQ(s.tiers, 3);
}

// --- Vertices and edges
// --------------------------------------------------------

TEST(ClusterLinkTest, VertexNumberingIsKindByKind) {
  auto cluster = Cluster::Build(Load("dgx-h100"), 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const Cluster& c = *cluster;
  // 256 GPUs, 32 NvSwitches, 256 NICs, 8 leaves, 4 spines, 0 cores, 64 CPUs.
  EXPECT_EQ(c.num_vertices(), 256 + 32 + 256 + 8 + 4 + 64);
  EXPECT_EQ(c.vertex(17).kind, VertexKind::kGpu);
  EXPECT_EQ(c.vertex(17).index, 17);
  EXPECT_EQ(c.VertexOf(VertexKind::kNvSwitch, 0), 256);
  EXPECT_EQ(c.VertexOf(VertexKind::kNic, 0), 288);
  EXPECT_EQ(c.VertexOf(VertexKind::kLeaf, 0), 544);
  EXPECT_EQ(c.VertexOf(VertexKind::kCpu, 63), 256 + 32 + 256 + 8 + 4 + 63);
  EXPECT_EQ(c.HostOf(13), 1);
  EXPECT_EQ(c.DomainOf(13), 1);
  EXPECT_EQ(c.LocalIndexOf(13), 5);
  EXPECT_EQ(c.num_gpus(), 256);
  EXPECT_EQ(c.domain_gpus(), 8);
  EXPECT_EQ(c.gpus_per_node(), 8);
}

TEST(ClusterLinkTest, CopiesAreDeepAndMovesKeepTheGraph) {
  auto cluster = Cluster::Build(Load("dgx-h100"), 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  // The Boost graph holds the same edges as link().
  EXPECT_EQ(static_cast<int>(boost::num_edges(cluster->graph())),
            cluster->num_edges());
  EXPECT_EQ(static_cast<int>(boost::num_vertices(cluster->graph())),
            cluster->num_vertices());
  Cluster copy = *cluster;
  EXPECT_NE(&copy.graph(), &cluster->graph());
  EXPECT_EQ(copy.ToDot(), cluster->ToDot());
  const Cluster::Graph* graph = &copy.graph();
  Cluster moved = std::move(copy);
  EXPECT_EQ(&moved.graph(), graph);  // O(1): the graph itself is not copied
  EXPECT_EQ(moved.Route(0, 9), cluster->Route(0, 9));
}

TEST(ClusterLinkTest, DgxH100BandwidthsPerClass) {
  auto cluster = Cluster::Build(Load("dgx-h100"), 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const Cluster& c = *cluster;
  // NVLink 18 x 25 = 450; host and GPU-NIC: PCIe Gen5 x16 63 (pcie host);
  // NIC-leaf 400 / 8 = 50; leaf-spine 32 up / 4 spines = 8 cables x 50.
  const std::map<LinkClass, double> expected = {{LinkClass::kNvlink, 450},
                                                {LinkClass::kHost, 63},
                                                {LinkClass::kPcie, 63},
                                                {LinkClass::kNicLeaf, 50},
                                                {LinkClass::kLeafSpine, 400}};
  std::map<LinkClass, int> seen;
  for (EdgeId e = 0; e < c.num_edges(); ++e) {
    const Link& l = c.link(e);
    ++seen[l.link_class];
    EXPECT_DOUBLE_EQ(l.bandwidth_gb_s, expected.at(l.link_class))
        << LinkClassName(l.link_class);
    // Edges pair up: e ^ 1 is the same cable the other way.
    const Link& back = c.link(Cluster::Reverse(e));
    EXPECT_EQ(back.src, l.dst);
    EXPECT_EQ(back.dst, l.src);
    EXPECT_EQ(back.link_class, l.link_class);
    EXPECT_EQ(back.bandwidth_gb_s, l.bandwidth_gb_s);
  }
  // Directed edges: 256 x 2 for each GPU class and NIC-leaf; 8 x 4 x 2.
  EXPECT_EQ(seen[LinkClass::kNvlink], 512);
  EXPECT_EQ(seen[LinkClass::kHost], 512);
  EXPECT_EQ(seen[LinkClass::kPcie], 512);
  EXPECT_EQ(seen[LinkClass::kNicLeaf], 512);
  EXPECT_EQ(seen[LinkClass::kLeafSpine], 64);
  EXPECT_EQ(seen.count(LinkClass::kSpineCore), 0u);
  // GPU j of a host attaches to CPU j * 2 / 8: GPU 13 (host 1, j 5) -> 3.
  bool found = false;
  for (EdgeId e = 0; e < c.num_edges(); ++e) {
    if (c.link(e).src == 13 && c.link(e).link_class == LinkClass::kHost) {
      EXPECT_EQ(c.link(e).dst, c.VertexOf(VertexKind::kCpu, 3));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ClusterLinkTest, DgxB200ThreeTierAggregatesParallelCables) {
  // 16 SU: a 3-tier leaf has one cable to each of its pod's 32 spines (50
  // GB/s); a spine spreads 32 up ports over ceil(4 pods x 32 / 64) = 2 cores
  // of its group: 16 cables x 50 = 800 GB/s.
  auto cluster = Cluster::Build(Load("dgx-b200"), 4096);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  for (EdgeId e = 0; e < cluster->num_edges(); ++e) {
    const Link& l = cluster->link(e);
    if (l.link_class == LinkClass::kLeafSpine) {
      ASSERT_EQ(l.cables, 1);
      ASSERT_DOUBLE_EQ(l.bandwidth_gb_s, 50);
    } else if (l.link_class == LinkClass::kSpineCore) {
      ASSERT_EQ(l.cables, 16);
      ASSERT_DOUBLE_EQ(l.bandwidth_gb_s, 800);
    } else if (l.link_class == LinkClass::kNvlink) {
      ASSERT_DOUBLE_EQ(l.bandwidth_gb_s, 900);  // 18 x 50
    }
  }
}

TEST(ClusterLinkTest, Gb200GpuNicEdgeIsNicLineRate) {
  // NVLink-C2C host: no PCIe figure in the system, so the GPU-NIC edge is
  // the NIC line rate 400 / 8 = 50 GB/s; the host edge is C2C 450 GB/s.
  auto cluster = Cluster::Build(Load("gb200-nvl72"), 144);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  for (EdgeId e = 0; e < cluster->num_edges(); ++e) {
    const Link& l = cluster->link(e);
    if (l.link_class == LinkClass::kPcie) {
      EXPECT_DOUBLE_EQ(l.bandwidth_gb_s, 50);
    } else if (l.link_class == LinkClass::kHost) {
      EXPECT_DOUBLE_EQ(l.bandwidth_gb_s, 450);
    }
  }
}

TEST(ClusterLinkTest, LatenciesComeFromTheTablePerClass) {
  const LinkLatencies latencies{.nvlink_us = 0.1,
                                .host_us = 0.2,
                                .pcie_us = 0.3,
                                .nic_leaf_us = 0.4,
                                .leaf_spine_us = 0.5,
                                .spine_core_us = 0.6};
  auto cluster = Cluster::Build(TinyThreeTier(), 64, latencies);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  std::set<LinkClass> classes;
  for (EdgeId e = 0; e < cluster->num_edges(); ++e) {
    const Link& l = cluster->link(e);
    classes.insert(l.link_class);
    EXPECT_EQ(l.latency_us, latencies.ForClass(l.link_class));
  }
  EXPECT_EQ(classes.size(), static_cast<size_t>(kNumLinkClasses));
  EXPECT_EQ(LinkLatencies().ForClass(LinkClass::kSpineCore), 0);
}

// --- Routes
// --------------------------------------------------------------------

TEST(ClusterRouteTest, TiersOnDgxB200ThreeTier) {
  // 4096 GPUs = 16 SU, pods of 32 leaves = 4 SU = 1024 GPUs.
  auto cluster = Cluster::Build(Load("dgx-b200"), 4096);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const Cluster& c = *cluster;
  // Same node: GPU -> NvSwitch -> GPU.
  EXPECT_EQ(c.PathTier(0, 7), Tier::kNvlink);
  EXPECT_EQ(c.Route(0, 7).size(), 2u);
  // Hosts 0 and 1, rail 0, SU 0: slots 0 and 1 of leaf 0.
  EXPECT_EQ(c.PathTier(0, 8), Tier::kLeaf);
  EXPECT_EQ(c.Route(0, 8).size(), 4u);
  // Rail 0 (leaf 0) to rail 1 (leaf 1).
  EXPECT_EQ(c.PathTier(0, 9), Tier::kSpine);
  EXPECT_EQ(c.Route(0, 9).size(), 6u);
  // Same rail, SU 0 vs SU 1 (host 32, leaf 8): same pod.
  EXPECT_EQ(c.PathTier(0, 256), Tier::kSpine);
  // Host 128 is in SU 4, leaf 32, pod 1.
  EXPECT_EQ(c.PathTier(0, 1024), Tier::kCore);
  EXPECT_EQ(c.Route(0, 1024).size(), 8u);
  EXPECT_EQ(c.PathTier(4095, 0), Tier::kCore);
  // Nothing to cross.
  EXPECT_TRUE(c.Route(5, 5).empty());
  EXPECT_EQ(c.PathTier(5, 5), Tier::kNvlink);
}

TEST(ClusterRouteTest, TinyThreeTierRoutesAreShortestConnectedPaths) {
  auto cluster = Cluster::Build(TinyThreeTier(), 64);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const Cluster& c = *cluster;
  std::map<Tier, int> tiers;
  for (int src = 0; src < 64; ++src) {
    const std::vector<int> hops = HopsFrom(c, src);
    for (int dst = 0; dst < 64; ++dst) {
      if (src == dst) continue;
      ExpectConnectedPath(c, src, dst);
      ASSERT_EQ(static_cast<int>(c.Route(src, dst).size()), hops[dst])
          << src << " -> " << dst;
      ++tiers[c.PathTier(src, dst)];
    }
  }
  EXPECT_EQ(tiers.size(), 4u);  // every tier occurs
}

TEST(ClusterRouteTest, DgxB200ThreeTierRoutesAreShortest) {
  // Sampled sources, every destination, against BFS over the whole graph.
  auto cluster = Cluster::Build(Load("dgx-b200"), 4096);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const Cluster& c = *cluster;
  for (int src : {0, 9, 255, 1031, 2500, 4095}) {
    const std::vector<int> hops = HopsFrom(c, src);
    for (int dst = 0; dst < 4096; dst += 7) {
      if (src == dst) continue;
      ASSERT_EQ(static_cast<int>(c.Route(src, dst).size()), hops[dst])
          << src << " -> " << dst;
    }
  }
}

TEST(ClusterRouteTest, Gb200ThreeTierRoutesAreShortestWithoutRelays) {
  // 4 SU = 2304 GPUs: 4 x 18 = 72 leaves > 64, pods of 32 leaves, so SU 1
  // (leaves 18..35) straddles pods 0 and 1. Route() never relays through
  // another GPU; compare against BFS over the paths that do not either.
  auto cluster = Cluster::Build(Load("gb200-nvl72"), 2304);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const Cluster& c = *cluster;
  EXPECT_EQ(c.tiers(), 3);
  for (int src : {0, 300, 700, 1151, 2303}) {
    const std::vector<int> hops = NetworkHopsFrom(c, src);
    for (int dst = 0; dst < 2304; dst += 5) {
      if (src == dst) continue;
      ExpectConnectedPath(c, src, dst);
      ASSERT_EQ(static_cast<int>(c.Route(src, dst).size()), hops[dst])
          << src << " -> " << dst;
    }
  }
}

TEST(ClusterRouteTest, TwoNicsPerGpuPickTheSharedLeaf) {
  // 16 NICs per node = 2 per GPU: GPU j owns rails 2j, 2j+1; a full SU has
  // 32 x 16 = 512 ports = 16 leaves, leaf r = rail r.
  System s = Load("dgx-h100");
  s.mutable_nic()->set_per_node(16);
  auto cluster = Cluster::Build(s, 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const Cluster& c = *cluster;
  EXPECT_EQ(c.nics_per_gpu(), 2);
  EXPECT_EQ(c.CountOf(VertexKind::kLeaf), 16);
  EXPECT_EQ(c.PathTier(0, 8), Tier::kLeaf);   // both on rails 0, 1
  EXPECT_EQ(c.PathTier(0, 9), Tier::kSpine);  // rails 0, 1 vs 2, 3
  for (int src : {0, 77, 255}) {
    const std::vector<int> hops = HopsFrom(c, src);
    for (int dst = 0; dst < 256; ++dst) {
      if (src == dst) continue;
      ExpectConnectedPath(c, src, dst);
      ASSERT_EQ(static_cast<int>(c.Route(src, dst).size()), hops[dst]);
    }
  }
  // 128 GPUs x 2 NICs x 50 GB/s = 12800; leaf-spine 16 x 32 x 50 / 2 = 12800.
  EXPECT_DOUBLE_EQ(c.BisectionGbS(), 12800);
}

TEST(ClusterRouteTest, RoutesAreDeterministic) {
  const System b200 = Load("dgx-b200");
  auto a = Cluster::Build(b200, 4096);
  auto b = Cluster::Build(b200, 4096);
  ASSERT_TRUE(a.has_value() && b.has_value());
  for (int src = 0; src < 4096; src += 97) {
    for (int dst = 4095; dst >= 0; dst -= 89) {
      EXPECT_EQ(a->Route(src, dst), b->Route(src, dst));
      EXPECT_EQ(a->Route(src, dst), a->Route(src, dst));
    }
  }
}

TEST(ClusterRouteTest, EcmpSpineIsSplitMix64OfThePair) {
  // Regression guard for the fixed hash (never std::hash): on one H100 SU
  // (4 spines) route 0 -> 9 goes up to spine splitmix64(0 << 32 | 9) % 4.
  auto cluster = Cluster::Build(Load("dgx-h100"), 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  for (int dst : {9, 10, 17, 100, 255}) {
    const std::vector<EdgeId> path = cluster->Route(0, dst);
    ASSERT_EQ(path.size(), 6u);
    const int spine =
        static_cast<int>(SplitMix64(static_cast<uint64_t>(dst)) % 4);
    EXPECT_EQ(cluster->link(path[2]).dst,
              cluster->VertexOf(VertexKind::kSpine, spine));
  }
}

TEST(ClusterRouteTest, EcmpSpreadsOverEverySpineAndCore) {
  // Two tiers: 2 SU of DGX B200 = 8 spines; cross-rail pairs.
  auto two = Cluster::Build(Load("dgx-b200"), 512);
  ASSERT_TRUE(two.has_value()) << two.error().message;
  std::map<VertexId, int> per_spine;
  for (int src = 0; src < 512; src += 3) {
    for (int dst = 1; dst < 512; dst += 8) {  // rail 1 GPUs
      if (two->PathTier(src, dst) != Tier::kSpine) continue;
      ++per_spine[two->link(two->Route(src, dst)[2]).dst];
    }
  }
  ASSERT_EQ(per_spine.size(), 8u);
  int total = 0;
  for (const auto& [spine, n] : per_spine) total += n;
  for (const auto& [spine, n] : per_spine) {
    EXPECT_GT(n, total / 8 / 2) << "spine vertex " << spine;  // > half the mean
  }
  // Three tiers: 16 SU, pod 0 -> pod 2 pairs reach all 64 cores.
  auto three = Cluster::Build(Load("dgx-b200"), 4096);
  ASSERT_TRUE(three.has_value()) << three.error().message;
  std::set<VertexId> cores;
  for (int src = 0; src < 1024; src += 3) {
    for (int dst = 2048; dst < 3072; dst += 37) {
      const std::vector<EdgeId> path = three->Route(src, dst);
      ASSERT_EQ(path.size(), 8u);
      cores.insert(three->link(path[3]).dst);
    }
  }
  EXPECT_EQ(cores.size(), 64u);
}

// --- Bisection
// -----------------------------------------------------------------

TEST(ClusterBisectionTest, DgxH100OneNodeIsHalfTheNvlink) {
  // 4 GPUs per side x 18 x 25 GB/s.
  auto cluster = Cluster::Build(Load("dgx-h100"), 8);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  EXPECT_DOUBLE_EQ(cluster->Summarize().bisection_gb_s, 1800);
}

TEST(ClusterBisectionTest, DgxH100OneSu) {
  // NIC tier: 128 GPUs x 50 GB/s = 6400; leaf-spine: 8 leaves x 32 up x 50
  // = 12800 one way, half crosses the cut = 6400. min = 6400.
  auto cluster = Cluster::Build(Load("dgx-h100"), 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  EXPECT_DOUBLE_EQ(cluster->BisectionGbS(), 128 * 50);
}

TEST(ClusterBisectionTest, TwoToOneOversubscriptionHalvesIt) {
  // A 64-port leaf cannot split 2:1 exactly, so use 48 ports (edited copy):
  // down = 48 x 2 / 3 = 32, up = 16; an SU is 256 / 32 = 8 leaves;
  // leaf-spine 8 x 16 x 50 = 6400 one way, / 2 = 3200 = half of 6400.
  System s = Load("dgx-h100");
  s.mutable_scale_out()->set_switch_radix(48);
  s.mutable_scale_out()->set_oversubscription(2);
  auto cluster = Cluster::Build(s, 256);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  EXPECT_EQ(cluster->Summarize().leaf_down_ports, 32);
  EXPECT_EQ(cluster->Summarize().leaf_up_ports, 16);
  EXPECT_EQ(cluster->CountOf(VertexKind::kSpine), 3);  // ceil(8 x 16 / 48)
  EXPECT_DOUBLE_EQ(cluster->BisectionGbS(), 3200);
  // The same 48-port switch at 1:1 (down = up = 24): ceil(256 / 24) = 11
  // leaves, 11 x 24 x 50 / 2 = 6600 > 6400, so the NICs bind: 6400.
  s.mutable_scale_out()->set_oversubscription(1);
  auto full = Cluster::Build(s, 256);
  ASSERT_TRUE(full.has_value()) << full.error().message;
  EXPECT_DOUBLE_EQ(full->BisectionGbS(), 6400);
  // 64 ports at 2:1: down = floor(128 / 3) = 42, up = 22, ceil(256 / 42) = 7
  // leaves: 7 x 22 x 50 / 2 = 3850.
  s.mutable_scale_out()->set_switch_radix(64);
  s.mutable_scale_out()->set_oversubscription(2);
  auto floor42 = Cluster::Build(s, 256);
  ASSERT_TRUE(floor42.has_value()) << floor42.error().message;
  EXPECT_DOUBLE_EQ(floor42->BisectionGbS(), 3850);
}

TEST(ClusterBisectionTest, Gb200TwoRacksIsNicBound) {
  // NIC tier: 72 GPUs x 50 = 3600; leaf-spine 8 x 32 x 50 / 2 = 6400.
  auto cluster = Cluster::Build(Load("gb200-nvl72"), 144);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  EXPECT_DOUBLE_EQ(cluster->BisectionGbS(), 3600);
}

TEST(ClusterBisectionTest, DgxB200ThreeTierIsNonBlocking) {
  // 16 SU: NIC 2048 x 50 = 102400; leaf-spine 128 x 32 x 50 / 2 = 102400;
  // spine-core 128 x 32 x 50 / 2 = 102400.
  auto cluster = Cluster::Build(Load("dgx-b200"), 4096);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  EXPECT_DOUBLE_EQ(cluster->BisectionGbS(), 102400);
}

// --- DOT
// -----------------------------------------------------------------------

TEST(ClusterDotTest, OneNodePerVertexOneLinePerEdge) {
  // 16 H100: 16 GPUs, 2 NvSwitches, 16 NICs, 8 leaves (rail r -> leaf r),
  // ceil(8 x 32 / 64) = 4 spines, 4 CPUs = 50 vertices; cables 16 x 4 (NVLink,
  // host, PCIe, NIC-leaf) + 8 x 4 leaf-spine = 96 = 192 directed edges.
  const System h100 = Load("dgx-h100");
  auto cluster = Cluster::Build(h100, 16);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message;
  const std::string dot = cluster->ToDot();
  int nodes = 0, edges = 0;
  size_t at = 0;
  while ((at = dot.find("shape=", at)) != std::string::npos) ++nodes, ++at;
  at = 0;
  while ((at = dot.find(" -> ", at)) != std::string::npos) ++edges, ++at;
  EXPECT_EQ(nodes, 50);
  EXPECT_EQ(edges, 192);
  EXPECT_EQ(dot.rfind("digraph cluster {", 0), 0u);
  EXPECT_NE(dot.find("v0 [label=\"gpu 0\" shape=box];"), std::string::npos);
  EXPECT_NE(dot.find("v16 [label=\"nvswitch 0 (4 chips)\" shape=hexagon];"),
            std::string::npos);
  EXPECT_NE(dot.find("v0 -> v16 [label=\"nvlink 450 GB/s\"];"),
            std::string::npos);
  EXPECT_NE(dot.find("leaf-spine 400 GB/s"), std::string::npos);
  EXPECT_EQ(dot, Cluster::Build(h100, 16)->ToDot());
}

// --- Errors
// --------------------------------------------------------------------

std::string BuildError(const System& system, int gpus,
                       int gpus_per_domain = 0) {
  auto cluster = Cluster::Build(system, gpus, {}, gpus_per_domain);
  EXPECT_FALSE(cluster.has_value()) << gpus << " GPUs built";
  return cluster.has_value() ? "" : cluster.error().message;
}

TEST(ClusterErrorTest, NonPositiveGpuCount) {
  EXPECT_EQ(BuildError(Load("dgx-h100"), 0), "--gpus: must be > 0, got 0");
  EXPECT_EQ(BuildError(Load("dgx-h100"), -8), "--gpus: must be > 0, got -8");
}

TEST(ClusterErrorTest, NotAMultipleOfTheNode) {
  EXPECT_EQ(BuildError(Load("dgx-h100"), 12),
            "--gpus: 12 is not a multiple of dgx-h100 gpus_per_node = 8");
}

TEST(ClusterCountsTest, PartialLastDomainIsAllowed) {
  // 128 GB200 = 32 trays packed into full racks: rack 0 is full (18 trays =
  // 72 GPUs), rack 1 holds the other 14 trays (56 GPUs); GPU 72 is the first
  // of rack 1.
  auto c = Cluster::Build(Load("gb200-nvl72"), 128, {}, 72);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->num_nvlink_domains(), 2);
  EXPECT_EQ(c->DomainOf(71), 0);
  EXPECT_EQ(c->DomainOf(72), 1);
  EXPECT_EQ(c->PathTier(0, 71), Tier::kNvlink);
  EXPECT_NE(c->PathTier(0, 72), Tier::kNvlink);
}

// Default on NVL72: a 128-GPU job gets Slurm segments of 16 trays (NVIDIA's
// block-scheduling recommendation for >= 128 GPUs, cluster.h), 64 GPUs per
// rack; a 32-GPU job gets segments of 4 trays, 4 to a rack (64 GPUs); an
// 8-GPU job segments of 1 tray, all 18 (72 GPUs). 8-GPU domains use all 8.
TEST(ClusterCountsTest, Nvl72JobsUseWholeSlurmSegmentsPerRack) {
  auto big = Cluster::Build(Load("gb200-nvl72"), 128);
  ASSERT_TRUE(big) << big.error().message;
  EXPECT_EQ(big->domain_gpus(), 64);
  EXPECT_EQ(big->num_nvlink_domains(), 2);
  EXPECT_EQ(big->DomainOf(63), 0);
  EXPECT_EQ(big->DomainOf(64), 1);
  EXPECT_EQ(Cluster::Build(Load("gb200-nvl72"), 32)->domain_gpus(), 64);
  EXPECT_EQ(Cluster::Build(Load("gb200-nvl72"), 8)->domain_gpus(), 72);
  EXPECT_EQ(Cluster::Build(Load("dgx-h100"), 256)->domain_gpus(), 8);
  EXPECT_EQ(BuildError(Load("gb200-nvl72"), 128, 70),
            "--gpus-per-domain: 70 must be a positive multiple of "
            "gb200-nvl72 gpus_per_node = 4 and at most nvlink_domain_gpus = "
            "72");
}

// A job of whole racks (k x 72) gets whole domains; --gpus-per-domain still
// chooses segments. A job smaller than a node holds part of one host.
TEST(ClusterCountsTest, WholeRacksAndPartsOfANode) {
  for (int racks : {1, 2, 4}) {
    auto c = Cluster::Build(Load("gb300-nvl72"), 72 * racks);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->domain_gpus(), 72);
    EXPECT_EQ(c->num_nvlink_domains(), racks);
  }
  auto segments = Cluster::Build(Load("gb300-nvl72"), 144, {}, 64);
  ASSERT_TRUE(segments) << segments.error().message;
  EXPECT_EQ(segments->num_nvlink_domains(), 3);  // 64 + 64 + 16
  for (int gpus : {1, 2, 4}) {
    auto part = Cluster::Build(Load("dgx-h100"), gpus);
    ASSERT_TRUE(part) << gpus << ": " << part.error().message;
    EXPECT_EQ(part->num_nvlink_domains(), 1);
    EXPECT_EQ(part->PathTier(0, gpus - 1), Tier::kNvlink);
  }
  EXPECT_EQ(BuildError(Load("dgx-h100"), 3),
            "--gpus: 3 is not a multiple of dgx-h100 gpus_per_node = 8");
}

TEST(ClusterErrorTest, FabricTooSmallForTwoTiers) {
  // max_tiers 2 holds 64 leaves = 8 SU = 256 hosts = 2048 GPUs; 4096 GPUs
  // need 16 SU x 8 = 128 leaves.
  System s = Load("dgx-h100");
  s.mutable_scale_out()->set_max_tiers(2);
  EXPECT_EQ(BuildError(s, 4096),
            "dgx-h100: scale_out: fabric too small: 4096 GPUs need 128 leaf "
            "switches; 2 tiers of 64-port switches hold at most 64 leaves = "
            "2048 GPUs");
  EXPECT_TRUE(Cluster::Build(s, 2048).has_value());
}

TEST(ClusterErrorTest, FabricTooSmallForThreeTiers) {
  // Three tiers: at most 64 pods x 32 leaves = 2048 leaves = 256 SU = 65536
  // GPUs; 131072 GPUs need 512 SU x 8 = 4096 leaves.
  const std::string error = BuildError(Load("dgx-h100"), 131072);
  EXPECT_NE(error.find("fabric too small"), std::string::npos) << error;
  EXPECT_NE(error.find("dgx-h100"), std::string::npos) << error;
  EXPECT_NE(error.find("131072 GPUs"), std::string::npos) << error;
  EXPECT_NE(error.find("at most 2048 leaves = 65536 GPUs"), std::string::npos)
      << error;
}

TEST(ClusterErrorTest, AboveOneMillionIsRefusedAtOnce) {
  EXPECT_EQ(BuildError(Load("dgx-h100"), 10'000'000),
            "--gpus: 10000000 is above the limit of 1000000");
}

TEST(ClusterErrorTest, NicsNotWholePerGpu) {
  System s = Load("dgx-h100");
  s.mutable_nic()->set_per_node(12);
  EXPECT_EQ(BuildError(s, 8),
            "dgx-h100: nic.per_node: 12 is not a positive multiple of "
            "gpus_per_node = 8 (each GPU owns whole NICs)");
}

TEST(ClusterErrorTest, OversubscriptionMustLeaveUpPorts) {
  System s = Load("dgx-h100");
  s.mutable_scale_out()->set_oversubscription(0);
  EXPECT_EQ(BuildError(s, 16),
            "dgx-h100: scale_out.oversubscription: must leave a 64-port leaf "
            "at least one down and one up port");
  // One domain builds no fabric, so the fabric fields are not needed.
  EXPECT_TRUE(Cluster::Build(s, 8).has_value());
}

}  // namespace
}  // namespace moesim::topology
