#include "calibration/nccl_tests.h"

#include <google/protobuf/struct.pb.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "util/bus_bandwidth.h"
#include "util/json_check.h"

namespace moesim::calibration {
namespace {

using util::Fail;
using util::Result;

// collectives.csv names; each binary is <name>_perf.
constexpr std::string_view kCollectives[] = {"all_reduce",     "all_gather",
                                             "reduce_scatter", "alltoall",
                                             "sendrecv",       "broadcast"};

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsWordChar(char c) { return IsAlnum(c) || c == '_'; }
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsBlank(s[i])) ++i;
    size_t start = i;
    while (i < s.size() && !IsBlank(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

bool IsKnownCollective(std::string_view name) {
  for (std::string_view known : kCollectives) {
    if (name == known) return true;
  }
  return false;
}

// A field as it may appear in a one-line message: at most 32 characters,
// bytes outside printable ASCII shown as '?'.
std::string Quote(std::string_view s) {
  constexpr size_t kMax = 32;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    out += (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  }
  if (s.size() > kMax) out += "...";
  return out + "'";
}

std::string At(std::string_view file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": ";
}

std::optional<uint64_t> ParseWhole(std::string_view s) {
  uint64_t value = 0;
  if (!IsDigits(s)) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// A time or bandwidth: finite and >= 0 (nccl-tests prints %.2f, %.1f, %.0f
// or %.1e as the width allows).
std::optional<double> ParseMeasure(std::string_view s) {
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// Where the columns of one results table sit in a data row.
struct Table {
  int header_line = 0;
  size_t fields = 0;  // tokens in a data row
  std::vector<std::string> names;
  size_t time = 0, busbw = 0;    // out-of-place columns
  size_t in_place_from = 0;      // first in-place column (second "time")
  std::vector<size_t> measures;  // every time/algbw/busbw column
  std::vector<size_t> wrong;     // #wrong: counts, non-zero refuses
  std::vector<size_t> deltas;    // "error" (before 2.13): max |delta|
  std::vector<size_t> text;      // redop, root: blank in some rows
  std::optional<size_t> count, type;
  // Each half's (time, algbw) columns: algbw = size / time.
  std::vector<std::pair<size_t, size_t>> time_algbw;
};

// `cols`: the header line's words after '#'. A table header starts with
// "size" and names busbw; the timestamp column prints as two words.
std::optional<Table> ReadTableHeader(const std::vector<std::string_view>& cols,
                                     int line) {
  if (cols.empty() || cols[0] != "size") return std::nullopt;
  Table t;
  t.header_line = line;
  t.fields = cols.size();
  std::vector<size_t> times, busbws;
  bool algbw = false;
  for (size_t i = 0; i < cols.size(); ++i) {
    std::string_view c = cols[i];
    t.names.emplace_back(c);
    if (c == "time" || c == "cputime") times.push_back(i);
    if (c == "algbw") {
      algbw = true;
      if (!times.empty()) t.time_algbw.emplace_back(times.back(), i);
    }
    if (c == "count") t.count = i;
    if (c == "type") t.type = i;
    if (c == "busbw") busbws.push_back(i);
    if (c == "time" || c == "cputime" || c == "algbw" || c == "busbw")
      t.measures.push_back(i);
    if (c == "#wrong") t.wrong.push_back(i);
    if (c == "error") t.deltas.push_back(i);
    if (c == "redop" || c == "root") t.text.push_back(i);
    if (c == "timestamp") ++t.fields;
  }
  if (times.empty() || busbws.empty() || !algbw || busbws[0] < times[0])
    return std::nullopt;
  t.time = times[0];
  t.busbw = busbws[0];
  t.in_place_from = times.size() > 1 ? times[1] : cols.size();
  return t;
}

struct Device {
  int group = 0;
  std::string process;  // "pid P on host H"
  std::string host;
  std::string gpu;
  int line = 0;
};

// "#  Rank  0 Group  0 Pid 412877 on host device  0 [0x18] NVIDIA H100 ..."
// (before 2.13 without "Group"). `body` follows the '#'.
std::optional<std::pair<int, Device>> ReadDeviceLine(std::string_view body,
                                                     int line) {
  std::vector<std::string_view> tok = Tokens(body);
  if (tok.size() < 2 || tok[0] != "Rank" || !IsDigits(tok[1]) ||
      tok[1].size() > 9)
    return std::nullopt;
  Device d;
  d.line = line;
  std::string_view pid, host;
  for (size_t i = 2; i + 1 < tok.size(); ++i) {
    if (tok[i] == "Group" && IsDigits(tok[i + 1]) && tok[i + 1].size() < 10)
      d.group = std::stoi(std::string(tok[i + 1]));
    if (tok[i] == "Pid") pid = tok[i + 1];
    if (tok[i] == "on" && host.empty()) host = tok[i + 1];
    if (tok[i] == "device" && d.gpu.empty()) {
      size_t from = size_t(tok[i].data() - body.data());
      size_t bracket = body.find(']', from);
      if (bracket != std::string_view::npos)
        d.gpu = std::string(Trim(body.substr(bracket + 1)));
    }
  }
  d.process = "pid " + std::string(pid) + " on " + std::string(host);
  d.host = std::string(host);
  return std::make_pair(std::stoi(std::string(tok[1])), std::move(d));
}

// "nvidia-h100-80gb-hbm3" from "NVIDIA H100 80GB HBM3".
std::string GpuSlug(std::string_view gpu) {
  std::string out;
  for (char c : gpu) {
    char l = Lower(c);
    bool keep = IsAlnum(l) || l == '.' || l == '_' || l == '+';
    if (keep) {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// First calendar date in `line` as YYYY-MM-DD: ISO (2025-03-13, also inside
// 2025-03-13T10:41:07) or `date` output (Thu Mar 13 10:41:07 UTC 2025).
std::optional<std::string> FindDate(std::string_view line) {
  auto num = [](std::string_view s) { return std::stoi(std::string(s)); };
  for (size_t i = 0; i + 10 <= line.size(); ++i) {
    std::string_view s = line.substr(i, 10);
    if ((i > 0 && IsDigit(line[i - 1])) ||
        (i + 10 < line.size() && IsDigit(line[i + 10])))
      continue;
    if (!IsDigits(s.substr(0, 4)) || s[4] != '-' || !IsDigits(s.substr(5, 2)) ||
        s[7] != '-' || !IsDigits(s.substr(8, 2)))
      continue;
    int y = num(s.substr(0, 4)), m = num(s.substr(5, 2)), d = num(s.substr(8));
    if (y >= 1990 && y < 2100 && m >= 1 && m <= 12 && d >= 1 && d <= 31)
      return std::string(s);
  }
  static constexpr std::string_view kDays[] = {"Mon", "Tue", "Wed", "Thu",
                                               "Fri", "Sat", "Sun"};
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr",
                                                 "May", "Jun", "Jul", "Aug",
                                                 "Sep", "Oct", "Nov", "Dec"};
  std::vector<std::string_view> tok = Tokens(line);
  for (size_t i = 0; i + 4 < tok.size(); ++i) {
    bool weekday = false;
    for (std::string_view d : kDays) weekday = weekday || tok[i] == d;
    int month = 0;
    for (int m = 0; m < 12; ++m) {
      if (tok[i + 1] == kMonths[m]) month = m + 1;
    }
    std::string_view day = tok[i + 2], clock = tok[i + 3];
    if (!weekday || month == 0 || !IsDigits(day) || day.size() > 2 ||
        clock.size() != 8 || clock[2] != ':' || clock[5] != ':')
      continue;
    for (size_t k = i + 4; k < tok.size() && k <= i + 5; ++k) {
      if (tok[k].size() != 4 || !IsDigits(tok[k])) continue;
      int y = num(tok[k]), d = num(day);
      if (y < 1990 || y >= 2100 || d < 1 || d > 31) continue;
      char buf[16];
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, month, d);
      return std::string(buf);
    }
  }
  return std::nullopt;
}

struct Found {
  std::string value;
  int line = 0;
};

// `<name>_perf` binaries named in `s` (a path, a command echo): the first of
// collectives.csv's and the first other one.
void FindBinaries(std::string_view s, int line, std::optional<Found>& known,
                  std::optional<Found>& unknown) {
  for (size_t pos = s.find("_perf"); pos != std::string_view::npos;
       pos = s.find("_perf", pos + 1)) {
    size_t end = pos + 5;
    if (end < s.size() && IsAlnum(s[end])) continue;
    size_t start = pos;
    while (start > 0 && IsWordChar(s[start - 1])) --start;
    if (start == pos) continue;
    std::string name(s.substr(start, pos - start));
    std::optional<Found>& slot = IsKnownCollective(name) ? known : unknown;
    if (!slot) slot = Found{std::move(name), line};
  }
}

// NCCL_ALGO value echoed on `line` ("NCCL_ALGO=Ring", "-x NCCL_ALGO=tree",
// "NCCL INFO NCCL_ALGO set by environment to Ring."), lowercased.
std::optional<std::string> FindAlgoSetting(std::string_view line) {
  constexpr std::string_view kKey = "NCCL_ALGO";
  constexpr std::string_view kInfo = " set by environment to ";
  for (size_t pos = line.find(kKey); pos != std::string_view::npos;
       pos = line.find(kKey, pos + 1)) {
    if (pos > 0 && IsWordChar(line[pos - 1])) continue;
    std::string_view rest = line.substr(pos + kKey.size());
    if (rest.starts_with(kInfo)) {
      rest.remove_prefix(kInfo.size());
    } else if (rest.starts_with("=")) {
      rest.remove_prefix(1);
    } else {
      continue;
    }
    std::vector<std::string_view> tok = Tokens(rest);
    std::string_view v = tok.empty() ? std::string_view() : tok[0];
    while (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
      v.remove_prefix(1);
    }
    while (!v.empty() && (v.back() == '"' || v.back() == '\'' ||
                          v.back() == '.' || v.back() == ';')) {
      v.remove_suffix(1);
    }
    if (v.empty() || v.front() == '$') continue;  // unset or unexpanded
    std::string value;
    for (char c : v) value += Lower(c);
    return value;
  }
  return std::nullopt;
}

// collectives.csv algorithm for an NCCL_ALGO value, or an error message.
Result<std::string> AlgorithmFor(const std::string& v) {
  if (v == "ring" || v == "tree" || v == "nvls") return v;
  if (v.find(':') == std::string::npos &&
      (v.front() == '^' || v.find(',') != std::string::npos))
    return std::string("auto");
  return Fail("NCCL_ALGO " + Quote(v) +
              ": collectives.csv takes ring, tree, nvls, or a list or "
              "exclusion (^x) of them, which NCCL chooses from (auto)");
}

std::string FormatNumber(double v);  // below, beside the CSV writer

class LogParser {
 public:
  explicit LogParser(std::string_view file) : file_(file) {}
  Result<std::vector<CollectiveRow>> Run(std::string_view text,
                                         std::string_view tier,
                                         std::string_view source_override,
                                         int group_size, NcclLogFacts* facts);

 private:
  Result<void> ReadLine(std::string_view raw, int line);
  Result<void> ReadCommentLine(std::string_view body, int line);
  Result<void> ReadDataRow(const std::vector<std::string_view>& tok, int line);
  Result<void> CheckRowConsistent(const Table& t,
                                  const std::vector<std::string_view>& tok,
                                  uint64_t size, int line) const;
  void ScanMetadata(std::string_view raw, int line);
  Result<std::string> Collective() const;
  Result<std::string> Algorithm() const;
  Result<int> GroupSize(int stated) const;
  Result<std::string> Source(std::string_view source_override) const;
  std::string Where(int line) const { return At(file_, line); }

  std::string_view file_;
  int last_line_ = 1;
  std::optional<Table> table_;
  int footer_line_ = 0;  // after a table's "Out of bounds values" line
  std::vector<CollectiveRow> rows_;
  std::map<uint64_t, size_t> size_rows_;  // a size -> its row in rows_
  int zero_size_rows_ = 0;                // skipped: they move no bytes
  std::vector<int> repeats_;              // rows_[i] measured repeats_[i] times
  std::map<int, Device> devices_;         // by rank
  int threads_ = 0, gpus_ = 0;            // "# nThread N nGpus G"
  std::optional<Found> starting_, known_binary_, other_binary_;
  std::optional<Found> second_known_;  // a known binary unlike known_binary_
  std::vector<Found> algos_;
  std::optional<std::string> date_;
};

Result<std::vector<CollectiveRow>> LogParser::Run(
    std::string_view text, std::string_view tier,
    std::string_view source_override, int stated_group, NcclLogFacts* facts) {
  if (tier != "nvlink" && tier != "net")
    return Fail(std::string(file_) + ": tier " + Quote(tier) +
                ": must be nvlink (one NVLink domain) or net (across domains)");
  if (text.find_first_not_of(" \t\r\n\v\f") == std::string_view::npos)
    return Fail(
        Where(1) +
        "empty log: an nccl-tests log has a table header and data rows");
  int line = 0;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    if (auto r = ReadLine(text.substr(start, end - start), line); !r)
      return std::unexpected(r.error());
    start = end + 1;
  }
  last_line_ = line;
  if (!table_)
    return Fail(Where(last_line_) +
                "no table header: expected a '#  size  count  type ... time  "
                "algbw  busbw ...' line (nccl-tests prints it before the "
                "results)");
  if (rows_.empty() && zero_size_rows_ > 0)
    return Fail(Where(table_->header_line) + "every data row has size 0 (" +
                std::to_string(zero_size_rows_) +
                " rows): nothing moved, nothing to calibrate; run with a "
                "larger -b");
  if (rows_.empty())
    return Fail(Where(table_->header_line) +
                "no data rows: the table header is followed by no row of "
                "results (the run stopped before its first size?)");
  auto collective = Collective();
  if (!collective) return std::unexpected(collective.error());
  auto algorithm = Algorithm();
  if (!algorithm) return std::unexpected(algorithm.error());
  auto group_size = GroupSize(stated_group);
  if (!group_size) return std::unexpected(group_size.error());
  if (facts != nullptr) {
    facts->group_size = *group_size;
    std::set<std::string> hosts;
    const int group = devices_.empty() ? 0 : devices_.begin()->second.group;
    for (const auto& [rank, d] : devices_) {
      if (d.group == group && !d.host.empty()) hosts.insert(d.host);
    }
    facts->hosts = static_cast<int>(hosts.size());
    facts->gpu = devices_.empty() ? "" : devices_.begin()->second.gpu;
  }
  auto source = Source(source_override);
  if (!source) return std::unexpected(source.error());
  for (size_t i = 0; i < rows_.size(); ++i) {
    CollectiveRow& row = rows_[i];
    row.latency_us /= repeats_[i];
    row.bus_gb_s /= repeats_[i];
    row.collective = *collective;
    row.algorithm = *algorithm;
    row.tier = std::string(tier);
    row.group_size = *group_size;
    row.source = *source;
    // nccl-tests prints busbw with two decimals: small messages read 0.00.
    // Recompute it from the size and the time (nccl-tests' own bus factor,
    // doc/PERFORMANCE.md) so every row keeps a usable, positive rate.
    if (row.bus_gb_s <= 0 && row.latency_us > 0) {
      row.bus_gb_s = row.bytes *
                     util::NcclBusFactor(row.collective, row.group_size) /
                     (row.latency_us * 1e-6) / 1e9;
    }
  }
  return std::move(rows_);
}

// A line without the prefix mpirun --tag-output ("[1,0]<stdout>:") or
// srun -l ("12: ") puts before it.
std::string_view StripLaunchPrefix(std::string_view raw) {
  std::string_view s = raw;
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  if (s.starts_with("[")) {
    const size_t close = s.find("]<");
    const size_t colon = s.find(">:");
    if (close != std::string_view::npos && colon != std::string_view::npos &&
        colon > close && colon < 40) {
      std::string_view stream = s.substr(close + 2, colon - close - 2);
      std::string_view ids = s.substr(1, close - 1);
      const bool numeric =
          !ids.empty() && std::all_of(ids.begin(), ids.end(), [](char c) {
            return IsDigit(c) || c == ',';
          });
      if (numeric && (stream == "stdout" || stream == "stderr"))
        return s.substr(colon + 2);
    }
  }
  size_t digits = 0;
  while (digits < s.size() && IsDigit(s[digits])) ++digits;
  if (digits > 0 && digits < 7 && digits + 1 < s.size() && s[digits] == ':' &&
      IsBlank(s[digits + 1]))
    return s.substr(digits + 1);
  return raw;
}

Result<void> LogParser::ReadLine(std::string_view raw, int line) {
  raw = StripLaunchPrefix(raw);
  ScanMetadata(raw, line);
  std::string_view s = Trim(raw);
  if (s.empty()) return {};
  if (s.front() == '#') return ReadCommentLine(s.substr(1), line);
  std::vector<std::string_view> tok = Tokens(s);
  if (auto header = ReadTableHeader(tok, line)) {  // a log with '#' stripped
    table_ = std::move(header);
    footer_line_ = 0;
    return {};
  }
  if (table_ && footer_line_ == 0) {
    // Inside a table a line is a row when it starts with a whole number, or
    // has a row's field count and starts like a number; anything else
    // (NCCL INFO "host:pid:tid ...", mpirun "[host:pid] ...") is noise.
    char c = tok[0][0];
    bool numberish = IsDigit(c) || c == '-' || c == '+' || c == '.';
    bool row = IsDigits(tok[0]) || (numberish && tok.size() == table_->fields &&
                                    tok[0].find(':') == std::string_view::npos);
    return row ? ReadDataRow(tok, line) : Result<void>();
  }
  // Outside a table, a line that looks like a row cannot be read.
  bool row_like = tok.size() >= 6 && IsDigits(tok[0]) && IsDigits(tok[1]);
  if (!row_like) return {};
  if (!table_)
    return Fail(Where(line) +
                "data row before any table header: the '#  size  count  type "
                "... busbw' header line must come first");
  return Fail(Where(line) + "data row after the table footer at line " +
              std::to_string(footer_line_) +
              ": a new table starts with its header line");
}

Result<void> LogParser::ReadCommentLine(std::string_view body, int line) {
  std::vector<std::string_view> tok = Tokens(body);
  if (tok.empty()) return {};
  if (auto header = ReadTableHeader(tok, line)) {
    table_ = std::move(header);
    footer_line_ = 0;
    return {};
  }
  if (tok[0] == "nThread") {
    for (size_t i = 0; i + 1 < tok.size(); ++i) {
      if (!IsDigits(tok[i + 1]) || tok[i + 1].size() > 6) continue;
      if (tok[i] == "nThread") threads_ = std::stoi(std::string(tok[i + 1]));
      if (tok[i] == "nGpus") gpus_ = std::stoi(std::string(tok[i + 1]));
    }
    return {};
  }
  if (auto device = ReadDeviceLine(body, line)) {
    auto [it, added] = devices_.emplace(device->first, device->second);
    if (!added && it->second.process != device->second.process)
      return Fail(Where(line) + "rank " + std::to_string(device->first) +
                  " listed again (" + device->second.process + "; line " +
                  std::to_string(it->second.line) + " has " +
                  it->second.process +
                  "): one log must hold one run of an MPI build (without "
                  "MPI=1, mpirun starts processes that each run alone)");
    return {};
  }
  if (body.find("Collective test starting:") != std::string_view::npos) {
    std::optional<Found> known, other;
    FindBinaries(body, line, known, other);
    std::optional<Found>& found = known ? known : other;
    if (!found) return {};
    if (starting_ && starting_->value != found->value)
      return Fail(Where(line) + "second collective " +
                  Quote(found->value + "_perf") + " after " +
                  Quote(starting_->value + "_perf") + " at line " +
                  std::to_string(starting_->line) +
                  ": one log must hold one collective");
    if (!starting_) starting_ = found;
    return {};
  }
  if (Trim(body).starts_with("Out of bounds values")) {
    footer_line_ = line;
    size_t colon = body.find(':');
    auto after = Tokens(
        body.substr(colon == std::string_view::npos ? body.size() : colon + 1));
    if (!after.empty() && after[0] != "0")
      return Fail(Where(line) + "Out of bounds values " + Quote(after[0]) +
                  ": the run produced wrong results; refusing to calibrate "
                  "from a failed run");
  }
  return {};
}

// Bytes per element of nccl-tests' type names (nccl-tests src/common.cu
// test_typenames: int8 uint8 int32 uint32 int64 uint64 half float double
// bfloat16 f8e4m3 f8e5m2); 0 for a name it does not print.
size_t TypeBytes(std::string_view type) {
  static constexpr std::pair<std::string_view, size_t> kTypes[] = {
      {"int8", 1},  {"uint8", 1},    {"f8e4m3", 1}, {"f8e5m2", 1},
      {"half", 2},  {"bfloat16", 2}, {"int32", 4},  {"uint32", 4},
      {"float", 4}, {"int64", 8},    {"uint64", 8}, {"double", 8},
  };
  for (const auto& [name, bytes] : kTypes)
    if (name == type) return bytes;
  return 0;
}

// A row agrees with itself, as nccl-tests computes it (src/common.cu
// TimeTest and the per-collective GetBw): size is a whole number of
// elements of its type and a whole multiple of count elements (count is
// per rank for all_gather, reduce_scatter and alltoall, so size is count x
// ranks elements there, count elements elsewhere); each half's algbw is
// size / time (GB/s from bytes and microseconds), within what printing
// rounds away (time to 0.01-1 us, algbw to 0.01 GB/s: 0.01 GB/s + 2%).
Result<void> LogParser::CheckRowConsistent(
    const Table& t, const std::vector<std::string_view>& tok, uint64_t size,
    int line) const {
  const size_t width = t.type ? TypeBytes(tok[*t.type]) : 0;
  if (width > 0 && size % width != 0) {
    return Fail(Where(line) + "size " + std::string(tok[0]) +
                ": not a whole number of " + std::string(tok[*t.type]) +
                " elements (" + std::to_string(width) +
                " bytes each): a corrupt row?");
  }
  if (width > 0 && t.count) {
    const auto count = ParseWhole(tok[*t.count]);
    if (count && *count > 0 && *count <= (uint64_t{1} << 53) &&
        size % (*count * width) != 0) {
      return Fail(Where(line) + "size " + std::string(tok[0]) +
                  ": not a whole multiple of count " +
                  std::string(tok[*t.count]) + " x " + std::to_string(width) +
                  " bytes: a corrupt row?");
    }
  }
  for (const auto& [time_at, algbw_at] : t.time_algbw) {
    const double time_us = *ParseMeasure(tok[time_at]);
    const double algbw = *ParseMeasure(tok[algbw_at]);
    if (!(time_us > 0)) continue;
    const double expected = static_cast<double>(size) / (time_us * 1e3);
    if (std::fabs(algbw - expected) > 0.01 + 0.02 * expected) {
      const std::string half =
          algbw_at < t.in_place_from ? " (out-of-place) " : " (in-place) ";
      return Fail(Where(line) + "algbw" + half + std::string(tok[algbw_at]) +
                  ": disagrees with size / time = " + std::string(tok[0]) +
                  " B / " + std::string(tok[time_at]) + " us = " +
                  FormatNumber(expected) + " GB/s: a corrupt or edited row?");
    }
  }
  return {};
}

Result<void> LogParser::ReadDataRow(
    const std::vector<std::string_view>& row_tok, int line) {
  const Table& t = *table_;
  // alltoall_perf before 2.13 prints an empty redop (opName ""), so its rows
  // have one word fewer than its header (nccl-tests@526eaca src/alltoall.cu
  // print_line_header): a text column left blank, where a number now sits.
  std::vector<std::string_view> tok = row_tok;
  const size_t missing = t.fields > tok.size() ? t.fields - tok.size() : 0;
  if (missing > 0 && missing <= t.text.size() && ParseMeasure(tok[t.text[0]])) {
    for (size_t k = 0; k < missing; ++k)
      tok.insert(tok.begin() + static_cast<long>(t.text[k]),
                 std::string_view());
  }
  if (tok.size() != t.fields)
    return Fail(Where(line) + "data row has " + std::to_string(tok.size()) +
                " fields, the table header at line " +
                std::to_string(t.header_line) + " has " +
                std::to_string(t.fields) + ": truncated or malformed row");
  auto half = [&](size_t i) {
    return std::string(i < t.in_place_from ? " (out-of-place)" : " (in-place)");
  };
  auto size = ParseWhole(tok[0]);
  if (!size || *size > (uint64_t{1} << 53))
    return Fail(Where(line) + "size " + Quote(tok[0]) +
                ": must be a whole number of bytes (at most 2^53)");
  for (size_t i : t.measures) {
    if (!ParseMeasure(tok[i]))
      return Fail(Where(line) + t.names[i] + half(i) + " " + Quote(tok[i]) +
                  ": must be a number >= 0 (not NaN)");
  }
  for (size_t i : t.deltas) {
    if (tok[i] != "N/A" && !ParseMeasure(tok[i]))
      return Fail(Where(line) + "error" + half(i) + " " + Quote(tok[i]) +
                  ": must be a number >= 0 or N/A");
  }
  for (size_t i : t.wrong) {
    if (tok[i] == "N/A") continue;
    auto wrong = ParseMeasure(tok[i]);
    if (!wrong)
      return Fail(Where(line) + "#wrong" + half(i) + " " + Quote(tok[i]) +
                  ": must be a count or N/A");
    if (*wrong != 0)
      return Fail(Where(line) + "#wrong" + half(i) + " is " +
                  std::string(tok[i]) +
                  ": the run produced wrong results; refusing to calibrate "
                  "from a failed run");
  }
  // nccl-tests prints a row of size 0 when a size holds less than one
  // element per rank: it moves nothing, so there is nothing to calibrate
  // (and collectives.csv needs bytes > 0). Such rows are skipped.
  if (*size == 0) {
    ++zero_size_rows_;
    return {};
  }
  if (auto ok = CheckRowConsistent(t, tok, *size, line); !ok) return ok;
  CollectiveRow row;
  row.bytes = static_cast<double>(*size);
  row.latency_us = *ParseMeasure(tok[t.time]);
  row.bus_gb_s = *ParseMeasure(tok[t.busbw]);
  if (!(row.latency_us > 0))
    return Fail(Where(line) + "time (out-of-place) " + Quote(tok[t.time]) +
                ": must be > 0 for a message of " + std::string(tok[0]) +
                " bytes");
  if (row.bus_gb_s > util::kMaxMeasuredBusGbPerS)
    return Fail(Where(line) + "busbw (out-of-place) " + Quote(tok[t.busbw]) +
                ": above " + FormatNumber(util::kMaxMeasuredBusGbPerS) +
                " GB/s, 100x any NVLink; a corrupt log?");
  // A size measured again (nccl-tests -d all runs every data type; logs of
  // repeated runs concatenate) is averaged into its first row: the table
  // holds one point per size, and its loader refuses a repeated one.
  if (auto [it, added] = size_rows_.emplace(*size, rows_.size()); !added) {
    CollectiveRow& first = rows_[it->second];
    first.latency_us += row.latency_us;
    first.bus_gb_s += row.bus_gb_s;
    ++repeats_[it->second];
    return {};
  }
  rows_.push_back(std::move(row));
  repeats_.push_back(1);
  return {};
}

void LogParser::ScanMetadata(std::string_view raw, int line) {
  std::optional<Found> known;
  FindBinaries(raw, line, known, other_binary_);
  if (known && !known_binary_) known_binary_ = known;
  if (known && known->value != known_binary_->value && !second_known_)
    second_known_ = known;
  if (auto algo = FindAlgoSetting(raw)) algos_.push_back({*algo, line});
  if (!date_) date_ = FindDate(raw);
}

Result<std::string> LogParser::Collective() const {
  auto from = [&](const Found& f) -> Result<std::string> {
    if (IsKnownCollective(f.value)) return f.value;
    return Fail(Where(f.line) + "unknown collective " +
                Quote(f.value + "_perf") +
                ": collectives.csv takes all_reduce, all_gather, "
                "reduce_scatter, alltoall, sendrecv, broadcast");
  };
  if (starting_) return from(*starting_);
  if (second_known_)
    return Fail(Where(second_known_->line) + "log names " +
                Quote(second_known_->value + "_perf") + " after " +
                Quote(known_binary_->value + "_perf") + " at line " +
                std::to_string(known_binary_->line) +
                ": cannot tell which one the table measures; give one log "
                "per run");
  if (known_binary_) return from(*known_binary_);
  if (other_binary_) return from(*other_binary_);
  std::string_view base = file_.substr(file_.find_last_of('/') + 1);
  std::optional<Found> known, other;
  FindBinaries(base, 1, known, other);
  if (known) return known->value;
  size_t best = std::string_view::npos;
  std::string_view name;
  for (std::string_view c : kCollectives) {
    for (size_t p = base.find(c); p != std::string_view::npos;
         p = base.find(c, p + 1)) {
      size_t e = p + c.size();
      if ((p > 0 && IsAlnum(base[p - 1])) ||
          (e < base.size() && IsAlnum(base[e])))
        continue;
      if (p < best) best = p, name = c;
      break;
    }
  }
  if (!name.empty()) return std::string(name);
  if (other) return from(*other);
  return Fail(Where(1) +
              "unknown collective: neither the log nor the file name names "
              "an nccl-tests binary (all_reduce_perf, all_gather_perf, "
              "reduce_scatter_perf, alltoall_perf, sendrecv_perf, "
              "broadcast_perf)");
}

Result<std::string> LogParser::Algorithm() const {
  if (algos_.empty()) return std::string("auto");
  const Found& first = algos_.front();
  for (const Found& a : algos_) {
    if (a.value != first.value)
      return Fail(Where(a.line) + "NCCL_ALGO " + Quote(a.value) +
                  " differs from " + Quote(first.value) + " at line " +
                  std::to_string(first.line) +
                  ": one log must hold one algorithm setting");
  }
  auto algorithm = AlgorithmFor(first.value);
  if (!algorithm) return Fail(Where(first.line) + algorithm.error().message);
  return algorithm;
}

Result<int> LogParser::GroupSize(int stated) const {
  int listed = 0;
  if (!devices_.empty()) {
    int group = devices_.begin()->second.group;
    for (const auto& [rank, d] : devices_) listed += d.group == group ? 1 : 0;
  }
  if (listed > 0 && stated > 0 && listed != stated)
    return Fail(Where(devices_.begin()->second.line) + "the log lists " +
                std::to_string(listed) + " ranks, --group-size says " +
                std::to_string(stated));
  if (listed > 0) return listed;
  if (stated > 0) return stated;
  // Without rank lines, nThread x nGpus counts one process's GPUs only: an
  // MPI run of several processes prints no more.
  if (threads_ > 0 && gpus_ > 0) return threads_ * gpus_;
  return Fail(Where(table_->header_line) +
              "group size unknown: no '#  Rank ... device' lines and no "
              "'# nThread N nGpus G' line before the table; give "
              "--group-size");
}

Result<std::string> LogParser::Source(std::string_view source_override) const {
  if (!source_override.empty()) return std::string(source_override);
  if (devices_.empty())
    return Fail(Where(table_->header_line) +
                "GPU unknown: no '#  Rank ... device ... [pci] <gpu>' lines; "
                "pass a source override");
  const Device& first = devices_.begin()->second;
  for (const auto& [rank, d] : devices_) {
    if (GpuSlug(d.gpu) != GpuSlug(first.gpu))
      return Fail(Where(d.line) + "GPU " + Quote(d.gpu) + " differs from " +
                  Quote(first.gpu) + " at line " + std::to_string(first.line) +
                  ": a measured source names one GPU; pass a source override");
  }
  std::string gpu = GpuSlug(first.gpu);
  if (gpu.empty())
    return Fail(Where(first.line) +
                "device line names no GPU after its '[pci]' address; pass a "
                "source override");
  return "measured:" + gpu + ":" + date_.value_or("unknown-date");
}

// %.6g without an exponent.
std::string FormatNumber(double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (s.find('e') == std::string::npos) return s;
  if (std::fabs(v) >= 1) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.12f", v);
  s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos)
    return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

// A -J JSON file as the log nccl-tests prints beside it, one line per
// fact (nccl-tests src/util.cu: "args", "env", "start_time", "config"
// {"nthreads", "ngpus"}, "devices" [{rank, group, pid, hostname, device,
// device_hex, device_info}], "results" [{size, count, type, redop, root,
// "out_of_place" {time | cpu_time, alg_bw, bus_bw, nwrong}}]), so that one
// parser checks both. Errors on the text name the JSON path instead.
struct JsonLog {
  std::string file;
  std::string text;
  std::vector<std::string> paths;  // paths[i]: the JSON behind line i + 1

  std::string Rename(const std::string& message) const {
    for (size_t i = 0; i < paths.size(); ++i) {
      const std::string at = file + ":" + std::to_string(i + 1) + ": ";
      if (message.starts_with(at))
        return file + ": " + paths[i] + ": " + message.substr(at.size());
    }
    return message;
  }
  void Add(std::string line, std::string path) {
    text += line + "\n";
    paths.push_back(std::move(path));
  }
};

constexpr int kMaxJsonLogDepth = 16;

Result<JsonLog> JsonAsLog(std::string_view json, std::string_view file) {
  using google::protobuf::Struct;
  using google::protobuf::Value;
  auto parsed = util::ParseStrictJsonObject(json, file, kMaxJsonLogDepth);
  if (!parsed) return std::unexpected(parsed.error());
  const Struct& root = *parsed;
  auto field = [](const Struct& s, std::string_view key) -> const Value* {
    auto it = s.fields().find(std::string(key));
    return it == s.fields().end() ? nullptr : &it->second;
  };
  auto text = [](const Value* v) {
    return v != nullptr && v->has_string_value() ? v->string_value()
                                                 : std::string();
  };
  auto number = [](const Value* v) -> std::string {
    if (v == nullptr) return "N/A";
    if (v->has_string_value()) return std::string(Trim(v->string_value()));
    if (!v->has_number_value()) return "N/A";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v->number_value());
    return buf;
  };
  JsonLog log;
  log.file = std::string(file);
  const Value* args = field(root, "args");
  const Value* results = field(root, "results");
  if (results == nullptr || !results->has_list_value())
    return Fail(std::string(file) +
                ": results: missing: an nccl-tests -J file holds a \"results\" "
                "list");
  if (args != nullptr && args->has_list_value() &&
      args->list_value().values_size() > 0) {
    log.Add(
        "# Collective test starting: " + text(&args->list_value().values(0)),
        "args[0]");
  }
  if (const Value* env = field(root, "env"); env && env->has_list_value()) {
    for (int i = 0; i < env->list_value().values_size(); ++i) {
      const std::string e = text(&env->list_value().values(i));
      if (e.starts_with("NCCL_ALGO="))
        log.Add(e, "env[" + std::to_string(i) + "]");
    }
  }
  if (std::string start = text(field(root, "start_time")); !start.empty())
    log.Add("# " + start, "start_time");
  const Value* config = field(root, "config");
  const Value* devices = field(root, "devices");
  if (config != nullptr && config->has_struct_value()) {
    log.Add("# nThread " + number(field(config->struct_value(), "nthreads")) +
                " nGpus " + number(field(config->struct_value(), "ngpus")),
            "config");
    if (devices == nullptr) devices = field(config->struct_value(), "devices");
  }
  if (devices != nullptr && devices->has_list_value()) {
    for (int i = 0; i < devices->list_value().values_size(); ++i) {
      const Value& d = devices->list_value().values(i);
      if (!d.has_struct_value()) continue;
      const Struct& dev = d.struct_value();
      log.Add("#  Rank " + number(field(dev, "rank")) + " Group " +
                  number(field(dev, "group")) + " Pid " +
                  number(field(dev, "pid")) + " on " +
                  text(field(dev, "hostname")) + " device " +
                  number(field(dev, "device")) + " [" +
                  text(field(dev, "device_hex")) + "] " +
                  text(field(dev, "device_info")),
              "devices[" + std::to_string(i) + "]");
    }
  }
  log.Add("#  size  count  type  redop  root  time  algbw  busbw  #wrong",
          "results");
  const auto& list = results->list_value();
  for (int i = 0; i < list.values_size(); ++i) {
    const std::string path = "results[" + std::to_string(i) + "]";
    if (!list.values(i).has_struct_value())
      return Fail(std::string(file) + ": " + path + ": not an object");
    const Struct& r = list.values(i).struct_value();
    const Value* out = field(r, "out_of_place");
    if (out == nullptr || !out->has_struct_value())
      return Fail(std::string(file) + ": " + path +
                  ": out_of_place: missing (a trace replay measures in place "
                  "only, not calibrated)");
    const Struct& o = out->struct_value();
    const Value* time = field(o, "time");
    if (time == nullptr) time = field(o, "cpu_time");
    auto word = [&](std::string_view key) {
      std::string w = std::string(Trim(text(field(r, key))));
      return w.empty() ? std::string("-") : w;
    };
    log.Add(number(field(r, "size")) + " " + number(field(r, "count")) + " " +
                word("type") + " " + word("redop") + " " + word("root") + " " +
                number(time) + " " + number(field(o, "alg_bw")) + " " +
                number(field(o, "bus_bw")) + " " + number(field(o, "nwrong")),
            path);
  }
  std::string bad = "0";
  if (const Value* oob = field(root, "out_of_bounds");
      oob != nullptr && oob->has_struct_value())
    bad = number(field(oob->struct_value(), "count"));
  log.Add("# Out of bounds values : " + bad, "out_of_bounds");
  return log;
}

Result<std::vector<CollectiveRow>> ParseNcclTestsLog(
    std::string_view text, std::string_view file, std::string_view tier,
    std::string_view source_override, int group_size, NcclLogFacts* facts) {
  std::string_view trimmed = Trim(text);
  if (trimmed.starts_with("{")) {
    auto table = JsonAsLog(text, file);
    if (!table) return std::unexpected(table.error());
    auto rows = LogParser(file).Run(table->text, tier, source_override,
                                    group_size, facts);
    if (!rows)
      return std::unexpected(util::Error{table->Rename(rows.error().message)});
    return rows;
  }
  return LogParser(file).Run(text, tier, source_override, group_size, facts);
}

std::string CollectiveRowsToCsv(const std::vector<CollectiveRow>& rows) {
  std::string out =
      "collective,algorithm,tier,group_size,bytes,bus_gb_s,latency_us,"
      "source\n";
  char bytes[512];
  for (const CollectiveRow& r : rows) {
    std::snprintf(bytes, sizeof bytes, "%.0f", r.bytes);
    out += CsvField(r.collective) + "," + CsvField(r.algorithm) + "," +
           CsvField(r.tier) + "," + std::to_string(r.group_size) + "," + bytes +
           "," + FormatNumber(r.bus_gb_s) + "," + FormatNumber(r.latency_us) +
           "," + CsvField(r.source) + "\n";
  }
  return out;
}

}  // namespace moesim::calibration
