// What the copy ceiling's tests and the staged copy's (experiments/) share: a byte pattern, the
// poison check around a copied range, and event timing of two operations sampled alternately.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "harness/device.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"

namespace smr::test {

// n bytes of a pattern with no short period (a copy that lands one byte off is seen).
inline std::vector<unsigned char> patterned_bytes(std::size_t n) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + 7) % 251);
  return v;
}
// Whether every byte of `out` outside [begin, end) still holds the poison it was filled with.
inline bool poison_outside(const std::vector<unsigned char>& out, std::size_t begin,
                           std::size_t end) {
  for (std::size_t i = 0; i < out.size(); ++i)
    if ((i < begin || i >= end) && out[i] != kPoisonByte) return false;
  return true;
}

// Seconds one call of `op` takes on stream s, between two CUDA events.
template <class Op>
double seconds_once(CudaStream& s, Op&& op) {
  CudaEvent start, stop;
  start.record(s.get());
  op();
  stop.record(s.get());
  s.sync();
  return stop.seconds_since(start);
}
// The median of a set of samples, as the harness takes it (timing.hpp's summarize).
inline double median_of(std::vector<double> t) {
  return summarize(std::move(t), 1, false).median_s;
}
// Two operations timed alternately, sample by sample, after `warmups` untimed rounds: a drift of
// the card's clocks or temperature during the test moves both medians alike. Each one's samples.
struct Alternated {
  std::vector<double> a, b;
};
template <class A, class B>
Alternated time_alternately(CudaStream& s, A&& a, B&& b, int warmups, int reps) {
  for (int i = 0; i < warmups; ++i) {
    a();
    b();
  }
  Alternated t;
  for (int i = 0; i < reps; ++i) {
    t.a.push_back(seconds_once(s, a));
    t.b.push_back(seconds_once(s, b));
  }
  return t;
}

}  // namespace smr::test
