// Lab exercise 03 on the CPU: the fused kernel's steps (load with the -inf sentinel, max,
// exp-sum, scale, store: `fused_row` and the functions it calls) run on the host, every thread of
// the block emulated, and the output checked against the fp64 reference of harness/verify.hpp
// with the same checks every kernel goes through. No GPU needed.
//
// Which steps: in a lab build (cmake --preset lab, SMR_BUILD_LAB=ON), the student's,
// src/kernels/lab/fused_row_starter.cuh: the test FAILS on the unfinished starter (the
// placeholders write nothing, so the poisoned output shows every element unwritten) and passes
// once the five TODOs are right. In the default build and in the instructor's solution build, the
// answer key's, docs/lab/answers/fused_row_solution.cuh, so that CI keeps the steps and this
// emulation honest. On a GPU, smr_lab_starter_tests runs the kernel itself.
#include <barrier>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "gpu_check.hpp"
#include "harness/verify.hpp"
#include "kernels/lab/fused_row.hpp"

#if SMR_LAB_CPU_STARTER
#include "kernels/lab/fused_row_starter.cuh"
#else
#include "fused_row_solution.cuh"
#endif

namespace smr {
namespace {

#if SMR_LAB_CPU_STARTER
constexpr const char* kWhere =
    "lab exercise 03: the steps are src/kernels/lab/fused_row_starter.cuh (TODO 1-5), "
    "docs/lab/03-fuse-it.md";
#else
constexpr const char* kWhere =
    "lab exercise 03, the reference solution: docs/lab/answers/fused_row_solution.cuh";
#endif

// One block of kThreads threads on the host, each on a host thread of its own, running the rows
// of a matrix one after another (each GPU block runs one row; the rows are independent, so the
// order does not matter). A block reduction does what block_allreduce (kernels/common/reduce.cuh) does
// on the GPU: every thread publishes its value, all meet at a barrier, each reduces all the
// values in thread order (so all get the same result), and a second barrier keeps the values
// until everyone has read them. A thread that returns leaves the barrier (arrive_and_drop), so a
// thread that skips a reduction shows up in `calls`, not as a hang.
class HostBlock {
 public:
  explicit HostBlock(int threads) : values_(threads), calls_(threads, 0), barrier_(threads) {}

  // What `fused_row` gets as `block` in thread t.
  struct Thread {
    HostBlock* block;
    int t;
    float max(float v) const {
      return block->reduce(t, v, -INFINITY, [](float a, float b) { return fmaxf(a, b); });
    }
    float sum(float v) const {
      return block->reduce(t, v, 0.0f, [](float a, float b) { return a + b; });
    }
  };

  // Runs body(Thread) in every thread, and returns when all have returned.
  template <class Body>
  void run(const Body& body) {
    std::vector<std::thread> threads;
    threads.reserve(values_.size());
    for (int t = 0; t < static_cast<int>(values_.size()); ++t)
      threads.emplace_back([this, t, &body] {
        body(Thread{this, t});
        barrier_.arrive_and_drop();
      });
    for (auto& th : threads) th.join();
  }

  // Block reductions each thread called (the same count in every thread, when the steps are
  // right).
  const std::vector<int>& calls() const { return calls_; }

 private:
  template <class Op>
  float reduce(int t, float v, float identity, Op op) {
    ++calls_[t];
    values_[t] = v;
    barrier_.arrive_and_wait();
    float r = identity;
    for (float u : values_) r = op(r, u);
    barrier_.arrive_and_wait();
    return r;
  }

