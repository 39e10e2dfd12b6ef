// BoundedLeastSquares on small problems with known answers.
#include "calibration/fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace moesim::calibration {
namespace {

// A toy of what `calibrate fit` solves: each row's time is a part that runs
// at rate f1 plus a part at rate f2, t_i = a_i / f1 + b_i / f2, and the
// residual is log(model) - log(measured), with x = log f.
struct TwoClassRows {
  std::vector<double> a = {1.0, 0.2, 0.5, 0.9};
  std::vector<double> b = {0.1, 1.0, 0.5, 0.3};
  std::vector<double> measured;
  int calls = 0;

  explicit TwoClassRows(double f1, double f2) {
    for (size_t i = 0; i < a.size(); ++i) {
      measured.push_back(a[i] / f1 + b[i] / f2);
    }
  }
  std::vector<double> operator()(const std::vector<double>& x) {
    ++calls;
    std::vector<double> r;
    for (size_t i = 0; i < a.size(); ++i) {
      r.push_back(std::log(a[i] * std::exp(-x[0]) + b[i] * std::exp(-x[1])) -
                  std::log(measured[i]));
    }
    return r;
  }
};

const std::vector<double> kLo = {std::log(0.25), std::log(0.25)};
const std::vector<double> kHi = {std::log(4.0), std::log(4.0)};

// Measured with f = (0.8, 1.5): the fit from the identity recovers both
// (the ridge, 1e-3, moves the optimum by ~ridge |x| / |J|^2 < 1e-3) and the
// residuals all but vanish (the ridge's own cost there is 1/2 1e-3
// (log^2 0.8 + log^2 1.5) = 1.1e-4), in fewer evaluations than allowed.
TEST(BoundedLeastSquares, RecoversKnownFactors) {
  TwoClassRows rows(0.8, 1.5);
  LeastSquaresOptions options;
  options.max_evaluations = 20;
  const LeastSquaresResult r =
      BoundedLeastSquares([&](const std::vector<double>& x) { return rows(x); },
                          {0, 0}, kLo, kHi, options);
  EXPECT_NEAR(std::exp(r.x[0]), 0.8, 0.01);
  EXPECT_NEAR(std::exp(r.x[1]), 1.5, 0.015);
  EXPECT_LE(r.evaluations, options.max_evaluations);
  EXPECT_EQ(r.evaluations, rows.calls);
  double squares = 0;
  for (double v : rows(r.x)) squares += v * v;
  EXPECT_LT(squares, 1e-6);
  EXPECT_LT(r.cost, 1.2e-4);
}

// The truth beyond the box (f1 = 6 > 4): f1 ends on the bound, f2 is still
// found as well as the clamped f1 allows, and no evaluation leaves the box.
TEST(BoundedLeastSquares, HoldsAParameterOnItsBound) {
  TwoClassRows rows(6.0, 1.0);
  bool inside = true;
  const LeastSquaresResult r = BoundedLeastSquares(
      [&](const std::vector<double>& x) {
        for (size_t j = 0; j < x.size(); ++j) {
          inside = inside && x[j] >= kLo[j] - 1e-12 && x[j] <= kHi[j] + 1e-12;
        }
        return rows(x);
      },
      {0, 0}, kLo, kHi, LeastSquaresOptions{});
  EXPECT_TRUE(inside);
  EXPECT_NEAR(r.x[0], std::log(4.0), 1e-9);
  EXPECT_LT(r.cost, r.initial_cost);
}

// A parameter no residual depends on stays at x0 (the ridge holds it), and
// the same problem gives the same answer bit for bit.
TEST(BoundedLeastSquares, UndeterminedParameterStaysAndRunsRepeat) {
  TwoClassRows rows(0.8, 1.0);
  auto residuals = [&](const std::vector<double>& x) {
    return rows({x[0], 0.0});  // x[1] unused
  };
  const LeastSquaresResult a =
      BoundedLeastSquares(residuals, {0, 0}, kLo, kHi, LeastSquaresOptions{});
  const LeastSquaresResult b =
      BoundedLeastSquares(residuals, {0, 0}, kLo, kHi, LeastSquaresOptions{});
  EXPECT_NEAR(a.x[1], 0, 1e-12);
  EXPECT_NEAR(std::exp(a.x[0]), 0.8, 0.01);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.evaluations, b.evaluations);
}

}  // namespace
}  // namespace moesim::calibration
