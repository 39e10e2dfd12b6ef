#include "scenarios/launch_file.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <vector>

#include "scenarios/megatron_args.h"

namespace moesim::scenarios {
namespace {

using util::Result;

// The entry points of a Megatron training run: Megatron-LM's pretrain_*.py
// (pretrain_gpt.py, pretrain_mamba.py; forks such as Pai-Megatron-Patch's
// pretrain_qwen.py keep the name), and slime's / Megatron-LM RL's train.py.
bool IsEntryScript(std::string_view word) {
  if (size_t slash = word.rfind('/'); slash != std::string_view::npos)
    word.remove_prefix(slash + 1);
  if (word == "train.py" || word == "train_async.py") return true;
  return word.starts_with("pretrain_") && word.ends_with(".py") &&
         word.size() > 12;
}

// Megatron-Bridge's entry points: a recipe plus overrides.
bool IsBridgeScript(std::string_view word) {
  return word.ends_with("run_recipe.py") ||
         word.ends_with("setup_experiment.py");
}

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

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
    // Variables whose value holds a flag, in the order they were set.
    std::vector<std::string> flag_vars;
    std::vector<Line> others;  // lines that neither assign nor run an entry
    for (size_t i = 0; i < lines.size() && !too_large_; ++i) {
      const int number = lines[i].number;
      std::string line = Trim(StripComment(lines[i].text));
      if (line.starts_with("export ")) line = Trim(line.substr(7));
      size_t name_end = 0;
      while (name_end < line.size() && IsNameChar(line[name_end])) ++name_end;
      const bool assignment =
          name_end > 0 && IsNameStart(line[0]) && name_end < line.size() &&
          (line[name_end] == '=' || line.compare(name_end, 2, "+=") == 0);
      if (assignment) {
        const std::string name = line.substr(0, name_end);
        const bool append = line[name_end] == '+';
        std::string rest = line.substr(name_end + (append ? 2 : 1));
        if (rest.starts_with("(")) {
          // An array, perhaps over several lines, up to its closing ')'.
          std::string body = rest.substr(1);
          while (!Closes(body) && i + 1 < lines.size())
            body.append("\n").append(StripComment(lines[++i].text));
          if (!Closes(body)) {
            return util::Fail(std::string(file_) + ":" +
                              std::to_string(lines[i].number) + ": array " +
                              name + " has no closing ')'");
          }
          body = body.substr(0, ClosingParen(body));
          arrays_.insert(name);
          Set(name, Expand(body), append, flag_vars);
          continue;
        }
        // A quoted value may run over several lines.
        while (OpenQuote(rest) && i + 1 < lines.size())
          rest.append("\n").append(lines[++i].text);
        if (OpenQuote(rest)) {
          return util::Fail(std::string(file_) + ":" + std::to_string(number) +
                            ": the value of " + name + " has no closing quote");
        }
        std::string word = FirstWord(rest);
        if (Trim(StripComment(rest.substr(word.size()))).empty()) {
          std::string value = Unquote(word);
          // CMD="torchrun ... pretrain_gpt.py ${ARGS[@]}": a command kept in
          // a variable (named where it is written, not where it is run).
          if (EntryScriptEnd(word)) {
            if (auto entry = EntryScriptEnd(value))
              commands.push_back({number, CutAtOperator(value.substr(*entry))});
          }
          Set(name, std::move(value), append, flag_vars);
          continue;
        }
        // NAME=value cmd ...: assignments prefixing a command.
      }
      std::string expanded = Expand(line);
      if (!EntryScriptEnd(line)) {
        // A command kept in a variable and run here ("bash -c
        // "${TRAINING_CMD}"") was taken where the variable was set.
        if (!expanded.empty() && !EntryScriptEnd(expanded))
          others.push_back({number, std::move(expanded)});
      } else if (auto entry = EntryScriptEnd(expanded)) {
        commands.push_back({number, CutAtOperator(expanded.substr(*entry))});
      } else if (!expanded.empty()) {
        others.push_back({number, std::move(expanded)});
      }
    }
    if (too_large_) {
      return util::Fail(std::string(file_) +
                        ": its variables expand to more than 1 MiB of "
                        "arguments");
    }
    return Choose(commands, others, flag_vars);
  }

