// The cluster graph of a System at a given GPU count: every GPU, NVLink
// domain, NIC, CPU and InfiniBand switch is a vertex of a Boost.Graph
// adjacency_list; every cable is two directed edges, each with a spec
// bandwidth (GB/s = 1e9 bytes/s, per direction), a latency and a LinkClass;
// Route() gives the path a transfer between two GPUs takes.
//
// Design. Physical numbering is arithmetic. GPU g sits in host
// g / gpus_per_node, NVLink domain g / nvlink_domain_gpus, at local index
// g % gpus_per_node, and owns NICs g*k .. g*k+k-1 (k = nic.per_node /
// gpus_per_node, 1 on every shipped system); NIC i of a host is rail i. An
// NVLink domain is one aggregate NvSwitch vertex (its internal bisection is
// full; the chip count is kept for reporting). Host h has CPUs
// h*c .. h*c+c-1 (c = host_link.cpus_per_node); GPU j of a host attaches to
// its CPU j*c / gpus_per_node. NICs exist at every size; the scale-out fabric
// exists only when the GPUs span more than one NVLink domain. It is the
// rail-optimized fat tree of the NVIDIA DGX SuperPOD reference architectures,
// grown to fit: a leaf has down = floor(radix*o/(1+o)) NIC ports (o =
// scale_out.oversubscription) and up = radix - down spine ports; hosts form
// scalable units (SU) of nodes_per_su; NIC (host n, rail r) takes slot
// r*nodes_per_su + n%nodes_per_su of its SU, i.e. leaf
// SU*ceil(nodes_per_su*nic.per_node/down) + slot/down, and a partial last SU
// builds only the leaves its hosts use (leaves are then renumbered densely).
// One leaf needs no spine (1 tier). Up to `radix` leaves: two tiers, with
// ceil(leaves*up/radix) spines and every leaf's up ports spread as evenly as
// integers allow over all spines. More leaves (scale_out.max_tiers >= 3):
// pods of radix/2 leaves, `up` spines per pod each cabled once to every leaf
// of its pod, and spine j of every pod cabled with its radix/2 up ports to
// core group j of ceil(pods*(radix/2)/radix) cores; at most `radix` pods.
// The parallel cables between one switch pair are one edge whose bandwidth
// is their sum. Routes are computed from this arithmetic, not searched; they
// are shortest in hop count among the paths that relay through no other GPU
// or CPU, and where several are (ECMP over spines and cores) the choice is a
// fixed hash (splitmix64) of (src, dst), so the same inputs give the same
// paths in every process.
//
// Known limit: pods are radix/2 consecutive leaves, so an SU whose leaf count
// does not divide radix/2 (GB200 NVL72: 18 leaves per SU, pods of 32)
// straddles two pods, and a few pairs of one SU then route through a core
// where an NVLink hop to a GPU on the destination's leaf (NCCL's PXN) would
// be shorter. Relaying is the collective model's business, not this graph's.
//
// Thread safety: a built Cluster is immutable; const methods may run
// concurrently. A Cluster copies deeply and moves in O(1).
#ifndef MOESIM_TOPOLOGY_CLUSTER_H_
#define MOESIM_TOPOLOGY_CLUSTER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// GCC 12 reports a false -Wmaybe-uninitialized inside adjacency_list's copy
// (copy_impl) wherever a graph copy is instantiated.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#pragma GCC diagnostic pop

#include "topology/system.pb.h"
#include "util/error.h"

namespace moesim::topology {

// Dense ids. Vertices are numbered kind by kind in VertexKind order (GPUs,
// then NvSwitches, NICs, leaves, spines, cores, CPUs), each kind by its own
// index, so GPU g is vertex g. Edges come in pairs: e (even) and e ^ 1 are
// the two directions of one cable, e pointing away from the GPU side (GPU ->
// switch, GPU -> CPU, GPU -> NIC, NIC -> leaf, leaf -> spine, spine -> core).
using VertexId = int32_t;
using EdgeId = int32_t;

enum class VertexKind : uint8_t {
  kGpu,
  kNvSwitch,  // one aggregate switch per NVLink domain
  kNic,
  kLeaf,
  kSpine,
  kCore,
  kCpu,
};
inline constexpr int kNumVertexKinds = 7;

enum class LinkClass : uint8_t {
  kNvlink,     // GPU <-> NvSwitch: links_per_gpu * link_gb_s
  kHost,       // GPU <-> its CPU: host_link.gb_s
  kPcie,       // GPU <-> its NIC: see Cluster::Build
  kNicLeaf,    // NIC <-> leaf: min(nic.gbit_s, port_gbit_s) / 8
  kLeafSpine,  // leaf <-> spine: cables * port_gbit_s / 8
  kSpineCore,  // spine <-> core: cables * port_gbit_s / 8
};
inline constexpr int kNumLinkClasses = 6;

// Highest switch level a path crosses.
enum class Tier : uint8_t { kNvlink, kLeaf, kSpine, kCore };

// Lower-case names for reports and DOT labels: "gpu", "nvswitch", "nic",
// "leaf", "spine", "core", "cpu"; "nvlink", "host", "pcie", "nic-leaf",
// "leaf-spine", "spine-core"; "nvlink", "leaf", "spine", "core".
std::string_view VertexKindName(VertexKind kind);
std::string_view LinkClassName(LinkClass link_class);
std::string_view TierName(Tier tier);

// One-way latency of one edge per link class, microseconds. The caller fills
// it from a sourced table; Cluster only copies it onto the edges. Zero by
// default.
struct LinkLatencies {
  double nvlink_us = 0;
  double host_us = 0;
  double pcie_us = 0;
  double nic_leaf_us = 0;
  double leaf_spine_us = 0;
  double spine_core_us = 0;

