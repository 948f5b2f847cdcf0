// Counters without a GPU: the attribution arithmetic, the derived values, the failure reasons, and
// a CounterSession that says why it cannot count instead of crashing.
#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <cupti_result.h>

#include "catch.hpp"
#include "harness/counters.hpp"
#include "harness/device.hpp"

using smr::attribute_counters;
using Values = std::map<std::string, double>;

namespace {

const char* kRead = "dram__bytes_read.sum";
const char* kWrite = "dram__bytes_write.sum";
const char* kSectors = "lts__t_sectors_srcunit_tex.sum";
const char* kL1 = "l1tex__t_bytes.sum";
const char* kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
const char* kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
const char* kXu = "smsp__inst_executed_pipe_xu.sum";
const char* kTime = "gpu__time_duration.sum";

// A fused-like work of n elements (4n read, 4n written, 32-B sectors both ways) followed by an
// eviction that reads E bytes, as the two ranges would report them.
constexpr double n = 1 << 20;
constexpr double E = 240e6;

Values work_plus_eviction() {
  return {{kRead, 4 * n + E},        {kWrite, 4 * n},
          {kSectors, (8 * n + E) / 32}, {kL1, 8 * n + E},
          {kFadd, 3 * n},            {kFmul, n},
          {kFfma, 2 * n},            {kXu, 2 * n / 32},
          {kTime, 70'000 + 60'000}};
}
Values eviction_only() {
  return {{kRead, E}, {kWrite, 0},   {kSectors, E / 32}, {kL1, E},
          {kFadd, 0}, {kFmul, 0},    {kFfma, 0},         {kXu, 0},
          {kTime, 60'000}};
}

}  // namespace

TEST_CASE("default metric set is the issue's nine counters", "[counters]") {
  const auto m = smr::default_counter_metrics();
  REQUIRE(m.size() == 9);
  for (const char* want : {kRead, kWrite, kSectors, kL1, kFadd, kFmul, kFfma, kXu, kTime}) {
    INFO(want);
    CHECK(std::find(m.begin(), m.end(), want) != m.end());
  }
}

TEST_CASE("attribution subtracts what the eviction itself did, and keeps the DRAM writes",
          "[counters]") {
  const smr::Attribution a = attribute_counters(work_plus_eviction(), eviction_only());
  CHECK(a.values.at(kRead) == 4 * n);       // the eviction's reads removed
  CHECK(a.values.at(kWrite) == 4 * n);      // every write in the range is the work's
  CHECK(a.values.at(kSectors) == 8 * n / 32);
  CHECK(a.values.at(kL1) == 8 * n);
  CHECK(a.values.at(kFadd) == 3 * n);
  CHECK(a.values.at(kFfma) == 2 * n);
  CHECK(a.values.at(kTime) == 70'000);
  CHECK(a.notes.empty());

  SECTION("derived values") {
    CHECK(a.values.at(std::string(smr::kDramBytes)) == 8 * n);
    CHECK(a.values.at(std::string(smr::kL1L2Bytes)) == 8 * n);
    CHECK(a.values.at(std::string(smr::kFlopsExecuted)) == 3 * n + n + 2 * 2 * n);
    CHECK(a.values.at(std::string(smr::kXuThreadInst)) == 2 * n);
  }
}

TEST_CASE("dirty lines written back during the eviction count for the work", "[counters]") {
  // The work's last 60 MB of output is still dirty when it ends: the range's writes include it
  // only because the eviction ran inside the range.
  Values range = work_plus_eviction();
  Values evict = eviction_only();
  range[kWrite] = 4 * n;  // all written back inside the range
  evict[kWrite] = 0;
  CHECK(attribute_counters(range, evict).values.at(kWrite) == 4 * n);

  SECTION("an eviction range that writes is reported, not silently subtracted") {
    evict[kWrite] = 0.05 * 4 * n;
    const auto a = attribute_counters(range, evict);
    CHECK(a.values.at(kWrite) == 4 * n);
    REQUIRE(a.notes.size() == 1);
    CHECK(a.notes[0].find(kWrite) != std::string::npos);
  }
  SECTION("background-level writes in the eviction range (tens of KB) are not worth a note") {
    evict[kWrite] = 0.002 * 4 * n;
    CHECK(attribute_counters(range, evict).notes.empty());
  }
}

TEST_CASE("attribution leaves non-additive metrics out and keeps negative noise visible",
          "[counters]") {
  Values range = work_plus_eviction();
  Values evict = eviction_only();
  range["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 80;
  evict["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 90;
  range[kFmul] = 10;
  evict[kFmul] = 12;
  const auto a = attribute_counters(range, evict);
  CHECK(a.values.count("dram__throughput.avg.pct_of_peak_sustained_elapsed") == 0);
  REQUIRE(a.notes.size() == 1);
  CHECK(a.notes[0].find("not additive") != std::string::npos);
  CHECK(a.values.at(kFmul) == -2);  // not clamped to 0
}

TEST_CASE("a metric missing from the eviction range is an error naming it", "[counters]") {
  Values evict = eviction_only();
  evict.erase(kL1);
  try {
    attribute_counters(work_plus_eviction(), evict);
    FAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find(kL1) != std::string::npos);
  }
}

TEST_CASE("derived values appear only when their inputs were measured", "[counters]") {
  Values v{{kRead, 100}, {kSectors, 3}};
  smr::add_derived_counters(v);
  CHECK(v.count(std::string(smr::kDramBytes)) == 0);  // no write count: no total, not a 0
  CHECK(v.at(std::string(smr::kL1L2Bytes)) == 96);
  CHECK(v.count(std::string(smr::kFlopsExecuted)) == 0);
  CHECK(v.count(std::string(smr::kXuThreadInst)) == 0);
}

TEST_CASE("additive and kept-whole metric names", "[counters]") {
  CHECK(smr::counter_is_additive("dram__bytes_read.sum"));
  CHECK(smr::counter_is_additive("gpu__time_duration.sum"));
  CHECK_FALSE(smr::counter_is_additive("gpu__time_duration.max"));
  CHECK_FALSE(smr::counter_is_additive("dram__bytes_read.sum.per_second"));
  CHECK(smr::counter_kept_whole("dram__bytes_write.sum"));
  CHECK_FALSE(smr::counter_kept_whole("dram__bytes_read.sum"));
  CHECK_FALSE(smr::counter_kept_whole("lts__t_sectors_srcunit_tex.sum"));
}

TEST_CASE("unavailable counters say how to fix it", "[counters]") {
  const std::string priv =
      smr::explain_cupti_failure(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiRangeProfilerEnable");
  CHECK(priv.find("cuptiRangeProfilerEnable") != std::string::npos);
  CHECK(priv.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES") != std::string::npos);
  CHECK(priv.find("root") != std::string::npos);
  CHECK(priv.find("NVreg_RestrictProfilingToAdminUsers=0") != std::string::npos);

  const std::string busy =
      smr::explain_cupti_failure(CUPTI_ERROR_HARDWARE_BUSY, "cuptiRangeProfilerEnable");
  CHECK(busy.find("another profiler") != std::string::npos);

  const std::string metric =
      smr::explain_cupti_failure(CUPTI_ERROR_INVALID_METRIC_NAME, "cuptiProfilerHostConfig");
  CHECK(metric.find("counters.metrics") != std::string::npos);
}

TEST_CASE("a CounterSession either counts or says why, and never crashes", "[counters]") {
  smr::CounterSession s({});
  CHECK(s.metrics() == smr::default_counter_metrics());  // empty list: the default set
  CHECK(s.available() == s.unavailable_reason().empty());
  if (!smr::gpu_available()) {
    CHECK_FALSE(s.available());
    CHECK(s.unavailable_reason().find("GPU") != std::string::npos);
    CHECK(s.expected_passes() == 0);
    bool ran = false;
    const smr::CounterReading r = s.measure([&] { ran = true; }, [&] { ran = true; });
    CHECK_FALSE(r.ok);
    CHECK(r.reason == s.unavailable_reason());
    CHECK(r.values.empty());
    CHECK_FALSE(ran);  // nothing is launched on a session that cannot count
  }
}

TEST_CASE("a metric list keeps its order and drops duplicates", "[counters]") {
  smr::CounterSession s({kWrite, kRead, kWrite});
  CHECK(s.metrics() == std::vector<std::string>{kWrite, kRead});
}

TEST_CASE("a metric the chip lacks leaves the set and is named unavailable, never 0", "[counters]") {
  // A made-up chip without DRAM read counters (a GDDR card names them differently, say).
  const auto why_missing = [](const std::string& m) -> std::optional<std::string> {
    if (m == kRead) return std::string("not on chip TU104: no such metric");
    return std::nullopt;
  };
  const smr::MetricSelection sel = smr::select_metrics(smr::default_counter_metrics(), why_missing);
  CHECK(sel.unavailable == std::map<std::string, std::string>{{kRead, "not on chip TU104: no such metric"}});
  CHECK(sel.kept.size() == smr::default_counter_metrics().size() - 1);
  CHECK(std::find(sel.kept.begin(), sel.kept.end(), kRead) == sel.kept.end());
  CHECK(sel.kept.front() == kWrite);  // the order of the rest is kept

  // Measured without it: the derived DRAM bytes need both directions, so they stay absent too.
  Values measured{{kWrite, 1000}};
  smr::add_derived_counters(measured);
  CHECK(measured.count(kRead) == 0);
  CHECK(measured.count(std::string(smr::kDramBytes)) == 0);

  const smr::MetricSelection all = smr::select_metrics({kRead, kWrite}, [](const std::string&) {
    return std::optional<std::string>();
  });
  CHECK(all.unavailable.empty());
  CHECK(all.kept == std::vector<std::string>{kRead, kWrite});
}
