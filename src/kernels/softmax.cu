// placeholder: being written
#include "kernels/entries.hpp"
namespace smr::entries {
KernelInfo softmax() {
  KernelInfo k;
  k.name = "softmax";
  k.description = "(not written yet)";
  k.role = Role::production;
  k.traffic = TrafficModel::fused;
  k.unsupported = [](const Problem&, const DeviceLimits&) -> std::optional<std::string> { return "not written yet"; };
  return k;
}
}  // namespace smr::entries
