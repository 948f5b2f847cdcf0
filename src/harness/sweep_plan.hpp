// What of a config's sweep fits the device's memory: each shape's bytes (x, y and the unfused
// pipeline's fp32 intermediate) held against the memory the device has free at the start of a run
// (or, for `model`, against a stated assumption). A shape whose M the config derives from a size
// budget (`sweep: {elements: ...}`) is shrunk -- N kept, M halved until it fits; any other shape that
// does not fit is skipped with its reason while the rest run. Pure host code: tests/harness/
// test_sweep_plan.cpp plans against made-up memory sizes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"
#include "kernels/registry.hpp"

namespace smr {

// The memory a sweep is planned against.
struct MemoryBudget {
  std::int64_t free_bytes = 0;   // what the run may allocate (cudaMemGetInfo's free)
  std::int64_t total_bytes = 0;  // the card's memory, for the record
  std::int64_t l2_bytes = 0;     // the L2 flusher and the counters' evictor (4 x L2) need room too
  std::string source;            // "the device at hand (NAME)", or what is assumed and why
};

// The memory the sweep assumes when no device is asked (`softmax-bench model`): that of the card
// the model describes (a device profile's, or the run's whose ceilings it uses), all of it free,
// stated in what `model` prints.
MemoryBudget assumed_memory(const DeviceLimits& d, std::string_view card);

// The bytes a shape needs on the device: x and y with their row strides, and the unfused
// pipeline's M x N fp32 intermediate. INT64_MAX when that overflows.
std::int64_t shape_bytes(const Problem& p);

// Memory kept free beyond the shapes: 256 MiB for cuDNN, CUPTI and the driver, plus the L2
// flusher (1 x L2) and the counters' eviction buffer (4 x L2).
std::int64_t plan_margin_bytes(const MemoryBudget& m);

struct PlannedShape {
  Problem problem;               // as it runs: M scaled down when the shape was shrunk
  std::int64_t requested_M = 0;  // as the config gives it
  std::int64_t bytes = 0;        // shape_bytes(problem), or of the requested shape when skipped
  std::string skip_reason;       // "needs X GB, the device has Y GB free"; empty when it runs
  bool scaled() const { return problem.M != requested_M; }
  bool skipped() const { return !skip_reason.empty(); }
};

// One entry per problem, in order. `shrinkable[i]`: problem i's M may be reduced (a missing entry
// counts as false).
std::vector<PlannedShape> plan_shapes(const std::vector<Problem>& problems,
                                      const std::vector<bool>& shrinkable, const MemoryBudget& m);

// results.json's device.memory_plan: the budget, the margin, and every shape scaled or skipped.
nlohmann::json plan_json(const std::vector<PlannedShape>& plan, const MemoryBudget& m);

}  // namespace smr
