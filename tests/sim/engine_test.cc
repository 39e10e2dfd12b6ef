// sim::Time, sim::EventQueue and sim::Engine (sim/time.h, sim/event_queue.h,
// sim/engine.h). Every expected time is derived in a comment from the
// start = max(stream free, deps finished) rule or the (time, seq) order, and
// for transfers from the network model's answer (EstimateCollective, or the
// max-min sharing of FlowNetwork).
#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/time.h"
#include "tests/topology/network_fixture.h"
#include "topology/cluster.h"
#include "topology/collectives.h"
#include "topology/network_model.h"
#include "topology/network_params.h"
#include "topology/system.h"

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

// Streams "rank0/ep", "rank0/compute", "rank1/compute" and "host": processes
// "rank0" (pid 0), "rank1" (pid 1) and "" (pid 2, the name without '/'), in
// order of first use; tids are stream ids 0-3.
TEST(Engine, ChromeTraceNamesProcessesAndThreadsAndIsWellFormed) {
  Engine engine;
  const OpId dispatch = engine.Add("rank0/ep", Time::Micros(4), {}, "dispatch");
  engine.SetCategory(dispatch, "ep");
  engine.Add("rank0/compute", Time::Picos(1500), {dispatch}, "experts \"fc1\"");
  const OpId recv =
      engine.Add("rank1/compute", Time::Micros(2), {dispatch}, "recv");
  engine.SetCategory(recv, "gemm");
  engine.Add("host", Time::Micros(1), {}, "sync");
  ASSERT_TRUE(engine.Run().has_value());
  EXPECT_EQ(engine.process_count(), 3u);
  EXPECT_EQ(engine.process_name(0), "rank0");
  EXPECT_EQ(engine.process_name(1), "rank1");
  EXPECT_EQ(engine.process_name(2), "");
  EXPECT_EQ(engine.stream_process(engine.Stream("rank0/compute")), 0);
  EXPECT_EQ(engine.stream_process(engine.Stream("host")), 2);
  EXPECT_EQ(engine.op_category(dispatch), "ep");
  EXPECT_EQ(engine.op_category(1), "");
  const std::string json = engine.ToChromeTrace();
  EXPECT_TRUE(BracketsBalance(json)) << json;
  // dispatch [0, 4] us; experts starts when dispatch ends (4 us) and takes
  // 1,500 ps = 0.0015 us, its quotes escaped; recv [4, 6] us; sync [0, 1].
  EXPECT_EQ(
      json,
      "{\"traceEvents\":[\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
      "\"args\":{\"name\":\"rank0\"}},\n"
      "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
      "\"args\":{\"sort_index\":0}},\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
      "\"args\":{\"name\":\"rank1\"}},\n"
      "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
      "\"args\":{\"sort_index\":1}},\n"
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"tid\":0,"
      "\"args\":{\"name\":\"\"}},\n"
      "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":2,\"tid\":0,"
      "\"args\":{\"sort_index\":2}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
      "\"args\":{\"name\":\"ep\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
      "\"args\":{\"sort_index\":0}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":1,"
      "\"args\":{\"name\":\"compute\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":1,"
      "\"args\":{\"sort_index\":1}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
      "\"args\":{\"name\":\"compute\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
      "\"args\":{\"sort_index\":2}},\n"
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":3,"
      "\"args\":{\"name\":\"host\"}},\n"
      "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":2,\"tid\":3,"
      "\"args\":{\"sort_index\":3}},\n"
      "{\"name\":\"dispatch\",\"cat\":\"ep\",\"ph\":\"X\",\"ts\":0.000000,"
      "\"dur\":4.000000,\"pid\":0,\"tid\":0},\n"
      "{\"name\":\"experts \\\"fc1\\\"\",\"ph\":\"X\",\"ts\":4.000000,"
      "\"dur\":0.001500,\"pid\":0,\"tid\":1},\n"
      "{\"name\":\"recv\",\"cat\":\"gemm\",\"ph\":\"X\",\"ts\":4.000000,"
      "\"dur\":2.000000,\"pid\":1,\"tid\":2},\n"
      "{\"name\":\"sync\",\"ph\":\"X\",\"ts\":0.000000,\"dur\":1.000000,"
      "\"pid\":2,\"tid\":3}\n"
      "]}\n");
  EXPECT_EQ(Count(json, "\"ph\":\"X\""), 4u);
}

