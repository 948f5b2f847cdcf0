// cudnn: cuDNN's softmax, the library a C++ user would otherwise call, run in-process as a peer.
//
// cudnnSoftmaxForward with CUDNN_SOFTMAX_ACCURATE (it subtracts the max first, like every kernel
// here) and CUDNN_SOFTMAX_MODE_INSTANCE (the softmax runs over C x H x W for each of the N
// images). The (M, N) matrix is described as an NCHW tensor of shape (M, N, 1, 1) whose image
// stride is the row stride: strides (ld, 1, 1, 1), one descriptor for x and one for y. (cuDNN
// 9.14 on the H200 ignored an image stride ld > N -- see unsupported() -- so only dense rows run.)
// fp32, bf16 and fp16 storage (CUDNN_DATA_FLOAT, _BFLOAT16, _HALF); alpha and beta are floats for
// all three, as cuDNN takes them for 16-bit tensors. A data type this cuDNN's softmax does not
// take fails the launch with cuDNN's own status (CUDNN_STATUS_NOT_SUPPORTED), which the sweep
// records as the peer's failure.
//
// One cuDNN handle per host thread and device, created on first use and kept alive (creating a
// handle costs milliseconds; the sweep times thousands of launches), destroyed when the thread
// ends. The descriptors are kept with it and set again only when the problem changes, so a timed
// launch does no host work but cudnnSetStream and the call itself.
//
// Traffic: cuDNN does not say what it does, so its model is what its counters measured
// (results/h200/default/results.json, the cudnn records, fp32 far above L2; 16-bit rows take the
// same rule, unmeasured until a bf16 run's counters say otherwise): one read of x and one
// write of y -- the fused 2 passes -- up to N = 32768, and from N = 65536 on three reads and two
// writes of an x-sized buffer, the unfused pipeline's 5 passes (max, exp to a temporary, scale).
// traffic_for() applies the fused model up to kCudnnOnePassMaxN and the unfused one above it (with
// that model's L2 rule for the temporary). Special values (NaN, +inf, all -inf rows) are cuDNN's own business: the
// tests check its finite rows and that those rows are unaffected by the others.
//
// Built only when CMake found cuDNN (SMR_HAVE_CUDNN); otherwise the entry stays listed and says
// why it cannot run.
#include <climits>
#include <optional>
#include <string>

#include "kernels/entries.hpp"
#include "kernels/preconditions.hpp"

#ifdef SMR_HAVE_CUDNN
#include <cudnn.h>

#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

#include "kernels/cuda_check.hpp"
#endif

