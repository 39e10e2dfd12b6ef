// The TP x CP heatmap of a sweep's HTML report (FormatSweepHtml).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "tools/sweep_format.h"
#include "tools/sweep_format_internal.h"
#include "tools/text_format.h"

namespace moesim::tools::sweep_internal {

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

namespace {

// White (0) to dark blue (1).
std::string Shade(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const int r = static_cast<int>(std::lround(235 - 205 * t));
  const int g = static_cast<int>(std::lround(245 - 165 * t));
  const int b = static_cast<int>(std::lround(255 - 95 * t));
  return Format("#%02x%02x%02x", r, g, b);
}

}  // namespace

std::string Heatmap(const studies::SweepOutcome& o, std::string_view metric) {
  const bool higher = studies::HigherIsBetter(metric);
  std::set<int> tps, cps;
  struct Cell {
    const studies::SweepCandidate* best = nullptr;
    bool oom = false;
    double least_deficit = 0;
    std::map<std::string, int> reasons;
  };
  std::map<std::pair<int, int>, Cell> cells;
  for (const studies::SweepCandidate& c : o.candidates) {
    const int tp = std::max(c.tp(), 1), cp = std::max(c.cp(), 1);
    tps.insert(tp);
    cps.insert(cp);
    Cell& cell = cells[{tp, cp}];
    if (c.verdict() == "ok") {
      if (!cell.best ||
          studies::Better(studies::MetricOf(c, metric),
                          studies::MetricOf(*cell.best, metric), higher))
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
    const double v = studies::MetricOf(*cell.best, metric);
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
        const double v = studies::MetricOf(*cell.best, metric);
        cls = "cell ok";
        fill = Shade(
            hi > lo ? (higher ? (v - lo) / (hi - lo) : (hi - v) / (hi - lo))
                    : 1.0);
        label = Format("%.4g", v);
        title = Format("#%lld ", static_cast<long long>(cell.best->index())) +
                LayoutText(*cell.best, studies::VaryingOf(o)) +
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

}  // namespace moesim::tools::sweep_internal