TEST(Engine, SetCategoryReplacesAndClears) {
  Engine engine;
  const OpId op = engine.Add("s0/x", Time::Micros(1), {}, "op");
  engine.SetCategory(op, "gemm");
  engine.SetCategory(op, "attention");
  EXPECT_EQ(engine.op_category(op), "attention");
  engine.SetCategory(op, "");
  EXPECT_EQ(engine.op_category(op), "");
  ASSERT_TRUE(engine.Run().has_value());
  EXPECT_EQ(engine.ToChromeTrace().find("\"cat\""), std::string::npos);
}

TEST(EngineDeathTest, AddAfterRunAborts) {
  Engine engine;
  engine.Add("s0", Time::Micros(1), {}, "a");
  ASSERT_TRUE(engine.Run().has_value());
  EXPECT_DEATH(engine.Add("s0", Time::Micros(1), {}, "b"), "after Run");
}

// ---------------------------------------------------------------- Transfers

using topology::Collective;
using topology::CollectiveRequest;

using moesim::testing::MakeNet;
using moesim::testing::Net;

std::vector<int> Gpus(int begin, int end) {
  std::vector<int> gpus;
  for (int g = begin; g < end; ++g) gpus.push_back(g);
  return gpus;
}

topology::CollectiveEstimate Estimate(const Net& net,
                                      const CollectiveRequest& r) {
  return topology::EstimateCollective(net.params, r.collective,
                                      topology::ShapeOf(r.gpus, net.cluster),
                                      r.bytes);
}

// Forwards to another model and checks the seam's REQUIRES on every call the
// engine makes: Start and AdvanceTo never go back before the model's clock
// (the last time given to either), AdvanceTo never passes NextEventTime(),
// Start never passes it either, and when something runs the engine has
// advanced the model to the start time first.
class CheckingNetwork final : public topology::NetworkModel {
 public:
  explicit CheckingNetwork(topology::NetworkModel& inner) : inner_(inner) {}

  int Start(double now_s, const CollectiveRequest& request) override {
    EXPECT_GE(now_s, clock_s_) << "Start before the model's clock";
    if (const std::optional<double> next = inner_.NextEventTime()) {
      EXPECT_LE(now_s, *next) << "Start past the next event";
      EXPECT_EQ(now_s, clock_s_) << "Start without AdvanceTo to it first";
    }
    clock_s_ = now_s;
    ++starts_;
    return inner_.Start(now_s, request);
  }
  std::optional<double> NextEventTime() const override {
    return inner_.NextEventTime();
  }
  std::vector<int> AdvanceTo(double now_s) override {
    EXPECT_GE(now_s, clock_s_) << "AdvanceTo before the model's clock";
    if (const std::optional<double> next = inner_.NextEventTime()) {
      EXPECT_LE(now_s, *next) << "AdvanceTo past the next event";
    }
    clock_s_ = now_s;
    ++advances_;
    std::vector<int> done = inner_.AdvanceTo(now_s);
    finished_ += static_cast<int>(done.size());
    return done;
  }

  int starts() const { return starts_; }
  int finished() const { return finished_; }
  int advances() const { return advances_; }

 private:
  topology::NetworkModel& inner_;
  double clock_s_ = 0;
  int starts_ = 0;
  int finished_ = 0;
  int advances_ = 0;
};

// Every transfer takes `seconds` (zero: the model reports it finished the
// moment it started); with `never_finish`, none ever finishes; with `stuck`,
// NextEventTime() names the last start but AdvanceTo reports nothing.
class FixedNetwork final : public topology::NetworkModel {
 public:
  explicit FixedNetwork(double seconds) : seconds_(seconds) {}
  bool never_finish = false;
  bool stuck = false;

