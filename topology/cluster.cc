#include "topology/cluster.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string>
#include <utility>

#include "util/check.h"

namespace moesim::topology {
namespace {

// Refused before anything is sized from it.
constexpr int kMaxGpus = 1'000'000;

void Check(bool condition, const char* what,
           std::source_location where = std::source_location::current()) {
  util::CheckOrDie(condition, what, where);
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t PairHash(int src, int dst) {
  return SplitMix64((static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) |
                    static_cast<uint32_t>(dst));
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string Num(double x) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), x);
  return std::string(buffer, end);
}

// Cable c of unit `unit` (each unit has `ports` cables) is cable
// unit*ports + c of one global sequence, which goes to target (that index) %
// targets. Returns how many of the unit's cables reach `target`: ports /
// targets, plus one for ports % targets of the targets. Every target then
// receives floor or ceil of units*ports/targets cables in all.
int SpreadCables(int unit, int ports, int target, int targets) {
  const int64_t offset =
      ((target - static_cast<int64_t>(unit) * ports) % targets + targets) %
      targets;
  return ports / targets + (offset < ports % targets ? 1 : 0);
}

// The fabric, planned before any vertex exists.
struct FabricPlan {
  int tiers = 0;
  int radix = 0;
  int down = 0;
  int up = 0;
  int leaves_per_su = 0;
  int scalable_units = 0;
  int leaves = 0;
  int spines = 0;
  int cores = 0;
  int pods = 0;
  int leaves_per_pod = 1;
  int cores_per_group = 0;
  int leaf_fanout = 0;
  std::vector<int32_t> leaf_of_nic;
};

// Leaves the rail-by-rail assignment builds for `hosts` hosts: full SUs,
// plus for a partial SU of h hosts the union over rails r of the leaf ranges
// [r*P / down, (r*P + h - 1) / down] (ascending in r).
int64_t LeavesFor(int64_t hosts, const FabricPlan& plan, int nodes_per_su,
                  int nics_per_node) {
  int64_t leaves = hosts / nodes_per_su * plan.leaves_per_su;
  const int64_t h = hosts % nodes_per_su;
  if (h == 0) return leaves;
  int64_t last = -1;
  for (int64_t r = 0; r < nics_per_node; ++r) {
    const int64_t lo = r * nodes_per_su / plan.down;
    const int64_t hi = (r * nodes_per_su + h - 1) / plan.down;
    leaves += hi - std::max(lo, last + 1) + 1;
    last = hi;
  }
  return leaves;
}

// Dense leaf of every NIC (host-major, rail-minor), in physical leaf order.
std::vector<int32_t> AssignLeaves(int hosts, int nics_per_node,
                                  int nodes_per_su, FabricPlan& plan) {
  const int64_t physical = CeilDiv(hosts, nodes_per_su) * plan.leaves_per_su;
  std::vector<char> used(physical, 0);
  std::vector<int32_t> leaf_of_nic(static_cast<size_t>(hosts) * nics_per_node);
  for (int n = 0; n < hosts; ++n) {
    for (int r = 0; r < nics_per_node; ++r) {
      const int64_t slot =
          static_cast<int64_t>(r) * nodes_per_su + n % nodes_per_su;
      const int64_t leaf =
          static_cast<int64_t>(n / nodes_per_su) * plan.leaves_per_su +
          slot / plan.down;
      leaf_of_nic[static_cast<size_t>(n) * nics_per_node + r] =
          static_cast<int32_t>(leaf);
      used[leaf] = 1;
    }
  }
  std::vector<int32_t> dense(physical, -1);
  int next = 0;
  for (int64_t leaf = 0; leaf < physical; ++leaf) {
    if (used[leaf]) dense[leaf] = next++;
  }
  for (int32_t& leaf : leaf_of_nic) leaf = dense[leaf];
  plan.leaves = next;
  return leaf_of_nic;
}

util::Result<void> CheckNodeFields(const System& s) {
  auto fail = [&](std::string_view field, const std::string& rule) {
    return util::Fail(s.name() + ": " + std::string(field) + ": " + rule);
  };
  auto positive = [](double x) { return x > 0 && std::isfinite(x); };
  const int g = s.gpus_per_node();
  if (g <= 0) return fail("gpus_per_node", "must be > 0");
  if (s.nvlink_domain_gpus() <= 0 || s.nvlink_domain_gpus() % g != 0) {
    return fail(
        "nvlink_domain_gpus",
        "must be a positive multiple of gpus_per_node = " + std::to_string(g));
  }
  if (s.nvlink().links_per_gpu() <= 0)
    return fail("nvlink.links_per_gpu", "must be > 0");
  if (!positive(s.nvlink().link_gb_s()))
    return fail("nvlink.link_gb_s", "must be > 0");
  if (s.nic().per_node() <= 0 || s.nic().per_node() % g != 0) {
    return fail("nic.per_node",
                std::to_string(s.nic().per_node()) +
                    " is not a positive multiple of gpus_per_node = " +
                    std::to_string(g) + " (each GPU owns whole NICs)");
  }
  if (!positive(s.nic().gbit_s())) return fail("nic.gbit_s", "must be > 0");
  if (!positive(s.host_link().gb_s()))
    return fail("host_link.gb_s", "must be > 0");
  if (s.host_link().cpus_per_node() <= 0)
    return fail("host_link.cpus_per_node", "must be > 0");
  return {};
}

util::Result<void> CheckGpuRange(int gpus) {
  if (gpus <= 0)
    return util::Fail("--gpus: must be > 0, got " + std::to_string(gpus));
  if (gpus > kMaxGpus) {
    return util::Fail("--gpus: " + std::to_string(gpus) +
                      " is above the limit of " + std::to_string(kMaxGpus));
  }
  return {};
}

// REQUIRES: CheckNodeFields(s) passed.
util::Result<void> CheckGpuMultiple(const System& s, int gpus) {
  const std::string n = std::to_string(gpus);
  // A job smaller than a node takes part of one host (1, 2 or 4 GPUs of an
  // 8-GPU node: a divisor, so the GPUs it holds sit as a whole node's do).
  if (gpus < s.gpus_per_node() && s.gpus_per_node() % gpus == 0) return {};
  if (gpus % s.gpus_per_node() != 0) {
    return util::Fail("--gpus: " + n + " is not a multiple of " + s.name() +
                      " gpus_per_node = " + std::to_string(s.gpus_per_node()));
  }
  // Whole hosts suffice: a job given 32 trays of NVL72 racks fills rack 0
  // (18 trays) and 14 trays of rack 1; the last domain may be partial.
  return {};
}

// The largest GPU count (whole domains, at most kMaxGpus) whose hosts need
// at most `max_leaves` leaves. Leaves grow with hosts, so binary search.
int MaxGpusFor(int64_t max_leaves, const System& s, const FabricPlan& plan) {
  const int d = s.nvlink_domain_gpus();
  auto fits = [&](int64_t domains) {
    const int64_t hosts = domains * d / s.gpus_per_node();
    return domains == 1 || LeavesFor(hosts, plan, s.scale_out().nodes_per_su(),
                                     s.nic().per_node()) <= max_leaves;
  };
  int64_t lo = 1, hi = kMaxGpus / d;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return static_cast<int>(lo * d);
}

util::Result<FabricPlan> PlanFabric(const System& s, int gpus) {
  const ScaleOut& f = s.scale_out();
  auto fail = [&](std::string_view field, const std::string& rule) {
    return util::Fail(s.name() + ": scale_out." + std::string(field) + ": " +
                      rule);
  };
  if (f.switch_radix() < 2) return fail("switch_radix", "must be >= 2");
  if (!(f.port_gbit_s() > 0 && std::isfinite(f.port_gbit_s())))
    return fail("port_gbit_s", "must be > 0");
  if (f.nodes_per_su() <= 0) return fail("nodes_per_su", "must be > 0");
  if (f.max_tiers() != 2 && f.max_tiers() != 3)
    return fail("max_tiers", "must be 2 or 3");
  const double o = f.oversubscription();
  FabricPlan plan;
  plan.radix = f.switch_radix();
  if (o > 0 && std::isfinite(o)) {
    // 1e-9 absorbs rounding in radix*o/(1+o) for ratios that divide exactly.
    plan.down = static_cast<int>(std::floor(plan.radix * o / (1 + o) + 1e-9));
  }
  plan.up = plan.radix - plan.down;
  if (plan.down < 1 || plan.up < 1) {
    return fail("oversubscription",
                "must leave a " + std::to_string(plan.radix) +
                    "-port leaf at least one down and one up port");
  }
  const int hosts = gpus / s.gpus_per_node();
  const int nics_per_node = s.nic().per_node();
  plan.leaves_per_su = static_cast<int>(CeilDiv(
      static_cast<int64_t>(f.nodes_per_su()) * nics_per_node, plan.down));
  plan.scalable_units = static_cast<int>(CeilDiv(hosts, f.nodes_per_su()));
  const int64_t leaves =
      LeavesFor(hosts, plan, f.nodes_per_su(), nics_per_node);
  const int64_t half = plan.radix / 2;
  const int64_t max_leaves =
      f.max_tiers() >= 3 ? plan.radix * half : plan.radix;
  if (leaves > max_leaves) {
    const int max_gpus = MaxGpusFor(max_leaves, s, plan);
    return util::Fail(
        s.name() + ": scale_out: fabric too small: " + std::to_string(gpus) +
        " GPUs need " + std::to_string(leaves) + " leaf switches; " +
        std::to_string(f.max_tiers()) + " tiers of " +
        std::to_string(plan.radix) + "-port switches hold at " + "most " +
        std::to_string(max_leaves) + " leaves = " + std::to_string(max_gpus) +
        " GPUs");
  }
  plan.leaf_of_nic = AssignLeaves(hosts, nics_per_node, f.nodes_per_su(), plan);
  Check(plan.leaves == leaves, "leaf assignment matches LeavesFor");
  if (plan.leaves == 1) {
    plan.tiers = 1;
  } else if (plan.leaves <= plan.radix) {
    plan.tiers = 2;
    plan.spines =
        static_cast<int>(CeilDiv(int64_t{plan.leaves} * plan.up, plan.radix));
    plan.leaves_per_pod = plan.leaves;
    plan.leaf_fanout = plan.spines;  // <= up since leaves <= radix
  } else {
    plan.tiers = 3;
    plan.leaves_per_pod = static_cast<int>(half);
    plan.pods = static_cast<int>(CeilDiv(plan.leaves, half));
    plan.spines = plan.pods * plan.up;
    plan.cores_per_group =
        static_cast<int>(CeilDiv(plan.pods * half, plan.radix));
    plan.cores = plan.up * plan.cores_per_group;
    plan.leaf_fanout = plan.up;
  }
  return plan;
}

}  // namespace

