// Physical ceilings of per-GPU figures, for values read from files (measured
// runs, sweep parts): far above any GPU of the catalogue (B300's dense FP4
// peak is 15 PFLOPS; the largest memory is GB300's 288 GB), so a value above
// them is a typo, a unit slip or an edit.
#ifndef MOESIM_STUDIES_PHYSICAL_LIMITS_H_
#define MOESIM_STUDIES_PHYSICAL_LIMITS_H_

namespace moesim::studies {

inline constexpr double kMaxTflopsPerGpu = 1e5;
inline constexpr double kMaxStepSeconds = 1e6;
inline constexpr double kMaxGibPerGpu = 1e4;
inline constexpr double kMaxTokensPerSecPerGpu = 1e9;

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_PHYSICAL_LIMITS_H_
