// Bounded nonlinear least squares in a few parameters whose residuals are
// expensive to evaluate (each evaluation of `moesim calibrate fit` replays
// every measured run).
//
// Design. Levenberg-Marquardt on
//   cost(x) = 1/2 |r(x)|^2 + 1/2 ridge |x - x0|^2,   lo <= x <= hi,
// with a forward-difference Jacobian at the start (one evaluation per
// parameter, stepping inward at an upper bound) and Broyden rank-one updates
// after every trial point, accepted or not, so each further iteration costs
// one evaluation. A step moves no parameter by more than `max_step` (the
// linear model is trusted that far). Bounds by projection with an active set: a
// parameter on a bound whose gradient pushes it outward is held there for the
// step. The ridge (small) keeps a parameter the data does not determine near x0
// instead of letting it wander. The normal equations are solved with Eigen's
// LDLT. Same inputs, same evaluations, same answer.
#ifndef MOESIM_CALIBRATION_FIT_H_
#define MOESIM_CALIBRATION_FIT_H_

#include <functional>
#include <vector>

namespace moesim::calibration {

struct LeastSquaresOptions {
  // Including the start and the Jacobian's, which are always taken (1 + n).
  int max_evaluations = 16;
  double jacobian_step = 0.05;  // forward-difference step in x
  double ridge = 1e-3;
  // No step moves a parameter by more than this (a trust region: the
  // linear model is only trusted this far from where it was taken).
  double max_step = 0.5;
  // Stop when an accepted step lowers the cost by less than this fraction,
  // or moves no parameter by more than `step_tolerance`.
  double cost_tolerance = 1e-4;
  double step_tolerance = 1e-3;
};

struct LeastSquaresResult {
  std::vector<double> x;
  double cost = 0;          // at x, ridge included
  double initial_cost = 0;  // at x0
  int evaluations = 0;
  int accepted_steps = 0;
};

// r(x): the residuals at x, always the same count.
using Residuals =
    std::function<std::vector<double>(const std::vector<double>&)>;

// REQUIRES: x0, lo, hi the same size, lo <= x0 <= hi, hi - lo > the
// Jacobian step, and r's size fixed and > 0.
LeastSquaresResult BoundedLeastSquares(const Residuals& r,
                                       const std::vector<double>& x0,
                                       const std::vector<double>& lo,
                                       const std::vector<double>& hi,
                                       const LeastSquaresOptions& options);

}  // namespace moesim::calibration

#endif  // MOESIM_CALIBRATION_FIT_H_