namespace smr {
namespace {

#ifdef SMR_HAVE_CUDNN

struct CudnnError : std::runtime_error {
  cudnnStatus_t status;
  CudnnError(cudnnStatus_t s, const std::string& what) : std::runtime_error(what), status(s) {}
};

void cudnn_check(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw CudnnError(status, std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                                 cudnnGetErrorString(status));
}

void cudnn_report(cudnnStatus_t status, const char* call, const char* file, int line) noexcept {
  if (status != CUDNN_STATUS_SUCCESS)
    std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, cudnnGetErrorString(status));
}

#define CUDNN_CHECK(call) cudnn_check((call), #call, __FILE__, __LINE__)
#define CUDNN_CHECK_NOTHROW(call) cudnn_report((call), #call, __FILE__, __LINE__)

class CudnnHandle {
 public:
  CudnnHandle() { CUDNN_CHECK(cudnnCreate(&h_)); }
  ~CudnnHandle() {
    if (h_) CUDNN_CHECK_NOTHROW(cudnnDestroy(h_));
  }
  CudnnHandle(CudnnHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  CudnnHandle& operator=(CudnnHandle&&) = delete;
  CudnnHandle(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return h_; }

 private:
  cudnnHandle_t h_ = nullptr;
};

class TensorDescriptor {
 public:
  TensorDescriptor() { CUDNN_CHECK(cudnnCreateTensorDescriptor(&d_)); }
  ~TensorDescriptor() {
    if (d_) CUDNN_CHECK_NOTHROW(cudnnDestroyTensorDescriptor(d_));
  }
  TensorDescriptor(TensorDescriptor&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  TensorDescriptor& operator=(TensorDescriptor&&) = delete;
  TensorDescriptor(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

  // (rows, cols, 1, 1) of `type` with image stride `ld`: row i starts ld elements after row i - 1.
  void set_rows(cudnnDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    CUDNN_CHECK(cudnnSetTensor4dDescriptorEx(d_, type, static_cast<int>(rows),
                                             static_cast<int>(cols), 1, 1, static_cast<int>(ld),
                                             1, 1, 1));
  }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
    case DType::f32: return CUDNN_DATA_FLOAT;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    case DType::f16: return CUDNN_DATA_HALF;
  }
  throw std::invalid_argument("cudnn: unknown dtype");
}

struct CudnnState {
  CudnnHandle handle;
  TensorDescriptor x, y;
  Problem shape{};  // the problem the descriptors describe; M = 0: not set yet
};

// This thread's state for the current device.
CudnnState& state_for_current_device() {
  thread_local std::map<int, CudnnState> states;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  auto it = states.find(device);
  if (it == states.end()) it = states.try_emplace(device).first;
  return it->second;
}

void launch(const Launch& l) {
  CudnnState& st = state_for_current_device();
  const Problem& p = l.p;
  const Problem& q = st.shape;
  if (p.M != q.M || p.N != q.N || p.ld_x != q.ld_x || p.ld_y != q.ld_y || p.dtype != q.dtype) {
    st.x.set_rows(cudnn_type(p.dtype), p.M, p.N, p.ld_x);
    st.y.set_rows(cudnn_type(p.dtype), p.M, p.N, p.ld_y);
    st.shape = p;
  }
  CUDNN_CHECK(cudnnSetStream(st.handle.get(), l.stream));
  // y = 1 * softmax(x) + 0 * y: y is only written (floats for every data type here)
  const float alpha = 1.0f, beta = 0.0f;
  CUDNN_CHECK(cudnnSoftmaxForward(st.handle.get(), CUDNN_SOFTMAX_ACCURATE,
                                  CUDNN_SOFTMAX_MODE_INSTANCE, &alpha, st.x.get(), l.x, &beta,
                                  st.y.get(), l.y));
  CUDA_CHECK_LAUNCH();
}

// cuDNN's legacy tensors: int dimensions and strides, at most 2^31 - 1 elements including padding.
std::optional<std::string> unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  const std::int64_t ld = p.ld_x > p.ld_y ? p.ld_x : p.ld_y;
  if ((p.M - 1) * ld + p.N > INT_MAX)
    return "cuDNN tensors hold at most 2^31 - 1 elements including row padding; this problem "
           "spans " + std::to_string((p.M - 1) * ld + p.N);
  // Seen on the H200 with cuDNN 9.14 (the GPU test of every kernel on padded rows failed for
  // cuDNN alone): with an image stride ld > N the descriptor above is accepted, but
  // cudnnSoftmaxForward treats the tensor as
  // packed -- it writes the row padding and leaves later rows unwritten. So padded rows are not
  // offered to cuDNN rather than timed wrong.
  if (p.ld_x != p.N || p.ld_y != p.N)
    return "cuDNN's softmax ignores padded row strides (ld_x = " + std::to_string(p.ld_x) +
           ", ld_y = " + std::to_string(p.ld_y) + ", N = " + std::to_string(p.N) +
           "): seen writing the padding on the H200, so only dense rows are run";
  return std::nullopt;
}

#else  // !SMR_HAVE_CUDNN

std::optional<std::string> unsupported(const Problem&, const DeviceLimits&) {
  return "cuDNN was not found at build time";
}

#endif

}  // namespace

namespace entries {

// The longest row cuDNN's softmax was measured to take in one read (see the header; the counters
// show two reads and a temporary from N = 65536, the next N that run measured).
constexpr std::int64_t kCudnnOnePassMaxN = 32768;

KernelInfo cudnn() {
  KernelInfo k;
  k.name = "cudnn";
  k.description = "cuDNN cudnnSoftmaxForward (ACCURATE, INSTANCE mode on an (M, N, 1, 1) tensor)";
  k.role = Role::library;
  k.traffic = TrafficModel::fused;  // up to kCudnnOnePassMaxN; traffic_for() says which
  k.traffic_for = [](const Problem& p, const DeviceLimits&) {
    return p.N <= kCudnnOnePassMaxN ? TrafficModel::fused : TrafficModel::unfused;
  };
  k.dtypes = {DType::f32, DType::bf16, DType::f16};
  k.unsupported = unsupported;
#ifdef SMR_HAVE_CUDNN
  k.launch = launch;
#endif
  return k;
}

}  // namespace entries
}  // namespace smr
