// The walk behind `moesim advise` (tools/advise.h): the optimization
// workflow (seeds_notes.md §2, the Three Walls) as a greedy search. From the
// given scenario it loops: replay the layout (BuildRunReport), diagnose the
// binding wall (sim::DiagnoseWall), propose single-knob changes in the
// workflow's priority order for that wall (then the other walls' changes, so
// a fitting layout at the memory wall can still move), replay each valid
// one, and keep
//   - when the layout does not fit: the first change (in priority order) that
//     makes it fit, else the one that lowers the peak the most;
//   - otherwise: the fitting change with the most tokens/s/GPU, when it gains
//     more than kMinGainPct;
//   - failing that, on the memory wall (fits, under sim::kMemoryHeadroom
//     free): the fastest memory change that leaves the wall, even at a loss,
//     so the next step can spend the room (offload, then selective
//     recompute: the workflow's "fit first, offload only after recompute and
//     parallelism"); the search stops when two kept steps pass without a new
//     fastest fitting layout;
// until no change helps or max_steps changes were kept, never returning to
// a layout on the trail. The final layout is the trail's fastest that fits.
// GPU count, model, sequence length and global batch stay fixed. Candidates
// the scenario rules refuse (scenarios::Resolve) are skipped and counted;
// candidates that do not fit are not replayed. Sequential and deterministic:
// same input, same bytes.
//
// Proposals, in order:
//   memory         selective recompute +core_attn, +mla_up_proj, +layernorm,
//                  +moe_act, +mlp (one at a time); CP x2 (seq >= 8K); EP x2; PP
//                  x2 (and PP x2 with VPP 1); optimizer offload 0.5, 1.0; full
//                  recompute. Only these while the layout does not fit.
//   full recompute that fits: selective sets instead, largest first, and
//                  mla_up_proj,layernorm,moe_act|moe,mlp (no core_attn);
//                  then the same with optimizer offload 1 (one compound
//                  change).
//   communication  dispatcher deepep / hybridep; EP overlap on; EP / 2;
//                  TP / 2; CP a2a+p2p (inner = a node) when CP x TP spans
//                  nodes.
//   host           CUDA graphs te:moe_router;moe_preprocess, then +attn;
//                  MBS x2.
//   compute        MBS x2; drop one recompute module; PP / 2 (and with
//                  VPP 1); VPP x2, VPP / 2.
// The binding wall's group comes first, then compute, communication, host.
#ifndef MOESIM_STUDIES_ADVISE_H_
#define MOESIM_STUDIES_ADVISE_H_

#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "util/error.h"

namespace moesim::studies {

inline constexpr double kMinGainPct = 0.5;

// One layout on the trail: the change that led to it (from the previous
// layout), the wall diagnosed before the change, and its replayed figures.
struct AdviseStep {
  std::string change;  // "start" for the given layout
  std::string wall;    // binding wall of the layout the change was made on
  double tokens_per_sec_per_gpu = 0;
  double tflops_per_gpu = 0;
  double gain_pct = 0;  // tokens/s/GPU against the previous layout
  double peak_memory_gib = 0;
  bool fits = false;
  int candidates = 0;  // changes proposed at this step
  int invalid = 0;     // of which the scenario rules refused
};

struct AdviseResult {
  AdviseStep start;
  std::vector<AdviseStep> steps;  // the kept changes, in order
  // The final layout: the fastest fitting layout on the trail (step 0 is
  // the start), else the last one.
  int final_step = 0;
  std::string final_wall;  // its binding wall
  double final_tokens_per_sec_per_gpu = 0;
  double final_tflops_per_gpu = 0;
  double final_peak_memory_gib = 0;
  bool final_fits = false;
  scenarios::ResolvedScenario final_layout;
};

// REQUIRES: max_steps >= 0, max_candidates >= 0.
[[nodiscard]] util::Result<AdviseResult> Advise(
    const scenarios::ResolvedScenario& start, int max_steps,
    int max_candidates);

// "full", "none" or the selective modules joined by ','.
std::string RecomputeText(const scenarios::Recompute& rc);

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_ADVISE_H_
