// The index arithmetic of warp_rows' staged trip (warp_rows.cu, "Staged rows"), for the kernel and
// for the host tests alike (tests/kernels/test_access.cpp): no CUDA headers, nothing else of the
// project's.
//
// A trip stages `rows` consecutive rows of n elements, ld elements apart, whose first row starts h
// elements past a 16-byte boundary (0 <= h < V, V elements a 16-byte vector). Positions count
// elements from that boundary, the start of the span's *window*: the span is [h, end), row r's
// elements are [h + r ld, h + r ld + n), and the ld - n between two rows are the first row's
// padding. Window vector i holds positions [i V, i V + V).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SMR_SPAN_HD __host__ __device__ __forceinline__
#else
#define SMR_SPAN_HD inline
#endif

namespace smr::prod {

// The most rows of n elements, ld apart, that a span of `span` elements holds whatever the first
// row's offset h < V from a boundary: V - 1 + (R - 1) min(ld, span) + n <= span (a stride past the
// span holds one row a trip); 0 when not even one row fits. The dispatch sizes its staged plans
// by it, the launcher checks a plan against it.
SMR_SPAN_HD std::int64_t staged_rows_fit(int V, std::int64_t n, std::int64_t ld,
                                         std::int64_t span) {
  if (n + V - 1 > span) return 0;
  return (span - (V - 1) - n) / (ld < span ? ld : span) + 1;
}

struct StagedSpan {
  int h;     // the first row's offset from the boundary below it
  int n;     // elements a row
  int ld;    // the stride (the kernel passes min(ld, span) -- see warp_rows.cu -- as rows > 1 only
             // when a stride fits the span)
  int rows;  // rows staged
  int V;     // elements a 16-byte vector

  // One past the last row's last element.
  SMR_SPAN_HD int end() const { return h + (rows - 1) * ld + n; }
  // Window vectors the span touches.
  SMR_SPAN_HD int vectors() const { return (end() + V - 1) / V; }
  // Vector i lies wholly inside [h, end): one 16-byte load (else its positions in the span are
  // loaded one by one: outside it the window may leave x's allocation).
  SMR_SPAN_HD bool loads_whole(int i) const { return i * V >= h && (i + 1) * V <= end(); }
  // Position p holds an output: inside the span and not in a row's padding.
  SMR_SPAN_HD bool is_output(int p) const { return p >= h && p < end() && (p - h) % ld < n; }
  // Every position of vector i is an output: one 16-byte store (else its outputs one by one).
  // Dense rows (ld == n) have no padding; on padded rows the vector must lie within one row.
  SMR_SPAN_HD bool stores_whole(int i) const {
    const int c = i * V - h;  // the vector's first position, counted from the span's start
    return c >= 0 && (i + 1) * V <= end() && (ld == n || c % ld + V <= n);
  }
};

}  // namespace smr::prod
