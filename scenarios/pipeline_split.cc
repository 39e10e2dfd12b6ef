#include "scenarios/pipeline_split.h"

#include <string>
#include <vector>

#include "models/pipeline.h"

namespace moesim::scenarios {

std::string SplitLayout(int64_t layers, int64_t mtp, int stages) {
  if (stages < 1 || layers < stages) return "";
  std::vector<int64_t> n(stages, layers / stages);
  int64_t extra = layers % stages;
  for (int i = 1; extra > 0 && i < stages - 1; ++i, --extra) ++n[i];
  for (int i : {0, stages - 1}) {
    if (extra > 0) ++n[i], --extra;
  }
  std::string out;
  for (int i = 0; i < stages; ++i) {
    if (i > 0) out += "|";
    if (i == 0) out += "E";
    out += "t";
    if (n[i] > 1) {
      out += '*';
      out += std::to_string(n[i]);
    }
    if (i == stages - 1) out += std::string(mtp, 'm') + "L";
  }
  return out;
}

std::string LayoutForUnevenSplit(int64_t layers, int64_t mtp, int pp, int vpp) {
  const int64_t stages = int64_t{pp} * vpp;
  if (stages < 1 || layers % stages == 0) return "";
  if (!models::AccountedLayout(layers, mtp, pp, vpp).empty()) return "";
  return SplitLayout(layers, mtp, static_cast<int>(stages));
}

}  // namespace moesim::scenarios
