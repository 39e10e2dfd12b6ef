#include "tools/sweep_format.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tools/sweep_format_internal.h"
#include "tools/text_format.h"
#include "util/json_write.h"

namespace moesim::tools {
namespace sweep_internal {

const char* const kVerdicts[5] = {"ok", "oom", "invalid", "excluded", "failed"};

bool Better(double a, double b, bool higher) { return higher ? a > b : a < b; }

std::string Short(std::string_view metric) {
  if (metric == "tokens_per_sec_per_gpu") return "tok/s/GPU";
  if (metric == "tflops_per_gpu") return "TFLOPS/GPU";
  return "step s";
}

// 0 (unset, left to the default) prints as '-'.
std::string IntCell(int v) { return v ? std::to_string(v) : "-"; }

Varying VaryingOf(const SweepOutcome& o) {
  Varying v;
  // Invalid candidates hold their requested values (0 or empty where left
  // to the default), so only resolved ones are compared.
  const SweepCandidate* first = nullptr;
  for (const SweepCandidate& c : o.candidates) {
    if (c.verdict() != "invalid") {
      first = &c;
      break;
    }
  }
  if (!first) return v;
  const SweepCandidate& a = *first;
  for (const SweepCandidate& c : o.candidates) {
    if (c.verdict() == "invalid") continue;
    v.gpus |= c.num_gpus() != a.num_gpus();
    v.seq |= c.seq_len() != a.seq_len();
    v.mbs |= c.mbs() != a.mbs();
    v.gbs |= c.gbs() != a.gbs();
    v.recompute |= c.recompute() != a.recompute();
    v.precision |= c.precision() != a.precision();
    v.dispatcher |= c.dispatcher() != a.dispatcher();
    v.offload |= c.cpu_offload() != a.cpu_offload();
    v.graph |= c.cuda_graph() != a.cuda_graph();
    v.ep_overlap |= c.ep_overlap() != a.ep_overlap();
    v.activation_offload |= c.activation_offload() != a.activation_offload();
    v.state_offload |=
        c.offload_optimizer_states() != a.offload_optimizer_states();
  }
  return v;
}

// "TP4 CP4 EP32 ETP1 PP4 VPP12" plus the knobs that vary.
std::string LayoutText(const SweepCandidate& c, const Varying& v) {
  std::string s = "TP" + IntCell(c.tp()) + " CP" + IntCell(c.cp()) + " EP" +
                  IntCell(c.ep()) + " ETP" + IntCell(c.etp()) + " PP" +
                  IntCell(c.pp()) + " VPP" + IntCell(c.vpp());
  if (v.gpus) s = IntCell(c.num_gpus()) + " GPUs " + s;
  if (v.seq) s = "seq " + IntCell(c.seq_len()) + " " + s;
  if (v.mbs) s += " MBS" + IntCell(c.mbs());
  if (v.gbs) s += " GBS" + IntCell(c.gbs());
  if (v.recompute) s += " rc=" + c.recompute();
  if (v.precision) s += " " + c.precision();
  if (v.dispatcher) s += " " + c.dispatcher();
  if (v.offload) s += Format(" offload=%g", c.cpu_offload());
  if (v.graph) s += " graph=" + c.cuda_graph();
  if (v.ep_overlap) s += c.ep_overlap() ? " ep-overlap" : " no-ep-overlap";
  if (v.activation_offload) s += " act-offload=" + c.activation_offload();
  if (v.state_offload)
    s += c.offload_optimizer_states() ? " state-offload" : " no-state-offload";
  return s;
}

std::map<std::string, int> Counts(const SweepOutcome& o) {
  std::map<std::string, int> counts;
  for (const char* v : kVerdicts) counts[v] = 0;
  for (const SweepCandidate& c : o.candidates) ++counts[c.verdict()];
  return counts;
}

std::string CountsLine(const SweepOutcome& o) {
  const std::map<std::string, int> counts = Counts(o);
  std::string s;
  for (const char* v : kVerdicts) {
    s += (s.empty() ? "" : ", ") + std::to_string(counts.at(v)) + " " + v;
  }
  return s;
}

}  // namespace sweep_internal

namespace {

using namespace sweep_internal;

// Invalid and excluded candidates grouped by the field (or constraint)
// their reason names, most frequent first.
std::vector<std::pair<std::string, int>> ReasonGroups(
    const SweepOutcome& o, std::string_view verdict) {
  std::map<std::string, int> groups;
  for (const SweepCandidate& c : o.candidates) {
    if (c.verdict() != verdict) continue;
    const std::string& r = c.reason();
    const size_t colon = r.find(": ");
    ++groups[colon == std::string::npos ? r : r.substr(0, colon)];
  }
  std::vector<std::pair<std::string, int>> out(groups.begin(), groups.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second > b.second;
  });
  return out;
}

std::string Table(const std::vector<const SweepCandidate*>& rows,
                  std::string_view metric, const Varying& v, bool ranked) {
  std::string out = Format(
      "%s %6s  %-44s %11s %9s %9s %9s %9s\n", ranked ? "rank" : "    ", "index",
      "layout", "tok/s/GPU", "TFLOPS", "step s", "peak GiB", "free GiB");
  (void)metric;
  int rank = 0;
  for (const SweepCandidate* c : rows) {
    ++rank;
    out += Format("%4s %6lld  %-44s %11.1f %9.1f %9.3f %9.1f %9.1f\n",
                  ranked ? std::to_string(rank).c_str() : "",
                  static_cast<long long>(c->index()), LayoutText(*c, v).c_str(),
                  c->tokens_per_sec_per_gpu(), c->tflops_per_gpu(),
                  c->step_time_s(), c->peak_memory_gib(), c->margin_gib());
  }
  return out;
}

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
void WriteLayoutFields(util::JsonWriter& w, const SweepCandidate& c) {
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

bool HasMemory(const SweepCandidate& c) {
  return c.verdict() == "ok" || c.verdict() == "oom" ||
         (c.verdict() == "failed" && c.peak_memory_gib() > 0);
}

}  // namespace

double MetricOf(const SweepCandidate& c, std::string_view metric) {
  if (metric == "tflops_per_gpu") return c.tflops_per_gpu();
  if (metric == "step_time_s") return c.step_time_s();
  return c.tokens_per_sec_per_gpu();
}

bool HigherIsBetter(std::string_view metric) { return metric != "step_time_s"; }

std::vector<const SweepCandidate*> RankSweep(const SweepOutcome& o,
                                             std::string_view metric) {
  std::vector<const SweepCandidate*> ok;
  for (const SweepCandidate& c : o.candidates) {
    if (c.verdict() == "ok") ok.push_back(&c);
  }
  const bool higher = HigherIsBetter(metric);
  std::stable_sort(ok.begin(), ok.end(), [&](const auto* a, const auto* b) {
    return Better(MetricOf(*a, metric), MetricOf(*b, metric), higher);
  });
  return ok;
}

std::vector<ParetoPoint> SweepPareto(const SweepOutcome& o,
                                     std::string_view metric) {
  const bool higher = HigherIsBetter(metric);
  std::vector<ParetoPoint> out;
  // Metric best first, then more headroom first: a point is on the front
  // when it has more headroom than every point at least as good.
  std::vector<const SweepCandidate*> ranked = RankSweep(o, metric);
  std::stable_sort(
      ranked.begin(), ranked.end(), [&](const auto* a, const auto* b) {
        const double ma = MetricOf(*a, metric), mb = MetricOf(*b, metric);
        if (ma != mb) return Better(ma, mb, higher);
        return a->margin_gib() > b->margin_gib();
      });
  bool first = true;
  double best_margin = 0;
  for (const SweepCandidate* c : ranked) {
    if (first || c->margin_gib() > best_margin) {
      out.push_back({"memory_headroom", c, MetricOf(*c, metric)});
      best_margin = c->margin_gib();
      first = false;
    }
  }
  if (!VaryingOf(o).gpus) return out;
  // Fewest GPUs first, then the best total: on the front when its total
  // beats every point with no more GPUs.
  auto total = [&](const SweepCandidate* c) {
    return higher ? MetricOf(*c, metric) * c->num_gpus() : MetricOf(*c, metric);
  };
  ranked = RankSweep(o, metric);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto* a, const auto* b) {
                     if (a->num_gpus() != b->num_gpus())
                       return a->num_gpus() < b->num_gpus();
                     return Better(total(a), total(b), higher);
                   });
  first = true;
  double best_total = 0;
  for (const SweepCandidate* c : ranked) {
    if (first || Better(total(c), best_total, higher)) {
      out.push_back({"num_gpus", c, total(c)});
      best_total = total(c);
      first = false;
    }
  }
  return out;
}

