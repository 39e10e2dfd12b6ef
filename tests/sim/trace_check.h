// A checker for the Chrome trace-event JSON that sim::Engine::ToChromeTrace
// writes, for any test that produces such a trace (engine, step replay).
//
// CheckChromeTrace(json) parses the text with protobuf's JSON parser into a
// google.protobuf.Struct (so the text is strict JSON) and checks the rules
// of the trace-event format the engine relies on (Trace Event Format,
// docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
//  - the top level is an object with a "traceEvents" array of objects;
//  - every event has a string "name" and "ph", numeric "pid" and "tid"
//    (whole numbers >= 0), and "cat", when present, is a string;
//  - "X" (complete) events have numeric "ts" >= 0 and "dur" >= 0;
//  - "M" (metadata) events are process_name / thread_name with a string
//    args.name, or process_sort_index / thread_sort_index with a numeric
//    args.sort_index; at most one of each per pid (process_*) or per
//    (pid, tid) (thread_*);
//  - "C" (counter) events have a numeric "ts" >= 0 and an "args" object of
//    numeric values (a counter track of their process);
//  - no other phases (the engine writes none);
//  - every pid used by any event has a process_name, and every (pid, tid)
//    of an "X" event has a thread_name;
//  - "X" events of one (pid, tid) do not overlap: a stream runs one op at a
//    time. Times are compared in integer picoseconds (the engine writes
//    microseconds with six decimals), so back-to-back ops do not trip on
//    floating-point sums.
//
// Returns an AssertionResult whose message names the first violation and
// the event's index: EXPECT_TRUE(CheckChromeTrace(json)).
#ifndef MOESIM_TESTS_SIM_TRACE_CHECK_H_
#define MOESIM_TESTS_SIM_TRACE_CHECK_H_

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moesim::sim {

namespace trace_check_internal {

using google::protobuf::Struct;
using google::protobuf::Value;

// The field `key` of `object` when it has that kind, else nullptr.
inline const Value* Field(const Struct& object, const std::string& key,
                          Value::KindCase kind) {
  const auto it = object.fields().find(key);
  if (it == object.fields().end() || it->second.kind_case() != kind) {
    return nullptr;
  }
  return &it->second;
}

// Whole numbers >= 0 that a double holds exactly.
inline bool IsId(const Value* value) {
  if (value == nullptr) return false;
  const double x = value->number_value();
  return x >= 0 && x <= 0x1p53 && std::floor(x) == x;
}

// Microseconds to whole picoseconds.
inline int64_t Picos(double micros) { return std::llround(micros * 1e6); }

}  // namespace trace_check_internal

namespace trace_check_internal {

using Kind = google::protobuf::Value::KindCase;

// What CheckChromeTrace gathers from the events before its closing checks.
struct TraceSeen {
  struct Span {
    int64_t start;
    int64_t finish;
    int index;
  };
  std::set<int64_t> pids;
  std::map<int64_t, std::set<std::string>> process_meta;  // pid -> names
  std::map<std::pair<int64_t, int64_t>, std::set<std::string>> thread_meta;
  std::map<std::pair<int64_t, int64_t>, std::vector<Span>> spans;
};

// A metadata ("M") event `n` of pid `p`, tid `t`; `fail` starts the
// failure's message.
template <typename Fail>
::testing::AssertionResult CheckMetadata(const google::protobuf::Struct& event,
                                         const std::string& n, int64_t p,
                                         int64_t t, TraceSeen& seen,
                                         const Fail& fail) {
  const auto* args = Field(event, "args", Kind::kStructValue);
  if (args == nullptr) return fail() << "metadata without \"args\"";
  const bool is_name = n == "process_name" || n == "thread_name";
  const bool is_sort = n == "process_sort_index" || n == "thread_sort_index";
  if (!is_name && !is_sort) {
    return fail() << "unknown metadata event '" << n << "'";
  }
  if (is_name &&
      Field(args->struct_value(), "name", Kind::kStringValue) == nullptr) {
    return fail() << n << " without a string args.name";
  }
  if (is_sort && Field(args->struct_value(), "sort_index",
                       Kind::kNumberValue) == nullptr) {
    return fail() << n << " without a numeric args.sort_index";
  }
  const bool inserted = n.starts_with("process_")
                            ? seen.process_meta[p].insert(n).second
                            : seen.thread_meta[{p, t}].insert(n).second;
  if (!inserted) {
    return fail() << "a second " << n << " for pid " << p
                  << (n.starts_with("thread_") ? " tid " + std::to_string(t)
                                               : std::string());
  }
  return ::testing::AssertionSuccess();
}

// traceEvents[i]: its fields by phase (X complete, M metadata, C counter).
inline ::testing::AssertionResult CheckEvent(
    int i, const google::protobuf::Value& value, TraceSeen& seen) {
  auto fail = [i] {
    return ::testing::AssertionFailure() << "traceEvents[" << i << "]: ";
  };
  if (value.kind_case() != Kind::kStructValue) {
    return fail() << "not an object";
  }
  const google::protobuf::Struct& event = value.struct_value();
  const auto* name = Field(event, "name", Kind::kStringValue);
  const auto* ph = Field(event, "ph", Kind::kStringValue);
  const auto* pid = Field(event, "pid", Kind::kNumberValue);
  const auto* tid = Field(event, "tid", Kind::kNumberValue);
  if (name == nullptr) return fail() << "no string \"name\"";
  if (ph == nullptr) return fail() << "no string \"ph\"";
  if (!IsId(pid)) return fail() << "no whole \"pid\" >= 0";
  if (!IsId(tid)) return fail() << "no whole \"tid\" >= 0";
  if (event.fields().contains("cat") &&
      Field(event, "cat", Kind::kStringValue) == nullptr) {
    return fail() << "\"cat\" is not a string";
  }
  const auto p = static_cast<int64_t>(pid->number_value());
  const auto t = static_cast<int64_t>(tid->number_value());
  seen.pids.insert(p);
  const std::string& n = name->string_value();
  if (ph->string_value() == "X") {
    const auto* ts = Field(event, "ts", Kind::kNumberValue);
    const auto* dur = Field(event, "dur", Kind::kNumberValue);
    if (ts == nullptr || !(ts->number_value() >= 0)) {
      return fail() << "complete event without a numeric \"ts\" >= 0";
    }
    if (dur == nullptr || !(dur->number_value() >= 0)) {
      return fail() << "complete event without a numeric \"dur\" >= 0";
    }
    const int64_t start = Picos(ts->number_value());
    seen.spans[{p, t}].push_back(
        {start, start + Picos(dur->number_value()), i});
  } else if (ph->string_value() == "M") {
    return CheckMetadata(event, n, p, t, seen, fail);
  } else if (ph->string_value() == "C") {
    const auto* ts = Field(event, "ts", Kind::kNumberValue);
    if (ts == nullptr || !(ts->number_value() >= 0)) {
      return fail() << "counter event without a numeric \"ts\" >= 0";
    }
    const auto* args = Field(event, "args", Kind::kStructValue);
    if (args == nullptr || args->struct_value().fields().empty()) {
      return fail() << "counter event without \"args\" values";
    }
    for (const auto& [key, value] : args->struct_value().fields()) {
      if (value.kind_case() != Kind::kNumberValue) {
        return fail() << "counter value '" << key << "' is not a number";
      }
    }
  } else {
    return fail() << "unexpected phase '" << ph->string_value() << "'";
  }
  return ::testing::AssertionSuccess();
}

// Every process and stream named; no stream's complete events overlap.
inline ::testing::AssertionResult CheckNamesAndStreams(TraceSeen& seen) {
  for (const int64_t p : seen.pids) {
    if (!seen.process_meta[p].contains("process_name")) {
      return ::testing::AssertionFailure()
             << "pid " << p << " has no process_name";
    }
  }
  for (auto& [key, stream] : seen.spans) {
    if (!seen.thread_meta[key].contains("thread_name")) {
      return ::testing::AssertionFailure()
             << "pid " << key.first << " tid " << key.second
             << " has complete events but no thread_name";
    }
    using Span = TraceSeen::Span;
    std::stable_sort(
        stream.begin(), stream.end(), [](const Span& a, const Span& b) {
          return a.start != b.start ? a.start < b.start : a.finish < b.finish;
        });
    for (size_t k = 1; k < stream.size(); ++k) {
      if (stream[k].start < stream[k - 1].finish) {
        return ::testing::AssertionFailure()
               << "pid " << key.first << " tid " << key.second
               << ": traceEvents[" << stream[k].index << "] starts at "
               << stream[k].start << " ps, before traceEvents["
               << stream[k - 1].index << "] ends at " << stream[k - 1].finish
               << " ps";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace trace_check_internal

inline ::testing::AssertionResult CheckChromeTrace(std::string_view json) {
  using trace_check_internal::Field;
  using trace_check_internal::Kind;
  google::protobuf::Struct root;
  const auto status =
      google::protobuf::util::JsonStringToMessage(std::string(json), &root);
  if (!status.ok()) {
    return ::testing::AssertionFailure()
           << "not JSON with an object at the top: " << status.ToString();
  }
  const google::protobuf::Value* events =
      Field(root, "traceEvents", Kind::kListValue);
  if (events == nullptr) {
    return ::testing::AssertionFailure() << "no \"traceEvents\" array";
  }
  trace_check_internal::TraceSeen seen;
  const auto& list = events->list_value().values();
  for (int i = 0; i < list.size(); ++i) {
    if (auto ok = trace_check_internal::CheckEvent(i, list[i], seen); !ok) {
      return ok;
    }
  }
  return trace_check_internal::CheckNamesAndStreams(seen);
}

}  // namespace moesim::sim

#endif  // MOESIM_TESTS_SIM_TRACE_CHECK_H_
