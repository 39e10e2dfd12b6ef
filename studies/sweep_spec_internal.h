// The sweep spec's parts that studies/sweep_spec.cc and studies/sweep_axes.cc
// share: a field of the sweep file named in an error, and an axis read.
// Private to the studies library.
#ifndef MOESIM_STUDIES_SWEEP_SPEC_INTERNAL_H_
#define MOESIM_STUDIES_SWEEP_SPEC_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/sweep.pb.h"
#include "util/error.h"

namespace moesim::studies::internal {

// The sweep axes' field names, in SweepSpace's axis order.
inline constexpr const char* kAxisNames[] = {"num_gpus",
                                             "seq_len",
                                             "tp",
                                             "cp",
                                             "ep",
                                             "etp",
                                             "pp",
                                             "vpp",
                                             "mbs",
                                             "gbs",
                                             "recompute",
                                             "precision",
                                             "dispatcher",
                                             "cpu_offload",
                                             "cuda_graph",
                                             "ep_overlap",
                                             "activation_offload",
                                             "offload_optimizer_states"};

// Line (1-based) of `field` written at the top level of a text-format file
// (outside any `{ }`), or 0. Skips comments and quoted strings.
int TopLevelLine(std::string_view text, std::string_view field);

// True when `field` is written at the top level as an empty list: "x: []".
bool WrittenEmpty(std::string_view text, std::string_view field);

// Names fields of the sweep file in errors: "<file>:<line>: <field>:
// <rule>", or "flags: --<flag>: <rule>" for a sweep given as flags.
class SweepNamer {
 public:
  SweepNamer(std::string_view origin, std::string_view text)
      : origin_(origin), text_(text) {}
  util::Error Error(std::string_view field, std::string_view rule) const;
  // Error() for a message of another module, keeping its first line and
  // dropping a leading "<leaf>: " that names the field again.
  util::Error Wrap(std::string_view field, std::string_view message) const;

 private:
  std::string_view origin_;
  std::string_view text_;
};

// The values of an integer axis, in order, without duplicates. Sizes are
// counted before anything is built (a range's by arithmetic), and duplicates
// are dropped in linear time, so a hostile axis is refused at once.
util::Result<std::vector<int32_t>> Expand(const scenarios::IntAxis& axis,
                                          std::string_view name,
                                          const SweepNamer& at);

// Checks a string axis against its vocabulary (scenarios/vocabulary.h);
// `name` is the field.
// `kind` is the axis ("precision"), `field` where the words are written.
util::Result<void> CheckWords(const std::vector<std::string>& values,
                              std::string_view kind, std::string_view field,
                              const SweepNamer& at);

// The base: base_file's scenario, then the fields written in `base`.
util::Result<scenarios::Scenario> LoadBase(const scenarios::Sweep& spec,
                                           const std::string& base_dir,
                                           const SweepNamer& at);

}  // namespace moesim::studies::internal

#endif  // MOESIM_STUDIES_SWEEP_SPEC_INTERNAL_H_
