// Google Benchmark inside the sweep: its one-time initialisation and gbench.json, its own JSON
// document accumulated over the records of a run (and of a --resume).
#include <fstream>

#include <benchmark/benchmark.h>

#include "harness/detail/sweep_parts.hpp"

namespace smr::detail {

namespace fs = std::filesystem;
using json = nlohmann::json;

void init_google_benchmark() {
  static bool done = false;
  if (done) return;
  static char name[] = "softmax-bench";
  static char* argv[] = {name, nullptr};
  int argc = 1;
  benchmark::Initialize(&argc, argv);
  done = true;
}

GbenchLog::GbenchLog(fs::path file, bool resume) : file_(std::move(file)) {
  if (!resume) return;
  std::ifstream in(file_);
  if (in) {
    try {
      doc_ = json::parse(in);
    } catch (const json::exception&) {
      doc_ = nullptr;  // a damaged file from an earlier run is rewritten from this run
    }
  }
}

void GbenchLog::add(const std::string& reporter_output) {
  json j = json::parse(reporter_output);
  if (!doc_.is_object() || !doc_.contains("benchmarks")) {
    doc_ = std::move(j);
    return;
  }
  for (auto& b : j["benchmarks"]) {
    // A re-timed record replaces its earlier entry.
    auto& list = doc_["benchmarks"];
    for (auto it = list.begin(); it != list.end(); ++it)
      if ((*it).value("name", "") == b.value("name", "")) {
        list.erase(it);
        break;
      }
    list.push_back(b);
  }
}

void GbenchLog::save() const {
  if (doc_.is_object()) write_file_atomic(file_, doc_.dump(2) + "\n");
}

}  // namespace smr::detail