  int Start(double now_s, const CollectiveRequest&) override {
    finish_s_.push_back(now_s + seconds_);
    return static_cast<int>(finish_s_.size()) - 1;
  }
  std::optional<double> NextEventTime() const override {
    if (never_finish) return std::nullopt;
    if (stuck) {
      return finish_s_.empty() ? std::nullopt
                               : std::optional<double>(finish_s_.back());
    }
    std::optional<double> next;
    for (const double t : finish_s_) {
      if (t >= 0 && (!next || t < *next)) next = t;
    }
    return next;
  }
  std::vector<int> AdvanceTo(double now_s) override {
    std::vector<int> done;
    if (stuck) return done;
    for (size_t i = 0; i < finish_s_.size(); ++i) {
      if (finish_s_[i] >= 0 && finish_s_[i] <= now_s) {
        done.push_back(static_cast<int>(i));
        finish_s_[i] = -1;
      }
    }
    return done;
  }

 private:
  double seconds_;
  std::vector<double> finish_s_;
};

// A joint op over three ranks' streams: each member arrives when its own
// stream is free (rank0 at 0, rank1 at 3 us, rank2 at 5 us after their
// compute), so all three start at 5 us, the last arrival, and all finish
// at 5 + 4 = 9 us, the longest member's duration (4 us; the others say 2).
TEST(EngineJoin, StartsAtTheLastArrivalAndLastsTheLongestMember) {
  Engine engine;
  engine.Add("rank1/compute", Time::Micros(3), {}, "gemm1");
  engine.Add("rank2/compute", Time::Micros(5), {}, "gemm2");
  const OpId a = engine.Add("rank0/compute", Time::Micros(2), {}, "ar0");
  const OpId b = engine.Add("rank1/compute", Time::Micros(2), {}, "ar1");
  const OpId c = engine.Add("rank2/compute", Time::Micros(4), {}, "ar2");
  const OpId after = engine.Add("rank0/compute", Time::Micros(1), {}, "next");
  const OpId members[] = {a, b, c};
  EXPECT_EQ(engine.Join(members), 0);
  EXPECT_EQ(engine.op_join(b), 0);
  EXPECT_EQ(engine.op_join(after), -1);
  ASSERT_TRUE(engine.Run().has_value());
  for (const OpId op : members) {
    EXPECT_EQ(engine.timing(op).start, Time::Micros(5));
    EXPECT_EQ(engine.timing(op).finish, Time::Micros(9));
  }
  // rank0's next op waits for its stream: 9 + 1 = 10 us.
  EXPECT_EQ(engine.timing(after).finish, Time::Micros(10));
}

// Fixed ops are timed without an event queue: in one pass in id order
// (Engine::TimeFixedOpsInIdOrder) or, when some op waits for a later one,
// over the graph (Engine::TimeFixedOps). The header's rule, recomputed here
// in id order: an op starts at the latest finish among its deps and its
// stream predecessor (0 without any), and a join's members all start at the
// latest such start among them and run as long as the longest. Random
// graphs of 2,000 ops on 6 streams, a tenth of them in joins of 2-4 ops on
// distinct streams; with `ahead`, a first marker op waits for the next one,
// which takes the graph path and changes no other op's time.
TEST(EngineJoin, RandomFixedGraphsFollowTheHeaderRule) {
  for (const bool ahead : {false, true}) {
    for (const unsigned seed : {1u, 2u, 3u}) {
      std::mt19937 rng(seed);
      Engine engine;
      const OpId base = ahead ? 1 : 0;  // the first op of the random graph
      if (ahead) engine.Add("r/marker", Time::Nanos(1), {1}, "marker");
      std::uniform_int_distribution<int64_t> duration_ns(0, 5'000);
      std::uniform_int_distribution<int> coin(0, 9), width(2, 4);
      // By op of the random graph, counted from `base`: its join's members
      // (itself alone when none), deps and stream.
      std::vector<std::vector<OpId>> groups;
      std::vector<std::vector<OpId>> deps_of;
      std::vector<int> stream_of;
      while (stream_of.size() < 2000) {
        const int n = static_cast<int>(stream_of.size());
        const bool join = coin(rng) == 0;
        const int k = join ? width(rng) : 1;
        std::vector<int> streams = {0, 1, 2, 3, 4, 5};
        std::shuffle(streams.begin(), streams.end(), rng);
        std::vector<OpId> members, ids;
        for (int m = 0; m < k; ++m) {
          std::vector<OpId> deps, dep_ids;
          for (int d = 0; n > 0 && d < coin(rng) % 3; ++d) {
            deps.push_back(std::uniform_int_distribution<OpId>(0, n - 1)(rng));
            dep_ids.push_back(deps.back() + base);
          }
          deps_of.push_back(deps);
          stream_of.push_back(streams[m]);
          members.push_back(n + m);
          ids.push_back(engine.Add("r/s" + std::to_string(streams[m]),
                                   Time::Nanos(duration_ns(rng)), dep_ids,
                                   "op"));
        }
        if (join) engine.Join(ids);
        for (int m = 0; m < k; ++m) groups.push_back(members);
      }
      ASSERT_TRUE(engine.Run().has_value());
      const size_t n = stream_of.size();
      std::vector<Time> start(n), finish(n), ready(n);
      std::vector<Time> last_on(6, Time::Zero());
      for (size_t i = 0; i < n; ++i) {
        Time t = last_on[stream_of[i]];
        for (const OpId d : deps_of[i]) t = std::max(t, finish[d]);
        ready[i] = t;
        // A member before its join's last: the join ends later; its
        // stream's next op is in a later group.
        if (groups[i].back() != static_cast<OpId>(i)) continue;
        Time join_start = Time::Zero(), longest = Time::Zero();
        for (const OpId m : groups[i]) {
          join_start = std::max(join_start, ready[m]);
          longest = std::max(longest, engine.duration(m + base));
        }
        for (const OpId m : groups[i]) {
          start[m] = join_start;
          finish[m] = join_start + longest;
          last_on[stream_of[m]] = finish[m];
        }
      }
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(engine.timing(i + base).start, start[i])
            << "ahead " << ahead << " seed " << seed << " op " << i;
        ASSERT_EQ(engine.timing(i + base).finish, finish[i])
            << "ahead " << ahead << " seed " << seed << " op " << i;
      }
      if (ahead) {
        EXPECT_EQ(engine.timing(0).start, finish[0]);
      }
    }
  }
}

