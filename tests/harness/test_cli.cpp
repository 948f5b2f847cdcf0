// End-to-end tests of the built `softmax-bench` (SMR_BENCH_EXE), run through the shell in a fresh
// temporary directory each, plus the host-only pieces of timing and the peers merge. None needs a
// GPU; the `run` test checks exit code 3 where there is none, and bad input (exit 2) where there is.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "harness/config.hpp"
#include "harness/storage.hpp"
#include "harness/sweep.hpp"
#include "harness/timing.hpp"
#include "kernels/registry.hpp"
#include "roofline/results.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Outcome {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A directory of its own for one test case, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("smr-cli-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Runs `softmax-bench ARGS` with `dir` as the working directory. Report rendering is turned off
// (SMR_WEB_DIR names a folder without the web packages), so no test depends on Node.js.
Outcome bench(const std::string& args, const fs::path& dir) {
  const fs::path out = dir / ".stdout", err = dir / ".stderr";
  const std::string cmd = "cd '" + dir.string() + "' && SMR_WEB_DIR='" + (dir / ".no-web").string() +
                          "' '" + SMR_BENCH_EXE + "' " + args + " >'" + out.string() + "' 2>'" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(out);
  o.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return o;
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// What a directory holds, except the test's own capture files.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n != ".stdout" && n != ".stderr") names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
}

bool gpu_present() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return ok;
}

// A small saved run: one timed fused record, one skipped record.
smr::RunResults sample_run() {
  smr::RunResults run;
  run.tool_version = "test";
  run.created = "2026-12-01T00:00:00Z";
  run.command = "softmax-bench run (test)";
  run.config = smr::default_config().normalized;
  run.ceilings = smr::datasheet_h200();
  run.complete = true;
  const smr::Problem p = smr::dense(131072, 1024);
  smr::Record ok;
  ok.kernel = "fused";
  ok.M = p.M;
  ok.N = p.N;
  ok.ld_x = ok.ld_y = p.N;
  ok.model = smr::predict(smr::TrafficModel::fused, p, run.ceilings);
  smr::TimeStats t;
  t.median_s = t.min_s = t.max_s = t.mean_s = 2.7e-4;
  t.samples = 20;
  ok.time = t;
  ok.effective_GBps = p.min_bytes() / t.median_s / 1e9;
  ok.pct_of_copy = *ok.effective_GBps / run.ceilings.dram_GBps * 100;
  ok.model_GBps = ok.model.dram_bytes / t.median_s / 1e9;
  run.records.push_back(ok);
  smr::Record skipped = ok;
  skipped.kernel = "unfused";
  skipped.status = "skipped";
  skipped.reason = "test";
  skipped.time.reset();
  skipped.effective_GBps.reset();
  skipped.pct_of_copy.reset();
  skipped.model_GBps.reset();
  run.records.push_back(skipped);
  return run;
}

}  // namespace

