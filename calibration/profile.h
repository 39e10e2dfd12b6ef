// A calibration profile (calibration/profile.proto): a few named,
// multiplicative corrections to the shipped tables' predictions, each
// standing for one physical effect on a user's own cluster.
//
// Design. `Corrections` holds one value per `Factor`, all 1 for the
// identity. The seams that apply them are where the corrected numbers are
// produced, never the step time: CostModel (kernel classes, dispatcher
// rates, host quantities) and the network parameters the platform builds
// (sim::BuildPlatform). Applying a factor multiplies or divides by it, so
// the identity gives bit-identical answers to no profile.
//
// A profile file is protobuf text format. Loading rejects, with one line
// "<file>:<line>: <field>: <rule>", a malformed file, an unknown field, a
// factor that is not finite or lies outside [kMinFactor, kMaxFactor], an
// unknown GPU and a GPU listed twice.
#ifndef MOESIM_CALIBRATION_PROFILE_H_
#define MOESIM_CALIBRATION_PROFILE_H_

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.h"

namespace moesim::calibration {

// In the order of profile.proto's Factors fields.
enum class Factor {
  kGemm,          // gemm_efficiency: dense GEMM throughput
  kGroupedGemm,   // grouped_gemm_efficiency: MoE expert GEMMs
  kAttention,     // attention_efficiency
  kMemoryBound,   // memory_bound_efficiency: achieved HBM bandwidth
  kNvlinkComm,    // nvlink_comm_efficiency: inside an NVLink domain
  kNetworkComm,   // network_comm_efficiency: NICs and fabric
  kDispatcher,    // dispatcher_efficiency: MoE token exchange
  kHostOverhead,  // host_overhead_scale: per-launch host cost (a cost)
};
inline constexpr int kNumFactors = 8;
inline constexpr Factor kFactors[kNumFactors] = {
    Factor::kGemm,        Factor::kGroupedGemm, Factor::kAttention,
    Factor::kMemoryBound, Factor::kNvlinkComm,  Factor::kNetworkComm,
    Factor::kDispatcher,  Factor::kHostOverhead};
inline constexpr double kMinFactor = 0.25;
inline constexpr double kMaxFactor = 4;

// The proto field name: "gemm_efficiency", ..., "host_overhead_scale".
const char* FactorName(Factor factor);
// Error for an unknown name, listing the known ones.
[[nodiscard]] util::Result<Factor> ParseFactor(std::string_view name);

// One value per factor; default: all 1 (no correction).
struct Corrections {
  std::array<double, kNumFactors> values{1, 1, 1, 1, 1, 1, 1, 1};

  double at(Factor f) const { return values[static_cast<int>(f)]; }
  double& at(Factor f) { return values[static_cast<int>(f)]; }
  bool IsIdentity() const;
  // Element-wise product (a GPU's factors on top of the all-GPU ones).
  Corrections operator*(const Corrections& other) const;
};

struct Profile {
  std::string name;
  Corrections all;  // every GPU
  // Per GPU type (a calibration table folder), in file order.
  std::vector<std::pair<std::string, Corrections>> by_gpu;

  // The corrections for `gpu`: `all` times its own entry, if any.
  Corrections For(std::string_view gpu) const;
};

// Parses a profile's text; `file` names it in errors.
[[nodiscard]] util::Result<Profile> ParseProfile(std::string_view text,
                                                 std::string_view file);
// Reads and parses a profile file.
[[nodiscard]] util::Result<Profile> LoadProfile(const std::string& path);

// The profile as text format: `header` lines first, each as a "# " comment,
// then the name, the all-GPU factors that are not 1 and the GPU entries.
// Values with 4 decimals; same profile, same bytes. Parses back with
// ParseProfile (up to the rounding).
std::string FormatProfile(const Profile& profile,
                          const std::vector<std::string>& header);

}  // namespace moesim::calibration

#endif  // MOESIM_CALIBRATION_PROFILE_H_