// Under a network model a joint transfer is issued once, for the whole
// join: FixedNetwork takes 2 us, so both members run [1 us, 3 us] (rank1
// arrives at 1 us), and the model saw one Start.
TEST(EngineJoin, JointTransferIsIssuedOnce) {
  const CollectiveRequest request{Collective::kAllToAll, {0, 1}, 1e6};
  Engine engine;
  engine.Add("rank1/ep", Time::Micros(1), {}, "before");
  const OpId a = engine.AddTransfer("rank0/ep", request, {}, "a2a0");
  const OpId b = engine.AddTransfer("rank1/ep", request, {}, "a2a1");
  const OpId members[] = {a, b};
  engine.Join(members);
  FixedNetwork fixed(2e-6);
  CheckingNetwork checked(fixed);
  ASSERT_TRUE(engine.Run(&checked).has_value());
  EXPECT_EQ(checked.starts(), 1);
  for (const OpId op : members) {
    EXPECT_EQ(engine.timing(op).start, Time::Micros(1));
    EXPECT_EQ(engine.timing(op).finish, Time::Micros(3));
  }
}

// Two ranks reach two collectives in opposite orders: rank0 runs x then y,
// rank1 y then x, so each join waits for a member behind the other one on
// its stream (a deadlock in NCCL too). Validate names the cycle through
// both joins.
TEST(EngineJoin, CollectivesInOppositeOrdersAreACycle) {
  Engine engine;
  const OpId x0 = engine.Add("rank0/tp", Time::Micros(1), {}, "x0");
  const OpId y0 = engine.Add("rank0/tp", Time::Micros(1), {}, "y0");
  const OpId y1 = engine.Add("rank1/tp", Time::Micros(1), {}, "y1");
  const OpId x1 = engine.Add("rank1/tp", Time::Micros(1), {}, "x1");
  const OpId xs[] = {x0, x1}, ys[] = {y0, y1};
  engine.Join(xs);
  engine.Join(ys);
  const util::Result<void> validated = engine.Validate();
  ASSERT_FALSE(validated.has_value());
  EXPECT_NE(validated.error().message.find("(joined with)"), std::string::npos)
      << validated.error().message;
  const util::Result<void> ran = engine.Run();
  ASSERT_FALSE(ran.has_value());
  EXPECT_NE(ran.error().message.find("cycle"), std::string::npos);
}