TEST_CASE("model on the embedded default prints 0.375 and 2.5 and writes model.json/model.md", "[cli]") {
  TempDir tmp;
  const Outcome o = bench("model", tmp.path);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "0.375"));
  CHECK(contains(o.out, "2.50"));

  // A new directory every time, as `run` makes: runs/model-default-<UTC time>.
  REQUIRE(fs::is_directory(tmp.path / "runs"));
  REQUIRE(entries(tmp.path / "runs").size() == 1);
  const fs::path dir = tmp.path / "runs" / entries(tmp.path / "runs").front();
  CHECK(dir.filename().string().rfind("model-default-", 0) == 0);
  REQUIRE(fs::is_regular_file(dir / "model.json"));
  REQUIRE(fs::is_regular_file(dir / "model.md"));
  CHECK(contains(slurp(dir / "model.md"), "0.375"));
  const json j = json::parse(slurp(dir / "model.json"));
  CHECK(j.at("schema") == "softmax-roofline/model");
  const smr::SweepConfig cfg = smr::default_config();
  CHECK(j.at("points").size() == cfg.problems.size() * cfg.kernels.size());
  int fused = 0;
  for (const auto& pt : j.at("points"))
    if (pt.at("kernel") == "fused" && pt.at("applies") == true) {
      ++fused;
      REQUIRE_THAT(pt.at("model").at("intensity").get<double>(), Catch::Matchers::WithinAbs(0.375, 1e-9));
    }
  CHECK(fused > 0);
  // Far above the L2 (the default's shapes are 2^27 elements: 512 MiB a buffer) the unfused
  // pipeline moves 5 passes to a one-read kernel's 2, plus its per-row max and sum vectors (fp32,
  // M each): at most 2/N more. The fused kernel's ratio is given only where it applies (N up to
  // its cap); the production kernel applies everywhere.
  REQUIRE(j.at("traffic_ratio").size() == cfg.problems.size());
  int fused_na = 0;
  for (const auto& r : j.at("traffic_ratio")) {
    const double N = r.at("N").get<double>();
    const auto& against = r.at("unfused_over");
    REQUIRE(against.size() == 3);
    for (const auto& a : against) {
      const std::string kernel = a.at("kernel");
      INFO("N = " << N << ", unfused over " << kernel << ": " << a.dump());
      const smr::KernelInfo* k = smr::find_kernel(kernel);
      REQUIRE(k != nullptr);
      const smr::Problem p = smr::dense(r.at("M").get<std::int64_t>(), r.at("N").get<std::int64_t>());
      const bool applies = !smr::why_unsupported(*k, p, smr::DeviceLimits{}).has_value();
      CHECK(a.at("applies") == applies);
      if (!applies) {
        CHECK(a.at("ratio").is_null());
        CHECK(!a.at("reason").get<std::string>().empty());
        if (kernel == "fused") ++fused_na;
        continue;
      }
      if (kernel == "online") continue;  // 2 to 3 passes: its own model test
      const double ratio = a.at("ratio").get<double>();
      CHECK(ratio >= 2.5 - 1e-12);
      CHECK(ratio <= 2.5 + 2.0 / N + 1e-12);
    }
  }
  CHECK(fused_na == 7);  // N = 65536 ... 4194304: past the fused kernel's one-tile cap
  CHECK(j.at("schema_version") == 2);
}

TEST_CASE("model marks a ratio against a kernel that does not apply as n/a", "[cli]") {
  TempDir tmp;
  const Outcome o = bench("model --print-only", tmp.path);
  REQUIRE(o.code == 0);
  // The row of N = 4194304 (past the fused cap): n/a for fused, a number for softmax.
  std::istringstream lines_in(o.out);
  std::string line, ratio_row;
  bool in_ratio = false;
  while (std::getline(lines_in, line)) {
    if (contains(line, "unfused/fused")) in_ratio = true;
    if (in_ratio && contains(line, " 4194304 ")) ratio_row = line;
  }
  INFO(o.out);
  REQUIRE(!ratio_row.empty());
  std::istringstream cells(ratio_row);
  std::vector<std::string> c{std::istream_iterator<std::string>(cells), {}};
  REQUIRE(c.size() == 6);  // dtype M N fused online softmax
  CHECK(c[3] == "n/a");
  CHECK(c[4] == "1.67");
  CHECK(c[5] == "2.50");
  CHECK(contains(o.out, "n/a: a kernel of the ratio does not apply to that shape"));
}

TEST_CASE("model --print-only writes nothing; --out chooses the directory", "[cli]") {
  TempDir tmp;
  Outcome o = bench("model --print-only", tmp.path);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "0.375"));
  CHECK(entries(tmp.path).empty());

  o = bench("model --out here", tmp.path);
  REQUIRE(o.code == 0);
  CHECK(fs::is_regular_file(tmp.path / "here" / "model.json"));
}

