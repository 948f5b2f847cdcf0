// The `softmax-bench` command line. Every subcommand validates all of its input (config, flags,
// files) before anything touches the GPU: bad input is exit code 2 on any machine, with one line
// on stderr, and nothing is written. docs/cli.md is the user's reference.
#include "harness/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/config.hpp"
#include "harness/device.hpp"
#include "harness/plan_cmd.hpp"
#include "harness/storage.hpp"
#include "harness/sweep.hpp"
#include "harness/sweep_plan.hpp"
#include "kernels/device_profiles.hpp"
#include "kernels/lab/lab_build.hpp"
#include "kernels/registry.hpp"
#include "roofline/claims.hpp"
#include "roofline/model.hpp"
#include "roofline/report.hpp"
#include "roofline/results.hpp"

namespace smr {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kProgram = "softmax-bench";

// Input the user must fix: printed as one line, exit code 2.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

void print_error(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", kProgram, one_line(message).c_str());
}

std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = i == 0 ? std::string(kProgram) : std::string(argv[i]);
    const bool quote = a.find_first_of(" \t\"'") != std::string::npos || a.empty();
    if (i) out += ' ';
    out += quote ? "'" + a + "'" : a;
  }
  return out;
}

// The config named on the command line, or the embedded default. ConfigError's message is the
// one line "FILE:LINE:COL: KEY: MESSAGE", printed as it is.
SweepConfig load_config(const std::string& arg) {
  return arg.empty() ? default_config() : load_config_file(arg);
}

// --kernels a,b: registry names, run in place of the config's list (in the order given).
void apply_kernel_filter(SweepConfig& cfg, const std::vector<std::string>& names) {
  if (names.empty()) return;
  std::vector<std::string> picked;
  for (const auto& n : names) {
    if (!find_kernel(n))
      throw BadInput(fmt::format("--kernels: unknown kernel '{}' (`{} list` shows the names){}", n,
                                 kProgram, lab_build_hint(n)));
    if (std::find(picked.begin(), picked.end(), n) == picked.end()) picked.push_back(n);
  }
  cfg.kernels = picked;
  if (cfg.normalized.is_object()) cfg.normalized["kernels"] = picked;
}

// The kernels scripts/peers.py times (its PEERS): their records are merged into a run.
const std::vector<std::string> kPeerKernels{"torch.softmax", "triton.fused"};

// Every record names a registry kernel (of this build or of a lab build) or a peer: anything else
// is a file that was edited or made by something else, and would get a report section of its own.
void check_record_kernels(const RunResults& run, const fs::path& file) {
  const auto lab = lab_build_kernel_names();
  for (std::size_t i = 0; i < run.records.size(); ++i) {
    const Record& r = run.records[i];
    if (find_kernel(r.kernel) ||
        std::find(kPeerKernels.begin(), kPeerKernels.end(), r.kernel) != kPeerKernels.end() ||
        std::find(lab.begin(), lab.end(), r.kernel) != lab.end())
      continue;
    throw BadInput(fmt::format("{}: records[{}] ({}): unknown kernel '{}' (`{} list` shows the "
                               "registry's names; peers are {} and {})",
                               file.string(), i, r.key(), r.kernel, kProgram, kPeerKernels[0],
                               kPeerKernels[1]));
  }
}

// Every results document the user names -- report's RESULTS.json, --resume DIR's, --ceilings
// FILE, --peers FILE -- is read here and checked whole: read_input_file's checks (what the path
// is, its size), the reader's (schema, types, M, N and strides), then the kernel names. `flag`
// starts the message when the file came from an option. Every message names the file, and the
// key (records[3].M) where one is at fault.
RunResults read_results_or_bad_input(const fs::path& file, const std::string& flag = "") {
  RunResults run;
  try {
    run = read_results(file);
  } catch (const std::exception& e) {
    throw BadInput((flag.empty() ? "" : flag + " ") + e.what());
  }
  check_record_kernels(run, file);
  return run;
}

std::vector<Record> peers_or_bad_input(const std::string& file) {
  if (file.empty()) return {};
  return read_results_or_bad_input(file, "--peers").records;
}

