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

std::string Short(std::string_view metric) {
  if (metric == "tokens_per_sec_per_gpu") return "tok/s/GPU";
  if (metric == "tflops_per_gpu") return "TFLOPS/GPU";
  return "step s";
}

// 0 (unset, left to the default) prints as '-'.
std::string IntCell(int v) { return v ? std::to_string(v) : "-"; }

// "TP4 CP4 EP32 ETP1 PP4 VPP12" plus the knobs that vary.
std::string LayoutText(const studies::SweepCandidate& c,
                       const studies::Varying& v) {
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

std::map<std::string, int> Counts(const studies::SweepOutcome& o) {
  std::map<std::string, int> counts;
  for (const char* v : kVerdicts) counts[v] = 0;
  for (const studies::SweepCandidate& c : o.candidates) ++counts[c.verdict()];
  return counts;
}

std::string CountsLine(const studies::SweepOutcome& o) {
  const std::map<std::string, int> counts = Counts(o);
  std::string s;
  for (const char* v : kVerdicts) {
    s += (s.empty() ? "" : ", ") + std::to_string(counts.at(v)) + " " + v;
  }
  return s;
}

bool HasMemory(const studies::SweepCandidate& c) {
  return c.verdict() == "ok" || c.verdict() == "oom" ||
         (c.verdict() == "failed" && c.peak_memory_gib() > 0);
}

}  // namespace sweep_internal

namespace {

using namespace sweep_internal;

// Invalid and excluded candidates grouped by the field (or constraint)
// their reason names, most frequent first.
std::vector<std::pair<std::string, int>> ReasonGroups(
    const studies::SweepOutcome& o, std::string_view verdict) {
  std::map<std::string, int> groups;
  for (const studies::SweepCandidate& c : o.candidates) {
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

std::string Table(const std::vector<const studies::SweepCandidate*>& rows,
                  std::string_view metric, const studies::Varying& v,
                  bool ranked) {
  std::string out = Format(
      "%s %6s  %-44s %11s %9s %9s %9s %9s\n", ranked ? "rank" : "    ", "index",
      "layout", "tok/s/GPU", "TFLOPS", "step s", "peak GiB", "free GiB");
  (void)metric;
  int rank = 0;
  for (const studies::SweepCandidate* c : rows) {
    ++rank;
    out += Format("%4s %6lld  %-44s %11.1f %9.1f %9.3f %9.1f %9.1f\n",
                  ranked ? std::to_string(rank).c_str() : "",
                  static_cast<long long>(c->index()), LayoutText(*c, v).c_str(),
                  c->tokens_per_sec_per_gpu(), c->tflops_per_gpu(),
                  c->step_time_s(), c->peak_memory_gib(), c->margin_gib());
  }
  return out;
}

}  // namespace

std::string FormatSweepText(const studies::SweepOutcome& o,
                            const SweepOutputFlags& f) {
  const studies::Varying v = studies::VaryingOf(o);
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
  const std::vector<const studies::SweepCandidate*> ranked =
      studies::RankSweep(o, f.metric);
  if (ranked.empty()) {
    out += "\nno candidate fits and runs";
    const studies::SweepCandidate* closest = nullptr;
    for (const studies::SweepCandidate& c : o.candidates) {
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
  std::vector<const studies::SweepCandidate*> top(
      ranked.begin(), ranked.begin() + std::min<size_t>(ranked.size(), f.top));
  out += "\ntop " + std::to_string(top.size()) + " by " + f.metric + "\n";
  out += Table(top, f.metric, v, true);

  std::vector<studies::ParetoPoint> pareto = studies::SweepPareto(o, f.metric);
  for (const char* front : {"memory_headroom", "num_gpus"}) {
    std::vector<const studies::SweepCandidate*> rows;
    for (const studies::ParetoPoint& p : pareto)
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
    std::map<int, const studies::SweepCandidate*> best;
    std::map<int, const studies::SweepCandidate*> closest;
    for (const studies::SweepCandidate* c : ranked) {
      if (!best.count(c->seq_len())) best[c->seq_len()] = c;
    }
    for (const studies::SweepCandidate& c : o.candidates) {
      if (c.verdict() == "oom" &&
          (!closest.count(c.seq_len()) ||
           c.margin_gib() > closest[c.seq_len()]->margin_gib()))
        closest[c.seq_len()] = &c;
    }
    std::set<int> seqs;
    for (const studies::SweepCandidate& c : o.candidates)
      seqs.insert(c.seq_len());
    for (int seq : seqs) {
      if (auto it = best.find(seq); it != best.end()) {
        const studies::SweepCandidate& c = *it->second;
        // The seeds' rule of thumb: CP ~ seq_len / 4096.
        out += Format("  %7d  %-50s %11.1f %s  (seq/4096 = %g)\n", seq,
                      LayoutText(c, v).c_str(), studies::MetricOf(c, f.metric),
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

}  // namespace moesim::tools
