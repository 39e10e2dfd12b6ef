#include "models/pipeline.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "util/message.h"

namespace moesim::models {
namespace {

constexpr std::string_view kField = "pipeline_model_parallel_layout: ";
// Guards against layouts like "(t*1000)*1000" expanding without bound.
constexpr size_t kMaxExpandedSymbols = 1 << 20;

std::unexpected<util::Error> LayoutError(const std::string& rule) {
  return util::Fail(std::string(kField) + rule);
}

// Expands repetitions in `s` into a flat string of E, t, m, L and '|'.
// Iterative (an explicit stack of open groups), so a layout of millions of
// nested parentheses is refused or expanded without deep recursion.
class Expander {
 public:
  explicit Expander(std::string_view s) : s_(s) {}

  util::Result<std::string> Run() {
    // groups.back() collects the symbols of the innermost open '('.
    std::vector<std::string> groups(1);
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      // Blanks, and commas, which Megatron's parse_str_to_list drops
      // ("Ettt|(tt|)*29,m|L").
      if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
        ++pos_;
        continue;
      }
      if (c == '(') {
        if (groups.size() > kMaxNesting)
          return Error("nests more than " + std::to_string(kMaxNesting) +
                       " groups");
        groups.emplace_back();
        ++pos_;
        continue;
      }
      std::string item;
      if (c == ')') {
        if (groups.size() == 1) return Error("unexpected ')'");
        item = std::move(groups.back());
        groups.pop_back();
        ++pos_;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos_;
      } else {
        return Error("unknown symbol '" + util::Excerpt(std::string(1, c)) +
                     "' (use E, t, m, L, '|', X*n and (...)*n)");
      }
      auto count = Repeat();
      if (!count) return std::unexpected(count.error());
      std::string& out = groups.back();
      if (static_cast<double>(out.size()) +
              static_cast<double>(item.size()) * static_cast<double>(*count) >
          static_cast<double>(kMaxExpandedSymbols))
        return Error("expands to more than " +
                     std::to_string(kMaxExpandedSymbols) + " symbols");
      for (int64_t i = 0; i < *count; ++i) out += item;
    }
    if (groups.size() > 1) return Error("missing ')'");
    return std::move(groups.front());
  }

 private:
  // Far above any real layout (Megatron's are one level deep).
  static constexpr size_t kMaxNesting = 64;

