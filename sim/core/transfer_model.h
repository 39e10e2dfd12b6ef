// The seam between the event core and whatever moves data: the engine's
// transfer ops (OpEngine::AddTransfer) take as long as a TransferModel says.
// The engine names a transfer by its index, the order it was added in; the
// model knows what that transfer moves (sim::Engine's adapter holds one
// topology::CollectiveRequest per transfer and hands it to the analytical or
// flow network). Time is double seconds on the model's side.
#ifndef MOESIM_SIM_CORE_TRANSFER_MODEL_H_
#define MOESIM_SIM_CORE_TRANSFER_MODEL_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace moesim::sim {

class TransferModel {
 public:
  virtual ~TransferModel() = default;
  // Starts transfer `transfer` at `now_s` and returns the model's id for it.
  // REQUIRES: now_s >= the last time passed to AdvanceTo.
  virtual int Start(double now_s, int32_t transfer) = 0;
  // Time of the next state change (a transfer finishing, or for a flow
  // network a flow ending), or nullopt when nothing runs.
  virtual std::optional<double> NextEventTime() const = 0;
  // Moves time to `now_s` (REQUIRES: <= NextEventTime() when there is one)
  // and returns the ids of the transfers that finished by then, ascending.
  virtual std::vector<int> AdvanceTo(double now_s) = 0;
};

}  // namespace moesim::sim

#endif  // MOESIM_SIM_CORE_TRANSFER_MODEL_H_
