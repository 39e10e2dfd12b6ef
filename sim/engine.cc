#include "sim/engine.h"

#include <optional>
#include <utility>

#include "util/check.h"

namespace moesim::sim {
namespace {

// The engine's transfer index -> its request, on a network model.
class CollectiveTransfers final : public TransferModel {
 public:
  CollectiveTransfers(topology::NetworkModel& network,
                      const std::vector<topology::CollectiveRequest>& requests)
      : network_(network), requests_(requests) {}
  int Start(double now_s, int32_t transfer) override {
    return network_.Start(now_s, requests_[transfer]);
  }
  std::optional<double> NextEventTime() const override {
    return network_.NextEventTime();
  }
  std::vector<int> AdvanceTo(double now_s) override {
    return network_.AdvanceTo(now_s);
  }

 private:
  topology::NetworkModel& network_;
  const std::vector<topology::CollectiveRequest>& requests_;
};

}  // namespace

OpId Engine::AddTransfer(StreamId stream, topology::CollectiveRequest request,
                         const std::vector<OpId>& deps, std::string_view name) {
  return AddTransfer(stream, std::move(request), std::span<const OpId>(deps),
                     Name(name));
}

OpId Engine::AddTransfer(StreamId stream, topology::CollectiveRequest request,
                         std::span<const OpId> deps, NameId name) {
  const OpId id = OpEngine::AddTransfer(stream, deps, name);
  requests_.push_back(std::move(request));
  return id;
}

OpId Engine::AddTransfer(std::string_view stream,
                         topology::CollectiveRequest request,
                         std::vector<OpId> deps, std::string_view name) {
  return AddTransfer(Stream(stream), std::move(request),
                     std::span<const OpId>(deps), Name(name));
}

void Engine::RetargetTransfer(OpId op, std::vector<int> gpus) {
  util::CheckOrDie(!ran(), "Engine::RetargetTransfer after Run");
  requests_[transfer_of(op)].gpus = std::move(gpus);
}

void Engine::ClearOps() {
  OpEngine::ClearOps();
  requests_.clear();
}

util::Result<void> Engine::Run(topology::NetworkModel* network) {
  if (network == nullptr) return OpEngine::Run(nullptr);
  CollectiveTransfers transfers(*network, requests_);
  return OpEngine::Run(&transfers);
}

}  // namespace moesim::sim