std::string_view VertexKindName(VertexKind kind) {
  static constexpr std::array<std::string_view, kNumVertexKinds> kNames = {
      "gpu", "nvswitch", "nic", "leaf", "spine", "core", "cpu"};
  return kNames[static_cast<int>(kind)];
}

std::string_view LinkClassName(LinkClass link_class) {
  static constexpr std::array<std::string_view, kNumLinkClasses> kNames = {
      "nvlink", "host", "pcie", "nic-leaf", "leaf-spine", "spine-core"};
  return kNames[static_cast<int>(link_class)];
}

std::string_view TierName(Tier tier) {
  static constexpr std::array<std::string_view, 4> kNames = {"nvlink", "leaf",
                                                             "spine", "core"};
  return kNames[static_cast<int>(tier)];
}

double LinkLatencies::ForClass(LinkClass link_class) const {
  static constexpr std::array<double LinkLatencies::*, kNumLinkClasses>
      kFields = {&LinkLatencies::nvlink_us,     &LinkLatencies::host_us,
                 &LinkLatencies::pcie_us,       &LinkLatencies::nic_leaf_us,
                 &LinkLatencies::leaf_spine_us, &LinkLatencies::spine_core_us};
  return this->*kFields[static_cast<int>(link_class)];
}

static util::Result<int> DomainGpusUsed(const System& system, int gpus,
                                        int requested) {
  const int node = system.gpus_per_node();
  const int domain = system.nvlink_domain_gpus();
  if (requested != 0) {
    if (requested < 0 || requested > domain || requested % node != 0) {
      return util::Fail(
          "--gpus-per-domain: " + std::to_string(requested) +
          " must be a positive multiple of " + system.name() +
          " gpus_per_node = " + std::to_string(node) +
          " and at most nvlink_domain_gpus = " + std::to_string(domain));
    }
    return requested;
  }
  if (domain == node) return domain;
  // A job of whole racks (k x 72 GPUs) is given whole NVLink domains: a
  // Slurm block of all 18 trays per rack.
  if (gpus % domain == 0) return domain;
  // Multi-host domains (NVL72 racks) go to jobs in Slurm topology/block
  // segments; NVIDIA recommends 16 hosts per segment for jobs of 128 or more
  // GPUs, 4 for 32-64 GPUs and 1 below (developer.nvidia.com/blog/?p=116606,
  // "Achieving Peak System and Workload Efficiency on NVIDIA GB200 NVL72 with
  // Slurm Block Scheduling"). A domain holds whole segments: 16 of 18 trays.
  const int segment_hosts = gpus >= 128 ? 16 : gpus >= 32 ? 4 : 1;
  const int domain_hosts = domain / node;
  return std::max(1, domain_hosts / segment_hosts) *
         std::min(segment_hosts, domain_hosts) * node;
}