  // Parses an optional "*n" after an item; returns n (1 when absent).
  util::Result<int64_t> Repeat() {
    while (pos_ < s_.size() &&
           std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
    if (pos_ >= s_.size() || s_[pos_] != '*') return 1;
    ++pos_;
    int64_t n = 0;
    size_t digits = 0;
    while (pos_ < s_.size() &&
           std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      n = n * 10 + (s_[pos_] - '0');
      ++pos_;
      if (++digits > 7) return Error("repeat count too large");
    }
    if (digits == 0) return Error("'*' must be followed by a count");
    return n;
  }

  std::unexpected<util::Error> Error(const std::string& rule) const {
    return std::unexpected(util::Error{
        std::string(kField) + rule + " at position " +
        std::to_string(pos_ + 1) + " of \"" + util::Excerpt(s_) + "\""});
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

util::Result<int64_t> CountLayoutStages(std::string_view layout) {
  auto flat = Expander(layout).Run();
  if (!flat) return std::unexpected(flat.error());
  return 1 + std::count(flat->begin(), flat->end(), '|');
}

util::Result<PipelinePlan> UniformPipeline(int64_t num_layers,
                                           int64_t mtp_layers, int pp,
                                           int vpp) {
  const int64_t stages = int64_t{pp} * vpp;
  if (num_layers % stages != 0) {
    return util::Fail(
        std::string(kField) + "num_layers " + std::to_string(num_layers) +
        " is not divisible by pipeline_model_parallel_size x "
        "virtual_pipeline_model_parallel_size = " +
        std::to_string(stages) + "; give an explicit layout (--pp-layout)");
  }
  PipelinePlan plan{pp, vpp, std::vector<VirtualStage>(stages)};
  const int64_t per_stage = num_layers / stages;
  for (int64_t s = 0; s < stages; ++s) {
    for (int64_t i = 0; i < per_stage; ++i)
      plan.stages[s].layers.push_back(s * per_stage + i);
  }
  plan.stages.front().embedding = true;
  plan.stages.back().mtp_layers = mtp_layers;
  plan.stages.back().loss = true;
  return plan;
}

util::Result<PipelinePlan> ParsePipelineLayout(std::string_view layout,
                                               int64_t num_layers,
                                               int64_t mtp_layers, int pp,
                                               int vpp) {
  auto flat = Expander(layout).Run();
  if (!flat) return std::unexpected(flat.error());
  PipelinePlan plan{pp, vpp, {VirtualStage{}}};
  int64_t next_layer = 0;
  int64_t mtp = 0;
  for (char c : *flat) {
    VirtualStage& stage = plan.stages.back();
    switch (c) {
      case '|':
        plan.stages.emplace_back();
        break;
      case 'E':
        stage.embedding = true;
        break;
      case 't':
        stage.layers.push_back(next_layer++);
        break;
      case 'm':
        ++stage.mtp_layers;
        ++mtp;
        break;
      case 'L':
        stage.loss = true;
        break;
    }
  }
  const int64_t expected = int64_t{pp} * vpp;
  if (static_cast<int64_t>(plan.stages.size()) != expected) {
    return LayoutError("has " + std::to_string(plan.stages.size()) +
                       " stages, expected pipeline_model_parallel_size x "
                       "virtual_pipeline_model_parallel_size = " +
                       std::to_string(expected));
  }
  if (next_layer != num_layers) {
    return LayoutError("places " + std::to_string(next_layer) +
                       " decoder layers (t), the model has " +
                       std::to_string(num_layers));
  }
  if (mtp != mtp_layers) {
    return LayoutError("places " + std::to_string(mtp) +
                       " MTP layers (m), the model has " +
                       std::to_string(mtp_layers));
  }
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    if (plan.stages[s].embedding && s != 0)
      return LayoutError("E must be in the first stage");
    if (plan.stages[s].loss && s + 1 != plan.stages.size()) {
      return LayoutError("L must be in the last stage");
    }
  }
  if (!plan.stages.front().embedding)
    return LayoutError("the first stage must hold E");
  if (!plan.stages.back().loss)
    return LayoutError("the last stage must hold L");
  return plan;
}

std::string AccountedLayout(int64_t num_layers, int64_t mtp_layers, int pp,
                            int vpp) {
  const int64_t stages = int64_t{pp} * vpp;
  if (mtp_layers > 0 || stages < 2 || (num_layers + 2) % stages != 0) {
    return "";
  }
  const int64_t k = (num_layers + 2) / stages;  // layers per virtual stage
  // Appends rather than operator+ chains, which trip GCC 12's -Wrestrict
  // false positive.
  std::string layout;
  auto layers = [&layout](int64_t n) {
    if (n == 0) return;
    layout += 't';
    if (n > 1) {
      layout += '*';
      layout += std::to_string(n);
    }
  };
  layout += 'E';
  layers(k - 1);
  layout += '|';
  if (stages > 2) {
    layout += '(';
    layers(k);
    layout += "|)*";
    layout += std::to_string(stages - 2);
  }
  layers(k - 1);
  layout += 'L';
  return layout;
}

OneFOneBSchedule::OneFOneBSchedule(int rank, int pp, int vpp,
                                   int64_t microbatches)
    : pp_(pp), vpp_(vpp), microbatches_(microbatches) {
  total_ = microbatches * vpp;
  const int64_t warmup =
      vpp == 1 ? pp - rank - 1
               : int64_t{pp - rank - 1} * 2 + int64_t{vpp - 1} * pp;
  warmup_ = std::min(warmup, total_);
}

ScheduleStep OneFOneBSchedule::Forward(int64_t k) const {
  // get_schedule_table: groups of pp micro-batches; each group runs chunk 0
  // for its micro-batches, then chunk 1, ...; the last group holds what is
  // left (fewer than pp when pp does not divide the count).
  const int64_t group = pp_;
  const int64_t full_groups = (microbatches_ + group - 1) / group - 1;
  const int64_t full_steps = full_groups * group * vpp_;
  if (k < full_steps) {
    const int64_t r = k % (group * vpp_);
    return {StepKind::kForward, (k / (group * vpp_)) * group + r % group,
            static_cast<int>(r / group)};
  }
  const int64_t r = k - full_steps, last = microbatches_ - full_groups * group;
  return {StepKind::kForward, full_groups * group + r % last,
          static_cast<int>(r / last)};
}

ScheduleStep OneFOneBSchedule::Backward(int64_t k) const {
  ScheduleStep step = Forward(k);
  step.kind = StepKind::kBackward;
  step.chunk = vpp_ - 1 - step.chunk;
  return step;
}

ScheduleStep OneFOneBSchedule::operator[](int64_t i) const {
  if (i < warmup_) return Forward(i);
  const int64_t j = i - warmup_, steady = total_ - warmup_;
  if (j < 2 * steady)
    return j % 2 == 0 ? Forward(warmup_ + j / 2) : Backward(j / 2);
  return Backward(j - steady);
}

}  // namespace moesim::models
