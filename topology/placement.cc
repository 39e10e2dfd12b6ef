#include "topology/placement.h"

#include <algorithm>
#include <numeric>

#include "util/csv.h"

namespace moesim::topology {

namespace {

// Dimension names of Megatron-Core's order string, in the index order the
// Mesh.position array uses.
constexpr std::array<std::string_view, 5> kDims = {"tp", "cp", "ep", "dp",
                                                   "pp"};
enum Dim { kTpDim, kCpDim, kEpDim, kDpDim, kPpDim };

}  // namespace

const char* GroupKindName(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp:
      return "tp";
    case GroupKind::kCp:
      return "cp";
    case GroupKind::kDp:
      return "dp";
    case GroupKind::kDpCp:
      return "dp_cp";
    case GroupKind::kEp:
      return "ep";
    case GroupKind::kEtp:
      return "etp";
    case GroupKind::kEdp:
      return "edp";
    case GroupKind::kPp:
      return "pp";
  }
  return "?";
}

util::Result<Placement> Placement::Build(const MeshSizes& sizes,
                                         std::string_view rank_order,
                                         const Cluster& cluster) {
  auto fail = [](const std::string& msg) { return util::Fail(msg); };
  const std::vector<std::string> tokens = util::SplitList(rank_order, "-");
  std::array<int, 5> position{-1, -1, -1, -1, -1};
  for (size_t i = 0; i < tokens.size(); ++i) {
    auto it = std::find(kDims.begin(), kDims.end(), tokens[i]);
    if (it == kDims.end() || tokens.size() != 5 ||
        position[it - kDims.begin()] >= 0) {
      return fail(
          "--rank-order: must order tp, cp, ep, dp, pp each once "
          "(Megatron-Core, default tp-cp-ep-dp-pp), got '" +
          std::string(rank_order) + "'");
    }
    position[it - kDims.begin()] = static_cast<int>(i);
  }
  if (tokens.size() != 5) {
    return fail(
        "--rank-order: must order tp, cp, ep, dp, pp each once "
        "(Megatron-Core, default tp-cp-ep-dp-pp), got '" +
        std::string(rank_order) + "'");
  }
  for (int v : {sizes.tp, sizes.cp, sizes.dp, sizes.pp, sizes.ep, sizes.etp,
                sizes.edp}) {
    if (v <= 0) return fail("layout: every parallel size must be >= 1");
  }
  const long long n = 1LL * sizes.tp * sizes.cp * sizes.dp * sizes.pp;
  if (n != cluster.num_gpus()) {
    return fail("layout: tp*cp*dp*pp = " + std::to_string(n) +
                " must equal the GPU count " +
                std::to_string(cluster.num_gpus()));
  }
  if (1LL * sizes.etp * sizes.ep * sizes.edp * sizes.pp != n) {
    return fail("layout: etp*ep*edp*pp must equal tp*cp*dp*pp = " +
                std::to_string(n) + " (parallel folding)");
  }
  Placement p;
  p.sizes_ = sizes;
  p.num_ranks_ = static_cast<int>(n);
  auto make_mesh = [&](std::array<int, 5> named) {
    Mesh m;
    m.position = position;
    for (int d = 0; d < 5; ++d) m.size[position[d]] = named[d];
    int stride = 1;
    for (int i = 0; i < 5; ++i) {
      m.stride[i] = stride;
      stride *= m.size[i];
    }
    return m;
  };
  p.attention_ = make_mesh({sizes.tp, sizes.cp, 1, sizes.dp, sizes.pp});
  p.expert_ = make_mesh({sizes.etp, 1, sizes.ep, sizes.edp, sizes.pp});
  p.ComputeSpans(cluster);
  return p;
}

