#include "util/json_write.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "util/check.h"

namespace moesim::util {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x",
                    static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  // RFC 8259 has no NaN or infinity: a value that is not a number is null.
  if (!std::isfinite(v)) return "null";
  char text[32];
  // Integers up to 2^53 (counts, sequence lengths, GPU counts) exactly:
  // %.6g would print 1048576 as 1.04858e+06.
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
    std::snprintf(text, sizeof(text), "%.0f", v);
  } else {
    std::snprintf(text, sizeof(text), "%.6g", v);
  }
  return text;
}

void JsonWriter::Separate() {
  Level& level = stack_.back();
  if (level.layout == Layout::kLines) {
    out_ += level.empty ? "\n" : ",\n";
    out_.append(2 * stack_.size(), ' ');
  } else if (!level.empty) {
    out_ += ", ";
  }
  level.empty = false;
}

void JsonWriter::BeginValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) {
    CheckOrDie(out_.empty(), "JsonWriter: a second value at the top");
    return;
  }
  CheckOrDie(!stack_.back().object,
             "JsonWriter: a value in an object needs a Key");
  Separate();
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  CheckOrDie(!stack_.empty() && stack_.back().object && !after_key_,
             "JsonWriter::Key outside an object");
  Separate();
  out_ += JsonString(key);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::BeginObject(Layout layout) {
  BeginValue();
  out_ += '{';
  stack_.push_back({layout, true});
  return *this;
}

JsonWriter& JsonWriter::BeginArray(Layout layout) {
  BeginValue();
  out_ += '[';
  stack_.push_back({layout, false});
  return *this;
}

void JsonWriter::Close(char bracket) {
  CheckOrDie(!stack_.empty() && !after_key_ &&
                 stack_.back().object == (bracket == '}'),
             "JsonWriter: a close without its open");
  const Level level = stack_.back();
  stack_.pop_back();
  if (level.layout == Layout::kLines && !level.empty) {
    out_ += '\n';
    out_.append(2 * stack_.size(), ' ');
  }
  out_ += bracket;
}

JsonWriter& JsonWriter::EndObject() {
  Close('}');
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  Close(']');
  return *this;
}

JsonWriter& JsonWriter::Number(double v) {
  BeginValue();
  out_ += JsonNumber(v);
  return *this;
}

JsonWriter& JsonWriter::Fixed(double v, int decimals) {
  BeginValue();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, v);
  out_ += text;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  BeginValue();
  out_ += JsonString(s);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool b) {
  BeginValue();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeginValue();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::Strings(const std::vector<std::string>& items) {
  BeginArray();
  for (const std::string& item : items) String(item);
  return EndArray();
}

std::string JsonWriter::Take() && {
  CheckOrDie(stack_.empty() && !after_key_,
             "JsonWriter::Take with a container open");
  out_ += '\n';
  return std::move(out_);
}

}  // namespace moesim::util