util::Result<Cluster> Cluster::Build(const System& system, int gpus,
                                     const LinkLatencies& latencies,
                                     int gpus_per_domain) {
  if (auto ok = CheckGpuRange(gpus); !ok) return std::unexpected(ok.error());
  if (auto ok = CheckNodeFields(system); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = CheckGpuMultiple(system, gpus); !ok) {
    return std::unexpected(ok.error());
  }

  Cluster c;
  c.system_name_ = system.name();
  c.gpus_ = gpus;
  c.gpus_per_node_ = system.gpus_per_node();
  auto used = DomainGpusUsed(system, gpus, gpus_per_domain);
  if (!used) return std::unexpected(used.error());
  c.domain_gpus_ = *used;
  c.nics_per_gpu_ = system.nic().per_node() / c.gpus_per_node_;
  c.hosts_ = static_cast<int>(CeilDiv(gpus, c.gpus_per_node_));
  c.domains_ = static_cast<int>(CeilDiv(gpus, c.domain_gpus_));
  c.cpus_per_node_ = system.host_link().cpus_per_node();
  c.nvswitch_chips_ = system.nvlink().switch_chips();
  c.nvlink_gb_s_ =
      system.nvlink().links_per_gpu() * system.nvlink().link_gb_s();

  FabricPlan plan;
  if (gpus > c.domain_gpus_) {
    auto planned = PlanFabric(system, gpus);
    if (!planned) return std::unexpected(planned.error());
    plan = std::move(*planned);
  }
  c.tiers_ = plan.tiers;
  c.leaf_down_ = plan.down;
  c.leaf_up_ = plan.up;
  c.scalable_units_ = plan.scalable_units;
  c.pods_ = plan.pods;
  c.leaves_per_pod_ = plan.leaves_per_pod;
  c.spine_half_ = plan.radix / 2;
  c.cores_per_group_ = plan.cores_per_group;
  c.leaf_fanout_ = plan.leaf_fanout;
  c.leaf_of_nic_ = std::move(plan.leaf_of_nic);

  const std::array<int, kNumVertexKinds> counts = {
      gpus,        c.domains_, gpus * c.nics_per_gpu_,     plan.leaves,
      plan.spines, plan.cores, c.hosts_ * c.cpus_per_node_};
  for (int k = 0; k < kNumVertexKinds; ++k) {
    c.kind_begin_[k + 1] = c.kind_begin_[k] + counts[k];
  }
  c.graph_.graph = std::make_unique<Graph>(c.num_vertices());
  for (int k = 0; k < kNumVertexKinds; ++k) {
    for (int i = 0; i < counts[k]; ++i) {
      (*c.graph_.graph)[c.kind_begin_[k] + i] =
          Vertex{static_cast<VertexKind>(k), i};
    }
  }
  c.AddNodeCables(system, latencies);
  if (c.tiers_ > 0) {
    c.AddFabricCables(system.scale_out().port_gbit_s() / 8, latencies);
  }
  return c;
}

