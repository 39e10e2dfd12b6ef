// libFuzzer target: a sweep .textproto built into its space (axes counted
// before they are built, rules parsed), then the first candidates resolved
// and judged by the rules, in checked arithmetic. base_file is left to the
// input, but may name only .textproto files.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/scenario.h"
#include "studies/sweep_spec.h"
#include "util/textproto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  moesim::scenarios::Sweep spec;
  if (!moesim::util::ParseTextProto(text, "fuzz.textproto", spec)) return 0;
  auto space =
      moesim::studies::SweepSpace::Build(spec, "fuzz.textproto", text, "");
  if (!space) return 0;
  for (int64_t i = 0; i < std::min<int64_t>(space->size(), 4); ++i) {
    auto resolved = moesim::scenarios::Resolve(space->Candidate(i), "fuzz");
    if (resolved) (void)space->Excluded(*resolved);
  }
  return 0;
}
