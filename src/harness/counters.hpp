// Hardware counters through CUPTI's Range Profiler (CUDA >= 12.6): what each kernel really moved
// through DRAM, L2 and L1 and which instructions it ran. A profiling pass of its own, never mixed
// with timing.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace smr {

// The default metric set (docs/results-schema.md explains each).
std::vector<std::string> default_counter_metrics();

struct CounterReading {
  bool ok = false;
  std::string reason;                  // why not, with the fix ("run as root, or ...")
  std::map<std::string, double> values;  // metric name -> value, attributed to the work
  int passes = 0;                      // replay passes the metric set needed
};

class CounterSession {
 public:
  // Creates the profiler for the current device and context. Never throws for "counters are not
  // available here" (no privileges, unsupported device): available() says so and why.
  CounterSession(std::vector<std::string> metrics);
  ~CounterSession();
  CounterSession(const CounterSession&) = delete;
  CounterSession& operator=(const CounterSession&) = delete;

  bool available() const;
  const std::string& unavailable_reason() const;

  // Profiles `work` (enqueue the kernel(s) on the default stream or synchronise inside) as one
  // range, replaying it as many times as the metric set needs. DRAM writes still dirty in L2 when
  // `work` ends are attributed to it: `evict_l2` runs inside the range and what it itself read is
  // subtracted. Both callables must be repeatable (same inputs each pass).
  CounterReading measure(const std::function<void()>& work, const std::function<void()>& evict_l2);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smr
