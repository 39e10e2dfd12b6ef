// libFuzzer target: one calibration table CSV through ParseTable. The first
// byte picks the table (gemm, attention, collectives, ...), the rest is the
// file's text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "calibration/tables.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<std::string>& names = moesim::calibration::TableNames();
  const std::string& name = names[data[0] % names.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1),
                              size - 1);
  moesim::calibration::Tables tables;
  (void)moesim::calibration::ParseTable(name, text, "fuzz/" + name + ".csv",
                                        tables);
  return 0;
}
