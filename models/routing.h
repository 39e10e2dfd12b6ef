// Per-expert routing loads: how a dropless router that is not forced to
// balance spreads tokens over the EP ranks (a Zipf law or a measured
// histogram). Used by the replay (each EP rank's grouped GEMMs and
// all-to-all bytes) and the memory model (the busiest rank's expert
// activations).
#ifndef MOESIM_MODELS_ROUTING_H_
#define MOESIM_MODELS_ROUTING_H_

#include <cstdint>
#include <span>
#include <vector>

namespace moesim::models {

// Load of each EP rank over the mean (index j: EP rank j) when tokens per
// expert follow a Zipf law of exponent `skew` (weight 1/r^s for the r-th
// most popular expert) and popularity is spread over the experts by a
// fixed shuffle (splitmix64, seeded with the expert count: same inputs,
// same answer); EP rank j holds experts [j E/ep, (j+1) E/ep). All 1 when
// skew is 0 (or the experts do not split evenly); the loads average 1.
// A non-empty `histogram` (tokens per expert, in expert order, `experts`
// values) gives the weights instead of the Zipf law.
std::vector<double> ExpertLoads(int64_t experts, int ep, double skew,
                                std::span<const double> histogram = {});
// The busiest EP rank's load: the maximum of ExpertLoads (1 when ep <= 1).
double RoutingImbalance(int64_t experts, int ep, double skew,
                        std::span<const double> histogram = {});

}  // namespace moesim::models

#endif  // MOESIM_MODELS_ROUTING_H_