// Under AnalyticalNetwork a transfer finishes at the model's answer, start +
// EstimateCollective seconds, rounded up to the picosecond.
TEST(EngineTransfer, AnalyticalTakesTheEstimate) {
  const Net net = MakeNet("dgx-h100", 16);
  const double gib = 1 << 30;
  const CollectiveRequest tp_ar{Collective::kAllReduce, Gpus(0, 8), gib};
  const CollectiveRequest ep_a2a{Collective::kAllToAll, Gpus(0, 16), gib / 4};
  const CollectiveRequest pp{Collective::kSendRecv, {0, 8}, gib / 8};
  const double ar_s = Estimate(net, tp_ar).seconds;
  const double a2a_s = Estimate(net, ep_a2a).seconds;
  const double pp_s = Estimate(net, pp).seconds;

  Engine engine;
  const OpId ar = engine.AddTransfer("stage0/tp", tp_ar, {}, "tp_ar");
  const OpId gemm = engine.Add("stage0/compute", Time::Micros(5), {}, "gemm");
  const OpId a2a = engine.AddTransfer("stage0/ep", ep_a2a, {gemm}, "a2a");
  const OpId send = engine.AddTransfer("stage0/tp", pp, {}, "send");
  const OpId after =
      engine.Add("stage0/compute", Time::Micros(1), {a2a}, "after_a2a");
  topology::AnalyticalNetwork analytical(net.cluster, net.params);
  CheckingNetwork checked(analytical);
  ASSERT_TRUE(engine.Run(&checked).has_value());
  EXPECT_EQ(checked.starts(), 3);
  EXPECT_EQ(checked.finished(), 3);

  // tp_ar starts at 0 and takes exactly its estimate, rounded up.
  EXPECT_EQ(engine.timing(ar).start, Time::Zero());
  EXPECT_EQ(engine.timing(ar).finish, Time::FromSecondsCeil(ar_s));
  EXPECT_TRUE(engine.is_transfer(ar));
  EXPECT_EQ(engine.duration(ar), Time::FromSecondsCeil(ar_s));
  // a2a starts when gemm ends (5 us = 5e-6 s); the model says it finishes at
  // 5e-6 + a2a_s seconds, which the engine rounds up: within 1 ps of
  // 5 us + ceil(a2a_s).
  EXPECT_EQ(engine.timing(a2a).start, Time::Micros(5));
  EXPECT_EQ(engine.timing(a2a).finish, Time::FromSecondsCeil(5e-6 + a2a_s));
  EXPECT_LE(
      std::abs((engine.duration(a2a) - Time::FromSecondsCeil(a2a_s)).picos()),
      1);
  // send waits for tp_ar on its stream; the model's clock is then at ar_s,
  // so send starts there (ceil(ar_s) in seconds is not below it) and ends
  // pp_s later.
  const Time ar_end = engine.timing(ar).finish;
  EXPECT_EQ(engine.timing(send).start, ar_end);
  EXPECT_EQ(engine.timing(send).finish,
            Time::FromSecondsCeil(std::max(ar_end.seconds(), ar_s) + pp_s));
  // A fixed op that depends on a transfer starts at its finish.
  EXPECT_EQ(engine.timing(after).start, engine.timing(a2a).finish);
  EXPECT_EQ(engine.timing(after).finish,
            engine.timing(a2a).finish + Time::Micros(1));
  EXPECT_FALSE(engine.is_transfer(gemm));
  EXPECT_EQ(engine.duration(gemm), Time::Micros(5));
}

