// results.json: round trip, absent-vs-zero, the errors for documents this tool must not read, and
// the atomic write (no temporary left behind, the old file untouched when a write fails).
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "roofline/results.hpp"

using namespace smr;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A fresh, empty directory under the system temp dir, removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> n{0};
    path_ = fs::temp_directory_path() /
            ("smr-test-results-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    return out;
  }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A run with every field set, and a second record with every optional left out.
RunResults full_run() {
  RunResults r;
  r.tool_version = "0.1.0";
  r.created = "2026-12-01T06:16:00Z";
  r.command = "softmax-bench run configs/quick.yaml";
  r.config = {{"name", "quick"}, {"kernels", {"fused", "unfused"}}};
  r.device = {{"name", "NVIDIA H200"}, {"sm_count", 132}, {"l2_bytes", 62914560}};
  r.ceilings = datasheet_h200();
  r.ceilings.source = "measured";
  r.ceilings.dram_GBps = 4167.25;
  r.ceilings.l2_GBps = 11000.5;
  r.complete = true;

  Record a;
  a.kernel = "fused";
  a.M = 65536;
  a.N = 2048;
  a.ld_x = 2048;
  a.ld_y = 2050;
  a.model = predict(TrafficModel::fused, a.problem(), r.ceilings);
  a.verify = VerifyResult{true, 1.25e-7, 3.5e-8, 1e-5, 4096, ""};
  a.time = TimeStats{2.6e-4, 2.5e-4, 2.9e-4, 2.61e-4, 1.1e-6, 0.0042, 50, 1, true, std::nullopt,
                     std::nullopt};
  a.time->noise = NoiseStats{"median_ci95_halfwidth_rel", 0.0031, 0.005, true, 0.07, 0.2};
  ClockStats clocks;
  clocks.available = true;
  clocks.sm_mhz_min = 1755;
  clocks.sm_mhz_max = 1980;
  clocks.readings = 5;
  clocks.reasons = {"sw_power_cap"};
  clocks.throttled = true;
  clocks.fell = true;
  a.time->clocks = clocks;
  a.effective_GBps = 4100.5;
  a.pct_of_copy = 98.4;
  a.model_GBps = 4101.0;
  a.counters = {{"dram__bytes_read.sum", 536870912.0}, {"dram_bytes", 1073741824.0}};
  a.extra = {{"tile", 2048}};
  r.records.push_back(a);

  Record b;
  b.kernel = "fused";
  b.dtype = DType::bf16;
  b.M = 1;
  b.N = std::int64_t{1} << 26;
  b.ld_x = b.ld_y = b.N;
  b.status = "skipped";
  b.reason = "N = 67108864 exceeds the fused kernel's one-tile cap of 32768";
  b.model = predict(TrafficModel::fused, b.problem(), r.ceilings);
  b.counters_reason = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: run as root";
  r.records.push_back(b);

  r.claims = json::array({{{"id", "fused_intensity"}, {"verdict", "holds"}}});
  return r;
}

// The message of the runtime_error `f` throws; fails the test when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  FAIL("no exception");
  return "";
}

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

}  // namespace

TEST_CASE("results: write then read gives the same JSON", "[results]") {
  ScratchDir dir;
  const RunResults run = full_run();
  const fs::path file = dir.path() / "results.json";
  write_results(file, run);
  const RunResults back = read_results(file);
  CHECK(to_json(back) == to_json(run));
  CHECK(to_json(back).dump(2) + "\n" == slurp(file));

  // Spot checks of what came back, field by field.
  REQUIRE(back.records.size() == 2);
  CHECK(back.records[0].ld_y == 2050);
  CHECK(back.records[0].time->median_s == 2.6e-4);
  CHECK(back.records[0].model.intensity == run.records[0].model.intensity);
  CHECK(back.records[0].model.traffic == TrafficModel::fused);
  CHECK(back.records[1].dtype == DType::bf16);
  CHECK(back.records[1].counters_reason == run.records[1].counters_reason);
  CHECK(back.ceilings.l2_GBps == 11000.5);
  CHECK(back.complete);
  CHECK(back.records[0].key() == "fused/fp32/65536/2048/2048/2050");
  REQUIRE(back.records[0].time->noise);
  CHECK(back.records[0].time->noise->converged);
  CHECK(back.records[0].time->noise->value == 0.0031);
  REQUIRE(back.records[0].time->clocks);
  CHECK(back.records[0].time->clocks->sm_mhz_min == 1755);
  CHECK(back.records[0].time->clocks->reasons == std::vector<std::string>{"sw_power_cap"});
  CHECK(*back.records[0].time->clocks->fell);
}

