#include "studies/sweep_constraint.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "util/message.h"

namespace moesim::studies {
namespace {

using util::Result;

constexpr std::string_view kNames[] = {"tp",  "cp",  "ep",       "etp",
                                       "pp",  "vpp", "dp",       "edp",
                                       "mbs", "gbs", "num_gpus", "seq_len"};

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

bool Compare(int64_t a, std::string_view op, int64_t b) {
  if (op == "<=") return a <= b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  return a > b;
}

}  // namespace

Result<std::vector<SweepRule::Factor>> SweepRule::ParseProduct(
    std::string_view side, const std::string& rule) {
  std::vector<Factor> out;
  size_t start = 0;
  while (true) {
    const size_t star = side.find('*', start);
    const std::string word = Trim(side.substr(
        start, star == std::string_view::npos ? side.npos : star - start));
    Factor f;
    int64_t value = 0;
    auto [end, ec] =
        std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec == std::errc::result_out_of_range &&
        end == word.data() + word.size()) {
      return util::Fail("'" + rule + "': number " + util::Excerpt(word) +
                        " is above 2^63 - 1");
    }
    if (!word.empty() && ec == std::errc() &&
        end == word.data() + word.size()) {
      if (value < 0) {
        return util::Fail("'" + rule + "': numbers must be >= 0, got " + word);
      }
      f.value = value;
    } else if (std::find(std::begin(kNames), std::end(kNames), word) !=
               std::end(kNames)) {
      f.name = word;
    } else {
      return util::Fail("'" + rule + "': unknown term '" + word +
                        "' (a product of tp, cp, ep, etp, pp, vpp, dp, edp, "
                        "mbs, gbs, num_gpus, seq_len and integers)");
    }
    out.push_back(std::move(f));
    if (star == std::string_view::npos) break;
    start = star + 1;
  }
  return out;
}

Result<SweepRule> SweepRule::Parse(std::string_view text) {
  SweepRule rule;
  rule.text_ = Trim(text);
  for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
    const size_t pos = text.find(op);
    if (pos == std::string::npos) continue;
    rule.op_ = op;
    auto lhs = ParseProduct(text.substr(0, pos), rule.text_);
    if (!lhs) return std::unexpected(lhs.error());
    auto rhs = ParseProduct(text.substr(pos + op.size()), rule.text_);
    if (!rhs) return std::unexpected(rhs.error());
    rule.lhs_ = std::move(*lhs);
    rule.rhs_ = std::move(*rhs);
    return rule;
  }
  return util::Fail("'" + rule.text_ +
                    "': needs a comparison (<=, <, >=, >, ==, !=)");
}

std::optional<int64_t> SweepRule::Evaluate(
    const std::vector<Factor>& product, const scenarios::ResolvedScenario& r) {
  const models::Parallelism& p = r.parallel;
  int64_t out = 1;
  bool overflow = false;
  for (const Factor& f : product) {
    int64_t v = f.value;
    if (f.name == "tp") v = p.tp;
    if (f.name == "cp") v = p.cp;
    if (f.name == "ep") v = p.ep;
    if (f.name == "etp") v = p.etp;
    if (f.name == "pp") v = p.pp;
    if (f.name == "vpp") v = p.vpp;
    if (f.name == "dp") v = p.dp;
    if (f.name == "edp") v = p.edp;
    if (f.name == "mbs") v = r.training.micro_batch_size;
    if (f.name == "gbs") v = r.training.global_batch_size;
    if (f.name == "num_gpus") v = r.spec.num_gpus();
    if (f.name == "seq_len") v = r.training.seq_length;
    if (v == 0) return 0;  // a zero factor decides even after an overflow
    if (__builtin_mul_overflow(out, v, &out)) overflow = true;
  }
  if (overflow) return std::nullopt;
  return out;
}

std::string SweepRule::Check(const scenarios::ResolvedScenario& r) const {
  const std::optional<int64_t> lhs = Evaluate(lhs_, r), rhs = Evaluate(rhs_, r);
  if (!lhs && !rhs) {
    return "constraint " + text_ +
           ": both sides exceed 2^63 - 1, so it cannot be decided exactly";
  }
  const auto show = [](const std::optional<int64_t>& v) {
    return v ? std::to_string(*v) : std::string("(more than 2^63 - 1)");
  };
  bool holds;
  if (lhs && rhs) {
    holds = Compare(*lhs, op_, *rhs);
  } else {
    // Exactly one side overflowed: it is strictly the larger one.
    const int order = lhs ? -1 : 1;  // sign of lhs - rhs
    holds = (op_ == "!=") || (op_ == "<" && order < 0) ||
            (op_ == "<=" && order < 0) || (op_ == ">" && order > 0) ||
            (op_ == ">=" && order > 0);
  }
  if (holds) return "";
  return "constraint " + text_ + ": " + show(lhs) + " " + op_ + " " +
         show(rhs) + " is false";
}

}  // namespace moesim::studies