// Send/recv of 1 GiB from GPU 0 to another node: alone it takes L + D, the
// NCCL latency L plus D = bytes / (GPU 0's NIC rate). Two such sends out of
// GPU 0 (to GPUs 8 and 16) share its NIC: max-min gives each half the rate
// for the whole transfer, so each ends at L + 2D, both at the same time.
TEST(EngineTransfer, FlowNetworkSharesANic) {
  const Net net = MakeNet("dgx-h100", 24);
  const double gib = 1 << 30;
  const CollectiveRequest to8{Collective::kSendRecv, {0, 8}, gib};
  const CollectiveRequest to16{Collective::kSendRecv, {0, 16}, gib};
  const double latency_s = Estimate(net, to8).latency_us * 1e-6;

  Engine solo;
  const OpId alone = solo.AddTransfer("stage0/pp", to8, {}, "alone");
  topology::FlowNetwork solo_net(net.cluster, net.params);
  ASSERT_TRUE(solo.Run(&solo_net).has_value());
  const Time alone_time = solo.timing(alone).finish;
  const double data_s = alone_time.seconds() - latency_s;  // D, to 1 ps
  ASSERT_GT(data_s, 0);

  Engine engine;
  const OpId a = engine.AddTransfer("stage0/pp_next", to8, {}, "a");
  const OpId b = engine.AddTransfer("stage0/pp_other", to16, {}, "b");
  topology::FlowNetwork flow(net.cluster, net.params);
  CheckingNetwork checked(flow);
  ASSERT_TRUE(engine.Run(&checked).has_value());
  // Both start at 0 and overlap.
  EXPECT_EQ(engine.timing(a).start, Time::Zero());
  EXPECT_EQ(engine.timing(b).start, Time::Zero());
  EXPECT_GT(engine.timing(a).finish, alone_time);
  EXPECT_GT(engine.timing(b).finish, alone_time);
  // L + 2D; D is known to 1 ps from the solo run, so 2D to 2 ps.
  const double expected_ps = (latency_s + 2 * data_s) * 1e12;
  EXPECT_NEAR(static_cast<double>(engine.timing(a).finish.picos()), expected_ps,
              3);
  EXPECT_EQ(engine.timing(a).finish, engine.timing(b).finish);
}

// Arrival mid-transfer. A (GPU 0 -> 8, 1 GiB, alone L + D) starts at 0; a
// fixed op of D/2 delays B (GPU 0 -> 16, 1 GiB) to D/2. Until D/2 A has the
// NIC alone and sends half its bytes; then each gets half the rate, so A's
// last half takes D and its data ends at 1.5D. By then B has sent half its
// bytes at half rate and sends the rest alone in D/2, ending at 2D. Each
// adds L. (Were the model not advanced to D/2 before B's Start, A would lose
// its first half and end near 2.5D.)
TEST(EngineTransfer, FlowNetworkResolvesWhenATransferArrives) {
  const Net net = MakeNet("dgx-h100", 24);
  const double gib = 1 << 30;
  const CollectiveRequest to8{Collective::kSendRecv, {0, 8}, gib};
  const CollectiveRequest to16{Collective::kSendRecv, {0, 16}, gib};
  const double latency_s = Estimate(net, to8).latency_us * 1e-6;
  const double data_s = gib / (net.params.nic_gb_s * 1e9);

  Engine engine;
  const OpId a = engine.AddTransfer("stage0/pp_next", to8, {}, "a");
  const OpId wait = engine.Add("stage0/compute",
                               Time::FromSecondsCeil(data_s / 2), {}, "wait");
  const OpId b = engine.AddTransfer("stage0/pp_other", to16, {wait}, "b");
  topology::FlowNetwork flow(net.cluster, net.params);
  CheckingNetwork checked(flow);
  ASSERT_TRUE(engine.Run(&checked).has_value());
  EXPECT_EQ(engine.timing(b).start, engine.timing(wait).finish);
  // B starts up to 1 ps after D/2 (the round-up of `wait`): A ends up to 1 ps
  // earlier, B not at all; allow 3 ps for that and the rounding of each end.
  EXPECT_NEAR(static_cast<double>(engine.timing(a).finish.picos()),
              (1.5 * data_s + latency_s) * 1e12, 3);
  EXPECT_NEAR(static_cast<double>(engine.timing(b).finish.picos()),
              (2 * data_s + latency_s) * 1e12, 3);
}

TEST(EngineTransfer, RunWithoutANetworkIsAnError) {
  Engine engine;
  engine.Add("stage0/compute", Time::Micros(1), {}, "gemm");
  engine.AddTransfer("stage0/dp", {Collective::kReduceScatter, {0, 8}, 1e6},
                     {0}, "grad_rs");
  const util::Result<void> ran = engine.Run();
  ASSERT_FALSE(ran.has_value());
  EXPECT_EQ(ran.error().message,
            "op 'grad_rs' (id 1): a transfer needs a network model, and Run() "
            "was given none");
  EXPECT_FALSE(engine.ran());
  // Run(nullptr) is the same call; fixed ops alone need no model.
  EXPECT_FALSE(engine.Run(nullptr).has_value());
  Engine fixed;
  fixed.Add("s0/x", Time::Micros(1), {}, "a");
  EXPECT_TRUE(fixed.Run(nullptr).has_value());
}

