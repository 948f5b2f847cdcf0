// placeholder: being written
#include "kernels/entries.hpp"
namespace smr::entries {
KernelInfo copy() {
  KernelInfo k;
  k.name = "copy";
  k.description = "(not written yet)";
  k.role = Role::ceiling;
  k.traffic = TrafficModel::copy;
  k.unsupported = [](const Problem&, const DeviceLimits&) -> std::optional<std::string> { return "not written yet"; };
  return k;
}
}  // namespace smr::entries
namespace smr::entries {
KernelInfo fma() {
  KernelInfo k;
  k.name = "fma";
  k.description = "(not written yet)";
  k.role = Role::ceiling;
  k.traffic = TrafficModel::compute;
  return k;
}
}  // namespace smr::entries
