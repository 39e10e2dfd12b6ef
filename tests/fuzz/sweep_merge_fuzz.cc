// libFuzzer target: one or two `sweep --shard` partial results (JSON),
// split at the first NUL byte, merged: every count in a part is checked
// before it sizes the merge.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> files{"part0.json"}, texts;
  const size_t nul = input.find('\0');
  texts.push_back(input.substr(0, nul));
  if (nul != std::string::npos) {
    files.push_back("part1.json");
    texts.push_back(input.substr(nul + 1));
  }
  (void)moesim::studies::MergeSweepTexts(files, texts);
  return 0;
}