  double ForClass(LinkClass link_class) const;
};

// Vertex bundle of the Boost graph.
struct Vertex {
  VertexKind kind = VertexKind::kGpu;
  int32_t index = 0;  // index within its kind: GPU id, NIC id, leaf id...
};

// Edge bundle of the Boost graph: the id into Cluster::link().
struct EdgeRef {
  EdgeId id = 0;
};

// One directed edge.
struct Link {
  VertexId src = 0;
  VertexId dst = 0;
  LinkClass link_class = LinkClass::kNvlink;
  int32_t cables = 1;         // parallel cables aggregated into this edge
  double bandwidth_gb_s = 0;  // per direction, spec
  double latency_us = 0;      // from LinkLatencies
};

// Counts and headline figures of a Cluster (the CLI formats them).
struct ClusterSummary {
  std::string system;
  int gpus = 0;
  int nvlink_domains = 0;
  int hosts = 0;
  int cpus = 0;
  int nics = 0;
  int nvswitch_chips = 0;  // domains * nvlink.switch_chips (reporting only)
  int leaf_switches = 0;
  int spine_switches = 0;
  int core_switches = 0;
  int scalable_units = 0;   // SUs the fabric is built from; 0 without fabric
  int pods = 0;             // 3-tier pods; 0 below three tiers
  int tiers = 0;            // scale-out switch tiers: 0 (no fabric) .. 3
  int leaf_down_ports = 0;  // 0 without fabric
  int leaf_up_ports = 0;
  int vertices = 0;
  int edges = 0;  // directed
  double bisection_gb_s = 0;
};

class Cluster {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS,
                                      boost::directedS, Vertex, EdgeRef>;

  // Builds the graph of `system` at `gpus` GPUs. The GPU <-> NIC edge is
  // host_link.gb_s when host_link.kind is "pcie..." (the slot the NIC sits
  // in); otherwise (NVLink-C2C hosts) the system names no PCIe figure, and
  // the NIC line rate nic.gbit_s / 8 is used: the NIC, not its slot, is the
  // narrower. Errors (one line): "--gpus: <rule>" for gpus <= 0, above
  // 1,000,000, or not a multiple of gpus_per_node (whole hosts; NVLink
  // domains fill in order and the last may be partial, as when a job gets 32
  // trays of NVL72 racks); "<system>: <field>: <rule>" for a field
  // the graph cannot be built from; "<system>: scale_out: fabric too small
  // ..." with the largest GPU count the fabric holds when the leaves need
  // more tiers than max_tiers or more than `radix` pods.
  //
  // `gpus_per_domain`: GPUs of each NVLink domain the job uses (0: the
  // default). On 8-GPU domains, all. On multi-host domains (NVL72), the
  // hosts of whole Slurm topology/block segments, as NVIDIA recommends
  // scheduling them: 16 hosts per segment for jobs of >= 128 GPUs, 4 for
  // 32-64, 1 below; an 18-tray rack then gives a large job 64 GPUs. GPU g is
  // in domain g / gpus_per_domain. Error "--gpus-per-domain: <rule>" unless
  // a multiple of gpus_per_node and at most nvlink_domain_gpus.
  [[nodiscard]] static util::Result<Cluster> Build(
      const System& system, int gpus, const LinkLatencies& latencies = {},
      int gpus_per_domain = 0);

  const Graph& graph() const { return *graph_.graph; }
  int num_vertices() const { return kind_begin_[kNumVertexKinds]; }
  int num_edges() const { return static_cast<int>(links_.size()); }

  // REQUIRES (all accessors): ids in range.
  const Vertex& vertex(VertexId v) const;
  const Link& link(EdgeId e) const;
  static EdgeId Reverse(EdgeId e) { return e ^ 1; }
  int CountOf(VertexKind kind) const;
  VertexId VertexOf(VertexKind kind, int index) const;

  const std::string& system_name() const { return system_name_; }
  int num_gpus() const { return gpus_; }
  int num_hosts() const { return hosts_; }
  int gpus_per_node() const { return gpus_per_node_; }
  // GPUs of each NVLink domain this job uses (see Build).
  int domain_gpus() const { return domain_gpus_; }
  int num_nvlink_domains() const { return domains_; }
  int nics_per_gpu() const { return nics_per_gpu_; }
  int tiers() const { return tiers_; }
  int HostOf(int gpu) const;
  int DomainOf(int gpu) const;
  int LocalIndexOf(int gpu) const;
  // Leaf index of a NIC; -1 without fabric.
  int LeafOfNic(int nic) const;

