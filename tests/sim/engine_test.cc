// sim::Time, sim::EventQueue and sim::Engine (sim/time.h, sim/event_queue.h,
// sim/engine.h). Every expected time is derived in a comment from the
// start = max(stream free, deps finished) rule or the (time, seq) order.
#include "sim/engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/event_queue.h"
#include "sim/time.h"

namespace moesim::sim {
namespace {

// ---------------------------------------------------------------- Time

TEST(Time, TypedConstructorsAreExactAndConstexpr) {
  static_assert(Time::Micros(5).picos() == 5'000'000);  // 5 us = 5e6 ps
  static_assert(Time::Seconds(2) == Time::Millis(2000));
  static_assert(Time::Nanos(3) + Time::Picos(7) == Time::Picos(3007));
  static_assert(Time::Micros(3) * 4 == Time::Micros(12));
  static_assert(2 * Time::Nanos(5) == Time::Nanos(10));
  static_assert(Time::Nanos(1) - Time::Nanos(2) == Time::Picos(-1000));
  static_assert(Time() == Time::Zero());
  EXPECT_DOUBLE_EQ(Time::Millis(1500).seconds(), 1.5);
  EXPECT_DOUBLE_EQ(Time::Nanos(2500).micros(), 2.5);
}

TEST(Time, ComparisonsAndCompoundAssignment) {
  Time t = Time::Micros(1);
  t += Time::Nanos(500);  // 1 us + 500 ns = 1,500,000 ps
  EXPECT_EQ(t.picos(), 1'500'000);
  t -= Time::Micros(2);  // 1.5 us - 2 us = -0.5 us
  EXPECT_EQ(t, Time::Nanos(-500));
  EXPECT_LT(Time::Picos(999), Time::Nanos(1));
  EXPECT_GT(Time::Seconds(1), Time::Millis(999));
  EXPECT_LE(Time::Micros(1), Time::Nanos(1000));
}

TEST(Time, FromSecondsCeilRoundsUpToThePicosecond) {
  // 1e-13 s = 0.1 ps, rounded up to 1 ps.
  EXPECT_EQ(Time::FromSecondsCeil(1e-13).picos(), 1);
  // 1.5e-12 s = 1.5 ps, rounded up to 2 ps.
  EXPECT_EQ(Time::FromSecondsCeil(1.5e-12).picos(), 2);
  // 2.0001 ps is up to 3 ps: not within representation noise of 2.
  EXPECT_EQ(Time::FromSecondsCeil(2.0001e-12).picos(), 3);
  // 1.5 ps given in microseconds: 1.5e-6 us, also up to 2 ps.
  EXPECT_EQ(Time::FromMicrosCeil(1.5e-6).picos(), 2);
}

TEST(Time, FromSecondsCeilKeepsWholePicosecondsExact) {
  // Decimal inputs whose double product lands an ulp above the whole
  // picosecond must not gain one: 12.345 us = 12,345,000 ps exactly.
  EXPECT_EQ(Time::FromSecondsCeil(12.345e-6).picos(), 12'345'000);
  EXPECT_EQ(Time::FromSecondsCeil(1e-12).picos(), 1);
  EXPECT_EQ(Time::FromMicrosCeil(0.1).picos(), 100'000);  // 0.1 us = 1e5 ps
  // 0.3 s: 0.3 * 1e12 in doubles is 300000000000.00006; 3e11 ps exactly.
  EXPECT_EQ(Time::FromSecondsCeil(0.3).picos(), 300'000'000'000);
  EXPECT_EQ(Time::FromSecondsCeil(2.5), Time::Millis(2500));
}

TEST(Time, FromSecondsCeilIsNeverZeroForAPositiveDuration) {
  // The smallest positive double (a denormal, ~4.9e-324 s) still takes 1 ps.
  EXPECT_EQ(
      Time::FromSecondsCeil(std::numeric_limits<double>::denorm_min()).picos(),
      1);
  EXPECT_EQ(Time::FromMicrosCeil(1e-300).picos(), 1);
  // Zero stays zero.
  EXPECT_EQ(Time::FromSecondsCeil(0.0), Time::Zero());
}

TEST(Time, ToStringPicksTheUnitAndRoundsHalfUp) {
  EXPECT_EQ(Time().ToString(), "0 ps");
  EXPECT_EQ(Time::Picos(999).ToString(), "999 ps");
  // 1,500 ps = 1.500 ns.
  EXPECT_EQ((Time::Nanos(1) + Time::Picos(500)).ToString(), "1.500 ns");
  EXPECT_EQ(Time::Picos(12'345'000).ToString(), "12.345 us");
  // 12,345,500 ps = 12.3455 us: the half rounds up to 12.346.
  EXPECT_EQ(Time::Picos(12'345'500).ToString(), "12.346 us");
  // 12,345,499 ps = 12.345499 us: rounds down.
  EXPECT_EQ(Time::Picos(12'345'499).ToString(), "12.345 us");
  EXPECT_EQ(Time::Millis(3).ToString(), "3.000 ms");
  EXPECT_EQ(Time::Millis(2500).ToString(), "2.500 s");
  EXPECT_EQ(Time::Micros(-1).ToString(), "-1.000 us");
  // INT64_MIN's magnitude does not fit in int64: 9,223,372.036854775808 s.
  EXPECT_EQ(Time::Picos(std::numeric_limits<int64_t>::min()).ToString(),
            "-9223372.037 s");
}

TEST(TimeDeathTest, RefusesNaNNegativeAndOverflow) {
  EXPECT_DEATH(Time::FromSecondsCeil(std::nan("")), "NaN");
  EXPECT_DEATH(Time::FromSecondsCeil(-1e-12), "negative");
  // 1e8 s = 1e20 ps > 2^63 ps (~9.2e18).
  EXPECT_DEATH(Time::FromSecondsCeil(1e8), "overflow");
  EXPECT_DEATH(Time::FromSecondsCeil(std::numeric_limits<double>::infinity()),
               "overflow");
  // 1e7 s = 1e19 ps > 2^63 ps.
  EXPECT_DEATH(Time::Seconds(10'000'000), "overflow");
  EXPECT_DEATH(Time::Max() + Time::Picos(1), "overflow");
}

// ---------------------------------------------------------------- EventQueue

TEST(EventQueue, EqualTimesRunFirstInFirstOut) {
  EventQueue queue;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) {
    queue.Schedule(Time::Nanos(10), [&order, i] { order.push_back(i); });
  }
  queue.RunAll();
  // All at 10 ns: insertion order 0..4.
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(queue.now(), Time::Nanos(10));
  EXPECT_EQ(queue.executed(), 5u);
}

TEST(EventQueue, EventScheduledForNowRunsAfterThoseAlreadyThere) {
  EventQueue queue;
  std::vector<std::string> order;
  queue.Schedule(Time::Nanos(1), [&] {
    order.push_back("a");
    // Same time as "b", but inserted after it: runs after "b".
    queue.Schedule(queue.now(), [&] { order.push_back("c"); });
  });
  queue.Schedule(Time::Nanos(1), [&] { order.push_back("b"); });
  queue.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(EventQueue, RunsInTimeOrderAndAdvancesNow) {
  EventQueue queue;
  std::vector<int64_t> seen_ns;
  for (const int ns : {30, 10, 20}) {
    queue.Schedule(Time::Nanos(ns),
                   [&] { seen_ns.push_back(queue.now().picos() / 1000); });
  }
  ASSERT_TRUE(queue.RunNext());
  EXPECT_EQ(queue.now(), Time::Nanos(10));  // earliest of 30, 10, 20
  queue.RunAll();
  EXPECT_EQ(seen_ns, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_FALSE(queue.RunNext());
  EXPECT_EQ(queue.now(), Time::Nanos(30));  // unchanged by an empty RunNext
}

TEST(EventQueue, CancelledEventsDoNotRun) {
  EventQueue queue;
  std::vector<int> order;
  queue.Schedule(Time::Nanos(1), [&] { order.push_back(1); });
  const EventId second =
      queue.Schedule(Time::Nanos(2), [&] { order.push_back(2); });
  queue.Schedule(Time::Nanos(3), [&] { order.push_back(3); });
  EXPECT_EQ(queue.pending(), 3u);
  queue.Cancel(second);
  queue.Cancel(second);            // twice: no-op
  queue.Cancel(EventId());         // names no event: no-op
  EXPECT_EQ(queue.pending(), 2u);  // 3 scheduled - 1 cancelled
  queue.RunAll();
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
  EXPECT_EQ(queue.executed(), 2u);
  EXPECT_TRUE(queue.empty());
}

// Guards slot recycling: cancelling an event that already ran must not hit
// the newer event that reuses its slot.
TEST(EventQueue, CancelAfterRunDoesNotTouchTheSlotsNextEvent) {
  EventQueue queue;
  int ran = 0;
  const EventId first = queue.Schedule(Time::Nanos(1), [&] { ++ran; });
  queue.RunAll();
  queue.Schedule(Time::Nanos(2), [&] { ++ran; });  // reuses first's slot
  queue.Cancel(first);
  queue.RunAll();
  EXPECT_EQ(ran, 2);
}

TEST(EventQueue, CancelFromInsideACallback) {
  EventQueue queue;
  bool later_ran = false;
  EventId later;
  queue.Schedule(Time::Nanos(1), [&] { queue.Cancel(later); });
  later = queue.Schedule(Time::Nanos(5), [&] { later_ran = true; });
  queue.RunAll();
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(queue.now(), Time::Nanos(1));  // the cancelled event never ran
}

TEST(EventQueue, RunUntilIsInclusiveAndSetsNow) {
  EventQueue queue;
  std::vector<int> order;
  for (const int ns : {10, 20, 30}) {
    queue.Schedule(Time::Nanos(ns), [&order, ns] { order.push_back(ns); });
  }
  queue.RunUntil(Time::Nanos(20));
  // 10 and 20 are <= 20; 30 waits.
  EXPECT_EQ(order, (std::vector<int>{10, 20}));
  EXPECT_EQ(queue.now(), Time::Nanos(20));
  EXPECT_EQ(queue.pending(), 1u);
  queue.RunUntil(Time::Nanos(25));  // nothing in (20, 25]
  EXPECT_EQ(order.size(), 2u);
  EXPECT_EQ(queue.now(), Time::Nanos(25));
  queue.RunAll();
  EXPECT_EQ(order, (std::vector<int>{10, 20, 30}));
}

TEST(EventQueue, RunUntilRunsEventsScheduledWithinTheWindow) {
  EventQueue queue;
  int chain = 0;
  // Each event schedules the next 4 ns later: 0, 4, 8, 12, ... ns.
  std::function<void()> tick = [&] {
    ++chain;
    queue.Schedule(queue.now() + Time::Nanos(4), tick);
  };
  queue.Schedule(Time::Zero(), tick);
  queue.RunUntil(Time::Nanos(10));
  EXPECT_EQ(chain, 3);  // at 0, 4 and 8 ns; 12 > 10
  EXPECT_EQ(queue.pending(), 1u);
}

TEST(EventQueue, TwoQueuesAreIndependent) {
  EventQueue a;
  EventQueue b;
  std::vector<std::string> order;
  a.Schedule(Time::Nanos(5), [&] { order.push_back("a5"); });
  b.Schedule(Time::Nanos(1), [&] { order.push_back("b1"); });
  a.Schedule(Time::Nanos(2), [&] { order.push_back("a2"); });
  b.Schedule(Time::Nanos(9), [&] { order.push_back("b9"); });
  a.RunAll();
  // b has not moved while a ran.
  EXPECT_EQ(a.now(), Time::Nanos(5));
  EXPECT_EQ(b.now(), Time::Zero());
  EXPECT_EQ(b.pending(), 2u);
  b.RunAll();
  EXPECT_EQ(order, (std::vector<std::string>{"a2", "a5", "b1", "b9"}));
}

TEST(EventQueueDeathTest, SchedulingInThePastAborts) {
  EventQueue queue;
  queue.Schedule(Time::Nanos(10), [] {});
  queue.RunAll();
  EXPECT_DEATH(queue.Schedule(Time::Nanos(9), [] {}), "before now");
  EXPECT_DEATH(queue.RunUntil(Time::Nanos(9)), "before now");
}

// ---------------------------------------------------------------- Engine

TEST(Engine, OpsOnOneStreamSerialize) {
  Engine engine;
  const OpId a = engine.Add("rank0/compute", Time::Micros(10), {}, "a");
  const OpId b = engine.Add("rank0/compute", Time::Micros(5), {}, "b");
  ASSERT_TRUE(engine.Run().has_value());
  // a: [0, 10] us; b waits for the stream: [10, 10 + 5 = 15] us.
  EXPECT_EQ(engine.timing(a).start, Time::Zero());
  EXPECT_EQ(engine.timing(a).finish, Time::Micros(10));
  EXPECT_EQ(engine.timing(b).start, Time::Micros(10));
  EXPECT_EQ(engine.timing(b).finish, Time::Micros(15));
  EXPECT_EQ(engine.makespan(), Time::Micros(15));
}

TEST(Engine, OpsOnTwoStreamsOverlap) {
  Engine engine;
  const OpId a = engine.Add("rank0/compute", Time::Micros(10), {}, "gemm");
  const OpId b = engine.Add("rank0/ep", Time::Micros(5), {}, "dispatch");
  ASSERT_TRUE(engine.Run().has_value());
  // Independent streams, no deps: both start at 0; makespan = max(10, 5).
  EXPECT_EQ(engine.timing(a).start, Time::Zero());
  EXPECT_EQ(engine.timing(b).start, Time::Zero());
  EXPECT_EQ(engine.timing(b).finish, Time::Micros(5));
  EXPECT_EQ(engine.makespan(), Time::Micros(10));
  EXPECT_EQ(engine.stream_count(), 2u);
  EXPECT_EQ(engine.stream_name(1), "rank0/ep");
}

TEST(Engine, CrossStreamDependencyDelaysTheConsumer) {
  Engine engine;
  const OpId dispatch = engine.Add("rank0/ep", Time::Micros(4), {}, "dispatch");
  const OpId attn = engine.Add("rank0/compute", Time::Micros(3), {}, "attn");
  const OpId experts =
      engine.Add("rank0/compute", Time::Micros(6), {dispatch}, "experts");
  const OpId combine =
      engine.Add("rank0/ep", Time::Micros(2), {experts}, "combine");
  ASSERT_TRUE(engine.Run().has_value());
  // dispatch [0, 4] on ep; attn [0, 3] on compute.
  EXPECT_EQ(engine.timing(dispatch).finish, Time::Micros(4));
  EXPECT_EQ(engine.timing(attn).finish, Time::Micros(3));
  // experts: compute free at 3, dispatch done at 4: start max(3, 4) = 4,
  // finish 4 + 6 = 10.
  EXPECT_EQ(engine.timing(experts).start, Time::Micros(4));
  EXPECT_EQ(engine.timing(experts).finish, Time::Micros(10));
  // combine: ep free at 4, experts done at 10: [10, 12].
  EXPECT_EQ(engine.timing(combine).start, Time::Micros(10));
  EXPECT_EQ(engine.timing(combine).finish, Time::Micros(12));
  EXPECT_EQ(engine.makespan(), Time::Micros(12));
}

TEST(Engine, DiamondWaitsForTheSlowerBranch) {
  Engine engine;
  const OpId a = engine.Add("s0", Time::Micros(2), {}, "a");
  const OpId b = engine.Add("s1", Time::Micros(3), {a}, "b");
  const OpId c = engine.Add("s2", Time::Micros(5), {a}, "c");
  const OpId d = engine.Add("s0", Time::Micros(1), {b, c}, "d");
  ASSERT_TRUE(engine.Run().has_value());
  // a [0, 2]; b [2, 5]; c [2, 7]; d: s0 free at 2, deps at max(5, 7) = 7,
  // so [7, 8].
  EXPECT_EQ(engine.timing(b).finish, Time::Micros(5));
  EXPECT_EQ(engine.timing(c).finish, Time::Micros(7));
  EXPECT_EQ(engine.timing(d).start, Time::Micros(7));
  EXPECT_EQ(engine.timing(d).finish, Time::Micros(8));
  EXPECT_EQ(engine.makespan(), Time::Micros(8));
}

// Streams are FIFO in Add order: a later op whose inputs are ready still
// waits behind an earlier op that is blocked (as on a CUDA stream).
TEST(Engine, StreamOrderIsAddOrderNotReadiness) {
  Engine engine;
  const OpId slow = engine.Add("s1", Time::Micros(10), {}, "slow");
  const OpId blocked = engine.Add("s0", Time::Micros(1), {slow}, "blocked");
  const OpId ready = engine.Add("s0", Time::Micros(1), {}, "ready");
  ASSERT_TRUE(engine.Run().has_value());
  // slow [0, 10]; blocked [10, 11]; ready waits for blocked: [11, 12].
  EXPECT_EQ(engine.timing(blocked).start, Time::Micros(10));
  EXPECT_EQ(engine.timing(ready).start, Time::Micros(11));
  EXPECT_EQ(engine.timing(ready).finish, Time::Micros(12));
}

TEST(Engine, DepsMayNameOpsAddedLater) {
  Engine engine;
  // "consumer" (id 0) waits for id 1, added after it on another stream.
  const OpId consumer = engine.Add("s0", Time::Nanos(5), {1}, "consumer");
  const OpId producer = engine.Add("s1", Time::Nanos(7), {}, "producer");
  ASSERT_TRUE(engine.Run().has_value());
  // producer [0, 7] ns; consumer [7, 12] ns.
  EXPECT_EQ(engine.timing(producer).finish, Time::Nanos(7));
  EXPECT_EQ(engine.timing(consumer).finish, Time::Nanos(12));
}

TEST(Engine, DependencyCycleIsAnError) {
  Engine engine;
  engine.Add("s0", Time::Micros(1), {1}, "a");
  engine.Add("s1", Time::Micros(1), {2}, "b");
  engine.Add("s2", Time::Micros(1), {0}, "c");
  engine.Add("s3", Time::Micros(1), {}, "free");
  const util::Result<void> validated = engine.Validate();
  ASSERT_FALSE(validated.has_value());
  // The walk starts at a and follows a <- b <- c <- a; printed along edges.
  EXPECT_EQ(validated.error().message,
            "dependency cycle (deps and stream order): 'a' -> 'c' -> 'b' -> "
            "'a'");
  const util::Result<void> ran = engine.Run();
  ASSERT_FALSE(ran.has_value());
  EXPECT_NE(ran.error().message.find("cycle"), std::string::npos);
}

// A dep on an op later on the same stream deadlocks through stream order.
TEST(Engine, CycleThroughStreamOrderIsAnError) {
  Engine engine;
  engine.Add("s0", Time::Micros(1), {1}, "first");
  engine.Add("s0", Time::Micros(1), {}, "second");
  const util::Result<void> ran = engine.Run();
  ASSERT_FALSE(ran.has_value());
  EXPECT_NE(ran.error().message.find("'first'"), std::string::npos);
  EXPECT_NE(ran.error().message.find("'second'"), std::string::npos);
}

TEST(Engine, SelfDependencyIsAnError) {
  Engine engine;
  engine.Add("s0", Time::Micros(1), {0}, "self");
  const util::Result<void> ran = engine.Run();
  ASSERT_FALSE(ran.has_value());
  EXPECT_EQ(ran.error().message,
            "dependency cycle (deps and stream order): 'self' -> 'self'");
}

TEST(Engine, UnknownDependencyIsAnError) {
  Engine engine;
  engine.Add("s0", Time::Micros(1), {}, "a");
  engine.Add("s0", Time::Micros(1), {7}, "b");
  const util::Result<void> ran = engine.Run();
  ASSERT_FALSE(ran.has_value());
  EXPECT_EQ(ran.error().message,
            "op 'b' (id 1): unknown dependency id 7 (2 ops)");
  Engine negative;
  negative.Add("s0", Time::Micros(1), {-1}, "c");
  EXPECT_FALSE(negative.Validate().has_value());
}

TEST(Engine, EmptyEngineRuns) {
  Engine engine;
  ASSERT_TRUE(engine.Run().has_value());
  EXPECT_EQ(engine.makespan(), Time::Zero());
  EXPECT_EQ(engine.ToChromeTrace(), "{\"traceEvents\":[\n]}\n");
}

// A seeded random graph over 8 streams, deps only on earlier ops.
Engine RandomEngine(unsigned seed) {
  std::mt19937 rng(seed);
  Engine engine;
  std::uniform_int_distribution<int> stream(0, 7);
  std::uniform_int_distribution<int64_t> duration_ns(1, 5000);
  for (int i = 0; i < 200; ++i) {
    std::vector<OpId> deps;
    if (i > 0) {
      std::uniform_int_distribution<OpId> earlier(0, i - 1);
      for (int k = 0; k < i % 3; ++k) deps.push_back(earlier(rng));
    }
    engine.Add("rank" + std::to_string(stream(rng)) + "/compute",
               Time::Nanos(duration_ns(rng)), std::move(deps),
               "op" + std::to_string(i));
  }
  return engine;
}

TEST(Engine, IdenticalInputsGiveIdenticalTraceBytes) {
  Engine first = RandomEngine(7);
  Engine second = RandomEngine(7);
  ASSERT_TRUE(first.Run().has_value());
  ASSERT_TRUE(second.Run().has_value());
  EXPECT_EQ(first.ToChromeTrace(), second.ToChromeTrace());
  EXPECT_EQ(first.makespan(), second.makespan());
  for (OpId op = 0; op < static_cast<OpId>(first.op_count()); ++op) {
    EXPECT_EQ(first.timing(op).start, second.timing(op).start);
    EXPECT_EQ(first.timing(op).finish, second.timing(op).finish);
  }
  // A different seed gives a different graph, so the check above has teeth.
  Engine other = RandomEngine(8);
  ASSERT_TRUE(other.Run().has_value());
  EXPECT_NE(first.ToChromeTrace(), other.ToChromeTrace());
}

// Brackets balance outside string literals, and nothing is left open.
bool BracketsBalance(const std::string& json) {
  std::vector<char> open;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c);
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != (c == '}' ? '{' : '[')) return false;
      open.pop_back();
    }
  }
  return open.empty() && !in_string;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(Engine, ChromeTraceNamesStreamsAndIsWellFormed) {
  Engine engine;
  const OpId dispatch = engine.Add("rank0/ep", Time::Micros(4), {}, "dispatch");
  engine.Add("rank0/compute", Time::Picos(1500), {dispatch}, "experts \"fc1\"");
  ASSERT_TRUE(engine.Run().has_value());
  const std::string json = engine.ToChromeTrace();
  EXPECT_TRUE(json.starts_with("{\"traceEvents\":["));
  EXPECT_TRUE(json.ends_with("]}\n"));
  EXPECT_TRUE(BracketsBalance(json)) << json;
  // One thread_name per stream (tid = stream id in order of first use).
  EXPECT_EQ(Count(json, "\"thread_name\""), 2u);
  EXPECT_NE(json.find("\"tid\":0,\"args\":{\"name\":\"rank0/ep\"}"),
            std::string::npos);
  EXPECT_NE(json.find("\"tid\":1,\"args\":{\"name\":\"rank0/compute\"}"),
            std::string::npos);
  // One complete event per op.
  EXPECT_EQ(Count(json, "\"ph\":\"X\""), 2u);
  // dispatch: ts 0, dur 4 us.
  EXPECT_NE(json.find("{\"name\":\"dispatch\",\"ph\":\"X\",\"ts\":0.000000,"
                      "\"dur\":4.000000,\"pid\":0,\"tid\":0}"),
            std::string::npos);
  // experts: starts when dispatch ends (4 us), 1,500 ps = 0.0015 us; the
  // quotes in its name are escaped.
  EXPECT_NE(json.find("{\"name\":\"experts \\\"fc1\\\"\",\"ph\":\"X\","
                      "\"ts\":4.000000,\"dur\":0.001500,\"pid\":0,\"tid\":1}"),
            std::string::npos)
      << json;
}

TEST(EngineDeathTest, AddAfterRunAborts) {
  Engine engine;
  engine.Add("s0", Time::Micros(1), {}, "a");
  ASSERT_TRUE(engine.Run().has_value());
  EXPECT_DEATH(engine.Add("s0", Time::Micros(1), {}, "b"), "after Run");
}

}  // namespace
}  // namespace moesim::sim
