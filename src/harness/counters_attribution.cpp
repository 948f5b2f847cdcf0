// Counter attribution, without a GPU: the default metric set, the work range minus the eviction
// range for every additive counter (counters.hpp's file comment says why), and the values derived
// from the raw metrics (bytes, FLOPs). Pure functions: tests/harness/test_counters.cpp runs them
// on made-up numbers.
#include "harness/counters.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/metrics.hpp"
#include "roofline/model.hpp"

namespace smr {

// ---- Metric set and pure attribution -----------------------------------------------------------

std::vector<std::string> default_counter_metrics() {
  return {
      std::string(metric::kDramRead),       std::string(metric::kDramWrite),
      std::string(metric::kL2SectorsFromL1), std::string(metric::kL1Bytes),
      std::string(metric::kFaddThreadInst), std::string(metric::kFmulThreadInst),
      std::string(metric::kFfmaThreadInst), std::string(metric::kXuWarpInst),
      std::string(metric::kGpuTime),
  };
}

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

constexpr double kLanesPerWarp = 32;
// The eviction range may write this fraction of what the work range wrote before it is worth a
// note: a read-only eviction writes nothing of its own, so more than the background (20-60 KB per
// range on the H200) is the work's dirty lines that outlived one eviction, or an eviction that
// writes. 1%: half the project's tightest DRAM-bytes target.
constexpr double kEvictionWriteNoteFraction = 0.01;

}  // namespace

bool counter_is_additive(std::string_view metric) { return ends_with(metric, ".sum"); }

bool counter_kept_whole(std::string_view name) {
  // Every statistic of the DRAM writes: the metric's name up to its first '.'.
  constexpr std::string_view kDramWrites =
      metric::kDramWrite.substr(0, metric::kDramWrite.find('.') + 1);
  return starts_with(name, kDramWrites);
}

Attribution attribute_counters(const std::map<std::string, double>& range_with_eviction,
                               const std::map<std::string, double>& eviction_alone) {
  Attribution out;
  for (const auto& [name, value] : range_with_eviction) {
    if (!counter_is_additive(name)) {
      out.notes.push_back(fmt::format(
          "{} is not additive (not a .sum): reported only as measured over work + eviction, in "
          "range_values",
          name));
      continue;
    }
    if (counter_kept_whole(name)) {
      out.values[name] = value;
      const auto e = eviction_alone.find(name);
      const bool worth_a_note = e != eviction_alone.end() &&
                                e->second > kEvictionWriteNoteFraction * std::max(value, 1.0);
      if (worth_a_note)
        out.notes.push_back(fmt::format(
            "the eviction range alone had {} = {:.0f} (work range: {:.0f}): either the eviction "
            "writes, or some of the work's dirty lines outlived one eviction (use a larger "
            "eviction buffer); {} may be off by that much",
            name, e->second, value, name));
      continue;
    }
    const auto e = eviction_alone.find(name);
    if (e == eviction_alone.end())
      throw std::invalid_argument(
          fmt::format("attribute_counters: {} measured in the work range but not in the eviction "
                      "range",
                      name));
    out.values[name] = value - e->second;
  }
  add_derived_counters(out.values);
  return out;
}

MetricSelection select_metrics(
    const std::vector<std::string>& wanted,
    const std::function<std::optional<std::string>(const std::string&)>& why_missing) {
  MetricSelection out;
  for (const std::string& m : wanted) {
    if (std::optional<std::string> why = why_missing(m))
      out.unavailable[m] = std::move(*why);
    else
      out.kept.push_back(m);
  }
  return out;
}

void add_derived_counters(std::map<std::string, double>& v) {
  const auto has = [&](std::string_view k) { return v.count(std::string(k)) != 0; };
  const auto at = [&](std::string_view k) { return v.at(std::string(k)); };
  if (has(metric::kDramRead) && has(metric::kDramWrite))
    v[std::string(kDramBytes)] = at(metric::kDramRead) + at(metric::kDramWrite);
  if (has(metric::kL2SectorsFromL1))
    v[std::string(kL1L2Bytes)] = at(metric::kL2SectorsFromL1) * kSectorBytes;  // 32 B
  const auto fadd = metric::kFaddThreadInst, fmul = metric::kFmulThreadInst,
             ffma = metric::kFfmaThreadInst;
  // Nsight Compute's roofline convention: an FFMA is two FLOPs.
  if (has(fadd) && has(fmul) && has(ffma))
    v[std::string(kFlopsExecuted)] = at(fadd) + at(fmul) + 2 * at(ffma);
  // Warp-level count x 32: exact when every lane of each warp is active, an upper bound otherwise.
  if (has(metric::kXuWarpInst))
    v[std::string(kXuThreadInst)] = at(metric::kXuWarpInst) * kLanesPerWarp;
}

}  // namespace smr