TEST_CASE("model --out refuses a non-empty directory or a file, as run does", "[cli]") {
  TempDir tmp;
  fs::create_directories(tmp.path / "old");
  write_text(tmp.path / "old" / "model.json", "earlier");
  write_text(tmp.path / "old" / "model.md", "earlier md");
  write_text(tmp.path / "afile", "a file");
  Outcome o = bench("model configs.yaml --out old", tmp.path);  // the config is checked first
  CHECK(o.code == 2);
  o = bench("model --out old", tmp.path);
  INFO(o.err);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK(contains(o.err, "--out old: exists already and is not empty"));
  CHECK(contains(o.err, "--force"));
  CHECK(o.out.empty());
  CHECK(slurp(tmp.path / "old" / "model.json") == "earlier");
  CHECK(slurp(tmp.path / "old" / "model.md") == "earlier md");

  for (const std::string sub : {"model", "run"}) {
    o = bench(sub + " --out afile", tmp.path);
    INFO(sub << ": " << o.err);
    CHECK(o.code == 2);
    CHECK(lines(o.err) == 1);
    CHECK(contains(o.err, "--out afile: a file, not a directory"));
    CHECK(!contains(o.err, "--resume"));
  }
  o = bench("run --resume afile", tmp.path);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "--resume afile: a file, not a run directory"));
  CHECK(slurp(tmp.path / "afile") == "a file");

  // --force replaces them; an empty directory needs nothing.
  o = bench("model --out old --force", tmp.path);
  CHECK(o.code == 0);
  CHECK(slurp(tmp.path / "old" / "model.json") != "earlier");
  fs::create_directories(tmp.path / "empty");
  CHECK(bench("model --out empty", tmp.path).code == 0);
  CHECK(bench("model --print-only --force", tmp.path).code == 2);  // --force needs files to write
}

TEST_CASE("every file the CLI opens says what it is when it cannot be read", "[cli]") {
  TempDir tmp;
  fs::create_symlink("/dev/zero", tmp.path / "zero.yaml");
  fs::create_symlink("loop.yaml", tmp.path / "loop.yaml");
  fs::create_symlink("/dev/zero", tmp.path / "zero.json");
  fs::create_symlink("loop.json", tmp.path / "loop.json");
  fs::create_directories(tmp.path / "dir.json");
  {
    std::ofstream(tmp.path / "huge.yaml") << "name: huge\n";
  }
  fs::resize_file(tmp.path / "huge.yaml", std::uintmax_t{300} << 20);  // sparse: no disk used
  smr::write_results(tmp.path / "results.json", sample_run());
  const std::vector<std::string> before = entries(tmp.path);

  struct Case {
    std::string args, starts, says;
  };
  const std::vector<Case> cases{
      {"model zero.yaml", "zero.yaml: ", "not a regular file (a character device)"},
      {"model loop.yaml", "loop.yaml: ", "a symlink loop"},
      {"run zero.yaml", "zero.yaml: ", "not a regular file"},
      {"model huge.yaml", "huge.yaml: ", "314572800 bytes, larger than the 16 MiB a config may be"},
      {"report zero.json", "softmax-bench: zero.json: ", "not a regular file (a character device)"},
      {"report loop.json", "softmax-bench: loop.json: ", "a symlink loop"},
      {"model --print-only --ceilings zero.json", "softmax-bench: --ceilings zero.json: ",
       "not a regular file"},
      {"model --print-only --ceilings dir.json", "softmax-bench: --ceilings dir.json: ",
       "a directory, not a file"},
      {"report results.json --peers loop.json", "softmax-bench: --peers loop.json: ",
       "a symlink loop"},
      {"report results.json --peers dir.json", "softmax-bench: --peers dir.json: ",
       "a directory, not a file"},
      {"run --peers zero.json", "softmax-bench: --peers zero.json: ", "not a regular file"},
  };
  for (const Case& c : cases) {
    const Outcome o = bench(c.args, tmp.path);
    INFO(c.args << ": " << o.err);
    CHECK(o.code == 2);
    CHECK(lines(o.err) == 1);
    CHECK(o.err.rfind(c.starts, 0) == 0);
    CHECK(contains(o.err, c.says));
    CHECK(!contains(o.err, "no such file"));
  }
  CHECK(entries(tmp.path) == before);
}

