// Test support: one replayed step of a resolved scenario on its own platform
// (optionally under a calibration profile); an error fails the calling test.
#ifndef MOESIM_TESTS_SIM_SIMULATE_H_
#define MOESIM_TESTS_SIM_SIMULATE_H_

#include <gtest/gtest.h>

#include "calibration/profile.h"
#include "sim/replay.h"
#include "tests/scenarios/resolve_text.h"

namespace moesim::test_support {

inline sim::StepResult Simulate(const scenarios::ResolvedScenario& s,
                                const sim::ReplayOptions& options = {},
                                const calibration::Profile& profile = {}) {
  auto platform = sim::BuildPlatform(s, profile);
  EXPECT_TRUE(platform) << platform.error().message;
  if (!platform) return {};
  auto r = sim::Replay(s, *platform, options);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : sim::StepResult{};
}

}  // namespace moesim::test_support

#endif  // MOESIM_TESTS_SIM_SIMULATE_H_
