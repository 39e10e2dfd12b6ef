// The value lists of `moesim sweep`'s axis flags (tools/sweep_flags.h),
// parsed in tools/sweep_flag_values.cc. Private to the tools library.
#ifndef MOESIM_TOOLS_SWEEP_FLAGS_INTERNAL_H_
#define MOESIM_TOOLS_SWEEP_FLAGS_INTERNAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "scenarios/sweep.pb.h"
#include "util/error.h"

namespace moesim::tools::internal {

// Every occurrence split at commas (or taken whole, `split` false). Empty
// items stay ("1,2," has a third, empty one), so that the axis's parser
// refuses them rather than a typo passing unseen.
std::vector<std::string> Items(const std::vector<std::string>& occurrences,
                               bool split);

// An integer axis: "1,2,4", "1:8", "4096:131072", "1,3:9:3".
util::Result<scenarios::IntAxis> ParseIntAxis(
    const std::vector<std::string>& given, std::string_view flag);

// Fractions in [0, 1] (--cpu-offload), comma-separated.
util::Result<std::vector<double>> ParseFractions(
    const std::vector<std::string>& given);

// 0 and 1 (--ep-overlap), comma-separated.
util::Result<std::vector<bool>> ParseBits(
    const std::vector<std::string>& given);

}  // namespace moesim::tools::internal

#endif  // MOESIM_TOOLS_SWEEP_FLAGS_INTERNAL_H_
