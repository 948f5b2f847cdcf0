// The sweep-config loader (docs/config.md lists every key). How a text becomes a SweepConfig:
//   1. config_parse.cpp parses it into a small tree whose every node keeps its line and column.
//   2. config_schema.cpp walks the schema over it once (config_values.cpp reads the typed
//      values), checking every key's type and range and rejecting what it does not know, so every
//      semantic error points at the key or value it is about.
// Nothing reaches SweepConfig unchecked; sizes are multiplied with overflow checks, never wrapped.
// The loader only throws ConfigError, whatever the input: fuzz/fuzz_config.cpp holds it to that
// (it builds the files above without this one). This file is what needs the registry and the
// build: the kernel names, config files by extension, and the embedded default sweep.
#include "harness/config.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "harness/detail/config_tree.hpp"
#include "kernels/registry.hpp"
#include "roofline/results.hpp"

namespace smr::detail {
extern const std::string_view embedded_default_config;  // generated from configs/default.yaml
}

namespace smr {

using detail::in_quotes;

KernelNames registry_kernel_names() {
  KernelNames names;
  for (const KernelInfo& k : kernels()) names.known.push_back(k.name);
  names.all = default_kernel_names();
  return names;
}

SweepConfig load_config_text(const std::string& text, const std::string& source, bool json) {
  return load_config_text(text, source, json, registry_kernel_names());
}

SweepConfig load_config_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  // What the path is first (a directory named as a config is "a directory", not a format).
  std::string text;
  try {
    text = read_input_file(path, kMaxConfigBytes, "a config");
  } catch (const InputFileError& e) {
    throw ConfigError(source, 0, 0, "", e.reason);
  }
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (ext != ".yaml" && ext != ".yml" && ext != ".json")
    throw ConfigError(source, 0, 0, "",
                      "unknown config format " + in_quotes(ext) + ": expected .yaml, .yml or .json");
  return load_config_text(text, source, ext == ".json");
}

const std::string& default_config_text() {
  static const std::string text(detail::embedded_default_config);
  return text;
}

SweepConfig default_config() {
  return load_config_text(default_config_text(), "<embedded default>", false);
}

}  // namespace smr