// --out DIR of `run` and `model`: a new or empty directory, or an existing one with --force.
void check_out_dir(const fs::path& dir, bool force, const std::string& hint) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw BadInput(fmt::format("--out {}: a file, not a directory", dir.string()));
  if (fs::is_directory(st) && !fs::is_empty(dir, ec) && !force)
    throw BadInput(fmt::format("--out {}: exists already and is not empty; {}", dir.string(), hint));
}

int needs_gpu(const std::string& subcommand) {
  print_error(fmt::format("`{}` needs a CUDA GPU and none was found; `{} model [CONFIG]` shows the "
                          "analytic model of a sweep without one",
                          subcommand, kProgram));
  return exit_code::needs_gpu;
}

// ---- verify-settings --------------------------------------------------------------------

// The verification a config's records get, as JSON on stdout: the config's tolerance and, for each
// storage type, the tolerance and absolute floor of |y - ref| / max(|ref|, floor). scripts/peers.py
// asks for it, so that its peers are judged as the harness judges its own kernels.
int cmd_verify_settings(const std::string& config) {
  const SweepConfig cfg = load_config(config);
  json dtypes = json::object();
  for (const DType t : {DType::f32, DType::bf16, DType::f16})
    dtypes[std::string(to_string(t))] = {{"tolerance", verification_tolerance(t, cfg.tolerance)},
                                         {"absolute_floor", storage_absolute_floor(t)}};
  const json out = {{"config", cfg.source},
                    {"tolerance", cfg.tolerance},
                    {"default_tolerance", kDefaultTolerance},
                    {"seed", cfg.seed},
                    {"dtypes", dtypes}};
  std::printf("%s\n", out.dump(2).c_str());
  return exit_code::ok;
}

// ---- model ------------------------------------------------------------------------------

struct ModelRow {
  const KernelInfo* kernel;
  Problem p;
  std::optional<std::string> not_applicable;
  ModelPoint point;
};

// A ratio against a kernel that does not apply to the shape.
constexpr const char* kNotApplicable = "n/a";

std::string num(double v, const char* spec) {
  if (!std::isfinite(v)) return "-";
  return fmt::format(fmt::runtime(spec), v);
}

// One registry kernel at one shape on a device with these limits: whether it applies, and its
// model point.
ModelRow model_row(const KernelInfo& k, const Problem& p, const Ceilings& c,
                   const DeviceLimits& limits) {
  ModelRow row{&k, p, why_unsupported(k, p, limits), {}};
  const std::int64_t rif = k.rows_in_flight ? k.rows_in_flight(p, limits) : 0;
  row.point = predict(traffic_model(k, p, limits), p, c, rif);
  return row;
}

std::vector<ModelRow> model_rows(const SweepConfig& cfg, const Ceilings& c,
                                 const DeviceLimits& limits) {
  std::vector<ModelRow> rows;
  for (const Problem& p : cfg.problems)
    for (const auto& name : cfg.kernels)
      if (const KernelInfo* k = find_kernel(name)) rows.push_back(model_row(*k, p, c, limits));
  return rows;
}

std::string ceilings_line(const Ceilings& c) {
  return fmt::format("{} ceilings ({}): DRAM {:.0f} GB/s, FP32 {:.0f} GFLOP/s, L2 {} MiB{}", c.source,
                     c.device, c.dram_GBps, c.fp32_GFLOPs, c.l2_bytes >> 20,
                     c.l2_GBps > 0 ? fmt::format(", L2 {:.0f} GB/s", c.l2_GBps) : std::string());
}

// The text table (stdout) and the markdown table (model.md) share their cells.
std::vector<std::string> model_cells(const ModelRow& r) {
  const ModelPoint& m = r.point;
  std::vector<std::string> cells{r.kernel->name, std::string(to_string(r.p.dtype)),
                                 std::to_string(r.p.M), std::to_string(r.p.N)};
  if (r.not_applicable) {
    for (int i = 0; i < 6; ++i) cells.emplace_back("-");
    cells.push_back("does not apply: " + *r.not_applicable);
    return cells;
  }
  cells.push_back(num(m.dram_bytes / 1e6, "{:.1f}"));
  cells.push_back(num(m.flops / 1e9, "{:.3f}"));
  cells.push_back(num(m.intensity, "{:.3f}"));
  cells.push_back(num(m.bound_time_s * 1e6, "{:.1f}"));
  cells.push_back(num(m.bound_GBps, "{:.0f}"));
  cells.push_back(m.bound);
  cells.push_back(m.note);
  return cells;
}

