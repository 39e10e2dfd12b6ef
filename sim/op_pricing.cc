#include "sim/op_pricing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string_view>

#include "models/dispatchers.h"

namespace moesim::sim {

namespace {

using calibration::Dtype;
using calibration::Estimate;
using models::LayerOp;
using models::OpKind;
using topology::Collective;

constexpr double kBf16Bytes = 2;

Collective ToCollective(models::CollectiveKind kind) {
  switch (kind) {
    case models::CollectiveKind::kAllGather:
      return Collective::kAllGather;
    case models::CollectiveKind::kReduceScatter:
      return Collective::kReduceScatter;
    case models::CollectiveKind::kAllReduce:
      return Collective::kAllReduce;
    case models::CollectiveKind::kAllToAll:
      return Collective::kAllToAll;
  }
  return Collective::kAllReduce;
}

StreamKind StreamOf(models::Group group) {
  switch (group) {
    case models::Group::kTp:
    case models::Group::kEtp:
      return StreamKind::kTp;
    case models::Group::kCp:
      return StreamKind::kCp;
    case models::Group::kEp:
      return StreamKind::kEp;
    case models::Group::kDp:
    case models::Group::kEdp:
      return StreamKind::kDp;
    case models::Group::kPp:
      return StreamKind::kPp;
  }
  return StreamKind::kTp;
}

// Builds a template: Serial() ops wait for the previous op, Add() ops for
// the listed ones.
TimedOp Transfer(const RankContext& rank, Collective collective,
                 const std::vector<int>& gpus,
                 const topology::GroupShape& shape, double bytes,
                 StreamKind stream, std::string name);

class Builder {
 public:
  int Serial(TimedOp op) {
    op.deps = {last_};
    return Add(std::move(op));
  }
  int Add(TimedOp op) {
    const bool ep = op.stream == StreamKind::kEp;
    out_.ops.push_back(std::move(op));
    last_ = static_cast<int>(out_.ops.size()) - 1;
    if (ep && on_first_ep_) {
      // Called once, with this op's index; it may add ops (and must leave
      // last() where the chain goes on).
      auto hook = std::move(on_first_ep_);
      on_first_ep_ = nullptr;
      hook(last_);
    }
    return last_;
  }
  // `hook` runs right after the first EP-stream op is added.
  void OnFirstEpOp(std::function<void(int)> hook) {
    on_first_ep_ = std::move(hook);
  }
  int last() const { return last_; }
  size_t size() const { return out_.ops.size(); }
  void set_ring(const RingBalance& ring) { out_.ring = ring; }
  TimedOp& at(size_t i) { return out_.ops[i]; }
  void set_last(int op) { last_ = op; }
  OpTemplate Finish() {
    out_.exit = last_;
    return std::move(out_);
  }

