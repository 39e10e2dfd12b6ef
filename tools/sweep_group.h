// Processes that evaluate one sweep together (`mpirun -n N moesim sweep`):
// rank k evaluates shard k/N (the --shard machinery) and rank 0 gathers the
// partial results, merges them (MergeSweepShards) and writes the output,
// the same bytes one process writes (the wall time aside; --no-timing).
//
// Only a build with -DMOESIM_MPI=ON has one: JoinSweepGroup() then returns
// the MPI world when this process was started by mpirun (OpenMPI's
// OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_RANK of other launchers, set);
// else, and in every default build, it returns null and the sweep runs
// alone. MPI is initialized by JoinSweepGroup() and finalized when the group
// is destroyed; at most one group per process.
#ifndef MOESIM_TOOLS_SWEEP_GROUP_H_
#define MOESIM_TOOLS_SWEEP_GROUP_H_

#include <memory>
#include <string>
#include <vector>

namespace moesim::tools {

class SweepGroup {
 public:
  virtual ~SweepGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `part`, in rank order, on rank 0; empty on the others.
  // Collective: every rank calls it once.
  virtual std::vector<std::string> GatherToRoot(const std::string& part) = 0;
};

// True when this binary was built with MPI (MOESIM_MPI=ON).
bool SweepGroupSupported();

std::unique_ptr<SweepGroup> JoinSweepGroup(int* argc, char*** argv);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_SWEEP_GROUP_H_
