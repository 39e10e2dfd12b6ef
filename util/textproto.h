// Loading protobuf text format with errors that name file:line and field.
#ifndef MOESIM_UTIL_TEXTPROTO_H_
#define MOESIM_UTIL_TEXTPROTO_H_

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace moesim::util {

// Parses `text` into `message` (cleared first). `file` only names the source
// in error messages: "<file>:<line>:<col>: <parser message>". When
// `locations` is given, it receives where each parsed field stands (lines and
// columns from zero), for validation errors that point at a field.
[[nodiscard]] Result<void> ParseTextProto(
    std::string_view text, std::string_view file,
    google::protobuf::Message& message,
    google::protobuf::TextFormat::ParseInfoTree* locations = nullptr);

// The largest input file moesim reads (scenarios, models, systems, tables,
// logs, runs): 64 MiB, some hundred times the largest real one (a long
// nccl-tests log), and small enough that reading it cannot exhaust memory.
inline constexpr size_t kMaxInputFileBytes = size_t{64} << 20;

// The longest moesim waits for a pipe or device to end (`cat x | moesim run
// /dev/stdin`, a FIFO): 3 s, far beyond any local writer; a FIFO nobody
// writes to reads as empty at once.
inline constexpr int kMaxInputReadSeconds = 3;

// Reads a whole file: a regular file, a pipe or a character device (never
// blocking on open, bounded in size and in time). Errors: "<path>: cannot
// read file", with ": is a folder", ": larger than the 64 MiB limit for input
// files", ": no end of input within 3 s ..." or ": not a regular file, pipe
// or character device" when that is why.
[[nodiscard]] Result<std::string> ReadFile(const std::string& path);

// Line (1-based) of the first occurrence of `field:` or `field {` at the start
// of a line in `text`, or 0 when absent. Lets validation errors point at the
// line of the offending field.
int FieldLine(std::string_view text, std::string_view field);

// The range rule every numeric field of a loaded file obeys (scalars and
// repeated, in nested messages too): finite, >= 0, and at most `max`
// (bounds that keep products of counts and sizes in int64 and rates in a
// double's range). Loaders run their own field rules (narrower bounds, more
// specific messages) first and this one after.
struct OutOfRange {
  std::string path;   // dotted from the message checked: "nvlink.link_gb_s"
  std::string field;  // its last part
  std::string rule;   // "must be finite, >= 0 and <= <max>, got <value>"
};
// The first field breaking the rule, in field-number order, or none.
std::optional<OutOfRange> FindOutOfRange(
    const google::protobuf::Message& message, double max);
// FindOutOfRange as an error: "<file>[:<line>]: <path>: <rule>", naming the
// field's line where `text` has it.
[[nodiscard]] Result<void> CheckNumericRanges(
    const google::protobuf::Message& message, std::string_view file,
    std::string_view text, double max);

}  // namespace moesim::util

#endif  // MOESIM_UTIL_TEXTPROTO_H_
