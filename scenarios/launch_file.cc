#include "scenarios/launch_file.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace moesim::scenarios {
namespace {

using util::Result;

// The entry points of a Megatron training run (Megatron-LM's pretrain_gpt.py
// and pretrain_mamba.py; slime's and Megatron-LM RL's train.py).
constexpr std::string_view kEntryScripts[] = {"pretrain_gpt.py",
                                              "pretrain_mamba.py", "train.py",
                                              "train_async.py"};

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return std::string(s);
}

// Logical lines: a backslash before the newline joins the next line. Each
// keeps the number of its first physical line.
struct Line {
  int number;
  std::string text;
};

std::vector<Line> LogicalLines(std::string_view text) {
  std::vector<Line> lines;
  std::string current;
  int number = 1, start = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      current += ' ';
      ++i;
      ++number;
      continue;
    }
    if (c == '\n') {
      lines.push_back({start, std::move(current)});
      current.clear();
      start = ++number;
      continue;
    }
    current += c;
  }
  if (!current.empty()) lines.push_back({start, std::move(current)});
  return lines;
}

// Drops a shell comment: a '#' that begins a word, outside quotes.
std::string StripComment(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(
                                           line[i - 1])))) {
      return std::string(line.substr(0, i));
    }
  }
  return std::string(line);
}

class Shell {
 public:
  Shell(std::string_view file, const std::map<std::string, std::string>& vars)
      : file_(file), fixed_(vars) {}