// A model that reports a transfer finished the moment it started: the
// transfer still takes 1 ps (as Time::FromSecondsCeil never makes a
// positive duration zero), and its dependents start then.
TEST(EngineTransfer, InstantTransferTakesOnePicosecond) {
  Engine engine;
  const OpId t0 = engine.AddTransfer("stage0/ep", {}, {}, "t0");
  const OpId gemm = engine.Add("stage0/compute", Time::Micros(3), {}, "gemm");
  const OpId t1 = engine.AddTransfer("stage0/ep", {}, {gemm}, "t1");
  const OpId next = engine.Add("stage0/compute", Time::Nanos(1), {t1}, "next");
  FixedNetwork instant(0);
  CheckingNetwork checked(instant);
  ASSERT_TRUE(engine.Run(&checked).has_value());
  // t0 [0, 1 ps]; t1 waits for gemm (3 us) and for t0 on its stream:
  // [3 us, 3 us + 1 ps]; next starts at t1's end.
  EXPECT_EQ(engine.timing(t0).finish, Time::Picos(1));
  EXPECT_EQ(engine.timing(t1).start, Time::Micros(3));
  EXPECT_EQ(engine.timing(t1).finish, Time::Micros(3) + Time::Picos(1));
  EXPECT_EQ(engine.timing(next).start, engine.timing(t1).finish);
}

// Transfers of a fixed length behave like fixed ops of that length rounded
// up: three on one stream, 2.5 ps each, end at ceil(2.5e-12 s) = 3 ps, then
// 3 ps + 2.5 ps -> 6 ps (5.5 rounded up), then 9 ps.
TEST(EngineTransfer, TransfersOnOneStreamSerialize) {
  Engine engine;
  for (const char* name : {"t0", "t1", "t2"}) {
    engine.AddTransfer("stage0/ep", {}, {}, name);
  }
  FixedNetwork network(2.5e-12);
  ASSERT_TRUE(engine.Run(&network).has_value());
  EXPECT_EQ(engine.timing(0).finish, Time::Picos(3));
  EXPECT_EQ(engine.timing(1).start, Time::Picos(3));
  EXPECT_EQ(engine.timing(1).finish, Time::Picos(6));
  EXPECT_EQ(engine.timing(2).finish, Time::Picos(9));
  EXPECT_EQ(engine.makespan(), Time::Picos(9));
}

TEST(EngineTransfer, ANetworkThatNeverFinishesIsAnError) {
  Engine engine;
  engine.Add("stage0/compute", Time::Micros(2), {}, "gemm");
  engine.AddTransfer("stage0/ep", {}, {0}, "dispatch");
  engine.Add("stage0/compute", Time::Micros(2), {1}, "experts");
  FixedNetwork never(1e-6);
  never.never_finish = true;
  const util::Result<void> ran = engine.Run(&never);
  ASSERT_FALSE(ran.has_value());
  EXPECT_EQ(ran.error().message,
            "op 'dispatch' (id 1): the network model never finished this "
            "transfer (started at 2.000 us)");
  EXPECT_FALSE(engine.ran());
}

TEST(EngineTransfer, AStuckNetworkIsAnError) {
  Engine engine;
  engine.AddTransfer("stage0/ep", {}, {}, "dispatch");
  FixedNetwork stuck(1e-6);
  stuck.stuck = true;
  const util::Result<void> ran = engine.Run(&stuck);
  ASSERT_FALSE(ran.has_value());
  EXPECT_NE(ran.error().message.find("no progress"), std::string::npos)
      << ran.error().message;
}

