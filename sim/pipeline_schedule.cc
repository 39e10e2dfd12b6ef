#include "sim/pipeline_schedule.h"

#include "util/check.h"

namespace moesim::sim {

void EmitPipeline(int pp, int vpp, int64_t microbatches,
                  std::vector<OpId>& chain,
                  const PipelineCallbacks& callbacks) {
  CheckOrDie(static_cast<int>(chain.size()) == pp,
             "EmitPipeline: one chain op per stage");
  const int64_t virtual_stages = int64_t{pp} * vpp;
  // Per (virtual stage, micro-batch): the op delivering its activation to
  // the next virtual stage / its gradient to the previous one.
  std::vector<OpId> forward_sent(virtual_stages * microbatches, -1);
  std::vector<OpId> backward_sent(virtual_stages * microbatches, -1);
  std::vector<models::OneFOneBSchedule> schedules;
  for (int r = 0; r < pp; ++r) schedules.emplace_back(r, pp, vpp, microbatches);

  // Emit each stage's steps in order; a step whose input op does not exist
  // yet waits (in construction only) for its neighbour to get there.
  // Megatron's schedule is deadlock-free, so every pass makes progress.
  std::vector<int64_t> next(pp, 0);
  bool done = false;
  while (!done) {
    done = true;
    bool progress = false;
    for (int r = 0; r < pp; ++r) {
      while (next[r] < schedules[r].size()) {
        const models::ScheduleStep step = schedules[r][next[r]];
        const int64_t v = int64_t{step.chunk} * pp + r;
        OpId input = -1;
        if (step.forward && v > 0) {
          input = forward_sent[(v - 1) * microbatches + step.microbatch];
          if (input < 0) break;
        } else if (!step.forward && v + 1 < virtual_stages) {
          input = backward_sent[(v + 1) * microbatches + step.microbatch];
          if (input < 0) break;
        }
        std::vector<OpId> entry;
        if (chain[r] >= 0) entry.push_back(chain[r]);
        if (input >= 0) entry.push_back(input);
        chain[r] = callbacks.run(r, step, entry);
        if (step.forward && v + 1 < virtual_stages) {
          forward_sent[v * microbatches + step.microbatch] =
              callbacks.send(r, (r + 1) % pp, step, chain[r]);
        } else if (!step.forward && v > 0) {
          backward_sent[v * microbatches + step.microbatch] =
              callbacks.send(r, (r + pp - 1) % pp, step, chain[r]);
        }
        ++next[r];
        progress = true;
      }
      done = done && next[r] == schedules[r].size();
    }
    CheckOrDie(done || progress, "EmitPipeline: schedule deadlocked");
  }
}

}  // namespace moesim::sim
