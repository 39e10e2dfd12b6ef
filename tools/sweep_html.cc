// The HTML form of a sweep (FormatSweepHtml): inline SVG, no script.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tools/sweep_format.h"
#include "tools/sweep_format_internal.h"
#include "tools/text_format.h"

namespace moesim::tools {
namespace {

using namespace sweep_internal;

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                    "#bcbd22", "#17becf"};

std::string SeqChart(const studies::SweepOutcome& o, std::string_view metric) {
  const bool higher = studies::HigherIsBetter(metric);
  std::set<int> seqs;
  std::map<int, std::map<int, double>> by_cp;  // cp -> seq -> best
  for (const studies::SweepCandidate& c : o.candidates) {
    seqs.insert(c.seq_len());
    if (c.verdict() != "ok") continue;
    const double v = studies::MetricOf(c, metric);
    auto& best = by_cp[std::max(c.cp(), 1)];
    auto it = best.find(c.seq_len());
    if (it == best.end() || studies::Better(v, it->second, higher))
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

std::string FormatSweepHtml(const studies::SweepOutcome& o,
                            std::string_view metric) {
  const studies::Varying v = studies::VaryingOf(o);
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
  const std::vector<const studies::SweepCandidate*> ranked =
      studies::RankSweep(o, metric);
  out +=
      "<h2>Top layouts</h2>\n<table id=\"top\"><tr><th>rank</th>"
      "<th>index</th><th>layout</th><th>tok/s/GPU</th><th>TFLOPS/GPU</th>"
      "<th>step s</th><th>peak GiB</th><th>free GiB</th></tr>\n";
  for (size_t i = 0; i < ranked.size() && i < 20; ++i) {
    const studies::SweepCandidate& c = *ranked[i];
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