TEST_CASE("report refuses records it cannot place: unknown kernel, a shape no kernel ran", "[cli]") {
  TempDir tmp;
  const json good = smr::to_json(sample_run());
  const auto with = [&](const std::string& name, const std::function<void(json&)>& change) {
    json j = good;
    change(j);
    write_text(tmp.path / name, j.dump(2));
  };
  with("kernel.json", [](json& j) { j["records"][1]["kernel"] = "nosuch"; });
  with("negm.json", [](json& j) { j["records"][1]["M"] = -5; });
  with("zeron.json", [](json& j) { j["records"][0]["N"] = 0; });
  const std::vector<std::string> before = entries(tmp.path);
  // A lab build's kernel (docs/lab exercise 03) is no stranger: its saved runs are read anywhere.
  fs::create_directories(tmp.path / "lab");
  with("lab/results.json", [](json& j) { j["records"][0]["kernel"] = "fused_starter"; });
  CHECK(bench("report lab", tmp.path).code == 0);
  fs::remove_all(tmp.path / "lab");

  Outcome o = bench("report kernel.json", tmp.path);
  INFO(o.err);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK(o.err.rfind("softmax-bench: kernel.json: records[1] (nosuch/fp32/131072/1024/1024/1024): "
                    "unknown kernel 'nosuch'",
                    0) == 0);
  o = bench("report negm.json", tmp.path);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK(o.err == "softmax-bench: negm.json: records[1].M: expected a row count >= 1, got -5\n");
  o = bench("report zeron.json", tmp.path);
  CHECK(o.code == 2);
  CHECK(o.err == "softmax-bench: zeron.json: records[0].N: expected a row length >= 1, got 0\n");
  // The same checks for a peers file and for --ceilings.
  o = bench("model --print-only --ceilings kernel.json", tmp.path);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "unknown kernel 'nosuch'"));
  smr::write_results(tmp.path / "results.json", sample_run());
  o = bench("report results.json --peers negm.json", tmp.path);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "--peers negm.json: records[1].M"));
  CHECK(smr::read_results(tmp.path / "results.json").records.size() == 2);  // nothing merged
  fs::remove(tmp.path / "results.json");
  CHECK(entries(tmp.path) == before);  // no report written
}

TEST_CASE("report DIR reads DIR/results.json, and says so when there is none", "[cli]") {
  TempDir tmp;
  fs::create_directories(tmp.path / "run1");
  fs::create_directories(tmp.path / "empty");
  smr::write_results(tmp.path / "run1" / "results.json", sample_run());
  Outcome o = bench("report run1", tmp.path);
  INFO(o.err);
  CHECK(o.code == 0);
  CHECK(fs::is_regular_file(tmp.path / "run1" / "report.md"));
  o = bench("report empty", tmp.path);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK(contains(o.err, "empty: a directory with no results.json in it"));
  CHECK(!contains(o.err, "no such file"));
  CHECK(entries(tmp.path / "empty").empty());
}

TEST_CASE("the peer kernels the CLI accepts are scripts/peers.py's PEERS", "[cli]") {
  // Drift guard: a record of a peer that peers.py names must not be refused as unknown.
  const std::string py = slurp(fs::path(SMR_SOURCE_DIR) / "scripts" / "peers.py");
  CHECK(contains(py, "PEERS = [\"torch.softmax\", \"triton.fused\"]"));
}

TEST_CASE("model --ceilings takes the ceilings of a results.json", "[cli]") {
  TempDir tmp;
  smr::RunResults run = sample_run();
  run.ceilings.source = "measured";
  run.ceilings.dram_GBps = 1000.0;  // a slow card: the bound times must follow
  smr::write_results(tmp.path / "results.json", run);
  const Outcome o = bench("model --print-only --ceilings results.json", tmp.path);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "measured ceilings"));
  CHECK(contains(o.out, "DRAM 1000 GB/s"));

  const Outcome bad = bench("model --ceilings nothing.json", tmp.path);
  CHECK(bad.code == 2);
  CHECK(lines(bad.err) == 1);

  // A results document without ceilings (a peers file: every number null) is bad input too.
  run.ceilings.fp32_GFLOPs = std::nan("");
  smr::write_results(tmp.path / "peers.json", run);
  const Outcome none = bench("model --print-only --ceilings peers.json", tmp.path);
  INFO(none.err);
  CHECK(none.code == 2);
  CHECK(lines(none.err) == 1);
  CHECK(contains(none.err, "--ceilings peers.json: no usable ceilings: "));
  CHECK(contains(none.err, "fp32_GFLOPs"));
}

