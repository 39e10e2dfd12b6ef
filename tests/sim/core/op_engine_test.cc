// The event core on its own (sim/core/, linked without topology): a
// transfer model that knows nothing of networks, only each transfer's
// length by the index the engine gives it.
#include "sim/core/op_engine.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace moesim::sim {
namespace {

// Transfer i takes lengths[i] seconds from its start; each finishes alone.
class FixedLengths final : public TransferModel {
 public:
  explicit FixedLengths(std::vector<double> lengths)
      : lengths_(std::move(lengths)) {}
  int Start(double now_s, int32_t transfer) override {
    started.push_back(transfer);
    finish_[static_cast<int>(finish_.size())] = now_s + lengths_[transfer];
    return static_cast<int>(finish_.size()) - 1;
  }
  std::optional<double> NextEventTime() const override {
    std::optional<double> next;
    for (const auto& [id, at] : finish_) {
      if (at >= 0 && (!next || at < *next)) next = at;
    }
    return next;
  }
  std::vector<int> AdvanceTo(double now_s) override {
    std::vector<int> done;
    for (auto& [id, at] : finish_) {
      if (at >= 0 && at <= now_s) {
        done.push_back(id);
        at = -1;
      }
    }
    return done;
  }
  std::vector<int32_t> started;

 private:
  std::vector<double> lengths_;
  std::map<int, double> finish_;
};

// A fixed op of 1 ms, then two transfers named 0 and 1 by the engine (the
// order they were added), the second after the first on its stream: the
// model's lengths (2 ms, 3 ms) decide when each ends.
TEST(OpEngine, TransfersTakeTheModelsLengthByTheirIndex) {
  OpEngine engine;
  const OpId gemm = engine.Add("stage0/compute", Time::Millis(1), {}, "gemm");
  const OpId a = engine.AddTransfer("stage0/ep", {gemm}, "a");
  const OpId b = engine.AddTransfer("stage0/ep", {}, "b");
  EXPECT_EQ(engine.transfer_count(), 2);
  EXPECT_EQ(engine.transfer_of(a), 0);
  EXPECT_EQ(engine.transfer_of(b), 1);
  EXPECT_FALSE(engine.is_transfer(gemm));
  FixedLengths model({2e-3, 3e-3});
  ASSERT_TRUE(engine.Run(&model).has_value());
  EXPECT_EQ(model.started, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(engine.timing(a).start, Time::Millis(1));
  EXPECT_EQ(engine.timing(a).finish, Time::Millis(3));
  EXPECT_EQ(engine.timing(b).start, Time::Millis(3));
  EXPECT_EQ(engine.timing(b).finish, Time::Millis(6));
  EXPECT_EQ(engine.makespan(), Time::Millis(6));
}

// A transfer with no model is an error naming it, not a crash; cleared,
// the engine numbers its transfers from 0 again.
TEST(OpEngine, ATransferNeedsAModelAndClearOpsRenumbers) {
  OpEngine engine;
  engine.AddTransfer("stage0/ep", {}, "dispatch");
  const util::Result<void> ran = engine.Run(nullptr);
  ASSERT_FALSE(ran.has_value());
  EXPECT_NE(ran.error().message.find("dispatch"), std::string::npos)
      << ran.error().message;
  engine.ClearOps();
  EXPECT_EQ(engine.transfer_count(), 0);
  const OpId again = engine.AddTransfer("stage0/ep", {}, "again");
  EXPECT_EQ(engine.transfer_of(again), 0);
  FixedLengths model({5e-6});
  ASSERT_TRUE(engine.Run(&model).has_value());
  EXPECT_EQ(engine.timing(again).finish, Time::Micros(5));
}

}  // namespace
}  // namespace moesim::sim
