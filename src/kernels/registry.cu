// The registry table. Order here is the order of `softmax-bench list` and of `all`.
#include <algorithm>

#include "kernels/entries.hpp"
#include "kernels/registry.hpp"

namespace smr {

std::string_view to_string(Role r) {
  switch (r) {
    case Role::lab: return "lab";
    case Role::production: return "production";
    case Role::library: return "library";
    case Role::ceiling: return "ceiling";
  }
  return "?";
}

std::span<const KernelInfo> kernels() {
  static const std::vector<KernelInfo> table = [] {
    std::vector<KernelInfo> t{
        entries::unfused_3pass(), entries::fused_row(), entries::online(),
        entries::softmax(),       entries::cudnn(),     entries::copy(),
        entries::fma(),
    };
#ifdef SMR_BUILD_LAB
    t.push_back(entries::fused_starter());  // docs/lab exercise 03: the student's kernel, lab builds only
#endif
    // An entry whose launcher is missing (cuDNN not built in) stays listed: `unsupported` says why.
    return t;
  }();
  return table;
}

std::span<const std::string_view> lab_build_kernel_names() {
  static constexpr std::string_view names[] = {"fused_starter"};  // entries::fused_starter()
  return names;
}

const KernelInfo* find_kernel(std::string_view name) {
  for (const auto& k : kernels())
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> default_kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : kernels())
    if (k.role != Role::ceiling) names.push_back(k.name);
  return names;
}

std::optional<std::string> why_unsupported(const KernelInfo& k, const Problem& p,
                                           const DeviceLimits& d) {
  if (std::find(k.dtypes.begin(), k.dtypes.end(), p.dtype) == k.dtypes.end())
    return std::string(k.name) + " does not support " + std::string(to_string(p.dtype));
  if (k.unsupported) return k.unsupported(p, d);
  return std::nullopt;
}

}  // namespace smr
