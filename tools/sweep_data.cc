// A sweep's JSON and CSV (tools/sweep_format.h).
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "tools/sweep_format.h"
#include "tools/sweep_format_internal.h"
#include "tools/text_format.h"
#include "util/json_write.h"

namespace moesim::tools {

using sweep_internal::Counts;
using sweep_internal::HasMemory;

namespace {

// A text cell, RFC 4180-quoted where it holds a comma, quote or newline.
// A cell that starts with =, +, -, @, tab or CR is a formula to a
// spreadsheet (OWASP, "CSV Injection"); it is written behind a ' so that it
// reads as text. Numeric cells are not written through here.
std::string CsvCell(const std::string& text) {
  std::string s = text;
  if (!s.empty() &&
      std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos)
    s.insert(s.begin(), '\'');
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A candidate's layout fields (FormatSweepJson): 0 and "" (the base's
// value) as null.
void WriteLayoutFields(util::JsonWriter& w, const studies::SweepCandidate& c) {
  auto integer = [&w](std::string_view key, int v) {
    v ? w.Key(key).Number(v) : w.Key(key).Null();
  };
  auto text = [&w](std::string_view key, const std::string& v) {
    v.empty() ? w.Key(key).Null() : w.Key(key).String(v);
  };
  for (const auto& [key, v] : {std::pair{"tp", c.tp()},
                               {"cp", c.cp()},
                               {"ep", c.ep()},
                               {"etp", c.etp()},
                               {"pp", c.pp()},
                               {"vpp", c.vpp()},
                               {"mbs", c.mbs()},
                               {"gbs", c.gbs()}}) {
    integer(key, v);
  }
  text("recompute", c.recompute());
  text("precision", c.precision());
  text("dispatcher", c.dispatcher());
  integer("num_gpus", c.num_gpus());
  integer("seq_len", c.seq_len());
  w.Key("cpu_offload").Number(c.cpu_offload());
  text("cuda_graph", c.cuda_graph());
  w.Key("ep_overlap").Bool(c.ep_overlap());
  text("activation_offload", c.activation_offload());
  w.Key("offload_optimizer_states").Bool(c.offload_optimizer_states());
}

}  // namespace

std::string FormatSweepJson(const studies::SweepOutcome& o,
                            const SweepOutputFlags& f) {
  using Layout = util::JsonWriter::Layout;
  util::JsonWriter w;
  auto number_or_null = [&w](std::string_view key, bool has, double v) {
    has ? w.Key(key).Number(v) : w.Key(key).Null();
  };
  w.BeginObject(Layout::kLines);
  w.Key("evaluated").Number(static_cast<double>(o.total));
  if (!f.no_timing) w.Key("seconds").Number(o.seconds);
  w.Key("model").String(o.model).Key("system").String(o.system);
  w.Key("metric").String(f.metric);
  w.Key("counts").BeginObject();
  for (const auto& [verdict, n] : Counts(o)) w.Key(verdict).Number(n);
  w.EndObject();
  std::map<int64_t, int> rank_of;
  int rank = 0;
  for (const studies::SweepCandidate* c : studies::RankSweep(o, f.metric))
    rank_of[c->index()] = ++rank;
  w.Key("layouts").BeginArray(Layout::kLines);
  for (const studies::SweepCandidate& c : o.candidates) {
    const bool ok = c.verdict() == "ok", mem = HasMemory(c);
    auto it = rank_of.find(c.index());
    w.BeginObject().Key("index").Number(static_cast<double>(c.index()));
    number_or_null("rank", it != rank_of.end(),
                   it == rank_of.end() ? 0 : it->second);
    WriteLayoutFields(w, c);
    number_or_null("tokens_per_sec_per_gpu", ok, c.tokens_per_sec_per_gpu());
    number_or_null("tflops_per_gpu", ok, c.tflops_per_gpu());
    number_or_null("step_time_s", ok, c.step_time_s());
    number_or_null("peak_memory_gib", mem, c.peak_memory_gib());
    number_or_null("margin_gib", mem, c.margin_gib());
    w.Key("verdict").String(c.verdict()).Key("reason").String(c.reason());
    w.EndObject();
  }
  w.EndArray();
  w.Key("pareto").BeginArray(Layout::kLines);
  for (const studies::ParetoPoint& p : studies::SweepPareto(o, f.metric)) {
    const bool gpus = p.front == "num_gpus";
    w.BeginObject().Key("front").String(p.front);
    w.Key("index").Number(static_cast<double>(p.candidate->index()));
    w.Key("metric").String(
        gpus && studies::HigherIsBetter(f.metric)
            ? (f.metric == "tflops_per_gpu" ? "tflops" : "tokens_per_sec")
            : f.metric);
    w.Key("value").Number(p.value).Key("num_gpus");
    w.Number(p.candidate->num_gpus());
    w.Key("margin_gib").Number(p.candidate->margin_gib()).EndObject();
  }
  w.EndArray().EndObject();
  return std::move(w).Take();
}

std::string FormatSweepCsv(const studies::SweepOutcome& o) {
  std::string out =
      "index,num_gpus,seq_len,tp,cp,ep,etp,pp,vpp,mbs,gbs,recompute,precision,"
      "dispatcher,cpu_offload,cuda_graph,ep_overlap,activation_offload,"
      "offload_optimizer_states,verdict,reason,"
      "tokens_per_sec_per_gpu,tflops_per_gpu,step_time_s,peak_memory_gib,"
      "margin_gib\n";
  auto num = [](int v) { return v ? std::to_string(v) : std::string(); };
  for (const studies::SweepCandidate& c : o.candidates) {
    const bool ok = c.verdict() == "ok", mem = HasMemory(c);
    out += std::to_string(c.index()) + "," + num(c.num_gpus()) + "," +
           num(c.seq_len()) + "," + num(c.tp()) + "," + num(c.cp()) + "," +
           num(c.ep()) + "," + num(c.etp()) + "," + num(c.pp()) + "," +
           num(c.vpp()) + "," + num(c.mbs()) + "," + num(c.gbs()) + "," +
           CsvCell(c.recompute()) + "," + CsvCell(c.precision()) + "," +
           CsvCell(c.dispatcher()) + "," + JsonNumber(c.cpu_offload()) + "," +
           CsvCell(c.cuda_graph()) + "," + (c.ep_overlap() ? "1" : "0") + "," +
           CsvCell(c.activation_offload()) + "," +
           (c.offload_optimizer_states() ? "1" : "0") + "," + c.verdict() +
           "," + CsvCell(c.reason()) + "," +
           (ok ? JsonNumber(c.tokens_per_sec_per_gpu()) : "") + "," +
           (ok ? JsonNumber(c.tflops_per_gpu()) : "") + "," +
           (ok ? JsonNumber(c.step_time_s()) : "") + "," +
           (mem ? JsonNumber(c.peak_memory_gib()) : "") + "," +
           (mem ? JsonNumber(c.margin_gib()) : "") + "\n";
  }
  return out;
}

}  // namespace moesim::tools