Cluster::GraphHolder::GraphHolder(const GraphHolder& other)
    : graph(other.graph ? std::make_unique<Graph>(*other.graph) : nullptr) {}

Cluster::GraphHolder& Cluster::GraphHolder::operator=(
    const GraphHolder& other) {
  if (this != &other) {
    graph = other.graph ? std::make_unique<Graph>(*other.graph) : nullptr;
  }
  return *this;
}

EdgeId Cluster::AddCable(VertexId a, VertexId b, LinkClass link_class,
                         int cables, double gb_s_per_cable,
                         const LinkLatencies& latencies) {
  const auto id = static_cast<EdgeId>(links_.size());
  const Link up{a,
                b,
                link_class,
                cables,
                cables * gb_s_per_cable,
                latencies.ForClass(link_class)};
  links_.push_back(up);
  links_.push_back(
      Link{b, a, link_class, cables, up.bandwidth_gb_s, up.latency_us});
  boost::add_edge(a, b, EdgeRef{id}, *graph_.graph);
  boost::add_edge(b, a, EdgeRef{id + 1}, *graph_.graph);
  return id;
}

void Cluster::AddNodeCables(const System& system,
                            const LinkLatencies& latencies) {
  // The slot's figure for PCIe hosts; for NVLink-C2C hosts no PCIe figure is
  // given and the NIC line rate (the narrower part) stands for the edge.
  const double gpu_nic_gb_s = system.host_link().kind().starts_with("pcie")
                                  ? system.host_link().gb_s()
                                  : system.nic().gbit_s() / 8;
  gpu_nvswitch_.resize(gpus_);
  gpu_nic_.resize(static_cast<size_t>(gpus_) * nics_per_gpu_);
  links_.reserve(2 * static_cast<size_t>(gpus_) * (2 + 2 * nics_per_gpu_));
  for (int g = 0; g < gpus_; ++g) {
    gpu_nvswitch_[g] = AddCable(g, VertexOf(VertexKind::kNvSwitch, DomainOf(g)),
                                LinkClass::kNvlink, 1, nvlink_gb_s_, latencies);
    const int cpu = HostOf(g) * cpus_per_node_ +
                    LocalIndexOf(g) * cpus_per_node_ / gpus_per_node_;
    AddCable(g, VertexOf(VertexKind::kCpu, cpu), LinkClass::kHost, 1,
             system.host_link().gb_s(), latencies);
    for (int a = 0; a < nics_per_gpu_; ++a) {
      const int nic = g * nics_per_gpu_ + a;
      gpu_nic_[nic] = AddCable(g, VertexOf(VertexKind::kNic, nic),
                               LinkClass::kPcie, 1, gpu_nic_gb_s, latencies);
    }
  }
  if (tiers_ == 0) return;
  const double nic_leaf_gb_s =
      std::min(system.nic().gbit_s(), system.scale_out().port_gbit_s()) / 8;
  nic_leaf_.resize(gpu_nic_.size());
  for (int nic = 0; nic < static_cast<int>(nic_leaf_.size()); ++nic) {
    nic_leaf_[nic] = AddCable(VertexOf(VertexKind::kNic, nic),
                              VertexOf(VertexKind::kLeaf, leaf_of_nic_[nic]),
                              LinkClass::kNicLeaf, 1, nic_leaf_gb_s, latencies);
  }
}