const std::vector<std::string> kModelHeader{
    "kernel", "dtype", "M", "N", "DRAM MB", "GFLOP", "FLOP/B", "bound us", "GB/s", "bound", "note"};
const std::vector<std::string> kNumericColumns{"M",      "N",        "DRAM MB", "GFLOP",
                                               "FLOP/B", "bound us", "GB/s"};

// What the unfused pipeline's DRAM traffic is held against, per shape: the fused lab kernel (one
// tile, so only up to its cap), the online kernel (any N) and the production dispatch (any N).
// Where one of them (or unfused) does not apply to the shape the ratio is not given: "n/a" in the tables,
// `applies: false` and `ratio: null` in model.json.
const std::vector<std::string> kRatioAgainst{"fused", "online", "softmax"};

struct RatioCell {
  std::string kernel;
  std::optional<std::string> not_applicable;
  double ratio;
};

struct RatioRow {
  Problem p;
  std::vector<RatioCell> against;
};

std::vector<RatioRow> ratio_rows(const SweepConfig& cfg, const Ceilings& c,
                                 const DeviceLimits& limits) {
  std::vector<RatioRow> out;
  const KernelInfo* unfused = find_kernel("unfused");
  if (!unfused) return out;
  for (const Problem& p : cfg.problems) {
    RatioRow row{p, {}};
    const ModelRow u = model_row(*unfused, p, c, limits);
    for (const auto& name : kRatioAgainst)
      if (const KernelInfo* k = find_kernel(name)) {
        const ModelRow m = model_row(*k, p, c, limits);
        std::optional<std::string> na = m.not_applicable;
        if (u.not_applicable) na = "unfused does not apply: " + *u.not_applicable;
        row.against.push_back({name, na, u.point.dram_bytes / m.point.dram_bytes});
      }
    out.push_back(std::move(row));
  }
  return out;
}