std::vector<int> Placement::Group(GroupKind kind, int rank) const {
  const Mesh* mesh = &attention_;
  std::vector<int> dims;
  switch (kind) {
    case GroupKind::kTp:
      dims = {kTpDim};
      break;
    case GroupKind::kCp:
      dims = {kCpDim};
      break;
    case GroupKind::kDp:
      dims = {kDpDim};
      break;
    case GroupKind::kDpCp:
      dims = {kDpDim, kCpDim};
      break;
    case GroupKind::kPp:
      dims = {kPpDim};
      break;
    case GroupKind::kEp:
      mesh = &expert_;
      dims = {kEpDim};
      break;
    case GroupKind::kEtp:
      mesh = &expert_;
      dims = {kTpDim};
      break;
    case GroupKind::kEdp:
      mesh = &expert_;
      dims = {kDpDim};
      break;
  }
  // The rank with the varied coordinates set to zero, then every combination.
  int base = rank;
  for (int d : dims) {
    const int i = mesh->position[d];
    base -= (rank / mesh->stride[i] % mesh->size[i]) * mesh->stride[i];
  }
  std::vector<int> members = {base};
  for (int d : dims) {
    const int i = mesh->position[d];
    std::vector<int> next;
    next.reserve(members.size() * mesh->size[i]);
    for (int m : members) {
      for (int k = 0; k < mesh->size[i]; ++k)
        next.push_back(m + k * mesh->stride[i]);
    }
    members = std::move(next);
  }
  std::sort(members.begin(), members.end());
  return members;
}

const GroupSpan& Placement::span(GroupKind kind) const {
  return spans_[static_cast<int>(kind)];
}

void Placement::ComputeSpans(const Cluster& cluster) {
  const int domain_gpus = cluster.domain_gpus();
  spans_.clear();
  std::vector<char> seen(num_ranks_);
  for (GroupKind kind : kGroupKinds) {
    GroupSpan s;
    s.kind = kind;
    s.members_per_domain = num_ranks_;
    std::fill(seen.begin(), seen.end(), 0);
    bool first = true;
    for (int r = 0; r < num_ranks_; ++r) {
      if (seen[r]) continue;
      const std::vector<int> members = Group(kind, r);
      for (int m : members) seen[m] = 1;
      ++s.num_groups;
      // Members are ascending and a domain is a block of consecutive GPUs, so
      // each domain's members are a run.
      int domains = 0, min_run = num_ranks_, run = 0, last = -1;
      for (int m : members) {
        const int d = Gpu(m) / domain_gpus;
        if (d != last) {
          if (run > 0) min_run = std::min(min_run, run);
          ++domains;
          run = 0;
          last = d;
        }
        ++run;
      }
      min_run = std::min(min_run, run);
      // Highest tier: pp between consecutive stages; other kinds between any
      // two members, which the leader and one member of another domain
      // bound exactly (cluster tiers nest: leaf within pod).
      Tier tier = Tier::kNvlink;
      if (kind == GroupKind::kPp) {
        // Stage i sends to i+1; with interleaving the last stage also
        // sends to the first (next model chunk).
        for (size_t i = 0; i + 1 < members.size(); ++i)
          tier = std::max(
              tier, cluster.PathTier(Gpu(members[i]), Gpu(members[i + 1])));
        if (members.size() > 2)
          tier = std::max(tier, cluster.PathTier(Gpu(members.back()),
                                                 Gpu(members.front())));
      } else if (domains > 1) {
        const int x = Gpu(members.front());
        int z = x;
        for (int m : members) {
          if (Gpu(m) / domain_gpus != x / domain_gpus) {
            z = Gpu(m);
            break;
          }
        }
        for (int m : members) {
          tier = std::max(tier, cluster.PathTier(x, Gpu(m)));
          tier = std::max(tier, cluster.PathTier(z, Gpu(m)));
        }
      }
      if (!first && (domains != s.domains_spanned ||
                     min_run != s.members_per_domain || tier != s.tier)) {
        s.uniform = false;
      }
      s.size = static_cast<int>(members.size());
      s.domains_spanned =
          first ? domains : std::max(s.domains_spanned, domains);
      s.members_per_domain = std::min(s.members_per_domain, min_run);
      s.tier = first ? tier : std::max(s.tier, tier);
      first = false;
    }
    // Every GPU drives its own NIC(s) (nic.per_node is a multiple of
    // gpus_per_node), and each rank is in one group of a kind: one group per
    // NIC when the kind leaves its domain.
    s.groups_per_nic = s.domains_spanned > 1 ? 1 : 0;
    spans_.push_back(s);
  }
}

}  // namespace moesim::topology