TEST_CASE("results: noise and clock fields are optional; unavailable clocks read back", "[results]") {
  RunResults run = full_run();
  run.records[0].time->noise.reset();
  ClockStats none;
  none.unavailable = "NVML not loaded";
  run.records[0].time->clocks = none;
  const json j = to_json(run);
  CHECK_FALSE(j["records"][0]["time"].contains("noise"));
  CHECK(j["records"][0]["time"]["clocks"] == json({{"available", false}, {"unavailable", "NVML not loaded"}}));
  const RunResults back = results_from_json(j);
  CHECK_FALSE(back.records[0].time->noise);
  REQUIRE(back.records[0].time->clocks);
  CHECK_FALSE(back.records[0].time->clocks->available);
  // A wrong type in the new fields gets the usual one-line error naming the key.
  json bad = j;
  bad["records"][0]["time"]["noise"] = {{"statistic", "x"}, {"value", 0.1}, {"target", 0.005},
                                        {"converged", "yes"}, {"seconds", 0.1}, {"max_seconds", 0.2}};
  const std::string e = error_of([&] { results_from_json(bad); });
  CHECK(e.find("records[0].time.noise.converged") != std::string::npos);
}

TEST_CASE("results: the keys issue 2 names are there", "[results]") {
  const json j = to_json(full_run());
  for (const char* k : {"schema", "schema_version", "config", "device", "ceilings", "records",
                        "claims", "tool_version", "created", "command", "complete"})
    CHECK(j.contains(k));
  CHECK(j["schema"] == "softmax-roofline/results");
  CHECK(j["schema_version"] == kResultsSchemaVersion);
  const json& rec = j["records"][0];
  for (const char* k : {"kernel", "dtype", "M", "N", "ld_x", "ld_y", "status", "reason", "model",
                        "verify", "time", "effective_GBps", "pct_of_copy", "model_GBps", "counters",
                        "extra"})
    CHECK(rec.contains(k));
}

TEST_CASE("results: not measured stays absent, a measured 0 stays 0", "[results]") {
  RunResults run = full_run();
  run.records[0].effective_GBps = 0.0;  // measured as 0 (absurd, but it must not vanish)
  run.records[0].counters = json::object();  // asked for, read, nothing in it
  run.ceilings.l2_GBps = 0.0;                // unknown: left out
  run.device = nullptr;
  run.claims = nullptr;
  const json j = to_json(run);
  const json& zero = j["records"][0];
  const json& none = j["records"][1];
  CHECK(zero["effective_GBps"] == 0.0);
  CHECK(zero["counters"] == json::object());
  for (const char* k : {"verify", "time", "effective_GBps", "pct_of_copy", "model_GBps", "counters", "extra"})
    CHECK_FALSE(none.contains(k));
  CHECK_FALSE(j["ceilings"].contains("l2_GBps"));
  CHECK(j["device"].is_null());
  CHECK(j["claims"].is_null());

  const RunResults back = results_from_json(j);
  CHECK(back.records[0].effective_GBps == 0.0);
  CHECK(back.records[0].counters == json::object());
  CHECK_FALSE(back.records[1].verify.has_value());
  CHECK_FALSE(back.records[1].time.has_value());
  CHECK_FALSE(back.records[1].effective_GBps.has_value());
  CHECK_FALSE(back.records[1].pct_of_copy.has_value());
  CHECK_FALSE(back.records[1].model_GBps.has_value());
  CHECK(back.records[1].counters.is_null());
  CHECK(back.records[1].extra.is_null());
  CHECK(back.device.is_null());
  CHECK(back.claims.is_null());
  CHECK(back.ceilings.l2_GBps == 0.0);
  CHECK(to_json(back) == j);
}

TEST_CASE("results: optional keys left out of a document read back as absent", "[results]") {
  json j = to_json(full_run());
  json& rec = j["records"][0];
  for (const char* k : {"verify", "time", "effective_GBps", "pct_of_copy", "model_GBps", "counters",
                        "counters_reason", "extra"})
    rec.erase(k);
  j.erase("claims");
  j.erase("device");
  const RunResults back = results_from_json(j);
  const Record& r = back.records[0];
  CHECK_FALSE(r.verify.has_value());
  CHECK_FALSE(r.time.has_value());
  CHECK_FALSE(r.effective_GBps.has_value());
  CHECK_FALSE(r.pct_of_copy.has_value());
  CHECK_FALSE(r.model_GBps.has_value());
  CHECK_FALSE(r.counters_reason.has_value());
  CHECK(r.counters.is_null());
  CHECK(r.extra.is_null());
  CHECK(back.claims.is_null());
  CHECK(back.device.is_null());
}