 private:
  OpTemplate out_;
  int last_ = kEntry;
  std::function<void(int)> on_first_ep_;
};

TimedOp ComputeOp(std::string name, const char* category,
                  const Estimate& estimate) {
  TimedOp op;
  op.stream = StreamKind::kCompute;
  op.duration = Time::FromSecondsCeil(estimate.seconds);
  op.name = std::move(name);
  op.category = category;
  return op;
}

// `dtype`: RankContext::attention_dtype (16 bits unless FP8 attention).
calibration::AttentionShape Shape(const models::AttentionWork& a, int64_t seq_q,
                                  int64_t seq_kv, bool causal, Dtype dtype) {
  calibration::AttentionShape s;
  s.batch = a.batch;
  s.seq_q = seq_q;
  s.seq_kv = seq_kv;
  s.heads_q = a.heads_q;
  s.heads_kv = a.heads_kv;
  s.head_dim_qk = a.head_dim_qk;
  s.head_dim_v = a.head_dim_v;
  s.causal = causal;
  s.window = a.window;
  s.dtype = dtype;
  return s;
}

// Bytes of one K/V (or Q, O) element as Transformer Engine moves it over
// CP: FP8 attention with a per-tensor recipe (delayed or current scaling)
// sends the quantized uint8 data; MXFP8 attention and 16-bit attention send
// the 16-bit tensors (TE@d0067d0 context_parallel.py: "MXFP8/F16 attention:
// q, k, v: dtype=fwd_nominal_dtype; FP8DS/CS attention: dtype=torch.uint8").
double CpElementBytes(Dtype attention_dtype) {
  return attention_dtype == Dtype::kFp8 ? 1.0 : kBf16Bytes;
}

// Core attention; with cp > 1 Transformer Engine's p2p ring
// (AttnFuncWithCPAndKVP2P, TransformerEngine@d0067d0
// transformer_engine/pytorch/attention/dot_product_attention/
// context_parallel.py). Megatron's causal load balancing gives each rank
// chunks i and 2cp-1-i of seq/(2cp) tokens. Step 0 is the causal
// ("diagonal") block of the local chunks. Each of the cp - 1 later steps is
// a "lower-triangle" tile on the ranks that hold the later chunks (both
// local chunks against the first remote chunk: seq_q 2c, seq_kv c) and an
// "upper-triangle" tile on the others (the second local chunk against both
// remote chunks: seq_q c, seq_kv 2c); the ring couples the ranks, so each
// step lasts as long as the slower of the two kernels.
//  - Forward: K and V travel as one packed buffer (torch.cat of k and v,
//    V at its own head dim), one isend/irecv pair per step, started at the
//    top of step s for step s + 1 once the previous pair is done. After each
//    step a small kernel merges the softmax statistics
//    (flash_attn_fwd_softmax_lse_correction); after the loop one kernel per
//    step rescales and adds its partial output into `out`
//    (flash_attn_fwd_out_correction; the last rank's are all full-size,
//    and the ring waits for it).
//  - Backward: the message of step 0 is K/V alone, of the middle steps K/V
//    and the accumulated dK/dV in one buffer ([2, kv]), of the last step
//    dK/dV alone; nothing moves after the loop. Each step adds its dQ into
//    the dQ buffer, then waits for its message and adds its dK/dV into the
//    received dK/dV; that dK/dV leaves with the next step's message.
//  - FP8 attention (per-tensor recipes, backward in FP8): K/V hops in
//    uint8 on steps 0..cp-2, each step's dK/dV stays in a per-step buffer,
//    and one all-to-all over the CP group returns them at the last step;
//    the dQ / dK/dV partial sums are reduced after the loop.
// What a ring's steps cost: the kernels, the bytes a hop moves, and each
// piece's host calls.
struct RingCosts {
  Estimate diagonal, tile;  // tile: the slower of the two off-diagonal tiles
  Estimate lse, out_fix;    // forward corrections
  // Backward accumulations: the diagonal step's, and the slower rank's per
  // tile (a lower tile adds a full dQ and half a dK/dV, an upper one half a
  // dQ and a full dK/dV; an add reads both operands and writes one, 3 x the
  // bytes).
  Estimate dq_full, dkv_full, dq_tile, dkv_tile;
  double tokens = 0;  // the rank's two chunks, over the batch
  double kv_elements = 0, kv_bytes = 0, q_bytes = 0, dkv_bytes = 0;
  bool fp8 = false;
  // Host calls per step (context_parallel.py): the ring exchange is
  // torch.empty_like for the receive buffer, the isend/irecv pair and the
  // req.wait(); a step is the q/k/v slicing views and the fused-attention
  // call; a correction or accumulation is one fused (jit) call.
  HostCalls hop_calls, step_calls, fix_calls;
};

RingCosts RingCostsOf(const models::AttentionWork& a, bool backward,
                      const RankContext& rank) {
  const calibration::CostModel& costs = *rank.costs;
  const int64_t local = a.seq_q;  // the rank's two chunks
  const int64_t chunk = local / 2;
  RingCosts c;
  c.diagonal = costs.Attention(
      Shape(a, local, local, a.causal, rank.attention_dtype), backward);
  const Estimate lower = costs.Attention(
      Shape(a, local, chunk, false, rank.attention_dtype), backward);
  const Estimate upper = costs.Attention(
      Shape(a, chunk, local, false, rank.attention_dtype), backward);
  c.tile = lower.seconds >= upper.seconds ? lower : upper;
  c.tokens = static_cast<double>(a.batch) * local;
  c.fp8 = rank.attention_dtype == Dtype::kFp8;
  c.kv_elements = c.tokens * a.heads_kv * (a.head_dim_qk + a.head_dim_v);
  c.kv_bytes = c.kv_elements * CpElementBytes(rank.attention_dtype);
  c.q_bytes = c.tokens * a.heads_q * a.head_dim_qk * kBf16Bytes;
  c.dkv_bytes = c.kv_elements * kBf16Bytes;
  if (!backward) {
    c.lse = costs.MemoryBound(
        "copy", 3.0 * static_cast<double>(a.batch) * a.heads_q * local * 4);
    // Read the step's partial output and the running `out`, write `out`.
    c.out_fix = costs.MemoryBound(
        "copy", 3.0 * c.tokens * a.heads_q * a.head_dim_v * kBf16Bytes);
  } else {
    c.dq_full = costs.MemoryBound("copy", 3.0 * c.q_bytes);
    c.dkv_full = costs.MemoryBound("copy", 3.0 * c.dkv_bytes);
    const Estimate dq_half = costs.MemoryBound("copy", 1.5 * c.q_bytes);
    const Estimate dkv_half = costs.MemoryBound("copy", 1.5 * c.dkv_bytes);
    const bool lower_slower = c.dq_full.seconds + dkv_half.seconds >=
                              dq_half.seconds + c.dkv_full.seconds;
    c.dq_tile = lower_slower ? c.dq_full : dq_half;
    c.dkv_tile = lower_slower ? dkv_half : c.dkv_full;
  }
  c.hop_calls.torch = 4;
  c.step_calls.torch = 1;
  c.step_calls.views = 3;
  c.fix_calls.torch = 1;
  return c;
}

// "3", or "1 .. 254" for a run of merged steps.
std::string StepLabel(int first, int count) {
  std::string label = std::to_string(first);
  if (count > 1) label += " .. " + std::to_string(first + count - 1);
  return label;
}

// A ring's ops as they are added: each op stands for `count` identical
// steps (1 unless MergedSteps), its length and host calls summed; the
// deps it names (the ring's entry, the compute chain's last op, the
// exchange in flight) become the template's, kEntry ones dropped.
class RingOps {
 public:
  RingOps(const std::string& name, const std::vector<int>& hop_pair,
          const RingCosts& c, int merged, const RankContext& rank, Builder& b)
      : name_(name),
        pair_(hop_pair),
        c_(c),
        merged_(merged),
        rank_(rank),
        b_(b),
        entry_(b.last()) {}

  // The steps the ops added at `step` stand for: the merged steady steps
  // from step 1 (MergedSteps), else one.
  int StepsAt(int step) const { return merged_ > 0 && step == 1 ? merged_ : 1; }

  TimedOp Hop(const std::string& label, double bytes, const char* what) const {
    TimedOp t = SendRecvOp(rank_, pair_, bytes, StreamKind::kCp,
                           name_ + " cp " + what + " " + label);
    t.calls = c_.hop_calls;
    return t;
  }
  TimedOp Kernel(const std::string& label, const char* category,
                 const Estimate& e, const HostCalls& calls) const {
    TimedOp t = ComputeOp(name_ + label, category, e);
    t.calls = calls;
    return t;
  }
  std::vector<int> After(std::initializer_list<int> deps) const {
    std::vector<int> out;
    for (int d : deps) {
      if (d != kEntry) out.push_back(d);
    }
    if (out.empty()) out.push_back(entry_);
    return out;
  }
  int Add(TimedOp op, int count, std::vector<int> deps) {
    op.steps = count;
    op.duration = op.duration * count;
    const HostCalls one = op.calls;
    for (int i = 1; i < count; ++i) op.calls += one;
    op.deps = std::move(deps);
    return b_.Add(std::move(op));
  }
  // Steps [step, step + count)'s attention kernels, once the previous
  // kernel and the exchange that brought the first one's K/V are done.
  void AddTiles(int step, int count) {
    block = Add(
        Kernel(step == 0 ? " diag" : " step " + StepLabel(step, count),
               "attention", step == 0 ? c_.diagonal : c_.tile, c_.step_calls),
        count, After({block, transfer}));
  }
  // A correction or accumulation after the compute chain's last op.
  void AddFix(const char* what, int step, int count, const Estimate& e) {
    block = Add(
        Kernel(what + StepLabel(step, count), "memory_bound", e, c_.fix_calls),
        count, {block});
  }
  int entry() const { return entry_; }

  int block = kEntry;     // the last compute-stream op
  int transfer = kEntry;  // the exchange in flight

