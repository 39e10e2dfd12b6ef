#include "calibration/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "util/check.h"

namespace moesim::calibration {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

VectorXd ToEigen(const std::vector<double>& v) {
  return Eigen::Map<const VectorXd>(v.data(),
                                    static_cast<Eigen::Index>(v.size()));
}

std::vector<double> ToStd(const VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

// A parameter within this of a bound counts as on it.
constexpr double kOnBound = 1e-12;
constexpr double kInitialDamping = 1e-2;
constexpr double kDampingUp = 4;
constexpr double kDampingDown = 0.3;

}  // namespace

LeastSquaresResult BoundedLeastSquares(const Residuals& residuals,
                                       const std::vector<double>& x0_in,
                                       const std::vector<double>& lo_in,
                                       const std::vector<double>& hi_in,
                                       const LeastSquaresOptions& options) {
  const Eigen::Index n = static_cast<Eigen::Index>(x0_in.size());
  util::CheckOrDie(lo_in.size() == x0_in.size() && hi_in.size() == x0_in.size(),
                   "BoundedLeastSquares: x0, lo, hi sizes differ");
  const VectorXd x0 = ToEigen(x0_in), lo = ToEigen(lo_in), hi = ToEigen(hi_in);
  LeastSquaresResult result;
  auto evaluate = [&](const VectorXd& x) {
    ++result.evaluations;
    return ToEigen(residuals(ToStd(x)));
  };
  auto cost_of = [&](const VectorXd& x, const VectorXd& r) {
    return 0.5 * r.squaredNorm() + 0.5 * options.ridge * (x - x0).squaredNorm();
  };

  VectorXd x = x0;
  VectorXd r = evaluate(x);
  util::CheckOrDie(r.size() > 0, "BoundedLeastSquares: no residuals");
  double cost = cost_of(x, r);
  result.initial_cost = cost;

  // Forward differences, stepping inward where the step would leave the box.
  MatrixXd jacobian(r.size(), n);
  for (Eigen::Index j = 0; j < n; ++j) {
    VectorXd xj = x;
    const double h = x[j] + options.jacobian_step <= hi[j]
                         ? options.jacobian_step
                         : -options.jacobian_step;
    xj[j] += h;
    const VectorXd rj = evaluate(xj);
    util::CheckOrDie(rj.size() == r.size(),
                     "BoundedLeastSquares: residual count changed");
    jacobian.col(j) = (rj - r) / h;
  }

  double damping = kInitialDamping;
  while (result.evaluations < options.max_evaluations) {
    const VectorXd gradient =
        jacobian.transpose() * r + options.ridge * (x - x0);
    // Active set: on a bound with the descent direction pointing out.
    std::vector<Eigen::Index> free;
    for (Eigen::Index j = 0; j < n; ++j) {
      const bool held = (x[j] <= lo[j] + kOnBound && gradient[j] > 0) ||
                        (x[j] >= hi[j] - kOnBound && gradient[j] < 0);
      if (!held) free.push_back(j);
    }
    if (free.empty()) break;
    const Eigen::Index f = static_cast<Eigen::Index>(free.size());
    MatrixXd a(f, f);
    VectorXd g(f);
    for (Eigen::Index i = 0; i < f; ++i) {
      g[i] = gradient[free[i]];
      for (Eigen::Index k = 0; k < f; ++k) {
        a(i, k) = jacobian.col(free[i]).dot(jacobian.col(free[k]));
      }
    }
    for (Eigen::Index i = 0; i < f; ++i) {
      a(i, i) += damping * a(i, i) + options.ridge + damping * 1e-6;
    }
    VectorXd delta_free = a.ldlt().solve(-g);
    const double longest = delta_free.lpNorm<Eigen::Infinity>();
    if (longest > options.max_step) delta_free *= options.max_step / longest;
    VectorXd trial = x;
    for (Eigen::Index i = 0; i < f; ++i) trial[free[i]] += delta_free[i];
    trial = trial.cwiseMax(lo).cwiseMin(hi);
    const VectorXd step = trial - x;
    if (step.lpNorm<Eigen::Infinity>() < options.step_tolerance) break;
    const VectorXd r_trial = evaluate(trial);
    // Broyden: the secant through both points, whatever the outcome.
    jacobian +=
        (r_trial - r - jacobian * step) * step.transpose() / step.squaredNorm();
    const double trial_cost = cost_of(trial, r_trial);
    if (trial_cost < cost) {
      const double gain = (cost - trial_cost) / std::max(cost, 1e-300);
      x = trial;
      r = r_trial;
      cost = trial_cost;
      ++result.accepted_steps;
      damping *= kDampingDown;
      if (gain < options.cost_tolerance) break;
    } else {
      damping = std::max(damping, 1e-3) * kDampingUp;
    }
  }
  result.x = ToStd(x);
  result.cost = cost;
  return result;
}

}  // namespace moesim::calibration
