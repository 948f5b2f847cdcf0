// The sweep's memory plan (sweep_plan.hpp).
#include "harness/sweep_plan.hpp"

#include <limits>

#include <fmt/format.h>

namespace smr {

namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;
// cuDNN's workspace, CUPTI's images and the driver's own allocations.
constexpr std::int64_t kBaseMarginBytes = 256 * kMiB;
constexpr std::int64_t kFlusherL2Multiple = 1;   // harness/timing.hpp's L2Flusher
constexpr std::int64_t kEvictorL2Multiple = 4;   // harness/counters.hpp's L2Evictor
constexpr std::int64_t kIntermediateBytes = 4;   // the unfused pipeline keeps exp(x - max) in fp32
constexpr std::int64_t kNoFit = std::numeric_limits<std::int64_t>::max();

std::int64_t mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kNoFit : r;
}
std::int64_t add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kNoFit : r;
}

std::string gb_text(std::int64_t bytes) {
  return bytes == kNoFit ? std::string("more than 2^63 bytes")
                         : fmt::format("{:.2f} GB", static_cast<double>(bytes) / 1e9);
}

}  // namespace

MemoryBudget assumed_memory(const DeviceLimits& d, std::string_view card) {
  MemoryBudget m;
  m.free_bytes = m.total_bytes = static_cast<std::int64_t>(d.global_bytes);
  m.l2_bytes = static_cast<std::int64_t>(d.l2_bytes);
  m.source = fmt::format("assumed: {}'s {} and {:.0f} MiB L2 (no device asked)", card,
                         gb_text(m.total_bytes), static_cast<double>(m.l2_bytes) / (1 << 20));
  return m;
}

std::int64_t shape_bytes(const Problem& p) {
  const std::int64_t bytes = dtype_bytes(p.dtype);
  const std::int64_t x = mul(mul(p.M, p.ld_x), bytes), y = mul(mul(p.M, p.ld_y), bytes);
  const std::int64_t intermediate = mul(mul(p.M, p.N), kIntermediateBytes);
  return add(add(x, y), intermediate);
}

std::int64_t plan_margin_bytes(const MemoryBudget& m) {
  return add(kBaseMarginBytes, mul(m.l2_bytes, kFlusherL2Multiple + kEvictorL2Multiple));
}

std::vector<PlannedShape> plan_shapes(const std::vector<Problem>& problems,
                                      const std::vector<bool>& shrinkable, const MemoryBudget& m) {
  const std::int64_t margin = plan_margin_bytes(m);
  const std::int64_t room = m.free_bytes > margin ? m.free_bytes - margin : 0;
  std::vector<PlannedShape> out;
  out.reserve(problems.size());
  for (std::size_t i = 0; i < problems.size(); ++i) {
    PlannedShape s;
    s.problem = problems[i];
    s.requested_M = problems[i].M;
    s.bytes = shape_bytes(s.problem);
    const bool may_shrink = i < shrinkable.size() && shrinkable[i];
    while (may_shrink && s.bytes > room && s.problem.M > 1) {
      s.problem.M /= 2;
      s.bytes = shape_bytes(s.problem);
    }
    if (s.bytes > room) {
      s.problem.M = s.requested_M;
      s.bytes = shape_bytes(s.problem);
      s.skip_reason = fmt::format(
          "needs {} (x, y and the unfused intermediate, plus {} kept free), the device has {} free",
          gb_text(s.bytes), gb_text(margin), gb_text(m.free_bytes));
    }
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::json plan_json(const std::vector<PlannedShape>& plan, const MemoryBudget& m) {
  nlohmann::json scaled = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const PlannedShape& s : plan) {
    nlohmann::json j = {{"dtype", std::string(to_string(s.problem.dtype))},
                        {"M", s.requested_M},
                        {"N", s.problem.N},
                        {"bytes", s.bytes}};
    if (s.skipped()) {
      j["reason"] = s.skip_reason;
      skipped.push_back(std::move(j));
    } else if (s.scaled()) {
      j["scaled_M"] = s.problem.M;
      scaled.push_back(std::move(j));
    }
  }
  return {{"source", m.source},
          {"free_bytes", m.free_bytes},
          {"total_bytes", m.total_bytes},
          {"margin_bytes", plan_margin_bytes(m)},
          {"scaled", std::move(scaled)},
          {"skipped", std::move(skipped)}};
}

}  // namespace smr
