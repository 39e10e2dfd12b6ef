#include "util/json_check.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_set>
#include <vector>

namespace moesim::util {
namespace {

// The keys of each open object (raw text between the quotes, escapes
// undecoded), one level per object depth, reused from object to object.
// A level compares a new key with the few it holds and moves to a hash set
// past kFew keys, so a checker's cost stays linear in the text.
class ObjectKeys {
 public:
  void Open() {
    if (depth_ == levels_.size()) levels_.emplace_back();
    Level& l = levels_[depth_++];
    l.few.clear();
    if (!l.many.empty()) l.many.clear();
  }
  void Close() { --depth_; }
  // False if the innermost open object already has `key`.
  bool Insert(std::string_view key) {
    Level& l = levels_[depth_ - 1];
    if (l.many.empty() && l.few.size() < kFew) {
      if (std::find(l.few.begin(), l.few.end(), key) != l.few.end())
        return false;
      l.few.push_back(key);
      return true;
    }
    if (l.many.empty()) l.many.insert(l.few.begin(), l.few.end());
    return l.many.insert(key).second;
  }

 private:
  static constexpr size_t kFew = 16;
  struct Level {
    std::vector<std::string_view> few;
    std::unordered_set<std::string_view> many;
  };
  std::vector<Level> levels_;
  size_t depth_ = 0;
};

class Checker {
 public:
  Checker(std::string_view text, std::string_view file, int max_depth)
      : t_(text), file_(file), max_depth_(max_depth) {}

  Result<void> Run() {
    // What the parser expects next, and the open containers ('{' or '[').
    enum class Want { kValue, kKey, kColon, kCommaOrClose };
    std::vector<char> open;
    // A key twice in one object is refused: readers disagree on which
    // value wins.
    ObjectKeys keys;
    Want want = Want::kValue;
    bool done = false;  // the top-level value is complete
    while (true) {
      SkipBlanks();
      if (i_ >= t_.size()) break;
      const char c = t_[i_];
      if (done) return Error("text after the JSON value");
      switch (want) {
        case Want::kKey:
          if (c == '}' && last_was_open_) {
            ++i_;
            open.pop_back();
            keys.Close();
            break;
          }
          if (c == '}') return Error("trailing comma before '}'");
          if (c == '\'') return Error("single-quoted key (JSON keys take \")");
          if (c != '"') return Error("expected a quoted key");
          {
            const size_t at = i_;
            if (auto ok = String(); !ok) return ok;
            const std::string_view key = t_.substr(at + 1, i_ - at - 2);
            if (!keys.Insert(key)) {
              i_ = at;
              return Error("key \"" + std::string(key) +
                           "\" twice in one object");
            }
          }
          want = Want::kColon;
          last_was_open_ = false;
          continue;
        case Want::kColon:
          if (c != ':') return Error("expected ':' after the key");
          ++i_;
          want = Want::kValue;
          continue;
        case Want::kCommaOrClose:
          if (c == ',') {
            ++i_;
            want = open.back() == '{' ? Want::kKey : Want::kValue;
            last_was_open_ = false;
            continue;
          }
          if ((c == '}' && open.back() == '{') ||
              (c == ']' && open.back() == '[')) {
            ++i_;
            if (open.back() == '{') keys.Close();
            open.pop_back();
            break;
          }
          return Error(std::string("expected ',' or '") +
                       (open.back() == '{' ? '}' : ']') + "'");
        case Want::kValue:
          if (c == ']' && !open.empty() && open.back() == '[') {
            if (!last_was_open_) return Error("trailing comma before ']'");
            ++i_;
            open.pop_back();
            break;
          }
          if (c == '{' || c == '[') {
            if (static_cast<int>(open.size()) >= max_depth_) {
              return Error("nested deeper than " + std::to_string(max_depth_) +
                           " levels");
            }
            open.push_back(c);
            if (c == '{') keys.Open();
            ++i_;
            want = c == '{' ? Want::kKey : Want::kValue;
            last_was_open_ = true;
            continue;
          }
          last_was_open_ = false;
          if (c == '"') {
            if (auto ok = String(); !ok) return ok;
          } else if (c == '\'') {
            return Error("single-quoted string (JSON strings take \")");
          } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (auto ok = Number(); !ok) return ok;
          } else if (!Word("true") && !Word("false") && !Word("null")) {
            return Error(c == '/' ? "comment (JSON has none)"
                                  : "expected a value");
          }
          break;
      }
      // A value (scalar or container) just ended.
      if (open.empty()) {
        done = true;
      } else {
        want = Want::kCommaOrClose;
        last_was_open_ = false;
      }
    }
    if (!done) return Error("unexpected end of input");
    return {};
  }

 private:
  void SkipBlanks() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' ||
                              t_[i_] == '\n' || t_[i_] == '\r'))
      ++i_;
  }

  bool Word(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  Result<void> String() {
    ++i_;  // the opening quote
    while (i_ < t_.size()) {
      const unsigned char c = static_cast<unsigned char>(t_[i_]);
      if (c == '"') {
        ++i_;
        return {};
      }
      if (c < 0x20) return Error("control character inside a string");
      if (c == '\\') {
        if (i_ + 1 >= t_.size()) break;
        const char e = t_[i_ + 1];
        if (e == 'u') {
          for (size_t k = 2; k < 6; ++k) {
            if (i_ + k >= t_.size() ||
                !std::isxdigit(static_cast<unsigned char>(t_[i_ + k])))
              return Error("\\u takes four hex digits");
          }
          i_ += 6;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos)
          return Error("unknown escape inside a string");
        i_ += 2;
        continue;
      }
      ++i_;
    }
    return Error("unterminated string");
  }

  Result<void> Number() {
    auto digits = [&] {
      const size_t start = i_;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
      return i_ - start;
    };
    if (t_[i_] == '-') ++i_;
    if (i_ < t_.size() && t_[i_] == '0') {
      ++i_;
      if (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9')
        return Error("number with a leading zero");
    } else if (digits() == 0) {
      return Error("expected digits");
    }
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (digits() == 0) return Error("expected digits after '.'");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (digits() == 0) return Error("expected digits in the exponent");
    }
    return {};
  }

  Result<void> Error(const std::string& what) const {
    int line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < t_.size(); ++k) {
      if (t_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Fail(std::string(file_) + ":" + std::to_string(line) + ":" +
                std::to_string(col) + ": malformed JSON: " + what);
  }

  std::string_view t_;
  std::string_view file_;
  int max_depth_;
  size_t i_ = 0;
  bool last_was_open_ = false;  // the last token opened a container
};

}  // namespace

Result<void> CheckStrictJson(std::string_view text, std::string_view file,
                             int max_depth) {
  return Checker(text, file, max_depth).Run();
}

Result<google::protobuf::Struct> ParseStrictJsonObject(std::string_view text,
                                                       std::string_view file,
                                                       int max_depth) {
  // RFC 8259 only (protobuf's parser takes trailing commas and single
  // quotes), and the depth checked before protobuf's parser, whose time
  // grows superlinearly with it.
  if (auto ok = CheckStrictJson(text, file, max_depth); !ok)
    return std::unexpected(ok.error());
  google::protobuf::Struct root;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), &root);
  if (!status.ok()) {
    // The parser's message spans lines (it draws a caret under the input);
    // errors are one line, so keep its first.
    std::string detail(status.message());
    detail = detail.substr(0, detail.find('\n'));
    return Fail(std::string(file) + ": malformed JSON: " + detail);
  }
  return root;
}

}  // namespace moesim::util
