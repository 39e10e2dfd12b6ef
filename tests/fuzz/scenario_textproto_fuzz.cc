// libFuzzer target: a scenario .textproto through ParseScenario, Resolve and
// the memory report (what `moesim memory FILE` does). Inputs naming a model
// or system by path are not resolved: the fuzzer must not read arbitrary
// files (a path like /dev/zero is covered by the bad-input catalogue).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/scenario.h"
#include "tools/memory_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = moesim::scenarios::ParseScenario(text, "fuzz.textproto");
  if (!spec) return 0;
  if (spec->model().find('/') != std::string::npos ||
      spec->system().find('/') != std::string::npos)
    return 0;
  auto resolved = moesim::scenarios::Resolve(*spec, "fuzz.textproto", text);
  if (!resolved) return 0;
  const moesim::studies::MemoryReport report =
      moesim::studies::BuildMemoryReport(*resolved);
  (void)moesim::tools::FormatMemoryJson(*resolved, report);
  return 0;
}