void Cluster::AddFabricCables(double port_gb_s,
                              const LinkLatencies& latencies) {
  const int leaves = CountOf(VertexKind::kLeaf);
  leaf_spine_.resize(static_cast<size_t>(leaves) * leaf_fanout_);
  for (int leaf = 0; leaf < leaves; ++leaf) {
    for (int i = 0; i < leaf_fanout_; ++i) {
      // Two tiers: spine i, cables spread over all spines. Three: spine i of
      // the leaf's pod, one cable.
      const int spine = tiers_ == 3 ? PodOfLeaf(leaf) * leaf_up_ + i : i;
      const int cables =
          tiers_ == 3 ? 1 : SpreadCables(leaf, leaf_up_, i, leaf_fanout_);
      leaf_spine_[static_cast<size_t>(leaf) * leaf_fanout_ + i] =
          AddCable(VertexOf(VertexKind::kLeaf, leaf),
                   VertexOf(VertexKind::kSpine, spine), LinkClass::kLeafSpine,
                   cables, port_gb_s, latencies);
    }
  }
  if (tiers_ < 3) return;
  const int spines = CountOf(VertexKind::kSpine);
  spine_core_.resize(static_cast<size_t>(spines) * cores_per_group_);
  for (int spine = 0; spine < spines; ++spine) {
    const int pod = spine / leaf_up_;
    const int group = spine % leaf_up_;
    for (int c = 0; c < cores_per_group_; ++c) {
      const int cables = SpreadCables(pod, spine_half_, c, cores_per_group_);
      spine_core_[static_cast<size_t>(spine) * cores_per_group_ + c] =
          AddCable(VertexOf(VertexKind::kSpine, spine),
                   VertexOf(VertexKind::kCore, group * cores_per_group_ + c),
                   LinkClass::kSpineCore, cables, port_gb_s, latencies);
    }
  }
}

