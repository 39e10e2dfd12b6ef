// Internal to moesim_sim (sim/replay.cc): the periodic steady state of a
// step, so that a step of many micro-batches costs what a few cost.
//
// Why it holds. On the analytical network every op of the replay has a
// fixed duration, so the step is a timed event graph: each op starts at the
// latest finish of its predecessors (max-plus algebra). Megatron's 1F1B
// schedule repeats itself every `period` micro-batches once each stage is
// past its warmup (models::OneFOneBSchedule: 1 without interleaving; pp
// with it, whose micro-batches go in groups of pp), and a max-plus system
// driven by the same ops each period becomes exactly periodic after a finite
// transient (Baccelli, Cohen, Olsder, Quadrat, "Synchronization and
// Linearity", 1992, ch. 3, the cyclicity theorem): adding a period adds the
// same op times, the same busy intervals and the same critical-path segment.
// So every figure of a step of m micro-batches is affine in m along m0,
// m0 + period, m0 + 2 period, ... once m0 is past the transient.
//
// The shortcut replays three such counts (PeriodicSamples) and accepts them
// only when every figure is affine across them (ExtrapolateStep: the step's
// length and every rank's finish exactly to the picosecond, sums of seconds
// to 1e-9 of their size, counts exactly, everything else equal); then it
// extends them to m. Otherwise the whole step is replayed.
#ifndef MOESIM_SIM_PERIODIC_H_
#define MOESIM_SIM_PERIODIC_H_

#include <array>
#include <cstdint>
#include <optional>

#include "sim/replay.h"

namespace moesim::sim::internal {

// The micro-batch counts the shortcut replays for a step of `microbatches`
// on `pp` stages with `vpp` chunks: m0, m0 + p, m0 + 2p with p the period
// (pp when vpp > 1, else 1), m0 = microbatches (mod p) and m0 at least
// kPeriodicWarmupPeriods periods past the longest warmup; nullopt when
// those cost about as much as the step itself (fewer than two periods
// would be saved).
inline constexpr int64_t kPeriodicWarmupPeriods = 2;
std::optional<std::array<int64_t, 3>> PeriodicSamples(int pp, int vpp,
                                                      int64_t microbatches);

// The step of `microbatches` from the replays `a`, `b` and `c` of the counts
// PeriodicSamples gave, when every figure is affine across them (the
// header's rules); nullopt when one is not. The result's figures that the
// replay derives from others (bubble_fraction) are derived again; those
// Replay adds after the engine (the GC stall, FLOPs, TFLOPS, MFU) are not
// set. REQUIRES: the three replays of the same scenario and options.
std::optional<StepResult> ExtrapolateStep(const StepResult& a,
                                          const StepResult& b,
                                          const StepResult& c,
                                          const std::array<int64_t, 3>& samples,
                                          int64_t microbatches);

}  // namespace moesim::sim::internal

#endif  // MOESIM_SIM_PERIODIC_H_