  std::vector<float> values_;
  std::vector<int> calls_;
  std::barrier<> barrier_;
};

// Poison (harness/verify.hpp) after the output, the host's guard band: a store past the last row
// must not change it. Reads past the last row of x find kPaddingSentinel.
constexpr std::int64_t kGuard = kFusedMaxN;

struct Emulated {
  std::vector<float> y;          // p.M rows of stride p.ld_y, as verify_output takes them
  std::vector<int> calls;        // block reductions per thread (of the last row's block)
  std::int64_t guard_writes = 0;  // elements of the guard band after y that were written
  int threads = 0;
};

// The fused kernel's launch (fused_row_starter.cu), on the host: the tile FusedTiles picks for N,
// then every row through one emulated block.
Emulated emulate(const Problem& p, const std::vector<float>& x) {
  std::vector<float> xs = x;
  xs.resize(x.size() + kGuard, kPaddingSentinel);
  std::vector<float> ys(static_cast<std::size_t>(p.M * p.ld_y + kGuard), poison_value());
  Emulated out;
  const int n = static_cast<int>(p.N);
  const bool launched = with_fused_tile(
      n,
      [&](auto tile) {
        using T = decltype(tile);
        constexpr int kThreads = T::kThreads;
        HostBlock block(kThreads);
        block.run([&](HostBlock::Thread thread) {
          for (std::int64_t r = 0; r < p.M; ++r)
            lab::fused_row<kThreads, T::kTile / kThreads>(xs.data() + r * p.ld_x,
                                                          ys.data() + r * p.ld_y, n, thread.t,
                                                          thread);
        });
        out.calls = block.calls();
        out.threads = kThreads;
      },
      FusedTiles{});
  REQUIRE(launched);
  for (std::int64_t i = p.M * p.ld_y; i < static_cast<std::int64_t>(ys.size()); ++i)
    out.guard_writes += is_poison(ys[i]) ? 0 : 1;
  ys.resize(static_cast<std::size_t>(p.M * p.ld_y));
  out.y = std::move(ys);
  return out;
}

void check_against_reference(const Problem& p, InputKind kind, std::uint64_t case_index) {
  const std::uint64_t base = test::base_seed();
  const std::uint64_t seed = test::case_seed(base, 7000 + case_index);
  INFO(kWhere);
  INFO("M = " << p.M << ", N = " << p.N << ", ld_x = " << p.ld_x << ", ld_y = " << p.ld_y
              << ", input " << to_string(kind) << ", seed " << seed << " (SMR_TEST_SEED=" << base
              << ")");
  const std::vector<float> x = make_input(p, seed, kind);
  const Emulated run = emulate(p, x);
  INFO(run.threads << " threads per block; block reductions called by thread 0: "
                   << run.calls.front());
  for (std::size_t t = 0; t < run.calls.size(); ++t) {
    INFO("thread " << t << " called " << run.calls[t] << " block reductions, thread 0 called "
                   << run.calls.front()
                   << ": every thread must call block.max and block.sum (on the GPU they hold "
                      "__syncthreads)");
    REQUIRE(run.calls[t] == run.calls.front());
  }
  INFO("elements written past the last row: " << run.guard_writes);
  CHECK(run.guard_writes == 0);
  const std::optional<std::string> padding = check_padding_untouched(p, run.y);
  INFO(padding.value_or(""));
  CHECK_FALSE(padding.has_value());
  const VerifyResult v = verify_output(p, x, run.y, kDefaultTolerance);
  INFO("max relative error " << v.max_rel_err << " (tolerance " << v.tolerance << "): "
                             << v.detail);
  REQUIRE(v.passed);
  CHECK(v.rows_checked == p.M);
}

TEST_CASE("fused_row on the CPU matches the fp64 reference on every tile and odd N", "[lab][cpu]") {
  // N on both sides of every tile boundary (powers of two from 128 to the cap) and tiny rows;
  // M = 18 takes each of the 9 row kinds of the mixed input twice.
  const std::int64_t n = GENERATE(as<std::int64_t>{}, 1, 2, 3, 7, 31, 32, 33, 127, 128, 129, 255,
                                  257, 1000, 1023, 1024, 1025, 2047, 4095, 4097, 8191, 8193,
                                  16383, 16385, 30011, 32767, 32768);
  check_against_reference(dense(18, n), InputKind::mixed, static_cast<std::uint64_t>(n));
}

TEST_CASE("fused_row on the CPU: every kind of hostile row alone", "[lab][cpu]") {
  const InputKind kind =
      GENERATE(InputKind::normal, InputKind::outliers, InputKind::large, InputKind::all_equal,
               InputKind::some_neg_inf, InputKind::all_neg_inf, InputKind::has_nan,
               InputKind::has_pos_inf);
  const std::int64_t n = GENERATE(as<std::int64_t>{}, 5, 1000, 4097);
  const auto case_index =
      100000 + 100 * static_cast<std::uint64_t>(kind) + static_cast<std::uint64_t>(n);
  check_against_reference(dense(3, n), kind, case_index);
}

TEST_CASE("fused_row on the CPU: padded rows", "[lab][cpu]") {
  // ld = N + pad: the padding of x holds a huge sentinel (read it and the row max is wrong), the
  // padding of y must stay poisoned.
  const std::int64_t n = GENERATE(as<std::int64_t>{}, 33, 1000);
  const std::int64_t pad_x = GENERATE(as<std::int64_t>{}, 1, 3, 64);
  const std::int64_t pad_y = GENERATE(as<std::int64_t>{}, 0, 5);
  const auto case_index = 200000 + static_cast<std::uint64_t>(n * 1000 + pad_x * 10 + pad_y);
  check_against_reference(Problem{9, n, n + pad_x, n + pad_y, DType::f32}, InputKind::mixed,
                          case_index);
}

}  // namespace
}  // namespace smr
