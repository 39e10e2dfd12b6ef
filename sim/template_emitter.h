// Adds instances of priced op templates (op_pricing.h) to an engine: each op
// on its stream with its dependencies mapped, and the host thread's launches
// in front of them.
//
// Host model. The host launches a template's ops in order, one segment at a
// time (HostSegments: segments end at a host sync). Each segment becomes two
// ops on the host stream: the launch of its first kernel, which the
// segment's entry ops wait for, and the launches of the rest, which its last
// op waits for. So a segment of GPU-heavy kernels runs as soon as its first
// kernel is launched (the host runs ahead), and a segment of kernels shorter
// than their launches ends one kernel after its last launch (host-bound).
// The host stream is FIFO: it launches templates in the order they are
// emitted, and after a sync it waits for the GPU.
#ifndef MOESIM_SIM_TEMPLATE_EMITTER_H_
#define MOESIM_SIM_TEMPLATE_EMITTER_H_

#include <array>
#include <span>
#include <utility>
#include <vector>

#include "sim/engine.h"
#include "sim/op_pricing.h"

namespace moesim::sim {

// One stream per kind; -1 where a lane has none of that kind (kCopyH2d
// without offloading).
using StageStreams = std::array<StreamId, kNumStreamKinds>;

class TemplateEmitter {
 public:
  // `categories`: tag each op with its category for the trace.
  // REQUIRES: `engine` outlives the emitter.
  TemplateEmitter(Engine& engine, bool categories);

  // Emits one instance of `t` (with its host segments) on `streams`; ops
  // that wait for the template's entry wait for every op of `entry`.
  // Returns {first op, exit op}; an empty template is one zero-length marker.
  std::pair<OpId, OpId> Emit(const StageStreams& streams, const OpTemplate& t,
                             const std::vector<HostSegment>& host,
                             std::span<const OpId> entry);

  // Ops [first, last] of one instance of `t`, whose earlier parts' engine
  // ids are in `ids` (t.ops.size() entries; this call fills its range), with
  // `host` the segments of that range. The compute ops run beside kernels
  // that hold some of the GPU's SMs for `stretch_s` seconds of wall time:
  // in that window they progress at 1 / `stretch` (>= 1) of their speed,
  // after it at full speed, and the op the window ends in is stretched for
  // its share inside it only (so a chain of ops and one op of their summed
  // length take the same time: Coalesce() does not change the replay).
  // Returns the engine id of op `last`.
  OpId EmitPart(const StageStreams& streams, const OpTemplate& t, int first,
                int last, const std::vector<HostSegment>& host,
                std::vector<OpId>& ids, std::span<const OpId> entry,
                double stretch = 1, double stretch_s = 0);

  // One lane's instance for EmitParts.
  struct Lane {
    const StageStreams* streams;
    const OpTemplate* t;
    const std::vector<HostSegment>* host;
    std::vector<OpId>* ids;
    std::span<const OpId> entry;
  };
  // EmitPart for several lanes whose templates have the same ops (a stage's
  // ranks in full mode, whose collectives are joined across lanes): op by
  // op across the lanes, so that every member of a joined op is added
  // before any op that waits for one of them, and the engine can time the
  // step in id order. Each stream receives the ops it would from one
  // EmitPart per lane.
  void EmitParts(std::span<const Lane> lanes, int first, int last,
                 double stretch = 1, double stretch_s = 0);

  // One op outside any template (no host launch modelled); `duration`
  // overrides the op's own when not negative.
  OpId EmitOne(const StageStreams& streams, const TimedOp& op,
               std::span<const OpId> deps, Time duration = Time::Picos(-1));

 private:
  Engine& engine_;
  bool categories_;
  NameId launch_name_;
  NameId marker_name_;
  // Op i of lane `l`'s template, with `launch` its segment's first and
  // rest launches (rest: -1 where none) and `seg` the segment; a compute
  // op is stretched within the lane's remaining window `stretch_s`.
  void EmitOp(const Lane& l, const HostSegment& seg, int i,
              std::pair<OpId, OpId> launch, double stretch, double& stretch_s);
  // The host launches of lane `l`'s segment `seg` of a part from `first`.
  std::pair<OpId, OpId> EmitLaunches(const Lane& l, const HostSegment& seg,
                                     int first);

  std::vector<OpId> scratch_;                    // deps of one op
  std::vector<std::pair<OpId, OpId>> launches_;  // per lane (EmitParts)
  std::vector<double> windows_;                  // per lane (EmitParts)
  std::vector<OpId> ids_;  // engine id of each template op
};

}  // namespace moesim::sim

#endif  // MOESIM_SIM_TEMPLATE_EMITTER_H_
