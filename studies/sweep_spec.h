// The space of a sweep (scenarios/sweep.proto): a base scenario, one list of
// values per swept knob, and constraints; candidate i of the Cartesian
// product in a fixed order.
//
// Order: the axes num_gpus, seq_len, tp, cp, ep, etp, pp, vpp, mbs, gbs,
// recompute, precision, dispatcher, cpu_offload, cuda_graph, ep_overlap, the
// last varying fastest (candidate index = mixed-radix number of the value
// positions). An axis not given has one position: the base's value.
//
// A SweepSpace is an immutable value: Candidate() and Excluded() are pure
// and may be called from several threads at once.
#ifndef MOESIM_STUDIES_SWEEP_SPEC_H_
#define MOESIM_STUDIES_SWEEP_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.h"
#include "scenarios/sweep.pb.h"
#include "studies/sweep_constraint.h"
#include "studies/sweep_result.pb.h"
#include "util/error.h"

namespace moesim::studies {

// The most candidates a sweep may enumerate.
inline constexpr int64_t kMaxSweepCandidates = 1'000'000;

namespace internal {
class SweepNamer;  // names a sweep file's fields in errors (sweep_spec.cc)
}  // namespace internal

class SweepSpace {
 public:
  // Builds the space of `spec`. `origin` names it in errors ("x.textproto",
  // "flags"); `text`, when given, is the file's text, so errors cite the
  // field's line: "<origin>:<line>: <field>: <rule>"; with origin "flags"
  // errors name the flag instead (SweepFieldFlag): "flags: --tp: <rule>".
  // `base_dir` is where a relative base_file and the base's relative model
  // and system paths are found (base_file must end in .textproto). Refused:
  // an axis written but empty, a value out of range (sizes < 1, cpu_offload
  // outside [0, 1]), a malformed constraint, an unknown base model or
  // system, and a space of more than kMaxSweepCandidates candidates (axes
  // are counted before they are built). The words of the string axes and
  // of the base's precision, dispatcher and cuda_graph are checked against
  // scenarios/vocabulary.h.
  [[nodiscard]] static util::Result<SweepSpace> Build(
      const scenarios::Sweep& spec, std::string_view origin,
      std::string_view text, const std::string& base_dir);
  // Reads and parses a sweep .textproto, then Build().
  [[nodiscard]] static util::Result<SweepSpace> Load(const std::string& path);

  int64_t size() const { return size_; }
  // The base's model and system, as written.
  const std::string& model() const { return base_.model(); }
  const std::string& system() const { return base_.system(); }
  // FNV-1a (hex) of the base and the axes: equal for equal spaces.
  const std::string& fingerprint() const { return fingerprint_; }

  // The scenario of candidate `index` (base with the axis values applied).
  // REQUIRES: 0 <= index < size().
  scenarios::Scenario Candidate(int64_t index) const;

  // Empty when `scenario` (resolved) meets every constraint, else the first
  // one broken, e.g. "constraint tp*cp <= 8: 16".
  std::string Excluded(const scenarios::ResolvedScenario& scenario) const;

 private:
  enum Axis {
    kNumGpus,
    kSeqLen,
    kTp,
    kCp,
    kEp,
    kEtp,
    kPp,
    kVpp,
    kMbs,
    kGbs,
    kRecompute,
    kPrecision,
    kDispatcher,
    kCpuOffload,
    kCudaGraph,
    kEpOverlap,
    kActivationOffload,
    kOffloadOptimizerStates,
    kNumAxes
  };
  SweepSpace() = default;
  // Build's parts (sweep_spec.cc): the base, the axes, the constraints,
  // the size (refused above kMaxSweepCandidates) and the fingerprint.
  util::Result<void> ReadBase(const scenarios::Sweep& spec,
                              const std::string& base_dir,
                              const internal::SweepNamer& at);
  util::Result<void> ReadAxes(const scenarios::Sweep& spec,
                              std::string_view text,
                              const internal::SweepNamer& at);
  util::Result<void> ReadConstraints(const scenarios::Sweep& spec,
                                     const internal::SweepNamer& at);
  util::Result<void> CheckSize(const internal::SweepNamer& at);
  std::string Fingerprint() const;
  size_t AxisSize(int axis) const;
  void Apply(int axis, size_t position, scenarios::Scenario& s) const;

  scenarios::Scenario base_;
  std::vector<int32_t> ints_[kGbs + 1];  // num_gpus .. gbs
  std::vector<std::string> recompute_, precision_, dispatcher_, cuda_graph_;
  std::vector<double> cpu_offload_;
  std::vector<std::string> activation_offload_;
  std::vector<int> offload_optimizer_states_;
  std::vector<int> ep_overlap_;
  bool pipeline_swept_ = false;
  // The base model's decoder and MTP layers (with the base's overrides).
  int64_t num_layers_ = 0, mtp_layers_ = 0;
  int max_gpus_per_replica_ = 0;
  std::vector<SweepRule> rules_;
  int64_t size_ = 1;
  std::string fingerprint_;
};

// The flag that sets a Sweep field ("tp" -> "--tp", "base.model" ->
// "--model", "constraints.rule" -> "--constraint"); the field itself when no
// flag sets it.
std::string SweepFieldFlag(std::string_view field);

// Fills the layout fields of `candidate` (num_gpus .. ep_overlap) from a
// scenario spec; unset fields stay 0 or empty.
void FillLayout(const scenarios::Scenario& spec, SweepCandidate& candidate);

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_SWEEP_SPEC_H_