// Columns whose header is in `numeric` are right-aligned; the last `free_last` columns are not
// padded (long notes).
std::string text_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, std::size_t free_last,
                       const std::vector<std::string>& numeric = {}) {
  std::vector<std::size_t> w(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) w[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i + free_last < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  const auto right = [&](std::size_t i) {
    return std::find(numeric.begin(), numeric.end(), header[i]) != numeric.end();
  };
  const auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i) s += "  ";
      if (i + free_last >= r.size()) s += r[i];
      else s += right(i) ? fmt::format("{:>{}}", r[i], w[i]) : fmt::format("{:<{}}", r[i], w[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
  const auto line = [](const std::vector<std::string>& r) {
    std::string s = "|";
    for (const auto& c : r) s += " " + c + " |";
    return s + "\n";
  };
  std::string out = line(header);
  out += "|";
  for (std::size_t i = 0; i < header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

// 2: traffic_ratio holds `unfused_over`, one entry per kernel with `applies` (version 1 had one
// `unfused_over_fused` number, given also where the fused kernel does not apply).
constexpr int kModelSchemaVersion = 2;

json model_json(const SweepConfig& cfg, const Ceilings& c, const std::vector<ModelRow>& rows,
                const std::vector<RatioRow>& ratios) {
  // The ceilings and model points are serialised by the results writer, so that model.json and
  // results.json spell every field the same way.
  RunResults shell;
  shell.ceilings = c;
  for (const auto& r : rows) {
    Record rec;
    rec.kernel = r.kernel->name;
    rec.dtype = r.p.dtype;
    rec.M = r.p.M;
    rec.N = r.p.N;
    rec.ld_x = r.p.ld_x;
    rec.ld_y = r.p.ld_y;
    rec.model = r.point;
    shell.records.push_back(rec);
  }
  const json written = to_json(shell);
  json j;
  j["schema"] = "softmax-roofline/model";
  j["schema_version"] = kModelSchemaVersion;
  j["tool_version"] = SMR_VERSION;
  j["config"] = cfg.normalized;
  j["ceilings"] = written.at("ceilings");
  j["points"] = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ModelRow& r = rows[i];
    json pt = {{"kernel", r.kernel->name},   {"dtype", std::string(to_string(r.p.dtype))},
               {"M", r.p.M},                 {"N", r.p.N},
               {"ld_x", r.p.ld_x},           {"ld_y", r.p.ld_y},
               {"applies", !r.not_applicable}, {"model", written.at("records").at(i).at("model")}};
    if (r.not_applicable) pt["reason"] = *r.not_applicable;
    j["points"].push_back(std::move(pt));
  }
  j["traffic_ratio"] = json::array();
  for (const auto& r : ratios) {
    json against = json::array();
    for (const RatioCell& cell : r.against) {
      json a = {{"kernel", cell.kernel},
                {"applies", !cell.not_applicable},
                {"ratio", cell.not_applicable || !std::isfinite(cell.ratio) ? json(nullptr)
                                                                           : json(cell.ratio)}};
      if (cell.not_applicable) a["reason"] = *cell.not_applicable;
      against.push_back(std::move(a));
    }
    j["traffic_ratio"].push_back({{"dtype", std::string(to_string(r.p.dtype))},
                                  {"M", r.p.M},
                                  {"N", r.p.N},
                                  {"ld_x", r.p.ld_x},
                                  {"ld_y", r.p.ld_y},
                                  {"unfused_over", std::move(against)}});
  }
  return j;
}

struct ModelArgs {
  std::string config, ceilings, out, device_profile;
  bool print_only = false, force = false;
};

// `model` has no device: the shapes are held against the memory of the card it describes
// (assumed_memory), as `run` holds them against the card: a shape that does not fit is left out,
// one of a sweep.elements budget scaled down, each with a line on stderr.
SweepConfig fitted_to_memory(SweepConfig cfg, const MemoryBudget& m) {
  const std::vector<PlannedShape> plan = plan_shapes(cfg.problems, cfg.shrinkable, m);
  cfg.problems.clear();
  cfg.shrinkable.clear();
  for (const PlannedShape& s : plan) {
    if (s.skipped())
      std::fprintf(stderr, "softmax-bench: %s %lldx%lld left out: %s (memory %s)\n",
                   std::string(to_string(s.problem.dtype)).c_str(),
                   static_cast<long long>(s.problem.M), static_cast<long long>(s.problem.N),
                   s.skip_reason.c_str(), m.source.c_str());
    else
      cfg.problems.push_back(s.problem), cfg.shrinkable.push_back(false);
    if (s.scaled())
      std::fprintf(stderr,
                   "softmax-bench: %s M %lld scaled to %lld at N = %lld to fit (memory %s)\n",
                   std::string(to_string(s.problem.dtype)).c_str(),
                   static_cast<long long>(s.requested_M), static_cast<long long>(s.problem.M),
                   static_cast<long long>(s.problem.N), m.source.c_str());
  }
  return cfg;
}

int cmd_model(const ModelArgs& a) {
  SweepConfig cfg = load_config(a.config);
  // The card the model describes: --device-profile's (its limits, its datasheet ceilings), else
  // the run's whose measured ceilings --ceilings names (the limits it recorded), else the default
  // profile's limits with the H200's datasheet ceilings.
  Ceilings c = datasheet_h200();
  const DeviceProfile* fallback = find_device_profile(kModelDefaultProfile);
  DeviceLimits limits = fallback->limits;
  std::string card = std::string(fallback->description);
  if (!a.ceilings.empty()) {
    const RunResults run = read_results_or_bad_input(a.ceilings, "--ceilings");
    c = run.ceilings;
    try {
      check_ceilings(c);
    } catch (const std::invalid_argument& e) {
      throw BadInput(fmt::format("--ceilings {}: no usable ceilings: {} (a run's results.json "
                                 "holds measured ones; a peers file holds none)",
                                 a.ceilings, e.what()));
    }
    limits = run_device_limits(run, kModelDefaultProfile);
    card = c.device.empty() ? a.ceilings : c.device;
  }
  if (!a.device_profile.empty()) {
    const DeviceProfile* d = find_device_profile(a.device_profile);
    if (!d)
      throw BadInput(fmt::format("--device-profile: unknown profile '{}' (one of: {})",
                                 a.device_profile, device_profile_names()));
    limits = d->limits;
    card = std::string(d->description);
    c.device = card;
    c.dram_GBps = c.peak_dram_GBps = d->limits.dram_GBps;
    c.fp32_GFLOPs = d->fp32_GFLOPs;
  }
  c.l2_bytes = static_cast<std::int64_t>(limits.l2_bytes);
  c.sm_count = limits.sm_count;
  cfg = fitted_to_memory(std::move(cfg), assumed_memory(limits, card));
  if (!a.out.empty())
    check_out_dir(a.out, a.force,
                  "give a new or empty directory, or --force to replace model.json and model.md in it");
  const fs::path dir =
      a.out.empty() ? fresh_run_dir(cfg.output_dir, "model-" + cfg.name) : fs::path(a.out);

  const auto rows = model_rows(cfg, c, limits);
  const auto ratios = ratio_rows(cfg, c, limits);
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) cells.push_back(model_cells(r));
  std::vector<std::vector<std::string>> ratio_cells;
  std::vector<std::string> ratio_header{"dtype", "M", "N"};
  std::vector<std::string> ratio_numeric{"M", "N"};
  if (!ratios.empty())
    for (const RatioCell& cell : ratios.front().against) {
      ratio_header.push_back("unfused/" + cell.kernel);
      ratio_numeric.push_back(ratio_header.back());
    }
  bool any_na = false;
  for (const auto& r : ratios) {
    std::vector<std::string> row{std::string(to_string(r.p.dtype)), std::to_string(r.p.M),
                                 std::to_string(r.p.N)};
    for (const RatioCell& cell : r.against) {
      any_na = any_na || cell.not_applicable.has_value();
      row.push_back(cell.not_applicable ? std::string(kNotApplicable) : num(cell.ratio, "{:.2f}"));
    }
    ratio_cells.push_back(std::move(row));
  }
  const std::string ratio_title =
      "Predicted DRAM traffic, unfused pipeline over each kernel that replaces it (DRAM bytes):";
  const std::string na_note =
      any_na ? fmt::format("{}: a kernel of the ratio does not apply to that shape (the table above "
                           "says why)\n",
                           kNotApplicable)
             : std::string();

  std::string text = fmt::format("Analytic model of sweep '{}' ({}); {}\n\n", cfg.name, cfg.source,
                                 ceilings_line(c));
  text += text_table(kModelHeader, cells, 1, kNumericColumns);
  text += "\n" + ratio_title + "\n";
  text += text_table(ratio_header, ratio_cells, 0, ratio_numeric);
  text += na_note;
  std::fputs(text.c_str(), stdout);

  if (a.print_only) return exit_code::ok;
  std::string md = fmt::format("# Analytic model: {}\n\nConfig: `{}`. {}.\n\n", cfg.name, cfg.source,
                               ceilings_line(c));
  md += "Predicted DRAM bytes, algorithmic FLOPs (3 per element), intensity, and the time and "
        "effective bandwidth (2 x M x N x dtype bytes / time) the roofline allows.\n\n";
  md += md_table(kModelHeader, cells);
  md += "\n## Predicted DRAM traffic, unfused / each kernel that replaces it\n\n";
  md += md_table(ratio_header, ratio_cells);
  if (!na_note.empty()) md += "\n" + na_note;
  fs::create_directories(dir);
  write_file_atomic(dir / "model.json", model_json(cfg, c, rows, ratios).dump(2) + "\n");
  write_file_atomic(dir / "model.md", md);
  std::printf("\nwrote %s and %s\n", (dir / "model.json").string().c_str(),
              (dir / "model.md").string().c_str());
  return exit_code::ok;
}

// ---- list -------------------------------------------------------------------------------

int cmd_list() {
  std::vector<std::vector<std::string>> rows;
  for (const KernelInfo& k : kernels()) {
    std::string dtypes;
    for (DType t : k.dtypes) {
      if (!dtypes.empty()) dtypes += ',';
      dtypes += to_string(t);
    }
    rows.push_back({k.name, std::string(to_string(k.role)), std::string(to_string(k.traffic)),
                    dtypes, k.description});
  }
  std::fputs(text_table({"name", "role", "traffic", "dtypes", "description"}, rows, 1).c_str(),
             stdout);
  std::string all;
  for (const auto& n : default_kernel_names()) {
    if (!all.empty()) all += ", ";
    all += n;
  }
  std::printf("\n`all` in a config means: %s\n", all.c_str());
  for (const std::string_view n : full_build_kernel_names())
    if (!find_kernel(n))
      std::printf("Not in this build: %.*s (a lab build leaves the production kernels out; "
                  "cmake --preset release builds them)\n",
                  static_cast<int>(n.size()), n.data());
  if (const std::string dev = device_families_text(); !dev.empty())
    std::printf("\n%s", dev.c_str());
  return exit_code::ok;
}

// ---- report -----------------------------------------------------------------------------

int cmd_report(const std::string& results, const std::string& peers_file) {
  // A run directory stands for the results.json in it.
  fs::path file = results;
  std::error_code ec;
  if (fs::is_directory(file, ec)) {
    file /= "results.json";
    if (!fs::exists(fs::symlink_status(file, ec)))
      throw BadInput(fmt::format("{}: a directory with no results.json in it; report takes a run's "
                                 "results.json or the run directory that holds it",
                                 results));
  }
  RunResults run = read_results_or_bad_input(file);
  const std::vector<Record> peers = peers_or_bad_input(peers_file);
  const json before = to_json(run);
  const int merged = merge_peers(run, peers);
  remodel_records(run);  // each kernel held to the registry's model of it (cuDNN's measured passes)
  run.claims = evaluate_claims(run);
  if (to_json(run) != before) write_results(file, run);  // peers merged or claims re-evaluated
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  const ReportOutcome out = write_report(run, dir);
  if (merged) std::printf("merged %d peer records from %s into %s\n", merged, peers_file.c_str(),
                          file.string().c_str());
  std::printf("wrote %zu files in %s%s\n", out.written.size(), dir.string().c_str(),
              out.rendered ? " (report.html and plots rendered)" : "");
  if (!out.rendered && !out.render_hint.empty())
    std::printf("not rendered: %s\n", out.render_hint.c_str());
  return exit_code::ok;
}

// ---- ceilings ---------------------------------------------------------------------------

int cmd_ceilings(bool as_json) {
  if (!gpu_available()) return needs_gpu("ceilings");
  const DeviceInfo dev = query_device();
  json detail;
  const Ceilings c = measure_ceilings(dev, default_config().timing, detail);
  if (as_json) {
    RunResults shell;
    shell.ceilings = c;
    std::printf("%s\n", json{{"device", dev.to_json()},
                             {"ceilings", to_json(shell).at("ceilings")},
                             {"measurements", detail}}
                            .dump(2)
                            .c_str());
    return exit_code::ok;
  }
  const auto get = [&](const char* key, const char* field) -> std::string {
    if (!detail.contains(key)) return "-";
    const json& d = detail[key];
    if (d.contains(field)) return fmt::format("{:.0f}", d[field].get<double>());
    return "not measured: " + d.value("not_measured", std::string("?"));
  };
  std::printf("Ceilings measured on %s (%d SMs, L2 %lld MiB)\n", dev.name.c_str(), dev.sm_count,
              static_cast<long long>(dev.l2_bytes >> 20));
  std::printf("  DRAM copy, best          %8.0f GB/s  (read + write)\n", c.dram_GBps);
  std::printf("    cudaMemcpyAsync D2D    %8s GB/s\n", get("memcpy_d2d", "GBps").c_str());
  std::printf("    copy kernel            %8s GB/s\n", get("copy_kernel", "GBps").c_str());
  std::printf("  DRAM peak from clocks    %8.0f GB/s\n", c.peak_dram_GBps);
  std::printf("  L2 read                  %8.0f GB/s\n", c.l2_GBps);
  std::printf("  FP32 FMA                 %8s GFLOP/s\n", get("fp32_GFLOPs", "GFLOPs").c_str());
  if (detail.contains("fp32_GFLOPs") && detail["fp32_GFLOPs"].contains("not_measured"))
    std::printf("    (the datasheet's %.0f GFLOP/s is used)\n", c.fp32_GFLOPs);
  return exit_code::ok;
}

// ---- run --------------------------------------------------------------------------------

struct RunArgs {
  std::string config, out, resume, peers;
  bool force = false, no_counters = false, quiet = false;
  std::vector<std::string> kernels;
};

int cmd_run(const RunArgs& a, const std::string& command) {
  // Everything the user gave is checked first; only then is the GPU asked for.
  SweepOptions opt;
  opt.config = load_config(a.config);
  opt.config_arg = a.config;
  apply_kernel_filter(opt.config, a.kernels);
  if (!a.resume.empty()) {
    if (!a.out.empty() && fs::path(a.out) != fs::path(a.resume))
      throw BadInput("--out and --resume name different directories; --resume DIR continues DIR");
    opt.dir = a.resume;
    opt.resume = true;
    std::error_code ec;
    if (fs::exists(opt.dir, ec) && !fs::is_directory(opt.dir, ec))
      throw BadInput(fmt::format("--resume {}: a file, not a run directory", a.resume));
    const fs::path file = opt.dir / "results.json";
    if (!fs::exists(fs::symlink_status(file, ec)))
      throw BadInput(fmt::format("--resume {}: no results.json there to continue", a.resume));
    read_results_or_bad_input(file, "--resume");
  } else if (!a.out.empty()) {
    opt.dir = a.out;
    check_out_dir(opt.dir, a.force,
                  fmt::format("--resume {} continues the run in it, --force starts a new one there",
                              a.out));
  } else {
    opt.dir = fresh_run_dir(opt.config.output_dir, opt.config.name);
  }
  opt.peers = peers_or_bad_input(a.peers);
  opt.counters = opt.config.counters.enabled && !a.no_counters;
  opt.quiet = a.quiet;
  opt.command = command;

  if (!gpu_available()) return needs_gpu("run");
  if (!a.quiet) std::fprintf(stderr, "run directory: %s\n", opt.dir.string().c_str());
  return run_sweep(opt);
}

constexpr const char* kFooter = R"(Examples:
  softmax-bench model                      analytic model of the default sweep (no GPU needed)
  softmax-bench model configs/l2-regime.yaml --print-only
  softmax-bench run                        the default sweep into runs/default-<UTC time>/
  softmax-bench run configs/quick.yaml --kernels fused,online --no-counters
  softmax-bench run --resume runs/default-20261201T101112Z
  softmax-bench report runs/default-20261201T101112Z/results.json --peers peers.json
  softmax-bench list

Exit codes: 0 ok, 1 runtime failure, 2 bad input (config, flags, files), 3 needs a GPU and
there is none, 130 interrupted (everything so far saved; `run --resume DIR` continues).
docs/cli.md has the details.)";

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"softmax-bench: row-wise softmax benchmarks and roofline analysis"};
  app.name(kProgram);
  app.set_version_flag("--version", std::string(kProgram) + " " + SMR_VERSION);
  app.require_subcommand(1);
  app.footer(kFooter);

  RunArgs run_a;
  CLI::App* run = app.add_subcommand("run", "Run a sweep on the GPU: ceilings, verification, "
                                            "timing, counters, claims, report");
  run->add_option("config", run_a.config, "Sweep config (YAML or JSON); default: the embedded "
                                          "configs/default.yaml");
  CLI::Option* out_opt =
      run->add_option("--out", run_a.out, "Run directory (default: <output_dir>/<name>-<UTC time>)");
  CLI::Option* resume_opt =
      run->add_option("--resume", run_a.resume, "Continue the run in DIR, skipping its finished records");
  CLI::Option* force_opt =
      run->add_flag("--force", run_a.force, "Start a new run in an existing --out directory");
  force_opt->excludes(resume_opt);
  (void)out_opt;
  run->add_flag("--no-counters", run_a.no_counters, "Skip the CUPTI counters pass");
  run->add_option("--kernels", run_a.kernels, "Run these registry kernels instead of the config's "
                                              "(comma-separated)")
      ->delimiter(',');
  run->add_option("--peers", run_a.peers, "Merge this scripts/peers.py output into results.json");
  run->add_flag("--quiet", run_a.quiet, "No progress line or summary");

  ModelArgs model_a;
  CLI::App* model = app.add_subcommand(
      "model", "Print (and write model.json / model.md) the analytic model of a sweep; no GPU needed");
  model->add_option("config", model_a.config, "Sweep config; default: the embedded default");
  CLI::Option* ceil_opt = model->add_option(
      "--ceilings", model_a.ceilings, "Use the measured ceilings of this results.json");
  CLI::Option* mout = model->add_option(
      "--out", model_a.out,
      "Where model.json and model.md go, a new or empty directory (default: "
      "<output_dir>/model-<name>-<UTC time>)");
  CLI::Option* print_only =
      model->add_flag("--print-only", model_a.print_only, "Print the tables, write no files");
  print_only->excludes(mout);
  model->add_flag("--force", model_a.force, "Replace model.json and model.md in an existing --out DIR")
      ->excludes(print_only);
  model->add_option("--device-profile", model_a.device_profile,
                    "Model this card (its limits and datasheet ceilings): " +
                        device_profile_names())
      ->excludes(ceil_opt);

  app.add_subcommand("list", "List the registry's kernels with one-line descriptions");

  PlanArgs plan_a;
  CLI::App* plan = add_plan_command(app, plan_a);

  std::string report_file, report_peers;
  CLI::App* report = app.add_subcommand(
      "report", "Regenerate claims, report and plots of a saved run from its results.json");
  report->add_option("results", report_file, "RESULTS.json of a run, or the run's directory")
      ->required();
  report->add_option("--peers", report_peers, "Merge this scripts/peers.py output first");

  std::string settings_config;
  CLI::App* settings = app.add_subcommand(
      "verify-settings", "Print, as JSON, the verification tolerances a config's records get (each "
                         "dtype's tolerance and absolute floor); scripts/peers.py reads them");
  settings->add_option("config", settings_config, "Sweep config; default: the embedded default");

  bool ceilings_json = false;
  CLI::App* ceilings = app.add_subcommand("ceilings", "Measure and print this GPU's ceilings");
  ceilings->add_flag("--json", ceilings_json, "Print the measurements as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string what = e.what();
    // CLI11 asks for the subcommand before it looks at the rest: name what was not understood.
    if (dynamic_cast<const CLI::RequiredError*>(&e) && app.get_subcommands().empty() &&
        !app.remaining().empty())
      what = fmt::format("'{}' is not a subcommand or option", app.remaining().front());
    print_error(fmt::format("{} (see {} --help)", what, kProgram));
    return exit_code::bad_input;
  }

  try {
    if (*run) return cmd_run(run_a, command_line(argc, argv));
    if (*model) return cmd_model(model_a);
    if (app.got_subcommand("list")) return cmd_list();
    if (*plan) {
      try {
        return cmd_plan(plan_a);
      } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
      }
    }
    if (*report) return cmd_report(report_file, report_peers);
    if (*ceilings) return cmd_ceilings(ceilings_json);
    if (*settings) return cmd_verify_settings(settings_config);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s\n", one_line(e.what()).c_str());
    return exit_code::bad_input;
  } catch (const BadInput& e) {
    print_error(e.what());
    return exit_code::bad_input;
  } catch (const CudaError& e) {
    print_error(e.what());
    return exit_code::runtime_failure;
  } catch (const std::exception& e) {
    print_error(e.what());
    return exit_code::runtime_failure;
  }
  return exit_code::bad_input;
}

}  // namespace smr
