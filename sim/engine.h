// sim::Engine: the event core's OpEngine (sim/core/op_engine.h) with
// transfers that move collectives over the cluster: each transfer carries a
// topology::CollectiveRequest, and Run() plays them out on a
// topology::NetworkModel (analytical or the max-min flow network). Every
// other behaviour, timing and trace is the OpEngine's.
#ifndef MOESIM_SIM_ENGINE_H_
#define MOESIM_SIM_ENGINE_H_

#include <span>
#include <string_view>
#include <vector>

#include "sim/core/op_engine.h"
#include "topology/network_model.h"
#include "util/error.h"

namespace moesim::sim {

class Engine final : public OpEngine {
 public:
  // Appends a transfer of `request` (OpEngine::AddTransfer): the network
  // given to Run() decides its duration. `request` is not checked here: its
  // GPUs must exist on the network's cluster.
  OpId AddTransfer(StreamId stream, topology::CollectiveRequest request,
                   const std::vector<OpId>& deps, std::string_view name);
  OpId AddTransfer(StreamId stream, topology::CollectiveRequest request,
                   std::span<const OpId> deps, NameId name);
  OpId AddTransfer(std::string_view stream, topology::CollectiveRequest request,
                   std::vector<OpId> deps, std::string_view name);

  // Replaces the GPUs of transfer `op`'s request, keeping its collective
  // and bytes: full mode prices one template for a stage and issues it on
  // every rank, each on its own group's GPUs.
  // REQUIRES: Run() not called yet; `op` a transfer.
  void RetargetTransfer(OpId op, std::vector<int> gpus);

  // OpEngine::ClearOps, and the requests.
  void ClearOps();

  // OpEngine::Run with the transfers played out on `network` (null: none
  // may have been added).
  [[nodiscard]] util::Result<void> Run(topology::NetworkModel* network);
  [[nodiscard]] util::Result<void> Run() { return Run(nullptr); }

 private:
  std::vector<topology::CollectiveRequest> requests_;  // by transfer index
};

}  // namespace moesim::sim

#endif  // MOESIM_SIM_ENGINE_H_
