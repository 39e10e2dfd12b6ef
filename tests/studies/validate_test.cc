// The validation and kernel-check studies called as functions, without the
// command line (studies/validate.h, studies/calibration_checks.h).
#include "studies/validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "studies/calibration_checks.h"
#include "studies/measured_runs.h"

namespace moesim::studies {
namespace {

// The first `n` rows of the shipped runs.csv that measure TFLOPS and run
// on at most 64 GPUs: a replay of a few milliseconds each.
MeasuredRuns SmallShippedRuns(size_t n) {
  auto runs = LoadMeasuredRuns("", "RUNS");
  EXPECT_TRUE(runs.has_value());
  MeasuredRuns small{runs->name, {}};
  for (const MeasuredRun& row : runs->rows) {
    if (small.rows.size() == n) break;
    if (row.tflops && row.unexpressible.empty() &&
        row.flags.gpus.value_or(0) <= 64 && row.confidence != "low")
      small.rows.push_back(row);
  }
  EXPECT_EQ(small.rows.size(), n);
  return small;
}

TEST(Validate, EveryRowGetsAResultThatPointsIntoTheRowsItKeeps) {
  ValidateOptions options;
  options.by = {"model"};
  options.jobs = 2;
  const Validation v = Validate(SmallShippedRuns(4), options);
  ASSERT_NE(v.rows, nullptr);
  ASSERT_EQ(v.results.size(), 4u);
  int simulated = 0;
  for (size_t i = 0; i < v.results.size(); ++i) {
    EXPECT_EQ(v.results[i].row, &(*v.rows)[i]);
    simulated += v.results[i].simulated;
  }
  // Every simulated high/medium row with TFLOPS is in the statistics, in a
  // group and in the ranking (AddStatistics).
  EXPECT_EQ(v.main.rows, simulated);
  EXPECT_EQ(static_cast<int>(v.ranked.size()), simulated);
  size_t grouped = 0;
  for (const auto& [key, errors] : v.groups) grouped += errors.size();
  EXPECT_EQ(grouped, v.ranked.size());
  EXPECT_FALSE(v.has_pairs);
}

TEST(Validate, ACopyStandsAloneAndRanksWorstFirst) {
  ValidateOptions options;
  options.by = {"gpu"};
  Validation copy;
  {
    const Validation v = Validate(SmallShippedRuns(3), options);
    copy = v;
  }
  ASSERT_FALSE(copy.ranked.empty());
  for (size_t i = 0; i < copy.results.size(); ++i)
    EXPECT_EQ(copy.results[i].row, &(*copy.rows)[i]);
  for (size_t i = 1; i < copy.ranked.size(); ++i) {
    EXPECT_GE(std::abs(copy.results[copy.ranked[i - 1]].error_pct()),
              std::abs(copy.results[copy.ranked[i]].error_pct()));
  }
}

TEST(ValidateKernels, GroupsCountEveryCheckOfTheGpu) {
  auto v = ValidateKernels({"h100"}, "");
  ASSERT_TRUE(v.has_value()) << v.error().message;
  ASSERT_FALSE(v->checks.empty());
  int points = 0;
  for (const auto& [key, g] : v->groups) {
    EXPECT_EQ(key.first, "h100");
    points += g.points;
  }
  EXPECT_EQ(points, static_cast<int>(v->checks.size()));
}

TEST(ValidateKernels, AnUnknownGpuNamesTheFlagAndTheKnownOnes) {
  auto v = ValidateKernels({"h900"}, "");
  ASSERT_FALSE(v.has_value());
  EXPECT_TRUE(v.error().message.starts_with(
      "flags: --gpu: unknown GPU 'h900' (known: "))
      << v.error().message;
}

}  // namespace
}  // namespace moesim::studies
