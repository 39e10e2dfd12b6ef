// A sweep constraint (scenarios/sweep.proto, Constraints.rule):
//   "<product> <op> <product>", op one of <=, <, >=, >, ==, !=; a product
//   multiplies names from tp, cp, ep, etp, pp, vpp, dp, edp, mbs, gbs,
//   num_gpus, seq_len and integers >= 0: "tp*cp <= 8", "gbs*seq_len ==
//   8388608".
// A SweepRule is an immutable value; Check() is pure.
#ifndef MOESIM_STUDIES_SWEEP_CONSTRAINT_H_
#define MOESIM_STUDIES_SWEEP_CONSTRAINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.h"
#include "util/error.h"

namespace moesim::studies {

class SweepRule {
 public:
  // Errors are the rule alone ("'tp*x <= 8': unknown term 'x' (...)"); the
  // caller names the field.
  [[nodiscard]] static util::Result<SweepRule> Parse(std::string_view text);

  // The rule as written, trimmed.
  const std::string& text() const { return text_; }

  // Empty when `r` meets the rule, else "constraint <text>: <lhs> <op>
  // <rhs> is false". Products are exact: a side above 2^63 - 1 compares
  // as larger than any side that fits; when both sides overflow the rule
  // cannot be decided and the reason says so (the candidate is excluded).
  std::string Check(const scenarios::ResolvedScenario& r) const;

 private:
  // A factor is a name ("tp") or an integer literal (name empty).
  struct Factor {
    std::string name;
    int64_t value = 1;
  };
  static util::Result<std::vector<Factor>> ParseProduct(
      std::string_view side, const std::string& rule);
  // nullopt when the product overflows int64.
  static std::optional<int64_t> Evaluate(const std::vector<Factor>& product,
                                         const scenarios::ResolvedScenario& r);

  std::string text_;
  std::vector<Factor> lhs_, rhs_;
  std::string op_;
};

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_SWEEP_CONSTRAINT_H_
