// JSON scalars as moesim writes them (the reports and the Chrome trace write
// JSON text directly, so key order and number formatting are fixed: same
// input, same bytes). RFC 8259: no NaN or infinity, strings escaped.
#ifndef MOESIM_UTIL_JSON_WRITE_H_
#define MOESIM_UTIL_JSON_WRITE_H_

#include <string>
#include <string_view>
#include <vector>

namespace moesim::util {

// A JSON string literal: quotes and backslashes escaped, control bytes as
// \u00XX.
std::string JsonString(std::string_view s);
// Integers (up to 2^53) exactly, others with 6 significant digits; NaN and
// infinities as null, since RFC 8259 JSON has neither.
std::string JsonNumber(double v);

// Writes one JSON value as text, laid out as every moesim report lays it
// out: a container opened with Layout::kLines puts each member on a line of
// its own, indented two spaces a level; one opened kInline (the default)
// writes its members on one line, ", " between them. Members come out in
// the order they are given (same input, same bytes); numbers go through
// JsonNumber (or a fixed count of decimals), strings through JsonString.
//
//   JsonWriter w;
//   w.BeginObject(JsonWriter::Layout::kLines);
//   w.Key("step_time_s").Number(12.5);
//   w.Key("stages").BeginArray().Number(1).Number(2).EndArray();
//   w.EndObject();
//   std::string text = std::move(w).Take();  // {\n  "step_time_s": 12.5,\n ...
class JsonWriter {
 public:
  enum class Layout { kInline, kLines };

  JsonWriter& BeginObject(Layout layout = Layout::kInline);
  JsonWriter& EndObject();
  JsonWriter& BeginArray(Layout layout = Layout::kInline);
  JsonWriter& EndArray();
  // The next value's key. REQUIRES: inside an object.
  JsonWriter& Key(std::string_view key);
  JsonWriter& Number(double v);
  // `v` with `decimals` digits after the point (%.Nf); NaN and infinities
  // as null.
  JsonWriter& Fixed(double v, int decimals);
  JsonWriter& String(std::string_view s);
  JsonWriter& Bool(bool b);
  JsonWriter& Null();
  // An array of strings, inline.
  JsonWriter& Strings(const std::vector<std::string>& items);
  // The text and a newline. REQUIRES: every container closed.
  std::string Take() &&;

 private:
  struct Level {
    Layout layout;
    bool object;
    bool empty = true;
  };
  void Separate();  // before a member of the innermost container
  void BeginValue();
  void Close(char bracket);

  std::vector<Level> stack_;
  std::string out_;
  bool after_key_ = false;
};

}  // namespace moesim::util

#endif  // MOESIM_UTIL_JSON_WRITE_H_