TEST_CASE("list shows every registry entry with its description", "[cli]") {
  TempDir tmp;
  const Outcome o = bench("list", tmp.path);
  REQUIRE(o.code == 0);
  for (const smr::KernelInfo& k : smr::kernels()) {
    INFO(k.name);
    CHECK(contains(o.out, k.name));
    CHECK(contains(o.out, k.description));
  }
}

TEST_CASE("a bad config is exit code 2 with one file:line:col line, and nothing is written", "[cli]") {
  TempDir tmp;
  write_text(tmp.path / "bad.yaml", "name: bad\nkernels: [fused]\nshapez: [[1, 128]]\n");
  write_text(tmp.path / "broken.yaml", "name: broken\nkernels: [fused\n");
  write_text(tmp.path / "neg.json", "{\n  \"name\": \"neg\",\n  \"shapes\": [[-4, 128]]\n}\n");
  const std::vector<std::string> before = entries(tmp.path);
  for (const std::string sub : {"model", "run"}) {
    for (const std::string file : {"bad.yaml", "broken.yaml", "neg.json"}) {
      const Outcome o = bench(sub + " " + file, tmp.path);
      INFO(sub << " " << file << ": " << o.err);
      CHECK(o.code == 2);
      CHECK(lines(o.err) == 1);
      CHECK(o.err.rfind(file + ":", 0) == 0);  // starts with FILE:
      CHECK(o.out.empty());
    }
  }
  // The unknown key's position: line 3, column 1.
  const Outcome o = bench("model bad.yaml", tmp.path);
  CHECK(o.err.rfind("bad.yaml:3:1:", 0) == 0);
  CHECK(contains(o.err, "shapez"));
  CHECK(entries(tmp.path) == before);
}

TEST_CASE("run needs a GPU: exit code 3 with one line pointing to `model`", "[cli]") {
  TempDir tmp;
  if (!gpu_present()) {
    for (const std::string args : {"run", "run --no-counters --quiet", "ceilings"}) {
      const Outcome o = bench(args, tmp.path);
      INFO(args << ": " << o.err);
      CHECK(o.code == 3);
      CHECK(lines(o.err) == 1);
      CHECK(contains(o.err, "softmax-bench model"));
    }
    CHECK(entries(tmp.path).empty());  // no run directory was made
  } else {
    WARN("a GPU is present: checking only that bad input is refused before the GPU is used");
  }
  // On any machine, input is checked before the GPU: an unknown kernel is exit 2.
  const Outcome o = bench("run --kernels fused,nosuch", tmp.path);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK(contains(o.err, "nosuch"));
  CHECK(entries(tmp.path).empty());
}

TEST_CASE("run refuses to reuse a directory without --resume or --force", "[cli]") {
  TempDir tmp;
  fs::create_directories(tmp.path / "old");
  write_text(tmp.path / "old" / "keep.txt", "earlier run");
  Outcome o = bench("run --out old", tmp.path);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK(contains(o.err, "--resume"));
  CHECK(slurp(tmp.path / "old" / "keep.txt") == "earlier run");

  o = bench("run --resume old", tmp.path);  // nothing to resume there
  CHECK(o.code == 2);
  CHECK(contains(o.err, "results.json"));

  o = bench("run --resume old --force", tmp.path);
  CHECK(o.code == 2);
}

