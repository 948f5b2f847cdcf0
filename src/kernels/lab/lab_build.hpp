// The registry entries that only a lab build has (-DSMR_BUILD_LAB=ON: the course lab's starter,
// docs/lab/03-fuse-it.md), and how to get one: for the "unknown kernel" errors of `--kernels` and
// of a config's kernel list in a build without them. Plain C++.
#pragma once

#include <string>
#include <string_view>

namespace smr {

// "; NAME is ... (how to build it)" for a lab-only name, "" for any other.
inline std::string lab_build_hint(std::string_view name) {
  if (name != "fused_starter") return "";
  return "; fused_starter is lab exercise 03's kernel, built only in a lab build: cmake -S . -B "
         "build/lab -G Ninja -DCMAKE_BUILD_TYPE=Release -DSMR_BUILD_LAB=ON, then run "
         "build/lab/src/harness/softmax-bench (docs/lab/README.md)";
}

}  // namespace smr
