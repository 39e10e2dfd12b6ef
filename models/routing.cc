#include "models/routing.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace moesim::models {

std::vector<double> ExpertLoads(int64_t experts, int ep, double skew,
                                std::span<const double> histogram) {
  std::vector<double> load(std::max(ep, 1), 1.0);
  if (experts <= 0 || ep <= 1 || experts % ep != 0) return load;
  const int64_t local = experts / ep;
  if (!histogram.empty()) {
    if (static_cast<int64_t>(histogram.size()) != experts) return load;
    std::fill(load.begin(), load.end(), 0.0);
    double total = 0;
    for (int64_t e = 0; e < experts; ++e) {
      load[e / local] += histogram[e];
      total += histogram[e];
    }
    if (!(total > 0)) return std::vector<double>(ep, 1.0);
    for (double& l : load) l /= total / ep;
    return load;
  }
  if (skew <= 0) return load;
  // Popularity rank r (0-based) -> expert perm[r], a Fisher-Yates shuffle
  // driven by splitmix64.
  std::vector<int64_t> perm(experts);
  for (int64_t i = 0; i < experts; ++i) perm[i] = i;
  uint64_t state = static_cast<uint64_t>(experts);
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (int64_t i = experts - 1; i > 0; --i) {
    std::swap(perm[i], perm[next() % static_cast<uint64_t>(i + 1)]);
  }
  std::fill(load.begin(), load.end(), 0.0);
  double total = 0;
  for (int64_t r = 0; r < experts; ++r) {
    const double w = 1.0 / std::pow(static_cast<double>(r + 1), skew);
    load[perm[r] / local] += w;
    total += w;
  }
  for (double& l : load) l /= total / ep;
  return load;
}

double RoutingImbalance(int64_t experts, int ep, double skew,
                        std::span<const double> histogram) {
  const std::vector<double> load = ExpertLoads(experts, ep, skew, histogram);
  return *std::max_element(load.begin(), load.end());
}

}  // namespace moesim::models