std::string FormatSweepText(const SweepOutcome& o, const SweepOutputFlags& f) {
  const Varying v = VaryingOf(o);
  std::string out = Format("sweep %s on %s: %lld candidates: ", o.model.c_str(),
                           o.system.c_str(), static_cast<long long>(o.total)) +
                    CountsLine(o) + "\n";
  if (!f.no_timing) {
    out += Format("evaluated in %.1f s (%.1f candidates/s)\n", o.seconds,
                  o.seconds > 0 ? o.total / o.seconds : 0.0);
  }
  for (const char* verdict : {"invalid", "excluded"}) {
    auto groups = ReasonGroups(o, verdict);
    if (groups.empty()) continue;
    out += std::string(verdict) + " by rule:";
    for (const auto& [reason, n] : groups)
      out += Format(" %s (%d);", reason.c_str(), n);
    out.back() = '\n';
  }
  const std::vector<const SweepCandidate*> ranked = RankSweep(o, f.metric);
  if (ranked.empty()) {
    out += "\nno candidate fits and runs";
    const SweepCandidate* closest = nullptr;
    for (const SweepCandidate& c : o.candidates) {
      if (c.verdict() == "oom" &&
          (!closest || c.margin_gib() > closest->margin_gib()))
        closest = &c;
    }
    if (closest) {
      out += Format("; the closest to fitting is #%lld, %s: %s",
                    static_cast<long long>(closest->index()),
                    LayoutText(*closest, v).c_str(), closest->reason().c_str());
    }
    return out + "\n";
  }
  std::vector<const SweepCandidate*> top(
      ranked.begin(), ranked.begin() + std::min<size_t>(ranked.size(), f.top));
  out += "\ntop " + std::to_string(top.size()) + " by " + f.metric + "\n";
  out += Table(top, f.metric, v, true);

  std::vector<ParetoPoint> pareto = SweepPareto(o, f.metric);
  for (const char* front : {"memory_headroom", "num_gpus"}) {
    std::vector<const SweepCandidate*> rows;
    for (const ParetoPoint& p : pareto)
      if (p.front == front) rows.push_back(p.candidate);
    if (rows.empty()) continue;
    out += std::string("\npareto front: ") + f.metric +
           (front == std::string_view("num_gpus")
                ? " x GPUs (total) vs GPU count\n"
                : " vs memory headroom\n");
    out += Table(rows, f.metric, v, false);
  }

  if (v.seq) {
    out += "\nbest by sequence length\n";
    std::map<int, const SweepCandidate*> best;
    std::map<int, const SweepCandidate*> closest;
    for (const SweepCandidate* c : ranked) {
      if (!best.count(c->seq_len())) best[c->seq_len()] = c;
    }
    for (const SweepCandidate& c : o.candidates) {
      if (c.verdict() == "oom" &&
          (!closest.count(c.seq_len()) ||
           c.margin_gib() > closest[c.seq_len()]->margin_gib()))
        closest[c.seq_len()] = &c;
    }
    std::set<int> seqs;
    for (const SweepCandidate& c : o.candidates) seqs.insert(c.seq_len());
    for (int seq : seqs) {
      if (auto it = best.find(seq); it != best.end()) {
        const SweepCandidate& c = *it->second;
        // The seeds' rule of thumb: CP ~ seq_len / 4096.
        out += Format("  %7d  %-50s %11.1f %s  (seq/4096 = %g)\n", seq,
                      LayoutText(c, v).c_str(), MetricOf(c, f.metric),
                      Short(f.metric).c_str(), seq / 4096.0);
      } else if (auto oom = closest.find(seq); oom != closest.end()) {
        out += Format("  %7d  nothing fits (closest #%lld, %s: %s)\n", seq,
                      static_cast<long long>(oom->second->index()),
                      LayoutText(*oom->second, v).c_str(),
                      oom->second->reason().c_str());
      } else {
        out += Format("  %7d  no valid layout\n", seq);
      }
    }
  }
  return out;
}