TEST_CASE("report regenerates a saved run's outputs and merges peers", "[cli]") {
  TempDir tmp;
  const fs::path dir = tmp.path / "run1";
  fs::create_directories(dir);
  smr::write_results(dir / "results.json", sample_run());

  Outcome o = bench("report run1/results.json", tmp.path);
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(fs::is_regular_file(dir / "report.md"));
  smr::RunResults back = smr::read_results(dir / "results.json");
  CHECK(!back.claims.is_null());
  CHECK(back.records.size() == 2);

  // A peers file is a results document holding peer records (scripts/peers.py writes one).
  smr::RunResults peers = sample_run();
  peers.records.resize(1);
  peers.records[0].kernel = "torch.softmax";
  peers.records[0].pct_of_copy = 1.0;  // recomputed against the run's copy ceiling on merge
  smr::write_results(tmp.path / "peers.json", peers);
  fs::remove(dir / "report.md");
  o = bench("report run1/results.json --peers peers.json", tmp.path);
  REQUIRE(o.code == 0);
  CHECK(fs::is_regular_file(dir / "report.md"));
  back = smr::read_results(dir / "results.json");
  REQUIRE(back.records.size() == 3);
  const auto it = std::find_if(back.records.begin(), back.records.end(),
                               [](const smr::Record& r) { return r.kernel == "torch.softmax"; });
  REQUIRE(it != back.records.end());
  REQUIRE(it->pct_of_copy.has_value());
  REQUIRE_THAT(*it->pct_of_copy,
               Catch::Matchers::WithinRel(*it->effective_GBps / back.ceilings.dram_GBps * 100, 1e-12));

  // Bad input: a missing file, a file that is not a results document.
  o = bench("report nothing.json", tmp.path);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  write_text(tmp.path / "junk.json", "{\"schema\": \"something else\"}");
  o = bench("report junk.json", tmp.path);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  o = bench("report run1/results.json --peers junk.json", tmp.path);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
}

TEST_CASE("bad flags are exit code 2 with a one-line message; --help and --version are 0", "[cli]") {
  TempDir tmp;
  for (const std::string args : {"--bogus", "frobnicate", "", "run --kernels", "model --print-only --out x",
                                 "report", "list extra", "run a.yaml b.yaml"}) {
    const Outcome o = bench(args, tmp.path);
    INFO("'" << args << "': " << o.err);
    CHECK(o.code == 2);
    CHECK(lines(o.err) == 1);
    CHECK(o.err.rfind("softmax-bench: ", 0) == 0);
  }
  CHECK(entries(tmp.path).empty());

  Outcome o = bench("--version", tmp.path);
  CHECK(o.code == 0);
  CHECK(contains(o.out, "softmax-bench "));
  o = bench("--help", tmp.path);
  CHECK(o.code == 0);
  CHECK(contains(o.out, "Examples:"));
  for (const char* sub : {"run", "model", "list", "report", "ceilings"}) CHECK(contains(o.out, sub));
  o = bench("run --help", tmp.path);
  CHECK(o.code == 0);
  CHECK(contains(o.out, "--resume"));
}

TEST_CASE("timing statistics: median, spread and the sample count", "[cli][timing]") {
  const smr::TimeStats t = smr::summarize({4.0, 1.0, 3.0, 2.0}, 8, true);
  CHECK(t.samples == 4);
  CHECK(t.launches_per_sample == 8);
  CHECK(t.l2_flushed);
  CHECK(t.median_s == 2.5);
  CHECK(t.min_s == 1.0);
  CHECK(t.max_s == 4.0);
  CHECK(t.mean_s == 2.5);
  REQUIRE_THAT(t.stddev_s, Catch::Matchers::WithinRel(std::sqrt(5.0 / 3.0), 1e-12));
  REQUIRE_THAT(t.cv, Catch::Matchers::WithinRel(std::sqrt(5.0 / 3.0) / 2.5, 1e-12));
  CHECK(smr::summarize({5.0, 1.0, 3.0}, 1, false).median_s == 3.0);

  smr::TimingPolicy p;
  p.min_repetitions = 20;
  p.min_time_s = 0.05;
  CHECK(smr::samples_needed(p, 1e-3) == 50);   // time decides
  CHECK(smr::samples_needed(p, 1e-2) == 20);   // count decides
  CHECK(smr::samples_needed(p, 1e-12) == smr::kMaxSamples);
}

