// libFuzzer target: an nccl-tests log through ParseNcclTestsLog and back out
// as collectives.csv text (what `moesim calibrate import-nccl-tests` does).
// The first byte's low bit picks the tier.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "calibration/nccl_tests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view tier = (data[0] & 1) ? "net" : "nvlink";
  const std::string_view text(reinterpret_cast<const char*>(data + 1),
                              size - 1);
  auto rows = moesim::calibration::ParseNcclTestsLog(text, "fuzz.log", tier);
  if (!rows) return 0;
  (void)moesim::calibration::CollectiveRowsToCsv(*rows);
  return 0;
}
