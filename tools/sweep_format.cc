#include "tools/sweep_format.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tools/text_format.h"

namespace moesim::tools {
namespace {

constexpr const char* kVerdicts[] = {"ok", "oom", "invalid", "excluded",
                                     "failed"};

bool Better(double a, double b, bool higher) { return higher ? a > b : a < b; }

std::string Short(std::string_view metric) {
  if (metric == "tokens_per_sec_per_gpu") return "tok/s/GPU";
  if (metric == "tflops_per_gpu") return "TFLOPS/GPU";
  return "step s";
}

// 0 (unset, left to the default) prints as '-'.
std::string IntCell(int v) { return v ? std::to_string(v) : "-"; }

// The knobs besides the parallel sizes that differ between candidates.
struct Varying {
  bool gpus = false, seq = false, mbs = false, gbs = false, recompute = false,
       precision = false, dispatcher = false, offload = false, graph = false,
       ep_overlap = false;
};

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

std::string JsonInt(int v) { return v ? JsonNumber(v) : "null"; }
std::string JsonText(const std::string& s) {
  return s.empty() ? "null" : JsonString(s);
}

std::string CsvCell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Layout fields in the JSON key order of FormatSweepJson.
std::string JsonLayout(const SweepCandidate& c) {
  return "\"tp\": " + JsonInt(c.tp()) + ", \"cp\": " + JsonInt(c.cp()) +
         ", \"ep\": " + JsonInt(c.ep()) + ", \"etp\": " + JsonInt(c.etp()) +
         ", \"pp\": " + JsonInt(c.pp()) + ", \"vpp\": " + JsonInt(c.vpp()) +
         ", \"mbs\": " + JsonInt(c.mbs()) + ", \"gbs\": " + JsonInt(c.gbs()) +
         ", \"recompute\": " + JsonText(c.recompute()) +
         ", \"precision\": " + JsonText(c.precision()) +
         ", \"dispatcher\": " + JsonText(c.dispatcher()) +
         ", \"num_gpus\": " + JsonInt(c.num_gpus()) +
         ", \"seq_len\": " + JsonInt(c.seq_len()) +
         ", \"cpu_offload\": " + JsonNumber(c.cpu_offload()) +
         ", \"cuda_graph\": " + JsonText(c.cuda_graph()) +
         ", \"ep_overlap\": " + (c.ep_overlap() ? "true" : "false");
}

bool HasMemory(const SweepCandidate& c) {
  return c.verdict() == "ok" || c.verdict() == "oom" ||
         (c.verdict() == "failed" && c.peak_memory_gib() > 0);
}

// ---- HTML -------------------------------------------------------------------

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

// White (0) to dark blue (1).
std::string Shade(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const int r = static_cast<int>(std::lround(235 - 205 * t));
  const int g = static_cast<int>(std::lround(245 - 165 * t));
  const int b = static_cast<int>(std::lround(255 - 95 * t));
  return Format("#%02x%02x%02x", r, g, b);
}

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                    "#bcbd22", "#17becf"};

std::string Heatmap(const SweepOutcome& o, std::string_view metric) {
  const bool higher = HigherIsBetter(metric);
  std::set<int> tps, cps;
  struct Cell {
    const SweepCandidate* best = nullptr;
    bool oom = false;
    double least_deficit = 0;
    std::map<std::string, int> reasons;
  };
  std::map<std::pair<int, int>, Cell> cells;
  for (const SweepCandidate& c : o.candidates) {
    const int tp = std::max(c.tp(), 1), cp = std::max(c.cp(), 1);
    tps.insert(tp);
    cps.insert(cp);
    Cell& cell = cells[{tp, cp}];
    if (c.verdict() == "ok") {
      if (!cell.best ||
          Better(MetricOf(c, metric), MetricOf(*cell.best, metric), higher))
        cell.best = &c;
    } else if (c.verdict() == "oom") {
      if (!cell.oom || -c.margin_gib() < cell.least_deficit)
        cell.least_deficit = -c.margin_gib();
      cell.oom = true;
    } else {
      const size_t colon = c.reason().find(": ");
      ++cell.reasons[c.verdict() + ": " + c.reason().substr(0, colon)];
    }
  }
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& [key, cell] : cells) {
    if (!cell.best) continue;
    const double v = MetricOf(*cell.best, metric);
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  constexpr int kW = 110, kH = 56, kLeft = 70, kTop = 40;
  const int width = kLeft + kW * static_cast<int>(cps.size()) + 20;
  const int height = kTop + kH * static_cast<int>(tps.size()) + 50;
  std::string svg = Format(
      "<svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
      "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
      width, height, width, height);
  svg += Format(
      "<text x=\"%d\" y=\"20\" class=\"axis\">context parallel (CP) &#8594;"
      "</text>\n",
      kLeft);
  svg += Format(
      "<text x=\"14\" y=\"%d\" class=\"axis\" transform=\"rotate(-90 14 %d)\">"
      "tensor parallel (TP)</text>\n",
      kTop + kH * static_cast<int>(tps.size()) / 2 + 40,
      kTop + kH * static_cast<int>(tps.size()) / 2 + 40);
  int col = 0;
  for (int cp : cps) {
    svg += Format("<text x=\"%d\" y=\"%d\" class=\"tick\">CP%d</text>\n",
                  kLeft + kW * col + kW / 2 - 12, kTop - 6, cp);
    ++col;
  }
  int row = 0;
  for (int tp : tps) {
    svg += Format("<text x=\"%d\" y=\"%d\" class=\"tick\">TP%d</text>\n",
                  kLeft - 40, kTop + kH * row + kH / 2 + 4, tp);
    col = 0;
    for (int cp : cps) {
      const int x = kLeft + kW * col, y = kTop + kH * row;
      auto it = cells.find({tp, cp});
      std::string cls = "cell invalid", fill = "#d0d0d0", label = "invalid",
                  title;
      if (it == cells.end()) {
        label = "";
        title = "not in the sweep";
      } else if (const Cell& cell = it->second; cell.best) {
        const double v = MetricOf(*cell.best, metric);
        cls = "cell ok";
        fill = Shade(
            hi > lo ? (higher ? (v - lo) / (hi - lo) : (hi - v) / (hi - lo))
                    : 1.0);
        label = Format("%.4g", v);
        title = Format("#%lld ", static_cast<long long>(cell.best->index())) +
                LayoutText(*cell.best, VaryingOf(o)) +
                Format(": %.4g %s, %.1f GiB free", v, Short(metric).c_str(),
                       cell.best->margin_gib());
      } else if (cell.oom) {
        cls = "cell oom";
        fill = "#f4b6b6";
        label = "OOM";
        title = Format(
            "no layout fits; the closest is out of memory by "
            "%.1f GiB",
            cell.least_deficit);
      } else {
        for (const auto& [reason, n] : cell.reasons)
          title += (title.empty() ? "" : "; ") + reason + Format(" (%d)", n);
      }
      svg += Format(
          "<g><rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
          "fill=\"%s\"/>",
          cls.c_str(), x, y, kW - 2, kH - 2, fill.c_str());
      svg += "<title>" + Escape(title) + "</title>";
      svg += Format(
          "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s"
          "</text></g>\n",
          x + kW / 2, y + kH / 2 + 4, Escape(label).c_str());
      ++col;
    }
    ++row;
  }
  svg += Format(
      "<text x=\"%d\" y=\"%d\" class=\"note\">best %s per cell over the "
      "other knobs; OOM: nothing fits; grey: no valid layout</text>\n",
      kLeft, height - 16, Escape(Short(metric)).c_str());
  return svg + "</svg>\n";
}

std::string SeqChart(const SweepOutcome& o, std::string_view metric) {
  const bool higher = HigherIsBetter(metric);
  std::set<int> seqs;
  std::map<int, std::map<int, double>> by_cp;  // cp -> seq -> best
  for (const SweepCandidate& c : o.candidates) {
    seqs.insert(c.seq_len());
    if (c.verdict() != "ok") continue;
    const double v = MetricOf(c, metric);
    auto& best = by_cp[std::max(c.cp(), 1)];
    auto it = best.find(c.seq_len());
    if (it == best.end() || Better(v, it->second, higher))
      best[c.seq_len()] = v;
  }
  double hi = 0;
  for (const auto& [cp, line] : by_cp)
    for (const auto& [seq, v] : line) hi = std::max(hi, v);
  if (hi <= 0) hi = 1;
  constexpr int kLeft = 70, kTop = 30, kW = 560, kH = 300;
  const int n = static_cast<int>(seqs.size());
  auto x_of = [&](int seq) {
    const int i = static_cast<int>(std::distance(seqs.begin(), seqs.find(seq)));
    return kLeft + (n > 1 ? kW * i / (n - 1) : kW / 2);
  };
  auto y_of = [&](double v) {
    return kTop + kH - static_cast<int>(std::lround(kH * v / hi));
  };
  std::string svg = Format(
      "<svg id=\"seq-chart\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
      kLeft + kW + 140, kTop + kH + 60, kLeft + kW + 140, kTop + kH + 60);
  svg += Format(
      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n"
      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
      kLeft, kTop + kH, kLeft + kW, kTop + kH, kLeft, kTop, kLeft, kTop + kH);
  for (int seq : seqs) {
    svg += Format(
        "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%s"
        "</text>\n",
        x_of(seq), kTop + kH + 18,
        seq % 1024 == 0 ? Format("%dK", seq / 1024).c_str()
                        : std::to_string(seq).c_str());
  }
  for (int i = 0; i <= 4; ++i) {
    svg += Format(
        "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%.4g"
        "</text>\n",
        kLeft - 6, y_of(hi * i / 4) + 4, hi * i / 4);
  }
  svg +=
      Format("<text x=\"%d\" y=\"%d\" class=\"axis\">sequence length</text>\n",
             kLeft + kW / 2 - 50, kTop + kH + 44);
  svg += Format("<text x=\"%d\" y=\"%d\" class=\"axis\">best %s</text>\n",
                kLeft, kTop - 12, Escape(Short(metric)).c_str());
  int k = 0;
  for (const auto& [cp, line] : by_cp) {
    const char* color = kPalette[k % std::size(kPalette)];
    std::string points;
    for (const auto& [seq, v] : line)
      points += Format("%d,%d ", x_of(seq), y_of(v));
    // Not through Format: the point list can pass its 511 bytes.
    svg += Format(
               "<polyline class=\"series\" data-cp=\"%d\" fill=\"none\" "
               "stroke=\"%s\" stroke-width=\"2\" points=\"",
               cp, color) +
           points + "\"/>\n";
    for (const auto& [seq, v] : line) {
      svg += Format(
          "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"><title>CP%d, seq "
          "%d: %.4g</title></circle>\n",
          x_of(seq), y_of(v), color, cp, seq, v);
    }
    svg += Format(
        "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
        "<text x=\"%d\" y=\"%d\" class=\"tick\">CP%d</text>\n",
        kLeft + kW + 20, kTop + 18 * k, color, kLeft + kW + 38,
        kTop + 18 * k + 11, cp);
    ++k;
  }
  return svg + "</svg>\n";
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
  std::string out = "{\n";
  out += "  \"evaluated\": " + JsonNumber(static_cast<double>(o.total)) + ",\n";
  if (!f.no_timing) out += "  \"seconds\": " + JsonNumber(o.seconds) + ",\n";
  out += "  \"model\": " + JsonString(o.model) + ",\n";
  out += "  \"system\": " + JsonString(o.system) + ",\n";
  out += "  \"metric\": " + JsonString(f.metric) + ",\n";
  std::string counts;
  for (const auto& [verdict, n] : Counts(o)) {
    counts += (counts.empty() ? "" : ", ") + JsonString(verdict) + ": " +
              JsonNumber(n);
  }
  out += "  \"counts\": {" + counts + "},\n";
  std::map<int64_t, int> rank_of;
  int rank = 0;
  for (const SweepCandidate* c : RankSweep(o, f.metric))
    rank_of[c->index()] = ++rank;
  out += "  \"layouts\": [";
  bool first = true;
  for (const SweepCandidate& c : o.candidates) {
    const bool ok = c.verdict() == "ok", mem = HasMemory(c);
    auto it = rank_of.find(c.index());
    out += first ? "\n" : ",\n";
    first = false;
    out += "    {\"index\": " + JsonNumber(static_cast<double>(c.index())) +
           ", \"rank\": " +
           (it == rank_of.end() ? "null" : JsonNumber(it->second)) + ", " +
           JsonLayout(c) + ", \"tokens_per_sec_per_gpu\": " +
           (ok ? JsonNumber(c.tokens_per_sec_per_gpu()) : "null") +
           ", \"tflops_per_gpu\": " +
           (ok ? JsonNumber(c.tflops_per_gpu()) : "null") +
           ", \"step_time_s\": " + (ok ? JsonNumber(c.step_time_s()) : "null") +
           ", \"peak_memory_gib\": " +
           (mem ? JsonNumber(c.peak_memory_gib()) : "null") +
           ", \"margin_gib\": " + (mem ? JsonNumber(c.margin_gib()) : "null") +
           ", \"verdict\": " + JsonString(c.verdict()) +
           ", \"reason\": " + JsonString(c.reason()) + "}";
  }
  out += first ? "],\n" : "\n  ],\n";
  out += "  \"pareto\": [";
  first = true;
  for (const ParetoPoint& p : SweepPareto(o, f.metric)) {
    const bool gpus = p.front == "num_gpus";
    out += first ? "\n" : ",\n";
    first = false;
    out += "    {\"front\": " + JsonString(p.front) + ", \"index\": " +
           JsonNumber(static_cast<double>(p.candidate->index())) +
           ", \"metric\": " +
           JsonString(gpus && HigherIsBetter(f.metric)
                          ? (f.metric == "tflops_per_gpu" ? "tflops"
                                                          : "tokens_per_sec")
                          : f.metric) +
           ", \"value\": " + JsonNumber(p.value) +
           ", \"num_gpus\": " + JsonNumber(p.candidate->num_gpus()) +
           ", \"margin_gib\": " + JsonNumber(p.candidate->margin_gib()) + "}";
  }
  out += first ? "]\n" : "\n  ]\n";
  return out + "}\n";
}

std::string FormatSweepCsv(const SweepOutcome& o) {
  std::string out =
      "index,num_gpus,seq_len,tp,cp,ep,etp,pp,vpp,mbs,gbs,recompute,precision,"
      "dispatcher,cpu_offload,cuda_graph,ep_overlap,verdict,reason,"
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
           c.verdict() + "," + CsvCell(c.reason()) + "," +
           (ok ? JsonNumber(c.tokens_per_sec_per_gpu()) : "") + "," +
           (ok ? JsonNumber(c.tflops_per_gpu()) : "") + "," +
           (ok ? JsonNumber(c.step_time_s()) : "") + "," +
           (mem ? JsonNumber(c.peak_memory_gib()) : "") + "," +
           (mem ? JsonNumber(c.margin_gib()) : "") + "\n";
  }
  return out;
}

