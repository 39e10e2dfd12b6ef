// The dispatcher registry (models/dispatchers.h): one row per Dispatcher,
// the scenario words read from it, and the traits the replay reads. The
// expected values come from Megatron-LM's defaults (--moe-deepep-num-sms
// 20, --moe-hybridep-num-sms 16) and the calibration table rows
// (calibration/tables/<gpu>/dispatch.csv names deepep and hybridep).
#include "models/dispatchers.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "scenarios/vocabulary.h"

namespace moesim::models {
namespace {

TEST(Dispatchers, OneRowPerDispatcherWithDistinctWords) {
  std::set<Dispatcher> ids;
  std::set<std::string_view> words;
  for (const DispatcherTraits& t : Dispatchers()) {
    ids.insert(t.id);
    words.insert(t.word);
    EXPECT_EQ(&TraitsOf(t.id), &t) << t.word;
    // A fused dispatcher is priced from its own table rows and holds SMs.
    EXPECT_EQ(t.fused, !t.table_rows.empty()) << t.word;
    EXPECT_EQ(t.fused, t.sms_held > 0) << t.word;
  }
  EXPECT_EQ(ids.size(), Dispatchers().size());
  EXPECT_EQ(words.size(), Dispatchers().size());
}

TEST(Dispatchers, ScenarioWordsAreTheRegistrys) {
  EXPECT_EQ(scenarios::JoinWords(scenarios::DispatcherWords()),
            "alltoall, deepep, hybridep");
  for (const DispatcherTraits& t : Dispatchers()) {
    auto parsed = scenarios::ParseDispatcher(t.word);
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(*parsed, t.id);
  }
  auto flex = scenarios::ParseDispatcher("flex");
  ASSERT_FALSE(flex);
  EXPECT_EQ(flex.error().message,
            "unknown 'flex' (alltoall, deepep, hybridep)");
}

TEST(Dispatchers, TraitsAsMegatronSetsThem) {
  EXPECT_FALSE(TraitsOf(Dispatcher::kAllToAll).fused);
  EXPECT_EQ(TraitsOf(Dispatcher::kDeepEp).sms_held, 20);
  EXPECT_EQ(TraitsOf(Dispatcher::kHybridEp).sms_held, 16);
  EXPECT_EQ(TraitsOf(Dispatcher::kDeepEp).table_rows, "deepep");
  EXPECT_EQ(TraitsOf(Dispatcher::kHybridEp).table_rows, "hybridep");
  // Only HybridEP stages across NVLink domains and permutes in the
  // dispatched dtype (DeepEP's permute is Megatron's, 16-bit).
  EXPECT_TRUE(TraitsOf(Dispatcher::kHybridEp).stages_across_domains);
  EXPECT_FALSE(TraitsOf(Dispatcher::kDeepEp).stages_across_domains);
  EXPECT_TRUE(TraitsOf(Dispatcher::kHybridEp).permute_in_dispatched_dtype);
  EXPECT_FALSE(TraitsOf(Dispatcher::kDeepEp).permute_in_dispatched_dtype);
}

}  // namespace
}  // namespace moesim::models
