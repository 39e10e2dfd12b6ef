// The value-mutating fuzz targets' bodies (tests/fuzz/value_replay.h) run
// in `make test` on seeded edits, so every build checks what the fuzzers
// check without clang: each edit list sets up to 8 numeric fields of a
// shipped model, system or scenario to 0, -1, 1e-300, 1e300, NaN, +-inf,
// 2^31, an int extreme or raw bits, then loads, resolves and replays it.
// Passing means no abort, no sanitizer report (make test-sanitize) and no
// exception: every bad value ended as a loader or rule error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "../fuzz/value_replay.h"

namespace moesim::fuzz {
namespace {

// Deterministic edit lists: 3-byte records plus raw payloads.
// MOESIM_VALUE_MUTATION_INPUTS=N runs N inputs per target instead (a
// longer hunt by hand; `make test` keeps the default).
template <typename Target>
void RunSeeded(Target target, uint32_t seed, int inputs) {
  if (const char* n = std::getenv("MOESIM_VALUE_MUTATION_INPUTS"))
    inputs = std::atoi(n);
  std::mt19937 rng(seed);
  for (int i = 0; i < inputs; ++i) {
    std::vector<uint8_t> bytes(3 + rng() % 40);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    SCOPED_TRACE(i);
    target(bytes.data(), bytes.size());
  }
}

TEST(ValueMutation, ModelFileNumbersNeverAbort) {
  RunSeeded(ModelValues, 44, 150);
}
TEST(ValueMutation, SystemFileNumbersNeverAbort) {
  RunSeeded(SystemValues, 45, 150);
}
TEST(ValueMutation, ScenarioNumbersNeverAbort) {
  RunSeeded(ScenarioValues, 46, 150);
}

// The edits land: a model whose hidden_size is set to -1 is refused (the
// test of the harness itself, so the cases above are not vacuous).
TEST(ValueMutation, EditsReachTheMessage) {
  models::Model model = *models::LoadModel("deepseek-v3");
  std::vector<const google::protobuf::FieldDescriptor*> prefix;
  std::vector<NumericField> fields;
  CollectNumericFields(model.GetDescriptor(), prefix, fields, 0);
  size_t hidden = fields.size();
  for (size_t k = 0; k < fields.size(); ++k)
    if (fields[k].path.back()->name() == "hidden_size") hidden = k;
  ASSERT_LT(hidden, fields.size());
  const uint8_t edit[] = {static_cast<uint8_t>(hidden >> 8),
                          static_cast<uint8_t>(hidden & 0xff), 1};
  MutateValues(edit, sizeof edit, model);
  EXPECT_EQ(model.hidden_size(), -1);
  EXPECT_FALSE(models::ValidateModel(model, "m"));
}

}  // namespace
}  // namespace moesim::fuzz