  // What Extract found, as one argument list: the training command (one;
  // a second with other arguments is an error), else a Megatron-Bridge
  // launch, else a model file's flag variables, else a bare argument list.
  Result<std::string> Choose(
      const std::vector<std::pair<int, std::string>>& commands,
      const std::vector<Line>& others,
      const std::vector<std::string>& flag_vars) {
    if (!commands.empty()) {
      for (const auto& [number, command] : commands) {
        if (command != commands.front().second) {
          return util::Fail(std::string(file_) + ":" + std::to_string(number) +
                            ": a second training command with other "
                            "arguments (the first is on line " +
                            std::to_string(commands.front().first) +
                            "); keep the one to simulate");
        }
      }
      return commands.front().second;
    }
    // A Megatron-Bridge launch, in a line or kept in a variable: handed on
    // whole, so that ApplyMegatronArgs names what it is.
    for (const Line& line : others) {
      if (ScriptEnd(line.text, IsBridgeScript)) return line.text;
    }
    for (const std::string& name : flag_vars) {
      const std::string value = Value(name);
      if (ScriptEnd(value, IsBridgeScript)) return value;
    }
    // A model file that other scripts source: its variables that hold flags,
    // in order.
    if (!flag_vars.empty()) {
      std::string joined;
      // As the scripts that source such a file pass them: ${A[@]}.
      for (const std::string& name : flag_vars) {
        joined += arrays_.contains(name) ? SplitJoin(Value(name)) : Value(name);
        joined += "\n";
      }
      // Megatron-LM's model files for ModelOpt (examples/post_training/
      // modelopt/conf/) set TOKENIZER_MODEL, which the scripts that source
      // them pass as --tokenizer-model ${TOKENIZER_MODEL} (convert.sh,
      // export.sh, eagle3.sh).
      if (joined.find("--tokenizer-model") == std::string::npos) {
        if (auto tokenizer = Lookup("TOKENIZER_MODEL"))
          joined += "--tokenizer-model '" + *tokenizer + "'\n";
      }
      return joined;
    }
    // Else a bare argument list; a line that runs something else is not one.
    std::string joined;
    for (const Line& line : others) {
      if (!line.text.starts_with("-")) {
        return util::Fail(
            std::string(file_) + ":" + std::to_string(line.number) + ": '" +
            FirstWord(line.text).substr(0, 40) +
            "' is not a Megatron training entry point (pretrain_*.py, "
            "train.py) nor an argument list; give the script or config that "
            "holds the training arguments");
      }
      joined += line.text + "\n";
    }
    return joined;
  }

