#include "sim/pipeline_schedule.h"

#include <memory>

#include "models/pipeline_schedules.h"
#include "util/check.h"

namespace moesim::sim {

void EmitPipeline(models::PipelineScheduleKind kind, int pp, int vpp,
                  int64_t microbatches, std::vector<OpId>& chain,
                  const PipelineCallbacks& callbacks) {
  CheckOrDie(static_cast<int>(chain.size()) == pp,
             "EmitPipeline: one chain op per stage");
  const int64_t virtual_stages = int64_t{pp} * vpp;
  // Per (virtual stage, micro-batch): the op delivering its activation to
  // the next virtual stage / its gradient to the previous one.
  std::vector<OpId> forward_sent(virtual_stages * microbatches, -1);
  std::vector<OpId> backward_sent(virtual_stages * microbatches, -1);
  std::vector<std::unique_ptr<models::PipelineSchedule>> schedules;
  for (int r = 0; r < pp; ++r)
    schedules.push_back(models::MakeSchedule(kind, r, pp, vpp, microbatches));

  // The op delivering `step`'s input on stage r (-1: none needed); false
  // when it does not exist yet. A weight gradient waits for nothing but its
  // own stage's input gradient, which the stage ran before it.
  auto InputReady = [&](const models::ScheduleStep& step, int r, OpId* input) {
    const int64_t v = int64_t{step.chunk} * pp + r;
    *input = -1;
    if (!step.sends()) return true;
    if (step.forward() && v > 0) {
      *input = forward_sent[(v - 1) * microbatches + step.microbatch];
      return *input >= 0;
    }
    if (!step.forward() && v + 1 < virtual_stages) {
      *input = backward_sent[(v + 1) * microbatches + step.microbatch];
      return *input >= 0;
    }
    return true;
  };
  // Sends `step`'s output onward once `done` finishes.
  auto Sent = [&](int r, const models::ScheduleStep& step, OpId done) {
    const int64_t v = int64_t{step.chunk} * pp + r;
    if (!step.sends()) return;
    if (step.forward() && v + 1 < virtual_stages) {
      forward_sent[v * microbatches + step.microbatch] =
          callbacks.send(r, (r + 1) % pp, step, done);
    } else if (!step.forward() && v > 0) {
      backward_sent[v * microbatches + step.microbatch] =
          callbacks.send(r, (r + pp - 1) % pp, step, done);
    }
  };
  // Emit each stage's steps in order; a step whose input op does not exist
  // yet waits (in construction only) for its neighbour to get there.
  // Megatron's schedule is deadlock-free, so every pass makes progress.
  std::vector<int64_t> next(pp, 0);
  bool done = false;
  while (!done) {
    done = true;
    bool progress = false;
    for (int r = 0; r < pp; ++r) {
      while (next[r] < schedules[r]->size()) {
        const models::PipelineSchedule& sched = *schedules[r];
        const models::ScheduleStep step = sched[next[r]];
        OpId input = -1;
        if (!InputReady(step, r, &input)) break;
        // A steady-state forward followed by its backward: merged when the
        // caller overlaps them.
        const int64_t j = next[r] - sched.warmup();
        const bool steady_forward = step.forward() && j >= 0 && j % 2 == 0 &&
                                    next[r] + 1 < sched.size();
        if (callbacks.run_pair && steady_forward) {
          const models::ScheduleStep back = sched[next[r] + 1];
          OpId back_input = -1;
          if (!InputReady(back, r, &back_input)) break;
          std::vector<OpId> entry;
          if (chain[r] >= 0) entry.push_back(chain[r]);
          if (input >= 0) entry.push_back(input);
          if (back_input >= 0) entry.push_back(back_input);
          const PipelineCallbacks::PairEnd end =
              callbacks.run_pair(r, step, back, entry);
          Sent(r, step, end.forward);
          Sent(r, back, end.backward);
          chain[r] = end.both;
          next[r] += 2;
          progress = true;
          continue;
        }
        std::vector<OpId> entry;
        if (chain[r] >= 0) entry.push_back(chain[r]);
        if (input >= 0) entry.push_back(input);
        chain[r] = callbacks.run(r, step, entry);
        Sent(r, step, chain[r]);
        ++next[r];
        progress = true;
      }
      done = done && next[r] == schedules[r]->size();
    }
    CheckOrDie(done || progress, "EmitPipeline: schedule deadlocked");
  }
}

}  // namespace moesim::sim
