// libFuzzer target for the sweep-config loader. Any bytes, read once as YAML and once as JSON,
// must give either a SweepConfig that keeps the loader's promises or exactly one ConfigError with
// a one-line message and a position; never a crash, a hang, another exception or a sanitizer
// report. The promises checked:
//   - a loaded config has problems, each with M, N > 0 and strides >= N;
//   - its `normalized` is itself a valid config (JSON) that loads back to the same `normalized`;
//   - an error is one line that starts with the source, a line and a column;
//   - text that nlohmann::json accepts is never "malformed JSON".
// Build and run: docs/verification.md, "Config loader fuzzing".
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/config.hpp"

namespace {

// The registry's names (src/kernels/registry.cpp), given here because this build has no CUDA
// code; which names they are does not matter to the parser, only that some are valid.
const smr::KernelNames& kernel_names() {
  static const smr::KernelNames names{
      {"unfused", "fused", "online", "softmax", "cudnn", "copy", "fma"},
      {"unfused", "fused", "online", "softmax", "cudnn"}};
  return names;
}

[[noreturn]] void broken(const char* promise, const std::string& detail) {
  std::fprintf(stderr, "fuzz_config: broken promise: %s\n  %s\n", promise, detail.c_str());
  std::abort();
}

void check_error(const smr::ConfigError& e, const std::string& source) {
  const std::string what = e.what();
  if (what.find_first_of("\n\r") != std::string::npos) broken("a one-line message", what);
  if (what.rfind(source + ":", 0) != 0) broken("a message that starts with the source", what);
  if (e.line < 1 || e.column < 1) broken("a message with a line and a column", what);
}

void check_config(const smr::SweepConfig& c) {
  if (c.problems.empty()) broken("a config has problems", c.normalized.dump());
  for (const smr::Problem& p : c.problems)
    if (p.M <= 0 || p.N <= 0 || p.ld_x < p.N || p.ld_y < p.N)
      broken("M, N > 0 and strides >= N", c.normalized.dump());
  const std::string text = c.normalized.dump();
  try {
    const smr::SweepConfig again = smr::load_config_text(text, "normalized", true, kernel_names());
    if (again.normalized != c.normalized) broken("normalized loads back to itself", text);
    if (again.problems.size() != c.problems.size()) broken("normalized keeps the problems", text);
  } catch (const smr::ConfigError& e) {
    broken("normalized is a valid config", std::string(e.what()) + "  <-  " + text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const bool json : {false, true}) {
    const std::string source = json ? "input.json" : "input.yaml";
    try {
      check_config(smr::load_config_text(text, source, json, kernel_names()));
    } catch (const smr::ConfigError& e) {
      check_error(e, source);
      // What nlohmann::json accepts as JSON (and has no control characters, which JSON allows
      // nowhere, and nlohmann takes a NUL for the end) is never "malformed JSON".
      const bool controls = std::any_of(text.begin(), text.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
      });
      const std::string malformed = source + ":" + std::to_string(e.line) + ":" +
                                    std::to_string(e.column) + ": malformed JSON";
      if (json && !controls && std::string(e.what()).rfind(malformed, 0) == 0 &&
          nlohmann::json::accept(text))
        broken("valid JSON is read", e.what());
    }
  }
  return 0;
}