 private:
  // True when `body` holds the ')' closing an array opened just before it.
  static bool Closes(std::string_view body) {
    return ClosingParen(body) != std::string_view::npos;
  }
  // The first position in `text`, outside quotes and not escaped, where
  // `stop(c)` holds; npos when none.
  template <typename Stop>
  static size_t FindUnquoted(std::string_view text, Stop stop) {
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '\\') {
        ++i;
      } else if (stop(c)) {
        return i;
      }
    }
    return std::string_view::npos;
  }
  static size_t ClosingParen(std::string_view body) {
    int depth = 0;
    return FindUnquoted(body, [&depth](char c) {
      if (c == '(') ++depth;
      if (c != ')') return false;
      return depth-- == 0;
    });
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
        const std::string_view inner = word.substr(
            i + 1, (end == std::string_view::npos ? word.size() : end) - i - 1);
        out += c == '\'' ? std::string(inner) : Expand(inner);
        i = end == std::string_view::npos ? word.size() : end + 1;
      } else {
        // Bare text up to the next quote; a ${...} is one unit, its
        // default may hold quotes (${X:-"a"}).
        size_t end = i;
        while (end < word.size() && word[end] != '\'' && word[end] != '"') {
          if (word[end] == '$' && end + 1 < word.size() &&
              word[end + 1] == '{') {
            const size_t close = word.find('}', end);
            end = close == std::string_view::npos ? word.size() : close + 1;
          } else {
            ++end;
          }
        }
        out += Expand(word.substr(i, end - i));
        i = end;
      }
    }
    return out;
  }

  // True when `text` ends inside a quote.
  static bool OpenQuote(std::string_view text) {
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quote != 0) {
        if (c == quote)
          quote = 0;
        else if (c == '\\' && quote == '"')
          ++i;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '\\') {
        ++i;
      } else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(
                                            text[i - 1])))) {
        while (i < text.size() && text[i] != '\n') ++i;
      }
    }
    return quote != 0;
  }

  // Defines `name`, and notes it among the variables that hold flags.
  void Set(const std::string& name, std::string value, bool append,
           std::vector<std::string>& flag_vars) {
    Define(name, std::move(value), append);
    const std::vector<std::string> words = Elements(Value(name));
    const bool flags =
        std::any_of(words.begin(), words.end(),
                    [](const std::string& w) { return w.starts_with("--"); });
    if (flags &&
        std::find(flag_vars.begin(), flag_vars.end(), name) == flag_vars.end())
      flag_vars.push_back(name);
  }

  void Define(const std::string& name, std::string value, bool append) {
    if (fixed_.contains(name)) return;  // --var wins over the file
    if (value.size() > kMaxExpansion ||
        (append && values_[name].size() + value.size() > kMaxExpansion)) {
      too_large_ = true;  // a file that doubles a variable in a loop of lines
      return;
    }
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
        if (value->size() >= 2 &&
            (value->front() == '"' || value->front() == '\'') &&
            value->back() == value->front())
          value = value->substr(1, value->size() - 2);
      }
      if (!value) {
        out += text.substr(start, i - start);
        continue;
      }
      if (out.size() + value->size() > kMaxExpansion) {
        too_large_ = true;
        return out;
      }
      if (arrays_.contains(name)) {
        // "${A[@]}" keeps each element one word; ${A[@]} word-splits them.
        if (array && !out.empty() && out.back() == '"' && i < text.size() &&
            text[i] == '"') {
          out.pop_back();
          ++i;
          out += QuoteJoin(*value);
        } else {
          out += SplitJoin(*value);
        }
        continue;
      }
      out += *value;
    }
    return out;
  }

  // Where the arguments of a training command start: after the word that
  // names an entry script.
  // Where the words after the first one that `is_script` accepts start.
  template <typename Pred>
  static std::optional<size_t> ScriptEnd(std::string_view line,
                                         Pred is_script) {
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
      while (!word.empty() && (word.front() == '"' || word.front() == '\''))
        word.remove_prefix(1);
      while (!word.empty() && (word.back() == '"' || word.back() == '\''))
        word.remove_suffix(1);
      if (!word.empty() && is_script(word)) return end;
      pos = end;
    }
    return std::nullopt;
  }
  static std::optional<size_t> EntryScriptEnd(std::string_view line) {
    return ScriptEnd(line, IsEntryScript);
  }

  // The words of an array's body, quotes removed and comments dropped (the
  // importer's own splitting); none for text with an open quote.
  static std::vector<std::string> Elements(std::string_view body) {
    return SplitShellWords(body).value_or(std::vector<std::string>());
  }
  // ${A[@]} unquoted: each element split at blanks; a word that holds a
  // character the shell would read is quoted, since an expansion's result
  // is not parsed again ("Et|(tt|)*30mL" stays one word, not a pipe).
  static std::string SplitJoin(std::string_view body) {
    std::string out;
    for (const std::string& element : Elements(body)) {
      for (const std::string& word : Elements(element)) {
        out.append(out.empty() ? "" : " ");
        if (word.find_first_of("|&;<>()'\"$`\\*?[]#~") == std::string::npos) {
          out.append(word);
        } else {
          out.append(SingleQuoted(word));
        }
      }
    }
    return out;
  }
  static std::string SingleQuoted(std::string_view word) {
    std::string out = "'";
    for (char c : word) out.append(c == '\'' ? "'\\''" : std::string(1, c));
    out.append("'");
    return out;
  }
  // `command` up to its first unquoted |, ;, &, < or > (a pipe, a list, a
  // redirection): the arguments of the command itself.
  static std::string CutAtOperator(std::string_view command) {
    size_t end = FindUnquoted(command, [](char c) {
      return c == '|' || c == ';' || c == '&' || c == '<' || c == '>';
    });
    if (end == std::string_view::npos) return std::string(command);
    // "2>&1": the digit belongs to the redirection.
    while (end > 0 &&
           std::isdigit(static_cast<unsigned char>(command[end - 1])))
      --end;
    return std::string(command.substr(0, end));
  }
  static std::string QuoteJoin(std::string_view body) {
    std::string out;
    for (const std::string& word : Elements(body))
      out.append(out.empty() ? "" : " ").append(SingleQuoted(word));
    return out;
  }

  // Bounds what a file's variables can expand to (1 MiB; a real launch
  // script's arguments are a few KiB), so A=(${A[@]} ${A[@]}) repeated
  // cannot grow without limit.
  static constexpr size_t kMaxExpansion = size_t{1} << 20;
  mutable bool too_large_ = false;
  std::string_view file_;
  std::set<std::string> arrays_;
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
    if (static_cast<int>(indent) > key_indent) {
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
    std::string key = Trim(body.substr(0, colon));
    if (!key.starts_with("--")) {
      return util::Fail(std::string(file) + ":" +
                        std::to_string(lines[i].number) + ": MODEL_ARGS: '" +
                        key.substr(0, 60) +
                        "' is not a Megatron-LM flag (expected '--flag: "
                        "value')");
    }
    entries.push_back({std::move(key), Trim(body.substr(colon + 1))});
  }
  std::string out;
  for (auto& [key, value] : entries) {
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    out += key;
    if (value == "true") {
      // the bare flag
    } else if (value.size() >= 2 && value.front() == '[' &&
               value.back() == ']') {
      out.append(" ").append(value, 1, value.size() - 2);
    } else if (!value.empty()) {
      std::string quoted = "'";
      for (char c : value)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
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
  // A Megatron-Bridge ConfigContainer dump (top-level model:, train:, ...
  // mappings): its fields are Bridge's provider and config classes'.
  bool model = false, train = false;
  for (const Line& line : lines) {
    model = model || line.text.starts_with("model:");
    train = train || line.text.starts_with("train:");
  }
  if (model && train) {
    return util::Fail(std::string(file) +
                      ": a Megatron-Bridge ConfigContainer YAML (model:, "
                      "train:): not imported; give the run as Megatron-LM "
                      "arguments, or --model with moesim's layout flags");
  }
  return Shell(file, vars).Extract(text);
}

}  // namespace moesim::scenarios