// A seeded random graph on a 16-GPU cluster: two pipeline stages of 8 GPUs,
// fixed ops and transfers of every kind on five streams each.
Engine RandomTransferEngine(unsigned seed) {
  std::mt19937 rng(seed);
  Engine engine;
  const char* const kThreads[] = {"compute", "tp", "ep", "dp", "pp"};
  std::uniform_int_distribution<int> stage(0, 1), thread(0, 4), kind(0, 5);
  std::uniform_int_distribution<int64_t> duration_ns(1, 50'000);
  std::uniform_real_distribution<double> bytes(1e5, 2e8);
  for (int i = 0; i < 120; ++i) {
    std::vector<OpId> deps;
    if (i > 0) {
      std::uniform_int_distribution<OpId> earlier(0, i - 1);
      for (int k = 0; k < i % 3; ++k) deps.push_back(earlier(rng));
    }
    const int s = stage(rng);
    const int t = thread(rng);
    const std::string stream = "stage" + std::to_string(s) + "/" + kThreads[t];
    const std::string name = "op" + std::to_string(i);
    if (t == 0) {
      engine.Add(stream, Time::Nanos(duration_ns(rng)), std::move(deps), name);
      continue;
    }
    CollectiveRequest request;
    request.bytes = bytes(rng);
    switch (kind(rng)) {
      case 0:
        request.collective = Collective::kAllReduce;
        request.gpus = Gpus(8 * s, 8 * s + 8);
        break;
      case 1:
        request.collective = Collective::kAllToAll;
        request.gpus = Gpus(0, 16);
        break;
      case 2:
        request.collective = Collective::kReduceScatter;
        request.gpus = {s, s + 8};
        break;
      case 3:
        request.collective = Collective::kAllGather;
        request.gpus = Gpus(8 * s, 8 * s + 4);
        break;
      default:
        request.collective = Collective::kSendRecv;
        request.gpus = {8 * s + kind(rng) % 8, 8 * (1 - s) + kind(rng) % 8};
        break;
    }
    engine.AddTransfer(stream, std::move(request), std::move(deps), name);
  }
  return engine;
}

// Many overlapping transfers on a FlowNetwork: every seam REQUIRES holds
// (CheckingNetwork), every transfer is started and finished once, none is
// faster than the analytical model says it is alone (less 1%, the flow
// model's agreement), and the same inputs give the same trace bytes.
TEST(EngineTransfer, RandomGraphsKeepTheSeamContractAndAreDeterministic) {
  const Net net = MakeNet("dgx-h100", 16);
  std::string traces[2];
  for (std::string& trace : traces) {
    Engine engine = RandomTransferEngine(11);
    topology::FlowNetwork flow(net.cluster, net.params);
    CheckingNetwork checked(flow);
    ASSERT_TRUE(engine.Run(&checked).has_value());
    int transfers = 0;
    for (OpId op = 0; op < static_cast<OpId>(engine.op_count()); ++op) {
      if (!engine.is_transfer(op)) continue;
      ++transfers;
      EXPECT_GE(engine.duration(op), Time::Picos(1));
    }
    EXPECT_GT(transfers, 50);
    EXPECT_EQ(checked.starts(), transfers);
    EXPECT_EQ(checked.finished(), transfers);
    trace = engine.ToChromeTrace();
  }
  EXPECT_EQ(traces[0], traces[1]);

  // Analytical: each transfer takes its estimate alone on the wire (to 1
  // ps); under the flow model it takes at least 99% of that.
  Engine flow_engine = RandomTransferEngine(11);
  topology::FlowNetwork flow(net.cluster, net.params);
  ASSERT_TRUE(flow_engine.Run(&flow).has_value());
  Engine analytical_engine = RandomTransferEngine(11);
  topology::AnalyticalNetwork analytical(net.cluster, net.params);
  CheckingNetwork checked(analytical);
  ASSERT_TRUE(analytical_engine.Run(&checked).has_value());
  for (OpId op = 0; op < static_cast<OpId>(flow_engine.op_count()); ++op) {
    if (!flow_engine.is_transfer(op)) continue;
    const double alone_s = analytical_engine.duration(op).seconds();
    EXPECT_GE(flow_engine.duration(op).seconds(), 0.99 * alone_s)
        << flow_engine.op_name(op);
  }
}

TEST(EngineTransferDeathTest, DurationOfATransferBeforeRunAborts) {
  Engine engine;
  const OpId t = engine.AddTransfer("stage0/ep", {}, {}, "t");
  EXPECT_DEATH((void)engine.duration(t), "before a successful Run");
}

}  // namespace
}  // namespace moesim::sim