std::string FormatSweepHtml(const SweepOutcome& o, std::string_view metric) {
  const Varying v = VaryingOf(o);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>moesim sweep: " +
      Escape(o.model) + " on " + Escape(o.system) +
      "</title>\n<style>\n"
      "body{font-family:sans-serif;margin:24px;color:#222}\n"
      "table{border-collapse:collapse;font-size:13px}\n"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
      "td.l{text-align:left}\n"
      ".tick{font-size:12px}.axis{font-size:13px;font-weight:bold}\n"
      ".label{font-size:13px}.note{font-size:12px;fill:#555}\n"
      "</style></head><body>\n";
  out += "<h1>" + Escape(o.model) + " on " + Escape(o.system) + "</h1>\n";
  out += "<p id=\"counts\">" + std::to_string(o.total) +
         " candidates: " + Escape(CountsLine(o)) + "</p>\n";
  out +=
      "<h2>Best " + Escape(std::string(metric)) + " over TP &#215; CP</h2>\n";
  out += Heatmap(o, metric);
  if (v.seq) {
    out += "<h2>Best " + Escape(std::string(metric)) +
           " against sequence length, by CP</h2>\n";
    out += SeqChart(o, metric);
  }
  const std::vector<const SweepCandidate*> ranked = RankSweep(o, metric);
  out +=
      "<h2>Top layouts</h2>\n<table id=\"top\"><tr><th>rank</th>"
      "<th>index</th><th>layout</th><th>tok/s/GPU</th><th>TFLOPS/GPU</th>"
      "<th>step s</th><th>peak GiB</th><th>free GiB</th></tr>\n";
  for (size_t i = 0; i < ranked.size() && i < 20; ++i) {
    const SweepCandidate& c = *ranked[i];
    out += Format(
        "<tr><td>%zu</td><td>%lld</td><td class=\"l\">%s</td><td>%.1f</td>"
        "<td>%.1f</td><td>%.3f</td><td>%.1f</td><td>%.1f</td></tr>\n",
        i + 1, static_cast<long long>(c.index()),
        Escape(LayoutText(c, v)).c_str(), c.tokens_per_sec_per_gpu(),
        c.tflops_per_gpu(), c.step_time_s(), c.peak_memory_gib(),
        c.margin_gib());
  }
  out += "</table>\n</body></html>\n";
  return out;
}

}  // namespace moesim::tools