  // The directed edges from src_gpu to dst_gpu, in order: GPU -> NvSwitch
  // -> GPU inside a domain; otherwise GPU -> NIC -> leaf [-> spine [-> core
  // -> spine] -> leaf] -> NIC -> GPU. Shortest in hop count among paths
  // relaying through no other GPU or CPU; deterministic (ECMP by a fixed
  // hash of the pair). With several NICs per GPU, the NIC pair reaching the
  // lowest tier. Empty when src_gpu == dst_gpu.
  // REQUIRES: both in [0, num_gpus()).
  std::vector<EdgeId> Route(int src_gpu, int dst_gpu) const;

  // Highest switch level Route(src_gpu, dst_gpu) crosses (kNvlink when
  // src_gpu == dst_gpu). REQUIRES: both in [0, num_gpus()).
  Tier PathTier(int src_gpu, int dst_gpu) const;

  // Per-direction bandwidth across a cut splitting the GPUs in two halves,
  // GB/s, as a per-tier estimate (not a min-cut): within one domain,
  // floor(gpus/2) * links_per_gpu * link_gb_s; otherwise the least of
  // floor(gpus/2) * k * (narrower of GPU-NIC and NIC-leaf edge), half the
  // total leaf-spine capacity and half the total spine-core capacity (so
  // leaf oversubscription shows here).
  double BisectionGbS() const;

  ClusterSummary Summarize() const;

  // Graphviz digraph: one node per vertex (shape and label by kind), one
  // edge per directed edge labelled with its class and GB/s; vertex then
  // edge id order, so the text is deterministic.
  std::string ToDot() const;

 private:
  Cluster() = default;

  // Edges of a cable a <-> b; returns the even id (a -> b).
  EdgeId AddCable(VertexId a, VertexId b, LinkClass link_class, int cables,
                  double gb_s_per_cable, const LinkLatencies& latencies);
  void AddNodeCables(const System& system, const LinkLatencies& latencies);
  void AddFabricCables(double port_gb_s, const LinkLatencies& latencies);
  // NIC pair (src, dst) of the shortest route, ties broken by `hash`.
  std::pair<int, int> ChooseNics(int src_gpu, int dst_gpu, uint64_t hash) const;
  Tier NicPairTier(int src_nic, int dst_nic) const;
  int PodOfLeaf(int leaf) const { return leaf / leaves_per_pod_; }

  std::string system_name_;
  // Physical numbering.
  int gpus_ = 0;
  int gpus_per_node_ = 0;
  int domain_gpus_ = 0;
  int nics_per_gpu_ = 0;
  int hosts_ = 0;
  int domains_ = 0;
  int cpus_per_node_ = 0;
  int nvswitch_chips_ = 0;  // per domain
  double nvlink_gb_s_ = 0;  // per GPU
  // Fabric geometry (zeros without fabric).
  int tiers_ = 0;
  int leaf_down_ = 0;
  int leaf_up_ = 0;
  int scalable_units_ = 0;
  int pods_ = 0;
  int leaves_per_pod_ = 1;
  int spine_half_ = 0;  // radix / 2: a 3-tier spine's up ports
  int cores_per_group_ = 0;
  int leaf_fanout_ = 0;  // spines per leaf: all spines (2 tiers), `up` (3)

  // Boost 1.74's adjacency_list has no move constructor and its swap()
  // copies, so the graph lives behind a pointer: a Cluster moves in O(1)
  // and copies deeply. Never null except in a moved-from holder.
  struct GraphHolder {
    std::unique_ptr<Graph> graph;
    GraphHolder() = default;
    GraphHolder(const GraphHolder& other);
    GraphHolder& operator=(const GraphHolder& other);
    GraphHolder(GraphHolder&&) noexcept = default;
    GraphHolder& operator=(GraphHolder&&) noexcept = default;
  };

  // First vertex id of each kind; [kNumVertexKinds] = vertex count.
  std::array<VertexId, kNumVertexKinds + 1> kind_begin_{};
  GraphHolder graph_;
  std::vector<Link> links_;
  // Up-edge tables (the down edge is Reverse() of each).
  std::vector<EdgeId> gpu_nvswitch_;  // [gpu]
  std::vector<EdgeId> gpu_nic_;       // [nic]: its GPU -> nic
  std::vector<EdgeId> nic_leaf_;      // [nic]; empty without fabric
  std::vector<int32_t> leaf_of_nic_;  // [nic]; empty without fabric
  std::vector<EdgeId> leaf_spine_;    // [leaf * leaf_fanout_ + i]
  std::vector<EdgeId> spine_core_;    // [spine * cores_per_group_ + c]
};

}  // namespace moesim::topology

#endif  // MOESIM_TOPOLOGY_CLUSTER_H_
