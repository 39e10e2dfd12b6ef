// Rank placement in Megatron-Core order and what each parallel group spans.
//
// Megatron-Core (parallel_state.RankGenerator) numbers ranks over an order
// string, default "tp-cp-ep-dp-pp": the first dimension varies fastest, so
// with the default a TP group is consecutive ranks. The attention mesh uses
// sizes (tp, cp, ep=1, dp, pp); parallel folding lays the MoE mesh
// (etp, ep, edp, pp, with cp folded away) over the same ranks with the same
// order. Rank r runs on GPU r (torchrun gives local ranks consecutive GPUs),
// so the order decides which groups stay inside an NVLink domain.
//
// For every group kind the placement reports its size, how many NVLink
// domains one group spans, members per domain, the highest network tier its
// traffic crosses, and how many groups of the kind share one NIC.
#ifndef MOESIM_TOPOLOGY_PLACEMENT_H_
#define MOESIM_TOPOLOGY_PLACEMENT_H_

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "topology/cluster.h"
#include "util/error.h"

namespace moesim::topology {

// Layout sizes (Megatron-Core names): tp * cp * dp * pp = etp * ep * edp * pp
// = number of GPUs.
struct MeshSizes {
  int tp = 1;
  int cp = 1;
  int dp = 1;
  int pp = 1;
  int ep = 1;
  int etp = 1;
  int edp = 1;
};

enum class GroupKind { kTp, kCp, kDp, kDpCp, kEp, kEtp, kEdp, kPp };
inline constexpr GroupKind kGroupKinds[] = {
    GroupKind::kTp, GroupKind::kCp,  GroupKind::kDp,  GroupKind::kDpCp,
    GroupKind::kEp, GroupKind::kEtp, GroupKind::kEdp, GroupKind::kPp};
const char* GroupKindName(GroupKind kind);  // "tp", "dp_cp", ...

struct GroupSpan {
  GroupKind kind = GroupKind::kTp;
  int size = 1;  // members per group
  int num_groups = 0;
  int domains_spanned =
      1;  // NVLink domains one group touches (max over groups)
  int members_per_domain = 1;  // min over groups and domains touched
  bool uniform = true;         // every group has the same span
  // Highest tier crossed: between any two members, or for pp between
  // consecutive stages (point-to-point neighbours).
  Tier tier = Tier::kNvlink;
  // Groups of this kind whose inter-domain traffic uses one NIC (1 when each
  // member drives its own NIC; 0 when the kind never leaves a domain).
  int groups_per_nic = 0;
};

class Placement {
 public:
  // `rank_order`: a permutation of tp, cp, ep, dp, pp joined by '-'.
  // Errors: a bad order string, sizes that do not multiply to the cluster's
  // GPU count, a size <= 0.
  [[nodiscard]] static util::Result<Placement> Build(
      const MeshSizes& sizes, std::string_view rank_order,
      const Cluster& cluster);

  // Members (ranks, ascending) of the group of `kind` that holds `rank`.
  std::vector<int> Group(GroupKind kind, int rank) const;
  int Gpu(int rank) const { return rank; }
  int num_ranks() const { return num_ranks_; }
  const MeshSizes& sizes() const { return sizes_; }
  const std::vector<GroupSpan>& spans() const { return spans_; }
  const GroupSpan& span(GroupKind kind) const;

 private:
  // One mesh: dimension sizes in order (fastest first) and the index of each
  // named dimension in that order.
  struct Mesh {
    std::array<int, 5> size{};      // in order
    std::array<int, 5> stride{};    // rank stride of each ordered dimension
    std::array<int, 5> position{};  // tp, cp, ep, dp, pp -> ordered index
  };
  Placement() = default;
  void ComputeSpans(const Cluster& cluster);

  MeshSizes sizes_;
  int num_ranks_ = 0;
  Mesh attention_;
  Mesh expert_;
  std::vector<GroupSpan> spans_;
};

}  // namespace moesim::topology

#endif  // MOESIM_TOPOLOGY_PLACEMENT_H_
