// The Chrome trace of sim::Engine against the trace-event format rules
// (tests/sim/trace_check.h), read back through protobuf's JSON parser; and
// the checker itself against traces that break each rule.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "sim/core/time.h"
#include "sim/engine.h"
#include "tests/sim/trace_check.h"
#include "tests/topology/network_fixture.h"
#include "topology/cluster.h"
#include "topology/network_model.h"
#include "topology/network_params.h"
#include "topology/system.h"

namespace moesim::sim {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using topology::Collective;

using moesim::testing::MakeNet;
using moesim::testing::Net;

// Two pipeline stages of 8 GPUs each on "stageN/{compute,tp,ep,pp}", plus
// a "host" stream (process ""): GEMMs and attention, a TP all-reduce, an EP
// dispatch, a stage-to-stage send, a zero-length marker, and names that
// need escaping (quotes, newline, tab).
Engine TwoStageEngine() {
  Engine engine;
  for (int s = 0; s < 2; ++s) {
    const std::string stage = "stage" + std::to_string(s);
    // Stage 1 starts when stage 0's send (the op added last) arrives.
    const OpId recv =
        s == 0
            ? engine.Add(stage + "/compute", Time::Micros(1), {}, "embed")
            : engine.Add(stage + "/compute", Time::Micros(1),
                         {static_cast<OpId>(engine.op_count()) - 1}, "unpack");
    const OpId attn =
        engine.Add(stage + "/compute", Time::Micros(40), {recv}, "attention");
    engine.SetCategory(attn, "attention");
    std::vector<int> tp;
    for (int g = 8 * s; g < 8 * s + 8; ++g) tp.push_back(g);
    const OpId ar = engine.AddTransfer(
        stage + "/tp", {Collective::kAllReduce, tp, 32e6}, {attn}, "tp_ar");
    engine.SetCategory(ar, "tp");
    const OpId marker =
        engine.Add(stage + "/compute", Time::Zero(), {ar}, "marker");
    const OpId dispatch = engine.AddTransfer(
        stage + "/ep", {Collective::kAllToAll, tp, 16e6}, {marker}, "dispatch");
    engine.SetCategory(dispatch, "ep");
    const OpId experts = engine.Add(stage + "/compute", Time::Micros(25),
                                    {dispatch}, "experts\tfc1");
    engine.SetCategory(experts, "gemm");
    if (s == 0) {
      engine.AddTransfer(stage + "/pp", {Collective::kSendRecv, {0, 8}, 64e6},
                         {experts}, "send \"act\"\n");
    }
  }
  engine.Add("host", Time::Micros(3), {}, "launch");
  return engine;
}

TEST(TraceFormat, EngineTraceFollowsTheRules) {
  const Net net = MakeNet("dgx-h100", 16);
  topology::FlowNetwork network(net.cluster, net.params);
  Engine engine = TwoStageEngine();
  ASSERT_TRUE(engine.Run(&network).has_value());
  EXPECT_EQ(engine.process_count(), 3u);  // stage0, stage1, ""
  EXPECT_TRUE(CheckChromeTrace(engine.ToChromeTrace()));
}

// Every complete event reads back as its op: name (escapes undone), cat,
// pid = the stream's process, tid = the stream, ts and dur to the
// picosecond.
TEST(TraceFormat, CompleteEventsReadBackAsTheOps) {
  const Net net = MakeNet("dgx-h100", 16);
  topology::AnalyticalNetwork network(net.cluster, net.params);
  Engine engine = TwoStageEngine();
  ASSERT_TRUE(engine.Run(&network).has_value());
  Struct root;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(engine.ToChromeTrace(), &root)
          .ok());
  OpId op = 0;
  for (const Value& value :
       root.fields().at("traceEvents").list_value().values()) {
    const auto& event = value.struct_value().fields();
    if (event.at("ph").string_value() != "X") continue;
    ASSERT_LT(static_cast<size_t>(op), engine.op_count());
    EXPECT_EQ(event.at("name").string_value(), engine.op_name(op));
    const auto cat = event.find("cat");
    EXPECT_EQ(cat == event.end() ? "" : cat->second.string_value(),
              engine.op_category(op));
    EXPECT_EQ(event.at("pid").number_value(),
              engine.stream_process(engine.op_stream(op)));
    EXPECT_EQ(event.at("tid").number_value(), engine.op_stream(op));
    EXPECT_EQ(std::llround(event.at("ts").number_value() * 1e6),
              engine.timing(op).start.picos());
    EXPECT_EQ(std::llround(event.at("dur").number_value() * 1e6),
              engine.duration(op).picos());
    ++op;
  }
  EXPECT_EQ(static_cast<size_t>(op), engine.op_count());
}

// Many streams, overlapping transfers on a FlowNetwork: still one op at a
// time per stream, every thread and process named.
TEST(TraceFormat, RandomGraphsFollowTheRules) {
  const Net net = MakeNet("dgx-h100", 16);
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> stage(0, 3), thread(0, 2), gpu(0, 15);
    std::uniform_int_distribution<int64_t> ns(0, 20'000);
    Engine engine;
    for (int i = 0; i < 150; ++i) {
      std::vector<OpId> deps;
      if (i > 0) {
        std::uniform_int_distribution<OpId> earlier(0, i - 1);
        for (int k = 0; k < i % 3; ++k) deps.push_back(earlier(rng));
      }
      const std::string stream = "stage" + std::to_string(stage(rng)) + "/t" +
                                 std::to_string(thread(rng));
      if (i % 2 == 0) {
        engine.Add(stream, Time::Nanos(ns(rng)), std::move(deps), "fixed");
      } else {
        const int a = gpu(rng);
        const int b = (a + 1 + gpu(rng) % 15) % 16;
        engine.AddTransfer(stream, {Collective::kSendRecv, {a, b}, 1e7},
                           std::move(deps), "send");
      }
    }
    topology::FlowNetwork network(net.cluster, net.params);
    ASSERT_TRUE(engine.Run(&network).has_value());
    EXPECT_TRUE(CheckChromeTrace(engine.ToChromeTrace())) << "seed " << seed;
  }
}

