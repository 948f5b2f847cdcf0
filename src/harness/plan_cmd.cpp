// `softmax-bench plan` (plan_cmd.hpp): the dispatch's choice per shape, for a device at hand or not.
#include "harness/plan_cmd.hpp"

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "harness/cli.hpp"
#include "harness/device.hpp"
#include "kernels/device_profiles.hpp"
#include "kernels/production/softmax_dispatch.hpp"

namespace smr {

namespace {

#ifndef SMR_LAB_ONLY
constexpr SoftmaxFamily kFamilies[] = {SoftmaxFamily::warp_rows,    SoftmaxFamily::block_row,
                                       SoftmaxFamily::block_hybrid, SoftmaxFamily::cluster_tile,
                                       SoftmaxFamily::cluster_row,  SoftmaxFamily::split_row};

// "MxN" -> a dense problem of dtype t.
Problem parse_shape(const std::string& s, DType t) {
  const std::size_t x = s.find_first_of("xX");
  std::int64_t M = 0, N = 0;
  std::size_t used_m = 0, used_n = 0;
  try {
    if (x == std::string::npos) throw std::invalid_argument("no x");
    M = std::stoll(s.substr(0, x), &used_m);
    N = std::stoll(s.substr(x + 1), &used_n);
  } catch (const std::exception&) {
    used_m = 0;
  }
  if (x == std::string::npos || used_m != x || used_n != s.size() - x - 1 || M < 1 || N < 1)
    throw std::invalid_argument(
        fmt::format("plan: shape '{}' is not MxN with M, N >= 1 (e.g. 4096x32768)", s));
  return dense(M, N, t);
}

// The device the plans are for: the named profile, else the GPU at hand.
struct PlanDevice {
  std::string name;
  DeviceLimits limits;
};

std::optional<PlanDevice> plan_device(const std::string& profile) {
  if (!profile.empty()) {
    const DeviceProfile* d = find_device_profile(profile);
    if (!d)
      throw std::invalid_argument(fmt::format("--device-profile: unknown profile '{}' (one of: {})",
                                              profile, device_profile_names()));
    return PlanDevice{std::string(d->description), d->limits};
  }
  if (!gpu_available()) return std::nullopt;
  const DeviceInfo info = query_device();
  return PlanDevice{fmt::format("{} (sm_{}{}, {} SMs, the GPU at hand)", info.name, info.cc_major,
                                info.cc_minor, info.sm_count),
                    info.limits()};
}

std::string families_line(const DeviceLimits& d) {
  std::string runs, not_runs;
  for (SoftmaxFamily f : kFamilies) {
    if (std::optional<std::string> why = family_unavailable(f, d))
      not_runs += fmt::format("\n  {}", *why);
    else
      runs += fmt::format("{}{}", runs.empty() ? "" : ", ", to_string(f));
  }
  return fmt::format("production families it runs: {}{}", runs,
                     not_runs.empty() ? std::string() : "; not:" + not_runs);
}

#endif  // SMR_LAB_ONLY

}  // namespace

CLI::App* add_plan_command(CLI::App& app, PlanArgs& a) {
  CLI::App* plan = app.add_subcommand(
      "plan", "Print the production softmax's plan for each shape, on the GPU at hand or a named "
              "device profile; no GPU needed with --device-profile");
  plan->add_option("shapes", a.shapes, "Shapes MxN (e.g. 4096x32768)")->required();
  plan->add_option("--dtype", a.dtypes, "Storage types, comma-separated: fp32, bf16, fp16 "
                                        "(default fp32)")
      ->delimiter(',')
      ->allow_extra_args(false);  // one token, split at commas: the shapes that follow are not types
  plan->add_option("--device-profile", a.device_profile,
                   "Plan for this card instead of the GPU at hand: " + device_profile_names());
  return plan;
}

int cmd_plan(const PlanArgs& a) {
#ifdef SMR_LAB_ONLY
  (void)a;
  std::fprintf(stderr, "softmax-bench: plan shows the production softmax's choice, which a lab build "
                       "leaves out; cmake --preset release builds it\n");
  return exit_code::bad_input;
#else
  std::vector<DType> types;
  for (const std::string& s : a.dtypes) {
    const std::optional<DType> t = parse_dtype(s);
    if (!t)
      throw std::invalid_argument(fmt::format("--dtype: unknown type '{}' (fp32, bf16, fp16)", s));
    types.push_back(*t);
  }
  std::vector<Problem> problems;
  for (DType t : types)
    for (const std::string& s : a.shapes) problems.push_back(parse_shape(s, t));
  const std::optional<PlanDevice> dev = plan_device(a.device_profile);
  if (!dev) {
    std::fprintf(stderr, "softmax-bench: plan needs a GPU or --device-profile NAME (one of: %s)\n",
                 device_profile_names().c_str());
    return exit_code::needs_gpu;
  }
  std::printf("%s\n%s\n", dev->name.c_str(), families_line(dev->limits).c_str());
  for (const Problem& p : problems) {
    std::printf("\n%lld x %lld %s: ", static_cast<long long>(p.M), static_cast<long long>(p.N),
                std::string(to_string(p.dtype)).c_str());
    if (std::optional<std::string> why = softmax_unsupported(p, dev->limits)) {
      std::printf("not supported\n  %s\n", why->c_str());
      continue;
    }
    const SoftmaxPlan plan = plan_softmax(p, dev->limits, dev->limits.max_cluster);
    std::printf("%s\n  %s\n", summary(plan).c_str(), plan.why.c_str());
  }
  return exit_code::ok;
#endif
}

std::string device_families_text() {
#ifdef SMR_LAB_ONLY
  return "";  // the families are the production softmax's: not in a lab build
#else
  if (!gpu_available()) return "";
  const DeviceInfo info = query_device();
  return fmt::format("The GPU at hand: {} (sm_{}{}, {} SMs); {}\n", info.name, info.cc_major,
                     info.cc_minor, info.sm_count, families_line(info.limits()));
#endif
}

}  // namespace smr
