// The step builder's emission (sim/step_builder.h): the pipeline schedule
// laid out on the engine, and the optimizer step after it.
#include <algorithm>

#include "sim/step_builder.h"

namespace moesim::sim::internal {

using models::Group;
using topology::Collective;
using topology::GroupKind;

void StepBuilder::ResetEmission() {
  engine_.ClearOps();
  spans_.clear();
  bundles_.clear();
  for (std::vector<double>& lane : class_s_) {
    std::fill(lane.begin(), lane.end(), 0.0);
  }
  for (Lane& ln : lanes_) {
    ln.reduce_scatters.clear();
    ln.step_host = -1;
    ln.pending_send = -1;
  }
  for (Stage& st : stages_) {
    st.offloaded.clear();
    st.pre_reload.clear();
    st.keep_last.clear();
  }
}

void StepBuilder::Emit(int64_t microbatches) {
  const models::Parallelism& par = s_.parallel;
  if (emitted_) ResetEmission();
  emitted_ = true;
  // The step's own count, or a sample's: priced as the step's (above).
  const int64_t step_microbatches = s_.training.num_microbatches();
  microbatches_ = microbatches > 0 ? microbatches : step_microbatches;
  // Slack for what the estimate leaves out (DP buckets, the optimizer), so
  // that a large graph never reallocates.
  const size_t estimated = EstimatedOps();
  const size_t ops = estimated + estimated / 16 + lanes_.size() * 16;
  engine_.Reserve(ops, ops + ops / 2);
  PipelineCallbacks callbacks;
  callbacks.run = [this](int r, const models::ScheduleStep& step,
                         const std::vector<OpId>& entry) {
    const OpId emitted = static_cast<OpId>(engine_.op_count());
    // A weight-gradient step exchanges nothing: no p2p call, no sync.
    if (p2p_sync_ && step.sends()) HostSyncAtP2p(r, step, entry);
    const OpId begin = static_cast<OpId>(engine_.op_count());
    const Bundle exit = step.forward() ? EmitForward(r, step, entry)
                        : step.kind == models::StepKind::kWeightGrad
                            ? EmitWeightGrad(r, step, entry)
                            : EmitBackward(r, step, entry);
    const OpId end = static_cast<OpId>(engine_.op_count());
    spans_.push_back(
        {r, step.kind, step.chunk, begin, end, At(exit, 0), emitted, end});
    return exit;
  };
  // A send follows its step's emission at once (EmitPipeline): it extends
  // the last span (both halves of a merged pair).
  callbacks.send = [this](int r, int, const models::ScheduleStep& step,
                          Bundle done) {
    const Bundle sent = Send(r, step.forward(), done);
    const OpId end = static_cast<OpId>(engine_.op_count());
    for (auto it = spans_.rbegin(); it != spans_.rend() && it->stage == r &&
                                    it->begin == spans_.back().begin;
         ++it) {
      it->emitted_end = end;
    }
    return sent;
  };
  if (s_.training.ep_overlap) {
    callbacks.run_pair = [this](int r, const models::ScheduleStep& f,
                                const models::ScheduleStep& b,
                                const std::vector<OpId>& entry) {
      const OpId begin = static_cast<OpId>(engine_.op_count());
      const PipelineCallbacks::PairEnd end = EmitPair(r, f, b, entry);
      const OpId stop = static_cast<OpId>(engine_.op_count());
      spans_.push_back(
          {r, f.kind, f.chunk, begin, stop, At(end.forward, 0), begin, stop});
      spans_.push_back(
          {r, b.kind, b.chunk, begin, stop, At(end.backward, 0), begin, stop});
      return end;
    };
  }
  // The previous step's closing sync leaves the GPU idle while the host
  // logs the loss, zeroes the grad buffers and dispatches the first param
  // gathers: the host stream starts with that work.
  for (int r = 0; r < par.pp; ++r) {
    for (int l = 0; l < lanes_per_stage_; ++l) {
      Lane& ln = lane(r, l);
      ln.step_host =
          emitter_.EmitOne(ln.streams, stages_[r].step_host_after, {});
    }
  }
  std::vector<OpId> chain(par.pp, -1);
  EmitPipeline(s_.training.pipeline_schedule, par.pp, par.vpp, microbatches_,
               chain, callbacks);
  for (int r = 0; r < par.pp; ++r) EmitOptimizer(r, chain[r]);
}

// The optimizer step on this GPU's shard after its last reduce-scatter:
// Adam (memory-bound: read master weight, grad, both moments; write them and
// the 16-bit weight) on the share kept on the GPU; the offloaded share moves
// its gradients to the host, runs CPU Adam, and copies weights back (no
// overlap of the three: the replay-fidelity issue adds it). A straggler's
// Adam kernel is slowed like its other kernels.
void StepBuilder::EmitOptimizer(int r, Bundle after) {
  Stage& st = stages_[r];
  const models::Parallelism& par = s_.parallel;
  const models::TrainingOptions& tr = s_.training;
  double shard = 0;
  for (const std::vector<Item>& items : st.variants[0].items) {
    for (const Item& item : items) {
      shard += static_cast<double>(item.dense_params) / (par.dp * par.cp) +
               static_cast<double>(item.expert_params) / par.edp;
    }
  }
  const double offload = tr.optimizer_offload_fraction;
  const double bytes_per_param = 2.0 * tr.main_param_bytes +
                                 tr.main_grad_bytes + 4.0 * tr.exp_avg_bytes +
                                 2;
  const calibration::CostModel& costs = *platform_.costs;
  const calibration::Tables& t = costs.tables();
  const double d2h = CopyRate("d2h"), h2d = CopyRate("h2d");
  const double cpu_params_s =
      t.cpu_adam.empty() ? 0 : t.cpu_adam.front().params_per_s;
  const double params = offload * shard;
  const double d2h_s = params * tr.main_grad_bytes / (d2h * 1e9);
  const double adam_s = params / cpu_params_s;
  const double h2d_s = params * 2.0 / (h2d * 1e9);
  size_t groups = 0;
  for (const std::vector<Item>& items : st.variants[0].items) {
    groups += items.size();
  }
  groups = std::max<size_t>(groups, 1);
  // --offload-optimizer-states: the optimizer state the memory model puts
  // in host memory (master weights and both moments of this GPU's shard).
  const double state_bytes =
      tr.offload_optimizer_states ? Memory().stages[r].optimizer_host_bytes : 0;
  const Time adam_time = Time::FromSecondsCeil(
      costs
          .MemoryBound("adam",
                       std::max(1.0, (1 - offload) * shard * bytes_per_param))
          .seconds);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    Lane& ln = lane(r, l);
    const int index = LaneIndex(r, l);
    auto add = [&](const TimedOp& op, std::span<const OpId> deps) {
      class_s_[index][ClassId(op.category)] += op.duration.seconds();
      return emitter_.EmitOne(ln.streams, op, deps);
    };
    std::vector<OpId> deps = ln.reduce_scatters;
    deps.push_back(At(after, l));
    // The optimizer's kernels wait for the host to issue them, after the
    // last backward's launches (the host stream is FIFO) and the grad sync
    // and optimizer Python before them.
    deps.push_back(emitter_.EmitOne(ln.streams, st.step_host_before, {}));
    if (tr.offload_optimizer_states && state_bytes > 0) {
      // --offload-optimizer-states (OptimizerStateOffloader): the master
      // weights and moments come back before the step (reload on the h2d
      // stream once the step is issued, sync_before_step), and go down after
      // it (offload, overlapping the next step's start: replayed at this
      // step's start, where the previous step's copy runs).
      TimedOp up = CopyOp("reload optimizer states h2d",
                          Time::FromSecondsCeil(state_bytes / (h2d * 1e9)),
                          StreamKind::kCopyH2d);
      deps.push_back(emitter_.EmitOne(ln.streams, up, deps));
      TimedOp down = CopyOp("offload optimizer states d2h",
                            Time::FromSecondsCeil(state_bytes / (d2h * 1e9)));
      const OpId start[] = {ln.step_host};
      emitter_.EmitOne(ln.streams, down, start);
    }
    TimedOp adam;
    adam.name = "optimizer adam";
    adam.category = "optimizer";
    adam.duration = adam_time;
    const double slowdown = VariantOf(r, l).rank.compute_slowdown;
    if (slowdown != 1) {
      adam.duration = Time::FromSecondsCeil(adam_time.seconds() * slowdown);
    }
    OpId chain = add(adam, deps);
    if (offload <= 0) continue;
    auto host_op = [&](std::string name, double seconds) {
      TimedOp op;
      op.name = std::move(name);
      op.category = "optimizer";
      op.duration = Time::FromSecondsCeil(seconds);
      const OpId previous[] = {chain};
      chain = add(op, previous);
    };
    if (!tr.offload_overlap) {
      host_op("offload grads d2h", d2h_s);
      host_op("cpu adam", adam_s);
      host_op("offload params h2d", h2d_s);
      continue;
    }
    // --overlap-cpu-optimizer-d2h-h2d: Megatron's hybrid optimizer copies
    // each parameter group's gradients down, steps it on the CPU and copies
    // its weights up while the next group is in flight: a pipeline over the
    // stage's layers (one group each), so the slowest of the three sets the
    // pace and the first group's copy down and the last one's copy up stay
    // exposed.
    host_op("offload d2h / cpu adam / h2d (overlapped)",
            std::max({d2h_s, adam_s, h2d_s}) + (d2h_s + h2d_s) / groups);
  }
}

}  // namespace moesim::sim::internal
