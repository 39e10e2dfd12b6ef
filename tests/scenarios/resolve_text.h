// Test support: a scenario written as textproto, parsed and resolved; a parse
// or resolution error fails the calling test with its message.
#ifndef MOESIM_TESTS_SCENARIOS_RESOLVE_TEXT_H_
#define MOESIM_TESTS_SCENARIOS_RESOLVE_TEXT_H_

#include <gtest/gtest.h>

#include <string>

#include "scenarios/scenario.h"

namespace moesim::test_support {

inline scenarios::ResolvedScenario Resolve(const std::string& text) {
  auto spec = scenarios::ParseScenario(text, "test");
  EXPECT_TRUE(spec) << spec.error().message;
  if (!spec) return {};
  auto s = scenarios::Resolve(*spec, "test", text);
  EXPECT_TRUE(s) << s.error().message;
  return s ? *s : scenarios::ResolvedScenario{};
}

}  // namespace moesim::test_support

#endif  // MOESIM_TESTS_SCENARIOS_RESOLVE_TEXT_H_