TEST_CASE("results: a non-finite number is written as null and read back as NaN", "[results]") {
  RunResults run = full_run();
  run.records[0].verify->max_rel_err = std::numeric_limits<double>::quiet_NaN();
  run.records[0].verify->passed = false;
  run.records[0].model = predict(TrafficModel::compute, run.records[0].problem(), run.ceilings);
  const json j = to_json(run);
  CHECK(j["records"][0]["verify"]["max_rel_err"].is_null());
  CHECK(j["records"][0]["model"]["flops"].is_null());
  const RunResults back = results_from_json(j);
  CHECK(std::isnan(back.records[0].verify->max_rel_err));
  CHECK(std::isnan(back.records[0].model.flops));
  CHECK(to_json(back) == j);
}

TEST_CASE("results: documents this tool must not read get a one-line error", "[results]") {
  const json good = to_json(full_run());

  SECTION("wrong schema") {
    json j = good;
    j["schema"] = "something-else/results";
    const std::string e = error_of([&] { results_from_json(j, "runs/a/results.json"); });
    CAPTURE(e);
    CHECK(one_line(e));
    CHECK(e.rfind("runs/a/results.json: schema: ", 0) == 0);
    CHECK(e.find("\"something-else/results\"") != std::string::npos);
    CHECK(e.find("softmax-roofline/results") != std::string::npos);
  }
  SECTION("no schema at all") {
    json j = good;
    j.erase("schema");
    const std::string e = error_of([&] { results_from_json(j); });
    CAPTURE(e);
    CHECK(e.find("schema: is missing") != std::string::npos);
  }
  SECTION("a newer schema_version") {
    json j = good;
    j["schema_version"] = kResultsSchemaVersion + 1;
    const std::string e = error_of([&] { results_from_json(j); });
    CAPTURE(e);
    CHECK(one_line(e));
    CHECK(e.find("schema_version: 2 is newer than this softmax-bench reads (1)") != std::string::npos);
  }
  SECTION("a wrong type deep inside names the key path") {
    json j = good;
    j["records"][0]["M"] = "65536";
    CHECK(error_of([&] { results_from_json(j); }) ==
          "results.json: records[0].M: expected an integer, got string");
    j = good;
    j["records"][1]["model"]["dram_bytes"] = "many";
    CHECK(error_of([&] { results_from_json(j); }) ==
          "results.json: records[1].model.dram_bytes: expected a number, got string");
    j = good;
    j["records"][0]["counters"]["dram_bytes"] = "1 GB";
    CHECK(error_of([&] { results_from_json(j); }) ==
          "results.json: records[0].counters.dram_bytes: expected a number, got string");
  }
  SECTION("a missing required key and a bad enum value") {
    json j = good;
    j["records"][0]["time"].erase("median_s");
    CHECK(error_of([&] { results_from_json(j); }) == "results.json: records[0].time.median_s: missing");
    j = good;
    j["records"][0]["status"] = "done";
    CHECK(error_of([&] { results_from_json(j); }) ==
          "results.json: records[0].status: 'done' is not one of ok, skipped, failed");
    j = good;
    j["records"][0]["dtype"] = "fp8";
    CHECK(error_of([&] { results_from_json(j); }) ==
          "results.json: records[0].dtype: 'fp8' is not one of fp32, bf16, fp16");
  }
  SECTION("a shape no kernel ran: M or N below 1, a stride shorter than the row") {
    json j = good;
    j["records"][1]["M"] = -5;
    CHECK(error_of([&] { results_from_json(j, "r.json"); }) ==
          "r.json: records[1].M: expected a row count >= 1, got -5");
    j = good;
    j["records"][0]["N"] = 0;
    CHECK(error_of([&] { results_from_json(j, "r.json"); }) ==
          "r.json: records[0].N: expected a row length >= 1, got 0");
    j = good;
    j["records"][0]["ld_y"] = j["records"][0]["N"].get<std::int64_t>() - 1;
    CHECK(error_of([&] { results_from_json(j, "r.json"); }).rfind("r.json: records[0].ld_y: expected a row stride >= N", 0) == 0);
    j = good;
    j["records"][0]["ld_x"] = 0;
    CHECK(error_of([&] { results_from_json(j, "r.json"); }).rfind("r.json: records[0].ld_x: expected a row stride >= N", 0) == 0);
  }
  SECTION("files: missing, and not JSON") {
    ScratchDir dir;
    const std::string missing = error_of([&] { read_results(dir.path() / "nope.json"); });
    CAPTURE(missing);
    CHECK(one_line(missing));
    CHECK(missing.find("nope.json: no such file") != std::string::npos);
    std::ofstream(dir.path() / "bad.json") << "{\"schema\": ";
    const std::string bad = error_of([&] { read_results(dir.path() / "bad.json"); });
    CAPTURE(bad);
    CHECK(one_line(bad));
    CHECK(bad.find("bad.json: not valid JSON") != std::string::npos);
  }
}

