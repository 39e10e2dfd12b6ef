// libFuzzer target: a measured-runs CSV through `moesim validate FILE -j1`
// (RunValidate reads a file, so the input is written to one first). Rows that
// parse and resolve are replayed, so executions are slower than the other
// targets'; -max_len keeps inputs to a few rows.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "tools/validate_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      "/tmp/moesim_runs_fuzz_" + std::to_string(::getpid()) + ".csv";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(size));
  }
  moesim::tools::ValidateFlags flags;
  flags.runs_file = path;
  flags.jobs = 1;
  flags.json = (size % 2) == 0;
  (void)moesim::tools::RunValidate(flags);
  return 0;
}