  Result<std::string> Extract(std::string_view text) {
    std::vector<Line> lines = LogicalLines(text);
    std::vector<std::pair<int, std::string>> commands;
    std::vector<std::string> arrays_in_order;
    std::string others;  // lines that neither assign nor run an entry script
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string line = Trim(StripComment(lines[i].text));
      if (line.starts_with("export ")) line = Trim(line.substr(7));
      size_t name_end = 0;
      while (name_end < line.size() && IsNameChar(line[name_end])) ++name_end;
      const bool assignment =
          name_end > 0 && IsNameStart(line[0]) && name_end < line.size() &&
          (line[name_end] == '=' ||
           line.compare(name_end, 2, "+=") == 0);
      if (assignment) {
        const std::string name = line.substr(0, name_end);
        const bool append = line[name_end] == '+';
        std::string rest = line.substr(name_end + (append ? 2 : 1));
        if (rest.starts_with("(")) {
          // An array, perhaps over several lines, up to its closing ')'.
          std::string body = rest.substr(1);
          while (!Closes(body) && i + 1 < lines.size())
            body += "\n" + StripComment(lines[++i].text);
          if (!Closes(body)) {
            return util::Fail(std::string(file_) + ":" +
                              std::to_string(lines[i].number) + ": array " +
                              name + " has no closing ')'");
          }
          body = body.substr(0, ClosingParen(body));
          Define(name, Expand(body), append);
          if (std::find(arrays_in_order.begin(), arrays_in_order.end(),
                        name) == arrays_in_order.end())
            arrays_in_order.push_back(name);
          continue;
        }
        std::string word = FirstWord(rest);
        if (Trim(rest.substr(word.size())).empty()) {
          Define(name, Unquote(word), append);
          continue;
        }
        // NAME=value cmd ...: assignments prefixing a command; the command
        // is looked at below.
      }
      if (auto entry = EntryScriptEnd(line)) {
        commands.push_back({lines[i].number, Expand(line.substr(*entry))});
      } else if (!line.empty()) {
        others += Expand(line) + "\n";
      }
    }
    if (commands.size() > 1) {
      for (const auto& [number, command] : commands) {
        if (command != commands.front().second) {
          return util::Fail(std::string(file_) + ":" + std::to_string(number) +
                            ": a second training command with other "
                            "arguments (the first is on line " +
                            std::to_string(commands.front().first) +
                            "); keep the one to simulate");
        }
      }
    }
    if (!commands.empty()) return commands.front().second;
    // A model file that other scripts source: its *ARGS arrays in order.
    std::string joined;
    for (const std::string& name : arrays_in_order) {
      if (!name.ends_with("ARGS")) continue;
      joined += Value(name) + "\n";
    }
    // Else a bare argument list (or a command moesim does not run, which
    // ApplyMegatronArgs names).
    return joined.empty() ? others : joined;
  }

 private:
  // True when `body` holds the ')' closing an array opened just before it.
  static bool Closes(std::string_view body) {
    return ClosingParen(body) != std::string_view::npos;
  }
  static size_t ClosingParen(std::string_view body) {
    char quote = 0;
    int depth = 0;
    for (size_t i = 0; i < body.size(); ++i) {
      const char c = body[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '\\') {
        ++i;
      } else if (c == '(') {
        ++depth;
      } else if (c == ')') {
        if (depth == 0) return i;
        --depth;
      }
    }
    return std::string_view::npos;
  }

  // The first shell word of `text` as written (quotes kept).
  static std::string FirstWord(std::string_view text) {
    char quote = 0;
    size_t i = 0;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        break;
      }
    }
    return std::string(text.substr(0, i));
  }

  // A word's value: single quotes literal, double quotes and bare text
  // expanded.
  std::string Unquote(std::string_view word) {
    std::string out;
    size_t i = 0;
    while (i < word.size()) {
      const char c = word[i];
      if (c == '\'' || c == '"') {
        const size_t end = word.find(c, i + 1);
        const std::string_view inner =
            word.substr(i + 1, (end == std::string_view::npos ? word.size()
                                                              : end) -
                                   i - 1);
        out += c == '\'' ? std::string(inner) : Expand(inner);
        i = end == std::string_view::npos ? word.size() : end + 1;
      } else {
        size_t end = i;
        while (end < word.size() && word[end] != '\'' && word[end] != '"')
          ++end;
        out += Expand(word.substr(i, end - i));
        i = end;
      }
    }
    return out;
  }

  void Define(const std::string& name, std::string value, bool append) {
    if (fixed_.contains(name)) return;  // --var wins over the file
    if (append && values_.contains(name)) {
      values_[name] += "\n" + value;
    } else {
      values_[name] = std::move(value);
    }
  }

  std::optional<std::string> Lookup(const std::string& name) const {
    if (auto it = fixed_.find(name); it != fixed_.end()) return it->second;
    if (auto it = values_.find(name); it != values_.end()) return it->second;
    return std::nullopt;
  }
  std::string Value(const std::string& name) const {
    return Lookup(name).value_or("");
  }

  // Expands $NAME, ${NAME}, ${NAME[@]}, ${NAME[*]}, ${NAME:-word} and
  // ${NAME-word}; an unknown variable stays as written. "${A[@]}" (an array
  // in double quotes) loses its quotes, since the array's elements are
  // already shell words.
  std::string Expand(std::string_view text) const {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c != '$' || i + 1 >= text.size()) {
        out += c;
        ++i;
        continue;
      }
      size_t start = i;
      std::string name, fallback;
      bool has_fallback = false, array = false;
      if (text[i + 1] == '{') {
        const size_t close = text.find('}', i + 2);
        if (close == std::string_view::npos) {
          out += text.substr(i);
          break;
        }
        std::string_view inner = text.substr(i + 2, close - i - 2);
        size_t n = 0;
        while (n < inner.size() && IsNameChar(inner[n])) ++n;
        name = std::string(inner.substr(0, n));
        std::string_view tail = inner.substr(n);
        if (tail == "[@]" || tail == "[*]") {
          array = true;
        } else if (tail.starts_with(":-") || tail.starts_with("-")) {
          has_fallback = true;
          fallback = std::string(tail.substr(tail[0] == ':' ? 2 : 1));
        } else if (!tail.empty()) {
          name.clear();  // another form (${#A}, ${A/x/y}): left as written
        }
        i = close + 1;
      } else if (IsNameStart(text[i + 1])) {
        size_t n = i + 1;
        while (n < text.size() && IsNameChar(text[n])) ++n;
        name = std::string(text.substr(i + 1, n - i - 1));
        i = n;
      } else {
        out += c;
        ++i;
        continue;
      }
      std::optional<std::string> value =
          name.empty() ? std::nullopt : Lookup(name);
      if (!value && has_fallback) {
        value = Trim(fallback);
        if (value->size() >= 2 && (value->front() == '"' || value->front() == '\'') &&
            value->back() == value->front())
          value = value->substr(1, value->size() - 2);
      }
      if (!value) {
        out += text.substr(start, i - start);
        continue;
      }
      if (array && !out.empty() && out.back() == '"' && i < text.size() &&
          text[i] == '"') {
        out.pop_back();
        ++i;
      }
      out += *value;
    }
    return out;
  }

  // Where the arguments of a training command start: after the word that
  // names an entry script.
  static std::optional<size_t> EntryScriptEnd(std::string_view line) {
    size_t pos = 0;
    while (pos < line.size()) {
      while (pos < line.size() &&
             std::isspace(static_cast<unsigned char>(line[pos])))
        ++pos;
      size_t end = pos;
      while (end < line.size() &&
             !std::isspace(static_cast<unsigned char>(line[end])))
        ++end;
      std::string_view word = line.substr(pos, end - pos);
      for (std::string_view script : kEntryScripts) {
        if (word == script ||
            (word.ends_with(script) && word[word.size() - script.size() - 1] == '/'))
          return end;
      }
      pos = end;
    }
    return std::nullopt;
  }

  std::string_view file_;
  const std::map<std::string, std::string>& fixed_;
  std::map<std::string, std::string> values_;
};

