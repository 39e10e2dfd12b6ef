// A cluster and its network parameters for tests that run collectives on a
// shipped system (network model, engine transfers, trace checks).
#ifndef MOESIM_TESTS_TOPOLOGY_NETWORK_FIXTURE_H_
#define MOESIM_TESTS_TOPOLOGY_NETWORK_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "topology/cluster.h"
#include "topology/network_params.h"
#include "topology/system.h"

namespace moesim::testing {

struct Net {
  topology::Cluster cluster;
  topology::NetworkParams params;
};

// `system` (a shipped name) grown to `gpus` GPUs. Aborts the test binary when
// the system cannot be built: no test can go on without it.
inline Net MakeNet(const std::string& system, int gpus) {
  auto s = topology::LoadSystem(system);
  EXPECT_TRUE(s) << s.error().message;
  auto c = topology::Cluster::Build(*s, gpus);
  auto p = topology::NetworkParamsFor(*s);
  if (!c || !p) {
    ADD_FAILURE() << (c ? p.error().message : c.error().message);
    std::abort();
  }
  return {std::move(*c), *p};
}

}  // namespace moesim::testing

#endif  // MOESIM_TESTS_TOPOLOGY_NETWORK_FIXTURE_H_