TEST_CASE("short launches are batched over distinct buffer sets", "[cli][timing]") {
  const std::size_t MiB = 1 << 20;
  smr::BatchPlan b = smr::plan_batch(300e-6, 512 * MiB, true, 1ull << 36);
  CHECK(b.launches == 1);
  CHECK(b.sets == 1);
  CHECK(!b.graph);

  b = smr::plan_batch(2e-6, MiB, true, 1ull << 36);  // 2 us: 25 launches, one set each
  CHECK(b.launches == 25);
  CHECK(b.sets == 25);
  CHECK(b.graph);

  b = smr::plan_batch(2e-6, MiB, false, 1ull << 36);  // no flush: hot L2 is what was asked for
  CHECK(b.launches == 25);
  CHECK(b.sets == 1);

  b = smr::plan_batch(2e-6, MiB, true, 4 * MiB);  // memory for 4 extra sets only
  CHECK(b.sets == 5);

  CHECK(smr::plan_batch(1e-9, 1, true, 1ull << 36).launches == smr::kMaxBatch);
}

TEST_CASE("peer records replace same-key records and are measured against the run's copy", "[cli]") {
  smr::RunResults run = sample_run();
  run.ceilings.dram_GBps = 4000;
  smr::Record peer = run.records[0];
  peer.kernel = "triton.fused";
  peer.effective_GBps = 3000;
  peer.pct_of_copy = 50;
  CHECK(smr::merge_peers(run, {peer}) == 1);
  CHECK(smr::merge_peers(run, {peer}) == 1);  // the same key again: replaced, not added
  REQUIRE(run.records.size() == 3);
  CHECK(run.records[2].kernel == "triton.fused");
  REQUIRE_THAT(*run.records[2].pct_of_copy, Catch::Matchers::WithinRel(75.0, 1e-12));

  // peers.py writes its records without a model (every number NaN): the merge gives them the fused
  // model for the run's ceilings.
  smr::Record bare = peer;
  bare.kernel = "torch.softmax";
  bare.model = smr::ModelPoint{};
  bare.model.dram_bytes = std::nan("");
  bare.model_GBps.reset();
  smr::merge_peers(run, {bare});
  const smr::Record& merged = run.records.back();
  CHECK(merged.kernel == "torch.softmax");
  CHECK(merged.model.traffic == smr::TrafficModel::fused);
  REQUIRE_THAT(merged.model.dram_bytes, Catch::Matchers::WithinRel(merged.problem().min_bytes(), 1e-9));
  REQUIRE(merged.model_GBps.has_value());
  REQUIRE_THAT(*merged.model_GBps,
               Catch::Matchers::WithinRel(merged.model.dram_bytes / merged.time->median_s / 1e9, 1e-12));
}

TEST_CASE("a fresh run directory is never an existing one", "[cli]") {
  TempDir tmp;
  const fs::path a = smr::fresh_run_dir(tmp.path, "quick");
  CHECK(a.parent_path() == tmp.path);
  CHECK(a.filename().string().rfind("quick-", 0) == 0);
  fs::create_directories(a);
  const fs::path b = smr::fresh_run_dir(tmp.path, "quick");
  CHECK(b != a);
  CHECK(!fs::exists(b));
}