const Vertex& Cluster::vertex(VertexId v) const {
  Check(v >= 0 && v < num_vertices(), "vertex id in range");
  return (*graph_.graph)[v];
}

const Link& Cluster::link(EdgeId e) const {
  Check(e >= 0 && e < num_edges(), "edge id in range");
  return links_[e];
}

int Cluster::CountOf(VertexKind kind) const {
  const auto k = static_cast<int>(kind);
  return kind_begin_[k + 1] - kind_begin_[k];
}

VertexId Cluster::VertexOf(VertexKind kind, int index) const {
  Check(index >= 0 && index < CountOf(kind), "vertex index in range");
  return kind_begin_[static_cast<int>(kind)] + index;
}

int Cluster::HostOf(int gpu) const {
  Check(gpu >= 0 && gpu < gpus_, "gpu in range");
  return gpu / gpus_per_node_;
}

int Cluster::DomainOf(int gpu) const {
  Check(gpu >= 0 && gpu < gpus_, "gpu in range");
  return gpu / domain_gpus_;
}

int Cluster::LocalIndexOf(int gpu) const {
  Check(gpu >= 0 && gpu < gpus_, "gpu in range");
  return gpu % gpus_per_node_;
}

int Cluster::LeafOfNic(int nic) const {
  Check(nic >= 0 && nic < CountOf(VertexKind::kNic), "nic in range");
  return leaf_of_nic_.empty() ? -1 : leaf_of_nic_[nic];
}

Tier Cluster::NicPairTier(int src_nic, int dst_nic) const {
  const int src_leaf = leaf_of_nic_[src_nic];
  const int dst_leaf = leaf_of_nic_[dst_nic];
  if (src_leaf == dst_leaf) return Tier::kLeaf;
  if (tiers_ < 3 || PodOfLeaf(src_leaf) == PodOfLeaf(dst_leaf)) {
    return Tier::kSpine;
  }
  return Tier::kCore;
}

std::pair<int, int> Cluster::ChooseNics(int src_gpu, int dst_gpu,
                                        uint64_t hash) const {
  const int k = nics_per_gpu_;
  if (k == 1) return {src_gpu, dst_gpu};
  // Several NICs per GPU: the pairs reaching the lowest tier are the
  // shortest; the hash picks one of them.
  std::vector<std::pair<int, int>> best;
  Tier best_tier = Tier::kCore;
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b) {
      const std::pair<int, int> pair{src_gpu * k + a, dst_gpu * k + b};
      const Tier tier = NicPairTier(pair.first, pair.second);
      if (best.empty() || tier < best_tier) {
        best.clear();
        best_tier = tier;
      }
      if (tier == best_tier) best.push_back(pair);
    }
  }
  return best[SplitMix64(hash) % best.size()];
}

Tier Cluster::PathTier(int src_gpu, int dst_gpu) const {
  if (DomainOf(src_gpu) == DomainOf(dst_gpu)) return Tier::kNvlink;
  const auto [src_nic, dst_nic] =
      ChooseNics(src_gpu, dst_gpu, PairHash(src_gpu, dst_gpu));
  return NicPairTier(src_nic, dst_nic);
}

std::vector<EdgeId> Cluster::Route(int src_gpu, int dst_gpu) const {
  std::vector<EdgeId> path;
  if (DomainOf(src_gpu) == DomainOf(dst_gpu)) {
    if (src_gpu != dst_gpu) {
      path = {gpu_nvswitch_[src_gpu], Reverse(gpu_nvswitch_[dst_gpu])};
    }
    return path;
  }
  const uint64_t hash = PairHash(src_gpu, dst_gpu);
  const auto [src_nic, dst_nic] = ChooseNics(src_gpu, dst_gpu, hash);
  const int src_leaf = leaf_of_nic_[src_nic];
  const int dst_leaf = leaf_of_nic_[dst_nic];
  path.reserve(8);
  path.push_back(gpu_nic_[src_nic]);
  path.push_back(nic_leaf_[src_nic]);
  const Tier tier = NicPairTier(src_nic, dst_nic);
  if (tier != Tier::kLeaf) {
    // ECMP: every spine the leaf reaches is on a shortest path, and in three
    // tiers every core of the spine's group.
    const auto fanout = static_cast<uint64_t>(leaf_fanout_);
    const int i = static_cast<int>(hash % fanout);
    auto leaf_up = [&](int leaf) {
      return leaf_spine_[static_cast<size_t>(leaf) * leaf_fanout_ + i];
    };
    path.push_back(leaf_up(src_leaf));
    if (tier == Tier::kCore) {
      const int c = static_cast<int>(hash / fanout % cores_per_group_);
      const int src_spine = PodOfLeaf(src_leaf) * leaf_up_ + i;
      const int dst_spine = PodOfLeaf(dst_leaf) * leaf_up_ + i;
      path.push_back(
          spine_core_[static_cast<size_t>(src_spine) * cores_per_group_ + c]);
      path.push_back(Reverse(
          spine_core_[static_cast<size_t>(dst_spine) * cores_per_group_ + c]));
    }
    path.push_back(Reverse(leaf_up(dst_leaf)));
  }
  path.push_back(Reverse(nic_leaf_[dst_nic]));
  path.push_back(Reverse(gpu_nic_[dst_nic]));
  return path;
}

