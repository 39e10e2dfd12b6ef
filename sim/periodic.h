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
// only when the longest has reached its steady state (SteadyShift: every
// op of a steady-phase schedule step repeats one period later, shifted by
// at most the step's growth from the second count to the third, and no
// stream's busy time grows faster than the step) and every figure is
// affine across them (ExtrapolateStep: the step's length and every rank's
// finish exactly to the picosecond, sums of seconds to 1e-9 of their size,
// counts exactly, everything else equal); then it extends them to m.
// Otherwise the whole step is replayed.
#ifndef MOESIM_SIM_PERIODIC_H_
#define MOESIM_SIM_PERIODIC_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/time.h"
#include "sim/engine.h"
#include "sim/replay.h"
#include "sim/step_stats.h"

namespace moesim::sim::internal {

// The micro-batch counts the shortcut replays for a step of `microbatches`
// on `pp` stages with `vpp` chunks: m0, m0 + p, m0 + 2p with p the period
// (pp when vpp > 1, else 1), m0 = microbatches (mod p), m0 at least
// kPeriodicWarmupPeriods periods past the longest warmup and m0 + 2p with a
// SteadyWindow on every stage; nullopt when no such samples cost less than
// the step itself (3 m0 + 3p micro-batches against m).
inline constexpr int64_t kPeriodicWarmupPeriods = 2;
// `at_least`: a least m0, for another try after samples that were not yet
// steady.
std::optional<std::array<int64_t, 3>> PeriodicSamples(int pp, int vpp,
                                                      int64_t microbatches,
                                                      int64_t at_least = 0);

// The schedule steps of stage `r` that SteadyShift compares with the step a
// period (2 p vpp steps) on: the last steps of the steady phase (between
// the warmup and the cooldown) whose micro-batch is past the first period
// and whose successor's is before the last; as many as a period's steps or
// the warmup + 2, whichever is more, so that the window holds every step a
// later one waits for. Empty when the step has too few micro-batches.
std::vector<int64_t> SteadyWindow(int r, int pp, int vpp, int64_t microbatches);

// How far the replayed step on `engine` moves in a period once steady:
// every step of each stage's SteadyWindow must have emitted the same ops on
// the same streams with the same durations as its step a period on, each
// starting and finishing some shift later; the largest shift. nullopt when
// a window is empty or an op differs. Ops may move by less than the largest
// (a host that launches faster than the GPU runs keeps getting further
// ahead and never binds); an op that moves by more than the step grows
// belongs to a slower cycle that has not caught up yet, which three affine
// samples cannot tell. `spans`: StepBuilder::spans(), in emission order.
std::optional<Time> SteadyShift(const Engine& engine,
                                const std::vector<StepSpan>& spans, int pp,
                                int vpp, int64_t microbatches);

// The step of `microbatches` from the replays `a`, `b` and `c` of the counts
// PeriodicSamples gave, when every figure is affine across them (the
// header's rules); nullopt when one is not. The result's figures that the
// replay derives from others (bubble_fraction) are derived again; those
// Replay adds after the engine (the GC stall, FLOPs, TFLOPS, MFU) are not
// set. REQUIRES: the three replays of the same scenario and options.
// `shift`: SteadyShift of `c`'s replay, which must be at most the step's
// growth from `b` to `c`.
std::optional<StepResult> ExtrapolateStep(const StepResult& a,
                                          const StepResult& b,
                                          const StepResult& c,
                                          const std::array<int64_t, 3>& samples,
                                          int64_t microbatches,
                                          std::optional<Time> shift);

}  // namespace moesim::sim::internal

#endif  // MOESIM_SIM_PERIODIC_H_
