// Simulated time: a signed count of picoseconds in an int64.
//
// Design: every instant and duration inside the simulator is a `Time`, so that
// event order never depends on floating-point rounding (ns-3 nstime.h, htsim
// simtime_picosec). Doubles appear only at the edges: a cost model that
// computes seconds from a rate converts once with `FromSecondsCeil`, which
// rounds up to the next picosecond and never yields zero for a positive
// duration (a kernel or transfer never takes zero ticks); reports read
// `seconds()`. int64 picoseconds span +/- 106 days.
//
// Errors: overflow, NaN, infinities and negative inputs to the Ceil
// constructors are programming errors and abort through `CheckOrDie` with a
// message naming the call site; they never return a value.
//
// Thread safety: a value type; no shared state.
#ifndef MOESIM_SIM_CORE_TIME_H_
#define MOESIM_SIM_CORE_TIME_H_

#include <cmath>
#include <compare>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <source_location>
#include <string>

#include "util/check.h"

namespace moesim::sim {

// Invariants of the sim module (time going backwards, overflow) abort
// through util::CheckOrDie; input-dependent failures return util::Result.
using util::CheckOrDie;

class Time {
 public:
  // Zero.
  constexpr Time() = default;

  static constexpr Time Zero() { return Time(); }
  static constexpr Time Max() {
    return Time(std::numeric_limits<int64_t>::max());
  }

  static constexpr Time Picos(int64_t picos) { return Time(picos); }
  static constexpr Time Nanos(int64_t nanos) { return Scaled(nanos, kNano); }
  static constexpr Time Micros(int64_t micros) {
    return Scaled(micros, kMicro);
  }
  static constexpr Time Millis(int64_t millis) {
    return Scaled(millis, kMilli);
  }
  static constexpr Time Seconds(int64_t seconds) {
    return Scaled(seconds, kSecond);
  }

  // The smallest whole number of picoseconds >= `seconds`, and at least 1 ps
  // when `seconds` > 0. A product within 4 ulps of a whole picosecond counts
  // as that picosecond, so decimal inputs such as 12.345e-6 map to exactly
  // 12,345,000 ps rather than one more from representation noise.
  // REQUIRES: `seconds` finite, >= 0 and below 2^63 ps (about 106 days).
  static Time FromSecondsCeil(double seconds) {
    return CeilPicos(seconds * 1e12);
  }
  // As FromSecondsCeil, for a duration in microseconds.
  static Time FromMicrosCeil(double micros) { return CeilPicos(micros * 1e6); }

  constexpr int64_t picos() const { return picos_; }
  constexpr double seconds() const {
    return static_cast<double>(picos_) / 1e12;
  }
  constexpr double micros() const { return static_cast<double>(picos_) / 1e6; }

  // Deterministic, unit chosen by magnitude, rounded half up to three
  // decimals: "0 ps", "999 ps", "1.500 ns", "12.345 us", "3.000 ms",
  // "2.500 s", "-1.000 us".
  std::string ToString() const;

  friend constexpr auto operator<=>(Time, Time) = default;

  friend constexpr Time operator+(Time a, Time b) {
    int64_t sum = 0;
    CheckOrDie(!__builtin_add_overflow(a.picos_, b.picos_, &sum),
               "Time + overflows int64 picoseconds");
    return Time(sum);
  }
  friend constexpr Time operator-(Time a, Time b) {
    int64_t difference = 0;
    CheckOrDie(!__builtin_sub_overflow(a.picos_, b.picos_, &difference),
               "Time - overflows int64 picoseconds");
    return Time(difference);
  }
  friend constexpr Time operator*(Time a, int64_t factor) {
    return Scaled(a.picos_, factor);
  }
  friend constexpr Time operator*(int64_t factor, Time a) {
    return Scaled(a.picos_, factor);
  }
  constexpr Time& operator+=(Time other) { return *this = *this + other; }
  constexpr Time& operator-=(Time other) { return *this = *this - other; }

 private:
  static constexpr int64_t kNano = 1'000;
  static constexpr int64_t kMicro = 1'000'000;
  static constexpr int64_t kMilli = 1'000'000'000;
  static constexpr int64_t kSecond = 1'000'000'000'000;

  constexpr explicit Time(int64_t picos) : picos_(picos) {}

  static constexpr Time Scaled(int64_t value, int64_t factor) {
    int64_t product = 0;
    CheckOrDie(!__builtin_mul_overflow(value, factor, &product),
               "Time overflows int64 picoseconds");
    return Time(product);
  }

  static Time CeilPicos(double picos) {
    CheckOrDie(!std::isnan(picos), "Time from NaN");
    CheckOrDie(picos >= 0, "Time from a negative duration");
    // 2^63 is exactly representable; every double below it fits in int64.
    CheckOrDie(picos < 0x1p63, "Time overflows int64 picoseconds");
    const double nearest = std::nearbyint(picos);
    const double tolerance = 4 * std::numeric_limits<double>::epsilon() * picos;
    const double whole =
        std::fabs(picos - nearest) <= tolerance ? nearest : std::ceil(picos);
    if (whole == 0 && picos > 0) return Time(1);
    return Time(static_cast<int64_t>(whole));
  }

  int64_t picos_ = 0;
};

inline std::string Time::ToString() const {
  // Magnitude in unsigned arithmetic so that INT64_MIN prints too.
  const bool negative = picos_ < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(picos_)
                                      : static_cast<uint64_t>(picos_);
  struct Unit {
    uint64_t picos;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1'000'000'000'000, "s"},
                                    {1'000'000'000, "ms"},
                                    {1'000'000, "us"},
                                    {1'000, "ns"}};
  char text[48];
  for (const Unit& unit : kUnits) {
    if (magnitude < unit.picos) continue;
    const uint64_t thousandth = unit.picos / 1000;
    const uint64_t rounded = magnitude / thousandth +
                             (magnitude % thousandth >= (thousandth + 1) / 2);
    std::snprintf(text, sizeof(text), "%s%llu.%03llu %s", negative ? "-" : "",
                  static_cast<unsigned long long>(rounded / 1000),
                  static_cast<unsigned long long>(rounded % 1000), unit.name);
    return text;
  }
  std::snprintf(text, sizeof(text), "%s%llu ps", negative ? "-" : "",
                static_cast<unsigned long long>(magnitude));
  return text;
}

}  // namespace moesim::sim

#endif  // MOESIM_SIM_CORE_TIME_H_