std::string FormatSweepJson(const SweepOutcome& o, const SweepOutputFlags& f) {
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
  for (const SweepCandidate* c : RankSweep(o, f.metric))
    rank_of[c->index()] = ++rank;
  w.Key("layouts").BeginArray(Layout::kLines);
  for (const SweepCandidate& c : o.candidates) {
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
  for (const ParetoPoint& p : SweepPareto(o, f.metric)) {
    const bool gpus = p.front == "num_gpus";
    w.BeginObject().Key("front").String(p.front);
    w.Key("index").Number(static_cast<double>(p.candidate->index()));
    w.Key("metric").String(
        gpus && HigherIsBetter(f.metric)
            ? (f.metric == "tflops_per_gpu" ? "tflops" : "tokens_per_sec")
            : f.metric);
    w.Key("value").Number(p.value).Key("num_gpus");
    w.Number(p.candidate->num_gpus());
    w.Key("margin_gib").Number(p.candidate->margin_gib()).EndObject();
  }
  w.EndArray().EndObject();
  return std::move(w).Take();
}

std::string FormatSweepCsv(const SweepOutcome& o) {
  std::string out =
      "index,num_gpus,seq_len,tp,cp,ep,etp,pp,vpp,mbs,gbs,recompute,precision,"
      "dispatcher,cpu_offload,cuda_graph,ep_overlap,activation_offload,"
      "offload_optimizer_states,verdict,reason,"
      "tokens_per_sec_per_gpu,tflops_per_gpu,step_time_s,peak_memory_gib,"
      "margin_gib\n";
  auto num = [](int v) { return v ? std::to_string(v) : std::string(); };
  for (const SweepCandidate& c : o.candidates) {
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
