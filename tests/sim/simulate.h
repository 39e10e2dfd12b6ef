// Test support: one replayed step of a resolved scenario on its own platform
// (optionally under a calibration profile); an error fails the calling test.
#ifndef MOESIM_TESTS_SIM_SIMULATE_H_
#define MOESIM_TESTS_SIM_SIMULATE_H_

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "calibration/cost_model.h"
#include "calibration/profile.h"
#include "calibration/tables.h"
#include "sim/replay.h"
#include "tests/scenarios/resolve_text.h"
#include "topology/cluster.h"
#include "topology/system.h"

namespace moesim::test_support {

// A platform of `gpus` H100s (DGX nodes) with the shipped tables, for tests
// that price ops without a scenario.
struct PlatformFixture {
  topology::System system;
  sim::Platform platform;
};

inline PlatformFixture H100Platform(int gpus) {
  auto system = topology::LoadSystem("dgx-h100");
  EXPECT_TRUE(system);
  PlatformFixture f{*system, {}};
  auto params = topology::NetworkParamsFor(*system);
  EXPECT_TRUE(params);
  f.platform.network = *params;
  auto cluster = topology::Cluster::Build(*system, gpus, {});
  EXPECT_TRUE(cluster);
  f.platform.cluster = std::make_unique<topology::Cluster>(std::move(*cluster));
  auto tables = calibration::LoadTables("h100");
  EXPECT_TRUE(tables);
  f.platform.costs = std::make_unique<calibration::CostModel>(
      std::move(*tables), sim::PeaksOf(*system));
  return f;
}

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
