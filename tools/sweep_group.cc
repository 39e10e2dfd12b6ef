#include "tools/sweep_group.h"

#include <cstdlib>

#ifdef MOESIM_WITH_MPI
#include <mpi.h>
#endif

namespace moesim::tools {

#ifdef MOESIM_WITH_MPI
namespace {

bool LaunchedByMpirun() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

class MpiGroup : public SweepGroup {
 public:
  MpiGroup(int* argc, char*** argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiGroup() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> GatherToRoot(const std::string& part) override {
    // Lengths first, then the bytes (a shard's JSON is well under 2 GiB:
    // at most 10^6 candidates of ~300 bytes, split among the ranks).
    const int length = static_cast<int>(part.size());
    std::vector<int> lengths(rank_ == 0 ? size_ : 0);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0,
               MPI_COMM_WORLD);
    std::vector<int> offsets(lengths.size());
    int total = 0;
    for (size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Gatherv(part.data(), length, MPI_CHAR, all.data(), lengths.data(),
                offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (size_t r = 0; r < lengths.size(); ++r)
      out.push_back(all.substr(offsets[r], lengths[r]));
    return out;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

bool SweepGroupSupported() { return true; }

std::unique_ptr<SweepGroup> JoinSweepGroup(int* argc, char*** argv) {
  if (!LaunchedByMpirun()) return nullptr;
  return std::make_unique<MpiGroup>(argc, argv);
}
#else
bool SweepGroupSupported() { return false; }

std::unique_ptr<SweepGroup> JoinSweepGroup(int*, char***) { return nullptr; }
#endif

}  // namespace moesim::tools
