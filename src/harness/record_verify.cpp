// Verification of one record: the kernel launched once on a freshly made input and a NaN-poisoned
// output, every row of the output checked on the device (harness/verify_gpu.hpp) against the
// config's tolerance.
#include "harness/detail/sweep_parts.hpp"
#include "harness/verify_gpu.hpp"

namespace smr::detail {

std::optional<VerifyResult> verify_record(const KernelInfo& k, ShapeData& s, void* workspace,
                                          const SweepConfig& cfg, cudaStream_t stream) {
  if (k.traffic == TrafficModel::compute) return std::nullopt;  // FMA: no output to check
  const Problem& p = s.p;
  // Made again for each kernel: a kernel that wrote into x must not hand the next one its damage.
  fill_input_device(s.x.get(), p, s.seed, InputKind::mixed, stream);
  poison_nan(s.y.get(), s.y.bytes(), stream);
  k.launch(Launch{s.x.get(), s.y.get(), p, workspace, stream});
  // The copy ceiling kernel's output must equal its input bit for bit.
  if (!k.is_softmax()) return verify_copy_device(p, s.x.get(), s.y.get(), stream);
  // fp32: the config's tolerance; 16-bit storage: the rounding of the stored output on top of it.
  if (p.dtype == DType::f32)
    return verify_output_device(p, s.x.get(), s.y.get(), cfg.tolerance, stream);
  return verify_storage_output_device(p, s.x.get(), s.y.get(), stream);
}

}  // namespace smr::detail