// The MODEL_ARGS mapping of a functional-test or model-zoo YAML, as
// _run_training.sh turns it into arguments.
Result<std::string> FromYaml(const std::vector<Line>& lines, size_t first,
                             std::string_view file) {
  std::vector<std::pair<std::string, std::string>> entries;
  int key_indent = -1;
  for (size_t i = first; i < lines.size(); ++i) {
    const std::string& raw = lines[i].text;
    const std::string text = StripComment(raw);
    if (Trim(text).empty()) continue;
    size_t indent = 0;
    while (indent < text.size() && text[indent] == ' ') ++indent;
    if (indent == 0) break;  // the next top-level key
    std::string body = Trim(text);
    if (key_indent < 0) key_indent = static_cast<int>(indent);
    if (static_cast<int>(indent) > key_indent || !body.starts_with("-")) {
      // A continuation: YAML folds a plain scalar's lines with blanks.
      if (entries.empty()) {
        return util::Fail(std::string(file) + ":" +
                          std::to_string(lines[i].number) +
                          ": MODEL_ARGS: expected '--flag: value'");
      }
      std::string& value = entries.back().second;
      value += (value.empty() ? "" : " ") + body;
      continue;
    }
    const size_t colon = body.find(':');
    if (colon == std::string::npos) {
      return util::Fail(std::string(file) + ":" +
                        std::to_string(lines[i].number) +
                        ": MODEL_ARGS: expected '--flag: value', got '" +
                        body.substr(0, 60) + "'");
    }
    entries.push_back({Trim(body.substr(0, colon)), Trim(body.substr(colon + 1))});
  }
  std::string out;
  for (auto& [key, value] : entries) {
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    out += key;
    if (value == "true") {
      // the bare flag
    } else if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
      out += " " + value.substr(1, value.size() - 2);
    } else if (!value.empty()) {
      std::string quoted = "'";
      for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += " " + quoted + "'";
    }
    out += "\n";
  }
  return out;
}

}  // namespace

Result<std::string> ExtractMegatronArgs(
    std::string_view text, std::string_view file,
    const std::map<std::string, std::string>& vars) {
  std::vector<Line> lines = LogicalLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (Trim(StripComment(lines[i].text)) == "MODEL_ARGS:" &&
        lines[i].text.starts_with("MODEL_ARGS")) {
      auto yaml = FromYaml(lines, i + 1, file);
      if (!yaml) return yaml;
      // ${VAR} in a YAML value is the runner's environment: --var defines it.
      return Shell(file, vars).Extract(*yaml);
    }
  }
  return Shell(file, vars).Extract(text);
}

}  // namespace moesim::scenarios
