// A run's directory and its continuation: a fresh directory per run, and with --resume the saved
// results.json read back, its ceilings reused on the same device, the records already done left
// alone, and the command that continues a stopped run.
#include <ctime>

#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"

namespace smr {

namespace fs = std::filesystem;

fs::path fresh_run_dir(const fs::path& parent, const std::string& name) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  const std::string base = (name.empty() ? std::string("run") : name) + "-" + stamp;
  fs::path dir = parent / base;
  for (int i = 2; fs::exists(dir); ++i) dir = parent / fmt::format("{}-{}", base, i);
  return dir;
}

}  // namespace smr

namespace smr::detail {

using json = nlohmann::json;

bool start_run(Context& ctx) {
  const SweepOptions& opt = ctx.opt;
  RunResults& run = ctx.run;
  bool reuse_ceilings = false;
  if (opt.resume) {
    run = read_results(ctx.results_file);
    reuse_ceilings = run.ceilings.source == "measured" && run.device.is_object() &&
                     run.device.value("name", "") == ctx.device.name;
  }
  run.tool_version = SMR_VERSION;
  if (run.created.empty()) run.created = utc_now_iso8601();
  run.command = opt.command;
  run.config = ctx.cfg.normalized;
  run.complete = false;
  json device = ctx.device.to_json();
  if (reuse_ceilings && run.device.contains("ceiling_measurements"))
    device["ceiling_measurements"] = run.device["ceiling_measurements"];
  run.device = device;
  return reuse_ceilings;
}

std::map<std::string, std::string> saved_statuses(const RunResults& run) {
  std::map<std::string, std::string> have;
  for (const Record& r : run.records) have[r.key()] = r.status;
  return have;
}

int records_done(const std::vector<Problem>& problems, const std::vector<std::string>& kernels,
                 const std::map<std::string, std::string>& saved) {
  int already = 0;
  for (const Problem& p : problems)
    for (const auto& name : kernels) {
      Record probe;
      probe.kernel = name;
      probe.dtype = p.dtype;
      probe.M = p.M;
      probe.N = p.N;
      probe.ld_x = p.ld_x;
      probe.ld_y = p.ld_y;
      auto it = saved.find(probe.key());
      if (it != saved.end() && it->second != "failed") ++already;
    }
  return already;
}

std::string resume_hint(const std::string& why, int done, int total, const Context& ctx) {
  return fmt::format(
      "{}; {} of {} records saved in {}\ncontinue with: softmax-bench run {}--resume {}", why, done,
      total, ctx.results_file.string(),
      ctx.opt.config_arg.empty() ? std::string() : ctx.opt.config_arg + " ", ctx.opt.dir.string());
}

}  // namespace smr::detail
