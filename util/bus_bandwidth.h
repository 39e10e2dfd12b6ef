// nccl-tests' bus-bandwidth convention (NVIDIA/nccl-tests doc/PERFORMANCE.md),
// shared by the collective model, the calibration tables and the nccl-tests
// import: busbw = algbw x factor, so that busbw compares with link speed
// whatever the group size.
#ifndef MOESIM_UTIL_BUS_BANDWIDTH_H_
#define MOESIM_UTIL_BUS_BANDWIDTH_H_

#include <string_view>

namespace moesim::util {

// The highest bus bandwidth moesim accepts from a measurement, GB/s: 100x
// NVLink 5's 900 GB/s per GPU (NVIDIA GB200 NVL72 datasheet). Not a speed
// moesim uses, a guard: a value above it is a corrupt log or a unit slip.
inline constexpr double kMaxMeasuredBusGbPerS = 1e5;

// Factor for a collective named as nccl-tests names it ("all_reduce",
// "all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast") over
// n ranks: 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter
// and all-to-all, 1 otherwise. REQUIRES: n >= 1.
inline double NcclBusFactor(std::string_view collective, double n) {
  if (collective == "all_reduce") return 2 * (n - 1) / n;
  if (collective == "all_gather" || collective == "reduce_scatter" ||
      collective == "alltoall") {
    return (n - 1) / n;
  }
  return 1;
}

}  // namespace moesim::util

#endif  // MOESIM_UTIL_BUS_BANDWIDTH_H_