TEST_CASE("verify-settings prints the tolerances a config's records are verified with", "[cli]") {
  TempDir tmp;
  write_text(tmp.path / "none.yaml", "name: none\nkernels: [fused]\nshapes: [[4, 1024]]\n");
  write_text(tmp.path / "loose.yaml",
             "name: loose\nkernels: [fused]\nshapes: [[4, 1024]]\nverify:\n  tolerance: 1.0e-4\n");
  const std::vector<std::string> before = entries(tmp.path);
  for (const std::string file : {"none.yaml", "loose.yaml"}) {
    const Outcome o = bench("verify-settings " + file, tmp.path);
    INFO(file << ": " << o.err);
    REQUIRE(o.code == 0);
    const json j = json::parse(o.out);
    const double fp32 = file == "none.yaml" ? smr::kDefaultTolerance : 1e-4;
    CHECK(j.at("tolerance").get<double>() == fp32);
    CHECK(j.at("default_tolerance").get<double>() == smr::kDefaultTolerance);
    for (const smr::DType t : {smr::DType::f32, smr::DType::bf16, smr::DType::f16}) {
      const json& d = j.at("dtypes").at(std::string(smr::to_string(t)));
      INFO(smr::to_string(t));
      CHECK(d.at("tolerance").get<double>() ==
            (t == smr::DType::f32 ? fp32 : smr::storage_tolerance(t)));
      CHECK(d.at("absolute_floor").get<double>() == smr::storage_absolute_floor(t));
    }
  }
  // The embedded default; a bad config is exit code 2 with one line.
  CHECK(json::parse(bench("verify-settings", tmp.path).out).at("tolerance").get<double>() ==
        smr::kDefaultTolerance);
  write_text(tmp.path / "bad.yaml", "name: bad\nkernels: [fused]\nshapes: [[4, 1024]]\nverify:\n  tolerance: 7\n");
  const Outcome bad = bench("verify-settings bad.yaml", tmp.path);
  CHECK(bad.code == 2);
  CHECK(lines(bad.err) == 1);
  CHECK(bad.err.rfind("bad.yaml:", 0) == 0);
  CHECK(bad.out.empty());
  fs::remove(tmp.path / "bad.yaml");
  CHECK(entries(tmp.path) == before);
}

TEST_CASE("fused_starter outside a lab build: --kernels says how to get the lab build", "[cli]") {
  if (smr::find_kernel("fused_starter") != nullptr) {
    WARN("a lab build (-DSMR_BUILD_LAB=ON): fused_starter is registered, nothing to refuse");
    return;
  }
  TempDir tmp;
  const Outcome o = bench("run --kernels fused,fused_starter", tmp.path);
  INFO(o.err);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK(contains(o.err, "unknown kernel 'fused_starter'"));
  CHECK(contains(o.err, "-DSMR_BUILD_LAB=ON"));
  CHECK(entries(tmp.path).empty());
}

TEST_CASE("plan --device-profile shows what a card that is not here would run, and refuses bad input",
          "[cli]") {
  TempDir tmp;
  // The A100 (sm_80): block_row for rows it holds, the longer ones refused with the reason.
  Outcome o = bench("plan 4096x32768 1000x131072 --dtype fp32,bf16 --device-profile a100", tmp.path);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "production families it runs: warp_rows, block_row;"));
  CHECK(contains(o.out, "4096 x 32768 fp32: block_row T=1024 K=8"));
  CHECK(contains(o.out, "1000 x 131072 bf16: not supported"));
  CHECK(contains(o.out, "need sm_90's bulk copies"));
  CHECK_FALSE(contains(o.out, "cluster_tile C="));
  // --dtype before the shapes takes one comma-separated token, not the shapes after it.
  o = bench("plan --dtype fp32,bf16 --device-profile a100 4096x32768 1x5", tmp.path);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "4096 x 32768 bf16: block_row"));
  CHECK(contains(o.out, "1 x 5 fp32: warp_rows"));
  // The H100: the cluster families.
  o = bench("plan 1000x131072 --device-profile h100", tmp.path);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "1000 x 131072 fp32: cluster_tile C=8"));
  // Bad input: one line, exit 2.
  o = bench("plan 4x4 --device-profile nosuch", tmp.path);
  CHECK(o.code == 2);
  CHECK(o.err == "softmax-bench: --device-profile: unknown profile 'nosuch' (one of: t4, a100, "
                 "rtx4090, l4, h100, h200)\n");
  o = bench("plan 40x --device-profile t4", tmp.path);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "shape '40x' is not MxN"));
  o = bench("plan 4x4 --dtype fp64 --device-profile t4", tmp.path);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "--dtype: unknown type 'fp64'"));
  // model on a profile: its ceilings line, and softmax past block_row does not apply on a T4.
  o = bench("model --print-only --device-profile t4", tmp.path);
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "NVIDIA T4"));
  CHECK(contains(o.out, "does not apply: N = 65536 fp32 exceeds block_row's 32768 elements"));
  CHECK(entries(tmp.path).empty());
}