double Cluster::BisectionGbS() const {
  const int half = gpus_ / 2;
  if (tiers_ == 0) return half * nvlink_gb_s_;
  std::array<double, kNumLinkClasses> total{};  // both directions
  for (const Link& l : links_) {
    total[static_cast<int>(l.link_class)] += l.bandwidth_gb_s;
  }
  // Every GPU-NIC and NIC-leaf edge has the same bandwidth.
  const double injection_gb_s = std::min(links_[gpu_nic_[0]].bandwidth_gb_s,
                                         links_[nic_leaf_[0]].bandwidth_gb_s);
  double bisection = half * nics_per_gpu_ * injection_gb_s;
  // Half of each upper tier's one-direction capacity crosses the cut.
  for (LinkClass cls : {LinkClass::kLeafSpine, LinkClass::kSpineCore}) {
    const double one_way = total[static_cast<int>(cls)] / 2;
    if (one_way > 0) bisection = std::min(bisection, one_way / 2);
  }
  return bisection;
}

ClusterSummary Cluster::Summarize() const {
  ClusterSummary s;
  s.system = system_name_;
  s.gpus = gpus_;
  s.nvlink_domains = domains_;
  s.hosts = hosts_;
  s.cpus = CountOf(VertexKind::kCpu);
  s.nics = CountOf(VertexKind::kNic);
  s.nvswitch_chips = domains_ * nvswitch_chips_;
  s.leaf_switches = CountOf(VertexKind::kLeaf);
  s.spine_switches = CountOf(VertexKind::kSpine);
  s.core_switches = CountOf(VertexKind::kCore);
  s.scalable_units = scalable_units_;
  s.pods = pods_;
  s.tiers = tiers_;
  s.leaf_down_ports = leaf_down_;
  s.leaf_up_ports = leaf_up_;
  s.vertices = num_vertices();
  s.edges = num_edges();
  s.bisection_gb_s = BisectionGbS();
  return s;
}

std::string Cluster::ToDot() const {
  static constexpr std::array<std::string_view, kNumVertexKinds> kShapes = {
      "box",      "hexagon",       "cds",    "invtriangle",
      "triangle", "doubleoctagon", "ellipse"};
  std::string out = "digraph cluster {\n  // " + system_name_ + ", " +
                    std::to_string(gpus_) + " GPUs\n";
  for (VertexId v = 0; v < num_vertices(); ++v) {
    const Vertex& x = (*graph_.graph)[v];
    std::string label =
        std::string(VertexKindName(x.kind)) + " " + std::to_string(x.index);
    if (x.kind == VertexKind::kNvSwitch) {
      label += " (" + std::to_string(nvswitch_chips_) + " chips)";
    } else if (x.kind == VertexKind::kNic) {
      label += " (rail " +
               std::to_string(x.index % (gpus_per_node_ * nics_per_gpu_)) + ")";
    }
    out += "  v" + std::to_string(v) + " [label=\"" + label +
           "\" shape=" + std::string(kShapes[static_cast<int>(x.kind)]) +
           "];\n";
  }
  for (const Link& l : links_) {
    out += "  v" + std::to_string(l.src) + " -> v" + std::to_string(l.dst) +
           " [label=\"" + std::string(LinkClassName(l.link_class)) + " " +
           Num(l.bandwidth_gb_s) + " GB/s\"];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace moesim::topology
