// The fused kernel's one-tile cap, for the registry, the tests and the docs (host-only).
#pragma once

#include <cstdint>

namespace smr {

// The largest N the fused kernel takes: its largest tile, 1024 threads x 32 floats held in
// registers. The next tile (65536) would need 64 floats per thread, the whole 64-register budget
// of a 1024-thread block, and would spill: docs/performance.md, "Lab kernels", has the ptxas
// table that shows every instantiation up to this cap without spill stores or stack frame.
inline constexpr std::int64_t kFusedMaxN = 32768;

}  // namespace smr