TEST_CASE("atomic write: no temporary left, nothing clobbered on failure", "[results]") {
  ScratchDir dir;
  const fs::path file = dir.path() / "results.json";

  SECTION("success replaces the old content and leaves only the file") {
    write_file_atomic(file, "old\n");
    write_file_atomic(file, "new\n");
    CHECK(slurp(file) == "new\n");
    CHECK(dir.entries() == std::vector<std::string>{"results.json"});
  }
  SECTION("a directory where the file should be: error, directory untouched, no temporary") {
    fs::create_directory(file);
    std::ofstream(file / "inside.txt") << "keep me";
    const std::string e = error_of([&] { write_file_atomic(file, "new\n"); });
    CAPTURE(e);
    CHECK(one_line(e));
    CHECK(e.find("results.json: cannot write (rename") != std::string::npos);
    CHECK(fs::is_directory(file));
    CHECK(slurp(file / "inside.txt") == "keep me");
    CHECK(dir.entries() == std::vector<std::string>{"results.json"});
  }
  SECTION("a write that fails half-way (file size limit): the old file is unchanged") {
    write_file_atomic(file, "old\n");
    const std::string big(64 * 1024, 'x');
    // RLIMIT_FSIZE makes write() fail with EFBIG past the limit (root included); SIGXFSZ would
    // otherwise kill the process.
    rlimit saved{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = saved;
    small.rlim_cur = 1024;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    std::string e;
    try {
      write_file_atomic(file, big);
    } catch (const std::runtime_error& ex) {
      e = ex.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, old_handler);
    CAPTURE(e);
    CHECK(e.find("cannot write (write") != std::string::npos);
    CHECK(slurp(file) == "old\n");
    CHECK(dir.entries() == std::vector<std::string>{"results.json"});
  }
  SECTION("a directory that does not exist") {
    const std::string e = error_of([&] { write_file_atomic(dir.path() / "no" / "results.json", "x"); });
    CAPTURE(e);
    CHECK(e.find("cannot write (create") != std::string::npos);
  }
}

TEST_CASE("created: ISO 8601 UTC", "[results]") {
  CHECK(std::regex_match(utc_now_iso8601(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

TEST_CASE("a file the user names: what it is when it cannot be read, and the size cap", "[results]") {
  ScratchDir dir;
  const fs::path d = dir.path();
  const auto reason = [](const fs::path& p, std::uintmax_t cap = 1000) -> std::string {
    try {
      (void)read_input_file(p, cap, "a test file");
    } catch (const InputFileError& e) {
      CHECK(one_line(e.what()));
      CHECK(std::string(e.what()) == p.string() + ": " + e.reason);  // names the file
      return e.reason;
    }
    return "(read)";
  };
  std::ofstream(d / "small.json") << "{}";
  CHECK(read_input_file(d / "small.json", 1000, "a test file") == "{}");
  CHECK(reason(d / "missing.json") == "no such file");

  fs::create_directory(d / "adir");
  CHECK(reason(d / "adir") == "a directory, not a file");

  fs::create_symlink("/dev/zero", d / "zero.json");
  CHECK(reason(d / "zero.json") == "not a regular file (a character device)");

  fs::create_symlink("loop.json", d / "loop.json");
  CHECK(reason(d / "loop.json").rfind("a symlink loop", 0) == 0);

  fs::create_symlink("gone.json", d / "dangling.json");
  CHECK(reason(d / "dangling.json") == "a symlink to a missing file (gone.json)");

  REQUIRE(::mkfifo((d / "fifo.json").c_str(), 0600) == 0);
  CHECK(reason(d / "fifo.json") == "not a regular file (a FIFO)");  // refused without blocking

  // The cap: a file of exactly the cap is read, one byte more is refused, and the message gives
  // the size and the cap.
  std::ofstream(d / "cap.json") << std::string(1000, ' ');
  CHECK(read_input_file(d / "cap.json", 1000, "a test file").size() == 1000);
  std::ofstream(d / "over.json") << std::string(1001, ' ');
  CHECK(reason(d / "over.json") == "1001 bytes, larger than the 1000 bytes a test file may be");
  CHECK(reason(d / "over.json", std::uintmax_t{1} << 20) == "(read)");
  fs::resize_file(d / "over.json", (std::uintmax_t{3} << 20) + 1);  // sparse: no disk used
  CHECK(reason(d / "over.json", std::uintmax_t{3} << 20) ==
        "3145729 bytes, larger than the 3 MiB a test file may be");

  // Unreadable: only where permissions bind (not as root).
  if (::geteuid() != 0) {
    std::ofstream(d / "secret.json") << "{}";
    fs::permissions(d / "secret.json", fs::perms::none);
    CHECK(reason(d / "secret.json") == "cannot read: Permission denied");
  }

  // read_results goes through it: its errors say the same.
  const std::string e = error_of([&] { read_results(d / "adir"); });
  CHECK(e == (d / "adir").string() + ": a directory, not a file");
}
