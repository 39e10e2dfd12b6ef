// An explicit pipeline layout for a split Megatron cannot derive: decoder
// layers that neither divide PP x VPP nor, with the embedding and the loss
// counted as layers, divide it (models::AccountedLayout; a model with MTP
// layers never does). Used where a tool changes PP or VPP and must drop the
// old layout string: `moesim advise` and `moesim sweep`.
#ifndef MOESIM_SCENARIOS_PIPELINE_SPLIT_H_
#define MOESIM_SCENARIOS_PIPELINE_SPLIT_H_

#include <cstdint>
#include <string>

namespace moesim::scenarios {

// A layout string for `layers` decoder layers and `mtp` MTP layers over
// `stages` virtual stages (PP x VPP): the embedding on the first stage, the
// MTP layers and the loss on the last, the remainder of the even split on
// the middle stages first, e.g. 61 layers, 1 MTP, 8 stages:
// "Et*7|t*8|t*8|t*8|t*8|t*8|t*7|t*7mL". "" when a stage would hold no layer.
std::string SplitLayout(int64_t layers, int64_t mtp, int stages);

// The layout to set on a scenario whose PP x VPP was just changed: "" when
// the layers divide evenly or Megatron's accounted split applies (Resolve()
// derives those), else SplitLayout().
std::string LayoutForUnevenSplit(int64_t layers, int64_t mtp, int pp, int vpp);

}  // namespace moesim::scenarios

#endif  // MOESIM_SCENARIOS_PIPELINE_SPLIT_H_