// ------------------------------------------------------- the checker itself

constexpr char kMeta[] =
    R"({"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"p"}},)"
    R"({"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"t"}})";

std::string Trace(const std::string& events) {
  return std::string(R"({"traceEvents":[)") + kMeta +
         (events.empty() ? "" : "," + events) + "]}";
}

TEST(TraceCheck, AcceptsAMinimalTrace) {
  EXPECT_TRUE(CheckChromeTrace(R"({"traceEvents":[]})"));
  EXPECT_TRUE(CheckChromeTrace(Trace("")));
  // Back to back: 0.1 + 0.1 is not 0.2 in doubles, but 100,000 ps + 100,000
  // ps is 200,000 ps.
  EXPECT_TRUE(CheckChromeTrace(Trace(
      R"({"name":"a","ph":"X","ts":0.1,"dur":0.1,"pid":0,"tid":1},)"
      R"({"name":"b","cat":"gemm","ph":"X","ts":0.2,"dur":0,"pid":0,"tid":1},)"
      R"({"name":"c","ph":"X","ts":0.2,"dur":1,"pid":0,"tid":1})")));
  EXPECT_TRUE(CheckChromeTrace(
      Trace(R"({"name":"process_sort_index","ph":"M","pid":0,"tid":0,)"
            R"("args":{"sort_index":0}})")));
}

TEST(TraceCheck, RejectsEachBrokenRule) {
  const struct {
    std::string json;
    std::string message;  // a part of the failure message
  } kCases[] = {
      {"not json", "not JSON"},
      {R"([1, 2])", "not JSON"},
      {R"({"events":[]})", "no \"traceEvents\" array"},
      {R"({"traceEvents":[1]})", "not an object"},
      {Trace(R"({"ph":"X","ts":0,"dur":1,"pid":0,"tid":1})"),
       "no string \"name\""},
      {Trace(R"({"name":"a","ts":0,"dur":1,"pid":0,"tid":1})"),
       "no string \"ph\""},
      {Trace(R"({"name":"a","ph":"X","ts":0,"dur":1,"tid":1})"),
       "no whole \"pid\""},
      {Trace(R"({"name":"a","ph":"X","ts":0,"dur":1,"pid":0})"),
       "no whole \"tid\""},
      {Trace(R"({"name":"a","ph":"X","ts":0,"dur":1,"pid":0,"tid":1.5})"),
       "no whole \"tid\""},
      {Trace(R"({"name":"a","cat":3,"ph":"X","ts":0,"dur":1,"pid":0,)"
             R"("tid":1})"),
       "\"cat\" is not a string"},
      {Trace(R"({"name":"a","ph":"X","ts":-1,"dur":1,"pid":0,"tid":1})"),
       "\"ts\" >= 0"},
      {Trace(R"({"name":"a","ph":"X","ts":"0","dur":1,"pid":0,"tid":1})"),
       "\"ts\" >= 0"},
      {Trace(R"({"name":"a","ph":"X","ts":0,"pid":0,"tid":1})"),
       "\"dur\" >= 0"},
      {Trace(R"({"name":"a","ph":"B","ts":0,"pid":0,"tid":1})"),
       "unexpected phase 'B'"},
      {Trace(R"({"name":"labels","ph":"M","pid":0,"tid":1,"args":{}})"),
       "unknown metadata event 'labels'"},
      {Trace(R"({"name":"thread_name","ph":"M","pid":0,"tid":2})"),
       "metadata without \"args\""},
      {Trace(R"({"name":"thread_name","ph":"M","pid":0,"tid":2,"args":{}})"),
       "thread_name without a string args.name"},
      {Trace(R"({"name":"thread_sort_index","ph":"M","pid":0,"tid":1,)"
             R"("args":{"sort_index":"1"}})"),
       "thread_sort_index without a numeric args.sort_index"},
      {Trace(R"({"name":"process_name","ph":"M","pid":0,"tid":0,)"
             R"("args":{"name":"q"}})"),
       "a second process_name for pid 0"},
      {Trace(R"({"name":"thread_name","ph":"M","pid":0,"tid":1,)"
             R"("args":{"name":"u"}})"),
       "a second thread_name for pid 0 tid 1"},
      {Trace(R"({"name":"a","ph":"X","ts":0,"dur":1,"pid":0,"tid":2})"),
       "pid 0 tid 2 has complete events but no thread_name"},
      {Trace(R"({"name":"thread_name","ph":"M","pid":1,"tid":1,)"
             R"("args":{"name":"t"}})"),
       "pid 1 has no process_name"},
      // [0, 2] and [1, 3] us on one thread.
      {Trace(R"({"name":"a","ph":"X","ts":0,"dur":2,"pid":0,"tid":1},)"
             R"({"name":"b","ph":"X","ts":1,"dur":2,"pid":0,"tid":1})"),
       "traceEvents[3] starts at 1000000 ps, before traceEvents[2] ends at "
       "2000000 ps"},
  };
  for (const auto& c : kCases) {
    const ::testing::AssertionResult result = CheckChromeTrace(c.json);
    EXPECT_FALSE(result) << c.json;
    EXPECT_NE(std::string(result.message()).find(c.message), std::string::npos)
        << "message: " << result.message() << "\nwanted: " << c.message;
  }
}

}  // namespace
}  // namespace moesim::sim