 private:
  const std::string& name_;
  const std::vector<int>& pair_;
  const RingCosts& c_;
  const int merged_;
  const RankContext& rank_;
  Builder& b_;
  const int entry_;
};

// How many of the ring's steady steps, from step 1, are added as one op of
// each kind, that many times as long (0: none, every step its own ops).
// Steps 1 .. ring - 2 are identical: the same tile, corrections and hop.
// With fixed op lengths (the analytical network) the ring is a max-plus
// recurrence per step; writing h_s for the end of the hop that brings step
// s's K/V and b_s for the end of step s's compute, with P the compute and
// H the hop of a steady step:
//  - forward, the hops run back to back (h_s = h_1 + (s - 1) H) and
//    b_s = max(b_{s-1}, h_s) + P;
//  - backward, step s's message and tile both wait for step s - 1, so
//    b_s = max(b_{s-1}, m_{s-1}) + max(P, H) + (the dK/dV add after the
//    message).
// Steps 1 .. k - 1 (k = ring - 2) merged into one hop op and one op per
// kernel, with the same deps as step 1's, end where step k - 1's compute
// would have, or earlier only where step k waits for its hop anyway
// (forward: b_{k-1} <= max(b'_{k-1}, h_{k-1} + P) and h_{k-1} + P <= h_k when
// H >= P); steps k and ring - 1 are added alone, so every op after the ring
// starts and ends exactly as before. What is not the same: inside the ring
// an exposed ring's compute (H > P) is one block rather than P of every H,
// so the busy time of another stream running beside the ring (a PP send, a
// DP reduce-scatter) may overlap it differently; a hidden ring (H <= P)
// keeps its compute back to back and its exchange inside it, as before.
// Left step by step: the trace, a flow-network hop (its length is not known
// here) and EP overlap (RankContext::merge_ring_steps off), a straggler (its
// slowdown rounds per op), and rings under 5 steps.
int MergedSteps(const RankContext& rank, int ring) {
  const bool merge =
      rank.merge_ring_steps && rank.compute_slowdown == 1 && ring >= 5;
  return merge ? ring - 3 : 0;
}

// The forward ring (AddRing): hop s + 1 is sent at the top of step s, once
// the previous one is done; tile s waits for hop s.
void AddForwardRing(const std::string& name, const RingCosts& c, int ring,
                    int merged, const std::vector<int>& hop_pair,
                    const RankContext& rank, Builder& b) {
  RingOps ops(name, hop_pair, c, merged, rank, b);
  for (int step = 0; step < ring;) {
    const int count = ops.StepsAt(step);
    int next_transfer = kEntry;
    if (step + count < ring) {
      next_transfer =
          ops.Add(ops.Hop(StepLabel(step + 1, count), c.kv_bytes, "kv hop"),
                  count, ops.After({ops.entry(), ops.transfer}));
    }
    ops.AddTiles(step, count);
    if (step > 0) ops.AddFix(" lse correction ", step, count, c.lse);
    ops.transfer = next_transfer;
    step += count;
  }
  // One output correction per step after the loop; the last alone ends the
  // ring (and may end a host segment).
  if (merged > 0) ops.AddFix(" out correction ", 0, ring - 1, c.out_fix);
  for (int step = merged > 0 ? ring - 1 : 0; step < ring; ++step) {
    ops.AddFix(" out correction ", step, 1, c.out_fix);
  }
  b.set_last(ops.block);
}

// The backward ring (AddRing): step s's message leaves once the step before
// is done; tile s waits for the message of step s - 1.
void AddBackwardRing(const std::string& name, const RingCosts& c, int ring,
                     int merged, const std::vector<int>& hop_pair,
                     const RankContext& rank, Builder& b) {
  RingOps ops(name, hop_pair, c, merged, rank, b);
  for (int step = 0; step < ring;) {
    const int count = ops.StepsAt(step);
    // This step's message: K/V for the next step (not after the last) and,
    // after the first, the dK/dV accumulated so far.
    const bool sends_kv = step + count < ring;
    const bool sends_dkv = !c.fp8 && step > 0;
    const double bytes =
        (sends_kv ? c.kv_bytes : 0) + (sends_dkv ? c.dkv_bytes : 0);
    int message = kEntry;
    if (bytes > 0) {
      const char* what = !sends_kv   ? "dkv hop"
                         : sends_dkv ? "kv+dkv hop"
                                     : "kv hop";
      message = ops.Add(ops.Hop(StepLabel(step, count), bytes, what), count,
                        ops.After({ops.entry(), ops.transfer, ops.block}));
    }
    ops.AddTiles(step, count);
    const bool diag = step == 0;
    ops.AddFix(" dq add ", step, count, diag ? c.dq_full : c.dq_tile);
    if (!c.fp8) {
      const TimedOp dkv =
          ops.Kernel(" dkv add " + StepLabel(step, count), "memory_bound",
                     diag ? c.dkv_full : c.dkv_tile, c.fix_calls);
      ops.block = ops.Add(dkv, count, ops.After({ops.block, message}));
    }
    ops.transfer = message;
    step += count;
  }
  if (c.fp8) {
    // The per-step dK/dV (uint8) go home in one all-to-all, then the
    // partial dQ and dK/dV of the cp steps are summed.
    TimedOp t = Transfer(rank, Collective::kAllToAll,
                         rank.groups[static_cast<int>(models::Group::kCp)],
                         rank.shapes[static_cast<int>(models::Group::kCp)],
                         ring * c.kv_elements, StreamKind::kCp,
                         name + " cp dkv all-to-all");
    t.group = models::Group::kCp;
    t.calls = c.hop_calls;
    const int home =
        ops.Add(std::move(t), 1, ops.After({ops.block, ops.transfer}));
    const Estimate sum = rank.costs->MemoryBound(
        "copy", ring * (c.q_bytes / kBf16Bytes + c.kv_elements) + c.q_bytes +
                    c.dkv_bytes);
    ops.block =
        ops.Add(ops.Kernel(" dq dkv sum", "memory_bound", sum, c.fix_calls), 1,
                {home, ops.block});
  }
  b.set_last(ops.block);
}

void AddRing(const std::string& name, const models::AttentionWork& a, int ring,
             const std::vector<int>& hop_pair, bool backward,
             const RankContext& rank, Builder& b) {
  const RingCosts c = RingCostsOf(a, backward, rank);
  const int merged = MergedSteps(rank, ring);
  if (backward) {
    AddBackwardRing(name, c, ring, merged, hop_pair, rank, b);
    return;
  }
  RingBalance balance;
  balance.ring = ring;
  balance.members_per_domain =
      rank.shapes[static_cast<int>(models::Group::kCp)].members_per_domain;
  balance.tile_s = c.tile.seconds;
  balance.hop_s = topology::EstimateCollective(
                      *rank.network, Collective::kSendRecv,
                      topology::ShapeOf(hop_pair, *rank.cluster), c.kv_bytes)
                      .seconds;
  balance.crosses_domains =
      hop_pair.size() == 2 && rank.cluster->DomainOf(hop_pair[0]) !=
                                  rank.cluster->DomainOf(hop_pair[1]);
  balance.merged_steps = merged;
  b.set_ring(balance);
  AddForwardRing(name, c, ring, merged, hop_pair, rank, b);
}

// Core attention with context parallelism, by Megatron's --cp-comm-type:
//  - p2p: the ring above over the whole CP group.
//  - allgather: K/V all-gathered over CP before attention (reduce-scattered
//    as dK/dV after the backward); each rank's two load-balanced chunks do
//    1/CP of the causal work, a non-causal block of seq/CP x seq/2.
//  - a2a (Ulysses): an all-to-all trades the sequence split for a head split
//    (Q, K, V in; the output back), attention runs on the full sequence with
//    heads/CP; backward sends dO in and dQ, dK, dV back.
//  - a2a+p2p: the a2a inside the inner group (heads / inner), then the p2p
//    ring across the CP / inner outer ranks on inner x local tokens.
void AddAttention(const LayerOp& op, const RankContext& rank, Builder& b) {
  const models::AttentionWork& a = op.attention;
  const bool backward = op.pass != models::Pass::kForward;
  const int cp = static_cast<int>(
      rank.groups[static_cast<int>(models::Group::kCp)].size());
  const calibration::CostModel& costs = *rank.costs;
  if (cp <= 1) {
    b.Serial(ComputeOp(op.name, "attention",
                       costs.Attention(Shape(a, a.seq_q, a.seq_kv, a.causal,
                                             rank.attention_dtype),
                                       backward)));
    return;
  }
  const double tokens = static_cast<double>(a.batch) * a.seq_q;
  switch (rank.cp_comm_type) {
    case models::CpCommType::kP2p:
      AddRing(op.name, a, cp, rank.cp_hop, backward, rank, b);
      return;
    case models::CpCommType::kAllGather: {
      // K/V gathered as the attention's input dtype; dK/dV reduce-scattered
      // in 16 bits.
      const double kv =
          tokens * cp * a.heads_kv * (a.head_dim_qk + a.head_dim_v) *
          (backward ? kBf16Bytes : CpElementBytes(rank.attention_dtype));
      const auto gather = CollectiveOp(
          rank, models::Group::kCp,
          backward ? Collective::kReduceScatter : Collective::kAllGather, kv,
          StreamKind::kCp,
          op.name + (backward ? " dkv reduce-scatter" : " kv all-gather"));
      const Estimate block = costs.Attention(
          Shape(a, a.seq_q, a.seq_q * cp / 2, false, rank.attention_dtype),
          backward);
      if (!backward) b.Serial(gather);
      b.Serial(ComputeOp(op.name, "attention", block));
      if (backward) b.Serial(gather);
      return;
    }
    case models::CpCommType::kA2a:
    case models::CpCommType::kA2aP2p: {
      const bool a2a_only = rank.cp_comm_type == models::CpCommType::kA2a;
      const int inner = a2a_only ? cp : static_cast<int>(rank.cp_inner.size());
      const int outer = cp / inner;
      const std::vector<int>& gpus =
          a2a_only ? rank.groups[static_cast<int>(models::Group::kCp)]
                   : rank.cp_inner;
      const topology::GroupShape& shape =
          a2a_only ? rank.shapes[static_cast<int>(models::Group::kCp)]
                   : rank.cp_inner_shape;
      // Q, K, V go in as the attention's input dtype (uint8 with FP8
      // attention) and the output comes back in 16 bits; backward sends dO
      // in as the backward's input dtype and dQ, dK, dV back in 16 bits.
      const double element = CpElementBytes(rank.attention_dtype);
      const double qkv_elements =
          tokens * (a.heads_q * a.head_dim_qk +
                    a.heads_kv * (a.head_dim_qk + a.head_dim_v));
      const double out_elements = tokens * a.heads_q * a.head_dim_v;
      const double qkv = qkv_elements * (backward ? kBf16Bytes : element);
      const double out = out_elements * (backward ? element : kBf16Bytes);
      auto a2a = [&](double bytes, const char* what) {
        TimedOp t = Transfer(rank, Collective::kAllToAll, gpus, shape, bytes,
                             StreamKind::kCp, op.name + " cp a2a " + what);
        // Joined over the whole CP group (a2a+p2p: the inner a2a and the
        // outer ring together couple every CP member).
        t.group = models::Group::kCp;
        return t;
      };
      models::AttentionWork wide = a;
      wide.seq_q = a.seq_q * inner;
      wide.heads_q = std::max<int64_t>(1, a.heads_q / inner);
      wide.heads_kv = std::max<int64_t>(1, a.heads_kv / inner);
      b.Serial(a2a(backward ? out : qkv, backward ? "dout" : "qkv"));
      if (outer <= 1) {
        b.Serial(
            ComputeOp(op.name, "attention",
                      costs.Attention(Shape(wide, wide.seq_q, wide.seq_q,
                                            a.causal, rank.attention_dtype),
                                      backward)));
      } else {
        AddRing(op.name, wide, outer, rank.cp_outer_hop, backward, rank, b);
      }
      b.Serial(a2a(backward ? qkv : out, backward ? "dqkv" : "out"));
      return;
    }
  }
}

// MoE dispatch or combine over EP. alltoall (MoEAlltoAllTokenDispatcher):
// permute the tokens into rows per expert, NCCL all-to-all of every routed
// row, sort the received chunks by local expert; combine runs it backwards.
// DeepEP / HybridEP send each token once per destination rank at their
// table's bottleneck bandwidth (as sim/moe_layer.cc), then the received
// rows are permuted into rows per local expert (combine: unpermuted back
// first). DeepEP's permute is Megatron's; HybridEP's is its own kernel
// inside dispatch_with_permute / combine_with_unpermute, run after the
// dispatch kernel from the receive buffer into the output tensor and, for
// combine, from the expert output into the send buffer (deepseek-ai/DeepEP
// csrc/hybrid_ep/executor/executor.cu dispatch_postprocess permute_launcher,
// combine_preprocess unpermute_launcher). The dispatch table's HybridEP rows
// are its kernel-only figures, so the permute is priced apart. An EP group
// spanning NVLink domains also stages the input tokens into the RDMA buffer
// with a device-to-device copy before each dispatch (dispatch_preprocess,
// num_of_nodes > 1).
// A fused dispatcher's exchange: the bytes its table rate divides, and the
// rows the busiest EP rank receives.
struct FusedExchange {
  double bytes = 0, received = 0;
};
FusedExchange FusedExchangeOf(const models::DispatchWork& d,
                              const RankContext& rank,
                              const topology::GroupShape& shape,
                              double row_bytes) {
  const double ranks_per_token = DistinctRanksPerToken(
      d.experts, d.topk, rank.ep, d.router_groups, d.router_group_topk);
  // The bytes the table's rate divides, counted as the benchmark behind the
  // rate counts them, so that the rate converts back to its kernel's time.
  // Inside one NVLink domain the benchmarks (DeepEP tests/test_hybrid_ep.py,
  // test_intranode.py) count every row a rank receives, its own included:
  // tokens x ranks per token. Across domains they count each (token, node)
  // pair once, the local node included (count_rdma_send_from_routing_map):
  // tokens x the distinct nodes a token's experts sit on, the domains
  // playing the ranks' part in the same count. (The replay divided the rows
  // sent to other ranks instead, 3.1x more bytes at EP16 over two nodes,
  // while the host was priced at TE issue 2053's Grace/x86 ratio; at the
  // Megatron CI ratio the benchmarks' own count fits the multi-node runs
  // better: Qwen3-30B H100 EP16 -16% -> 0% by median.)
  const double per_token =
      shape.domains > 1
          ? DistinctRanksPerToken(d.experts, d.topk, shape.domains,
                                  d.router_groups, d.router_group_topk)
          : ranks_per_token;
  return {per_token * static_cast<double>(d.tokens) * row_bytes *
              rank.moe_imbalance,
          d.tokens * ranks_per_token};
}

util::Result<void> AddDispatch(const LayerOp& op, const RankContext& rank,
                               Builder& b) {
  const models::DispatchWork& d = op.dispatch;
  const calibration::CostModel& costs = *rank.costs;
  // The busiest EP rank receives (dispatch) and returns (combine)
  // imbalance x the mean rows; its exchange gates the all-to-all.
  const double rows =
      static_cast<double>(d.tokens) * d.topk * rank.moe_imbalance;
  const double row_bytes = static_cast<double>(d.hidden) * d.bytes_per_element;
  const double token_row_bytes = static_cast<double>(d.hidden) * kBf16Bytes;
  const char* kernel = d.combine ? "unpermute" : "permute";
  const Estimate reorder =
      costs.MemoryBound(kernel, (d.tokens + rows) * token_row_bytes);
  const Estimate sort = costs.MemoryBound("permute", 2.0 * rows * row_bytes);
  const bool ep = rank.ep > 1;
  // Host calls per piece (host_calls.h, DispatchHostCalls). The host blocks
  // once per forward dispatch, on the token counts
  // (NVIDIA/Megatron-LM@d96f0b97 token_dispatcher.py): after the permute,
  // before the all-to-all (alltoall: d2h_event.synchronize), or in the
  // dispatch (DeepEP's moe_recv_counter wait, HybridEP's
  // num_dispatched_tokens .cpu()). Eager alltoall records its D2H event
  // just before the permute, which the replay's sync also waits for (the
  // permute's time is the difference); under the moe_preprocess graph the
  // permute is captured and the sync comes after it, as here. Token drop
  // padded to capacity has static split sizes: alltoall's preprocess
  // returns before it sets a sync point (MoEAlltoAllTokenDispatcher.
  // preprocess, drop_and_pad), and the host runs on.
  const models::DispatcherTraits& traits = models::TraitsOf(rank.dispatcher);
  const bool alltoall_path = !traits.fused || !ep;
  const bool sync = !d.combine && op.pass == models::Pass::kForward &&
                    !(alltoall_path && rank.static_token_counts);
  const DispatchCalls calls =
      DispatchHostCalls(ep ? rank.dispatcher : models::Dispatcher::kAllToAll,
                        d.combine, op.pass == models::Pass::kForward);
  auto add = [&](TimedOp t, const HostCalls& host, bool host_sync) {
    t.calls = host;
    t.host_sync = host_sync && sync;
    b.Serial(std::move(t));
  };
  if (alltoall_path) {
    if (!d.combine) {
      add(ComputeOp(op.name + " permute", "memory_bound", reorder),
          calls.permute, ep);
    }
    if (ep) {
      if (d.combine) {
        add(ComputeOp(op.name + " sort", "memory_bound", sort), calls.sort,
            false);
      }
      add(CollectiveOp(rank, models::Group::kEp, Collective::kAllToAll,
                       rows * row_bytes, StreamKind::kEp,
                       op.name + " all-to-all"),
          calls.comm, false);
      if (!d.combine) {
        add(ComputeOp(op.name + " sort", "memory_bound", sort), calls.sort,
            false);
      }
    }
    if (d.combine) {
      add(ComputeOp(op.name + " unpermute", "memory_bound", reorder),
          calls.unpermute, false);
    }
    return {};
  }
  const std::string name(traits.table_rows);
  const topology::GroupShape& shape =
      rank.shapes[static_cast<int>(models::Group::kEp)];
  const std::string tier = shape.domains > 1 ? "net" : "nvlink";
  const char* phase = d.combine ? "combine" : "dispatch";
  auto rate = costs.Dispatch(name, phase, tier, rank.ep, d.tokens, Dtype::kBf16,
                             traits.sms_held);
  if (!rate) {
    return util::Fail("calibration/tables/" + costs.tables().gpu +
                      "/dispatch.csv: no " + name + " " + phase +
                      " row for tier " + tier);
  }
  const auto [bytes, received] = FusedExchangeOf(d, rank, shape, row_bytes);
  // Received rows are read and the permuted rows written (combine: the
  // reverse), in the dispatched dtype for HybridEP's own dispatch permute
  // (it copies the buffer's FP8 rows where Megatron dispatches FP8).
  const double permute_row_bytes =
      traits.permute_in_dispatched_dtype && !d.combine ? row_bytes
                                                       : token_row_bytes;
  const Estimate permute =
      costs.MemoryBound(kernel, (received + rows) * permute_row_bytes);
  if (d.combine) {
    add(ComputeOp(op.name + " unpermute", "memory_bound", permute),
        calls.unpermute, false);
  } else if (traits.stages_across_domains && shape.domains > 1) {
    add(ComputeOp(op.name + " stage", "memory_bound",
                  costs.MemoryBound("copy", 2.0 * d.tokens * row_bytes)),
        calls.stage, false);
  }
  TimedOp comm;
  comm.stream = StreamKind::kEp;
  comm.duration = Time::FromSecondsCeil(bytes / (rate->gb_s * 1e9));
  comm.name = op.name + " " + name;
  comm.category = "ep";
  comm.group = models::Group::kEp;
  add(std::move(comm), calls.comm, true);
  if (!d.combine) {
    add(ComputeOp(op.name + " permute", "memory_bound", permute), calls.permute,
        false);
  }
  return {};
}

// Host cost of each op: its eager host calls (host_calls.h) at the host.csv
// costs. A run of consecutive ops of one captured scope costs one graph
// launch, on its first op; a TE-scoped graph leaves each parameter's
// AccumulateGrad and DDP hook to autograd, so those stay on the host
// (a full-iteration graph, which also captures kNone, removes them). Inside
// a graph the host does not sync, except after the alltoall dispatcher's
// graphed preprocessing (moe_preprocess): Megatron moves the D2H sync of
// the token counts to before the all-to-all, which runs eagerly
// (calibration/notes/megatron_host_ops.md section 2, "Host<->device syncs").
void AssignHostCosts(OpTemplate& t,
                     const std::vector<models::GraphScope>& scopes,
                     const RankContext& rank) {
  auto captured = [&](models::GraphScope s) {
    return rank.graphed[static_cast<int>(s)];
  };
  const bool full_iteration = captured(models::GraphScope::kNone);
  const HostCallCosts costs{rank.launch_s, rank.te_module_s,
                            rank.autograd_node_s, rank.kernel_launch_s};
  for (size_t i = 0; i < t.ops.size(); ++i) {
    TimedOp& op = t.ops[i];
    op.graphed = captured(scopes[i]);
    if (!op.graphed) {
      op.host_s = HostSeconds(op.calls, costs);
      continue;
    }
    if (scopes[i] != models::GraphScope::kMoePreprocess || full_iteration ||
        captured(models::GraphScope::kMoe)) {
      op.host_sync = false;  // static shapes inside the graph
    }
    const bool opens =
        i == 0 || !t.ops[i - 1].graphed || scopes[i - 1] != scopes[i];
    op.host_s = (opens ? rank.graph_launch_s : 0) +
                (full_iteration ? 0 : HostSeconds(op.calls, costs, true));
  }
  for (TimedOp& op : t.ops) op.head_host_s = op.host_s;
}

}  // namespace

namespace {

// C(n, k) for real n >= k >= 0, via lgamma.
double Choose(double n, double k) {
  if (k < 0 || k > n) return 0;
  return std::exp(std::lgamma(n + 1) - std::lgamma(k + 1) -
                  std::lgamma(n - k + 1));
}

}  // namespace

double DistinctRanksPerToken(int64_t experts, int64_t topk, int64_t ep,
                             int64_t groups, int64_t group_topk) {
  const double p = ep, e = experts, k = topk, local = e / p;
  if (groups > 0 && group_topk > 0) {
    const double g = groups, tg = group_topk;
    if (groups >= ep && groups % ep == 0) {
      // Whole groups per rank: a rank is reached when one of its g/p groups
      // is among the token's tg groups (each chosen group gets an expert).
      const double per_rank = g / p;
      return p * (1 - Choose(g - per_rank, tg) / Choose(g, tg));
    }
    // A group spans p/g ranks: the token's k experts fall among tg groups'
    // experts, on tg * p/g ranks.
    const double ranks = tg * p / g, pool = tg * e / g;
    return ranks * (1 - Choose(pool - local, k) / Choose(pool, k));
  }
  return p * (1 - Choose(e - local, k) / Choose(e, k));
}

const char* StreamKindName(StreamKind kind) {
  static constexpr const char* kNames[] = {
      "compute", "tp", "cp", "ep", "dp", "pp", "host", "copy", "copy_h2d"};
  return kNames[static_cast<int>(kind)];
}

double StretchedSeconds(double work, double stretch, double& window) {
  double wall = work * stretch;
  if (wall > window) {
    // The window closes inside this op: `window` of wall time does
    // window / stretch of its work, the rest runs at full speed.
    wall = window + (work - window / stretch);
  }
  window -= wall;
  return wall;
}

calibration::Dtype TrainingDtype(models::Precision precision) {
  switch (precision) {
    case models::Precision::kBf16:
      return Dtype::kBf16;
    case models::Precision::kFp8CurrentScaling:
    case models::Precision::kFp8Delayed:
    case models::Precision::kFp8Blockwise:
      return Dtype::kFp8;
    case models::Precision::kMxfp8:
      return Dtype::kMxfp8;
    case models::Precision::kNvfp4:
      return Dtype::kNvfp4;
  }
  return Dtype::kBf16;
}

calibration::Dtype AttentionDtype(const models::TrainingOptions& training) {
  if (!training.fp8_dot_product_attention) return Dtype::kBf16;
  return training.precision == models::Precision::kMxfp8 ? Dtype::kMxfp8
                                                         : Dtype::kFp8;
}

namespace {

TimedOp Transfer(const RankContext& rank, Collective collective,
                 const std::vector<int>& gpus,
                 const topology::GroupShape& shape, double bytes,
                 StreamKind stream, std::string name) {
  TimedOp op;
  op.stream = stream;
  op.name = std::move(name);
  op.category = StreamKindName(stream);
  if (rank.flow_network) {
    op.transfer = topology::CollectiveRequest{collective, gpus, bytes};
  } else {
    op.duration = Time::FromSecondsCeil(
        topology::EstimateCollective(*rank.network, collective, shape, bytes)
            .seconds);
  }
  return op;
}

}  // namespace

TimedOp CollectiveOp(const RankContext& rank, models::Group group,
                     Collective collective, double bytes, StreamKind stream,
                     std::string name) {
  const int g = static_cast<int>(group);
  TimedOp op = Transfer(rank, collective, rank.groups[g], rank.shapes[g], bytes,
                        stream, std::move(name));
  op.group = group;
  return op;
}

TimedOp SendRecvOp(const RankContext& rank, const std::vector<int>& pair,
                   double bytes, StreamKind stream, std::string name) {
  return Transfer(rank, Collective::kSendRecv, pair,
                  topology::ShapeOf(pair, *rank.cluster), bytes, stream,
                  std::move(name));
}

OpTemplate Coalesce(const OpTemplate& t) {
  const int n = static_cast<int>(t.ops.size());
  // Dependents of each op inside the template; the exit has one outside.
  std::vector<int> dependents(n, 0);
  for (const TimedOp& op : t.ops) {
    for (const int d : op.deps) {
      if (d != kEntry) ++dependents[d];
    }
  }
  if (t.exit != kEntry) ++dependents[t.exit];
  if (t.handoff != kEntry) ++dependents[t.handoff];  // the next pass's too
  OpTemplate out;
  std::vector<int> index(n, kEntry);  // old op -> new op
  int last_compute = kEntry;          // new index of the latest compute op
  std::vector<std::string> tail;      // last merged name per new op
  for (int i = 0; i < n; ++i) {
    const TimedOp& op = t.ops[i];
    const bool compute = op.stream == StreamKind::kCompute && !op.transfer;
    const bool ends_segment = op.host_sync || i == n - 1;
    if (compute && !ends_segment && op.deps.size() == 1 &&
        op.deps[0] != kEntry && dependents[op.deps[0]] == 1 &&
        index[op.deps[0]] == last_compute && last_compute != kEntry &&
        !t.ops[op.deps[0]].host_sync &&
        out.ops[last_compute].graphed == op.graphed &&
        out.ops[last_compute].deferred == op.deferred) {
      TimedOp& merged = out.ops[last_compute];
      merged.duration += op.duration;
      merged.category = "compute";
      merged.host_s += op.host_s;
      merged.calls += op.calls;
      tail[last_compute] = op.name;
      index[i] = last_compute;
      continue;
    }
    TimedOp copy = op;
    for (int& d : copy.deps) {
      if (d != kEntry) d = index[d];
    }
    out.ops.push_back(std::move(copy));
    tail.emplace_back();
    index[i] = static_cast<int>(out.ops.size()) - 1;
    if (compute) last_compute = index[i];
  }
  for (size_t i = 0; i < out.ops.size(); ++i) {
    if (!tail[i].empty()) out.ops[i].name += " .. " + tail[i];
  }
  out.exit = t.exit == kEntry ? kEntry : index[t.exit];
  out.handoff = t.handoff == kEntry ? kEntry : index[t.handoff];
  return out;
}

std::vector<TemplatePart> SplitAtEpComm(const OpTemplate& t,
                                        const RankContext& rank) {
  std::vector<TemplatePart> parts;
  const int n = static_cast<int>(t.ops.size());
  int first = 0;
  for (int i = 0; i < n; ++i) {
    const bool ep = t.ops[i].stream == StreamKind::kEp;
    if (!ep && i != n - 1) continue;
    const int at = ep ? i : -1;
    while (ep && i + 1 < n && t.ops[i + 1].deferred) ++i;
    parts.push_back({first, i, at, HostSegments(t, rank, first, i)});
    first = i + 1;
  }
  return parts;
}

namespace {

// What op dep `d` of `t` stands for once the ops `moved` marks are out of
// the way, appended to `out` once each: a moved dep stands for its own deps
// (earlier ops, so this ends); a kept one maps through `where` (index in
// `t` -> index in the new template).
void ResolveDeps(const OpTemplate& t, const std::vector<char>& moved,
                 const std::vector<int>& where, int d, std::vector<int>& out) {
  if (d == kEntry || !moved[d]) {
    const int mapped = d == kEntry ? kEntry : where[d];
    if (std::find(out.begin(), out.end(), mapped) == out.end())
      out.push_back(mapped);
    return;
  }
  for (const int e : t.ops[d].deps) ResolveDeps(t, moved, where, e, out);
}

}  // namespace

OpTemplate DeferWeightGradients(const OpTemplate& t) {
  const int n = static_cast<int>(t.ops.size());
  std::vector<int> order;  // new position -> old index
  order.reserve(n);
  std::vector<int> pending;  // wgrads waiting for the next EP op
  std::vector<char> moved(n, 0);
  for (int i = 0; i < n; ++i) {
    if (t.ops[i].wgrad) {
      pending.push_back(i);
      moved[i] = 1;
      continue;
    }
    order.push_back(i);
    if (t.ops[i].stream == StreamKind::kEp) {
      order.insert(order.end(), pending.begin(), pending.end());
      pending.clear();
    }
  }
  if (pending.size() == static_cast<size_t>(n)) return t;  // nothing else
  const int handoff_old = pending.empty() ? kEntry : order.back();
  order.insert(order.end(), pending.begin(), pending.end());
  std::vector<int> where(n);
  for (int k = 0; k < n; ++k) where[order[k]] = k;
  OpTemplate out;
  out.ops.reserve(n);
  for (int k = 0; k < n; ++k) {
    const int i = order[k];
    TimedOp op = t.ops[i];
    std::vector<int> deps;
    if (moved[i]) {
      for (const int d : op.deps)
        deps.push_back(d == kEntry ? kEntry : where[d]);
      op.deferred = true;
    } else {
      for (const int d : op.deps) ResolveDeps(t, moved, where, d, deps);
    }
    op.deps = std::move(deps);
    out.ops.push_back(std::move(op));
  }
  out.exit = n - 1;
  out.handoff = handoff_old == kEntry ? kEntry : where[handoff_old];
  return out;
}

SplitBackward SplitWeightGradients(const OpTemplate& t) {
  const int n = static_cast<int>(t.ops.size());
  std::vector<char> wgrad(n, 0);
  std::vector<int> where(n);  // index in `t` -> index in its own part
  int inputs = 0, weights = 0;
  for (int i = 0; i < n; ++i) {
    wgrad[i] = t.ops[i].wgrad;
    where[i] = wgrad[i] ? weights++ : inputs++;
  }
  SplitBackward out;
  for (int i = 0; i < n; ++i) {
    TimedOp op = t.ops[i];
    std::vector<int> deps;
    if (wgrad[i]) {
      for (const int d : op.deps) {
        if (d != kEntry && wgrad[d] &&
            std::find(deps.begin(), deps.end(), where[d]) == deps.end())
          deps.push_back(where[d]);
      }
      if (deps.empty()) deps.push_back(kEntry);
      op.deps = std::move(deps);
      out.weight.ops.push_back(std::move(op));
    } else {
      for (const int d : op.deps) ResolveDeps(t, wgrad, where, d, deps);
      op.deps = std::move(deps);
      out.input.ops.push_back(std::move(op));
    }
  }
  out.input.exit =
      t.exit != kEntry && !wgrad[t.exit] ? where[t.exit] : inputs - 1;
  if (inputs == 0) out.input.exit = kEntry;
  out.weight.exit = weights > 0 ? weights - 1 : kEntry;
  return out;
}

namespace {

// The kernels and transfers of `op`, priced, appended to `b`.
util::Result<void> AddKernels(const LayerOp& op, const RankContext& rank,
                              const HostCallContext& host, Builder& b) {
  const calibration::CostModel& costs = *rank.costs;
  const Dtype dtype = op.precision == models::GemmPrecision::k16Bit
                          ? Dtype::kBf16
                          : rank.training_dtype;
  switch (op.kind) {
    case OpKind::kGemm:
      b.Serial(ComputeOp(op.name, "gemm", costs.Gemm(op.m, op.n, op.k, dtype)));
      break;
    case OpKind::kGroupedGemm: {
      // The busiest EP rank's experts get imbalance x the mean rows: the
      // token dimension is m, or k for a weight gradient.
      auto rows = [&](int64_t v) {
        return static_cast<int64_t>(std::ceil(v * rank.expert_load));
      };
      const bool wgrad = op.pass == models::Pass::kWgrad;
      b.Serial(
          ComputeOp(op.name, "grouped_gemm",
                    costs.GroupedGemm(op.groups, wgrad ? op.m : rows(op.m),
                                      op.n, wgrad ? rows(op.k) : op.k, dtype)));
      break;
    }
    case OpKind::kAttention:
      AddAttention(op, rank, b);
      break;
    case OpKind::kMemoryBound: {
      const double bytes = models::IsRoutedExpert(op.role)
                               ? op.bytes * rank.expert_load
                               : op.bytes;
      // An op TE runs as one kernel per local expert (the experts' FP8
      // quantize, host_calls.cc QuantizeKernels) is that many kernels of
      // an equal share of the bytes, each paying a kernel's fixed time.
      const int kernels = std::max(1, LayerOpHostCalls(op, host).kernels);
      Estimate each = costs.MemoryBound(op.kernel, bytes / kernels);
      each.seconds *= kernels;
      b.Serial(ComputeOp(op.name, "memory_bound", each));
      // A blocking copy in Megatron's code after this op (LayerOp
      // host_sync, e.g. GPT-OSS's quick-GEGLU offset tensor); dropped
      // in AssignHostCosts where the scope is graphed.
      b.at(b.size() - 1).host_sync =
          op.host_sync && op.pass == models::Pass::kForward;
      break;
    }
    case OpKind::kCollective: {
      if (rank.groups[static_cast<int>(op.group)].size() <= 1) break;
      b.Serial(CollectiveOp(rank, op.group, ToCollective(op.collective),
                            op.bytes, StreamOf(op.group), op.name));
      break;
    }
    case OpKind::kDispatch:
      return AddDispatch(op, rank, b);
  }
  return {};
}

}  // namespace

util::Result<OpTemplate> PriceOps(const std::vector<LayerOp>& ops,
                                  const RankContext& rank) {
  Builder b;
  std::vector<std::optional<models::GraphScope>> scopes;  // per template op
  const HostCallContext host =
      ContextOf(ops, rank.local_experts, rank.fp8_current_scaling);
  // --moe-shared-expert-overlap: Megatron runs the shared experts on a side
  // stream beside the token exchange (fc1 beside the dispatch, fc2 beside
  // the combine; autograd runs their backward on that stream too). The
  // replay issues the pass's shared-expert ops right after its first EP
  // exchange, waiting only for what that exchange waits for, so they run
  // while it is in flight and the routed chain goes on from the exchange.
  std::vector<const LayerOp*> shared;
  if (rank.shared_expert_overlap) {
    for (const LayerOp& op : ops) {
      if (op.module == models::RecomputeModule::kSharedExperts)
        shared.push_back(&op);
    }
  }
  bool shared_done = shared.empty();
  util::Result<void> status;
  auto price = [&](const LayerOp& op) -> util::Result<void> {
    const size_t before = b.size();
    if (auto r = AddKernels(op, rank, host, b); !r) return r;
    // TE linears' weight gradients (not the router's gating GEMM nor the
    // output layer, which are Megatron's own).
    if (op.pass == models::Pass::kWgrad &&
        (op.kind == OpKind::kGemm || op.kind == OpKind::kGroupedGemm) &&
        op.role != models::OpRole::kRouter &&
        op.role != models::OpRole::kOutputLayer) {
      for (size_t i = before; i < b.size(); ++i) b.at(i).wgrad = true;
    }
    // The op's host calls go with its first priced op; a CP ring's further
    // steps are one call each (TE's Python loop over the ring).
    if (op.kind != OpKind::kDispatch && b.size() > before) {
      b.at(before).calls = LayerOpHostCalls(op, host);
      for (size_t i = before + 1; i < b.size(); ++i) {
        b.at(i).calls.torch = b.at(i).steps;
      }
    }
    // A dispatch keeps kMoePreprocess only for the alltoall dispatcher's
    // preprocessing and permute (its first op, before the all-to-all, in a
    // forward dispatch); DeepEP / HybridEP's first op is the dispatch
    // kernel itself, which runs outside the graph.
    const bool alltoall =
        !models::TraitsOf(rank.dispatcher).fused || rank.ep <= 1;
    scopes.resize(b.size());
    for (size_t i = before; i < b.size(); ++i) {
      if (scopes[i]) continue;  // a shared-expert op priced inside
      models::GraphScope scope = op.scope;
      if (scope == models::GraphScope::kMoePreprocess &&
          (op.kind != OpKind::kDispatch || op.dispatch.combine || i != before ||
           !alltoall)) {
        scope = models::GraphScope::kMoe;
      }
      scopes[i] = scope;
    }
    return {};
  };
  if (!shared_done) {
    b.OnFirstEpOp([&](int exchange) {
      const std::vector<int>& deps = b.at(exchange).deps;
      b.set_last(deps.empty() ? kEntry : deps.front());
      for (const LayerOp* op : shared) {
        if (auto r = price(*op); !r) {
          status = r;
          break;
        }
      }
      b.set_last(exchange);
      shared_done = true;
    });
  }
  for (const LayerOp& op : ops) {
    if (!shared.empty() && op.module == models::RecomputeModule::kSharedExperts)
      continue;
    if (auto r = price(op); !r) return std::unexpected(r.error());
    if (!status) return std::unexpected(status.error());
  }
  // No EP exchange in this pass: the shared experts run where they stand
  // last.
  if (!shared_done) {
    b.OnFirstEpOp(nullptr);
    for (const LayerOp* op : shared) {
      if (auto r = price(*op); !r) return std::unexpected(r.error());
    }
  }
  OpTemplate t = b.Finish();
  std::vector<models::GraphScope> op_scopes;
  op_scopes.reserve(scopes.size());
  for (const auto& scope : scopes) op_scopes.push_back(*scope);
  AssignHostCosts(t, op_scopes, rank);
  if (rank.compute_slowdown != 1) {
    for (TimedOp& op : t.ops) {
      if (op.stream != StreamKind::kCompute || op.transfer) continue;
      op.duration =
          Time::FromSecondsCeil(op.duration.seconds() * rank.compute_slowdown);
    }
  }
  return t;
}

std::vector<HostSegment> HostSegments(const OpTemplate& t,
                                      const RankContext& rank, int first,
                                      int last) {
  std::vector<HostSegment> out;
  if (last < 0) last = static_cast<int>(t.ops.size()) - 1;
  for (int i = first; i <= last; ++i) {
    if (out.empty() || t.ops[i - 1].host_sync) {
      HostSegment s;
      s.first = s.last = i;
      const TimedOp& op = t.ops[i];
      // The launch the op's first kernel waits for: a kernel launch, or the
      // graph launch when it opens a graphed run.
      s.first_launch_s = op.graphed
                             ? std::min(op.head_host_s, rank.graph_launch_s)
                             : std::min(op.head_host_s, rank.launch_s);
      s.rest_launch_s = op.host_s - s.first_launch_s;
      out.push_back(s);
      continue;
    }
    out.back().last = i;
    out.back().rest_launch_s += t.ops[i].host_s;
  }
  return out;
}

}  // namespace moesim::sim
