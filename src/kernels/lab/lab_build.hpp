// The registry entries one kind of build has and the other lacks, and how to get that build: for
// `list` and the "unknown kernel" errors of `--kernels` and of a config's kernel list. A lab build
// (cmake --preset lab: SMR_BUILD_LAB=ON, SMR_BUILD_PRODUCTION=OFF) has the course lab's starter,
// docs/lab/03-fuse-it.md, and not the production `softmax`; the full build the other way round.
// Plain C++.
#pragma once

#include <string>
#include <string_view>

namespace smr {

// "; NAME is ... (how to build it)" for a name only the other kind of build has, "" for any other.
inline std::string lab_build_hint(std::string_view name) {
  if (name == "fused_starter")
    return "; fused_starter is lab exercise 03's kernel, built only in a lab build: cmake --preset "
           "lab (-DSMR_BUILD_LAB=ON) && cmake --build --preset lab, then run "
           "build/lab/src/harness/softmax-bench (docs/lab/README.md)";
  if (name == "softmax")
    return "; softmax is the production kernel, which a lab build (cmake --preset lab) leaves out: "
           "it needs the full build, cmake --preset release && cmake --build --preset release";
  return "";
}

}  // namespace smr
