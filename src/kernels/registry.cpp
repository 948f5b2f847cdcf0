// The registry table, then the lab folder's self-registered entries. Order here is the order of
// `softmax-bench list` and of `all`.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

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

namespace {

// The entries the lab folder's files register (SMR_REGISTER_KERNEL), in static-init order.
std::vector<KernelInfo (*)()>& registrations() {
  static std::vector<KernelInfo (*)()> makers;
  return makers;
}
bool table_built = false;

}  // namespace

KernelRegistration::KernelRegistration(KernelInfo (*make)()) {
  if (table_built) {  // a registration after main() began: kernels() has been answered already
    std::fputs("smr::KernelRegistration: registered after the first kernels() call\n", stderr);
    std::abort();
  }
  registrations().push_back(make);
}

std::span<const KernelInfo> kernels() {
  static const std::vector<KernelInfo> table = [] {
    std::vector<KernelInfo> t{
        entries::unfused_3pass(), entries::fused_row(), entries::online(),
#ifndef SMR_LAB_ONLY
        entries::softmax(),  // production: left out of a lab build (full_build_kernel_names)
#endif
        entries::cudnn(),         entries::copy(),      entries::fma(),
    };
    // The lab folder's self-registered entries (the lab build's fused_starter, a student's own
    // kernel), after the table, in name order: static initialization has no order across files.
    std::vector<KernelInfo> registered;
    for (auto make : registrations()) registered.push_back(make());
    std::sort(registered.begin(), registered.end(),
              [](const KernelInfo& a, const KernelInfo& b) { return a.name < b.name; });
    for (auto& k : registered) {
      for (const auto& other : t)
        if (other.name == k.name)
          throw std::runtime_error("kernel '" + k.name + "' is registered twice (the " +
                                   std::string(to_string(other.role)) +
                                   " entry has the name already): rename it in its "
                                   "src/kernels/lab/ file");
      t.push_back(std::move(k));
    }
    // An entry whose launcher is missing (cuDNN not built in) stays listed: `unsupported` says why.
    table_built = true;
    return t;
  }();
  return table;
}

std::span<const std::string_view> lab_build_kernel_names() {
  static constexpr std::string_view names[] = {"fused_starter"};  // lab/fused_row_starter.cu
  return names;
}

std::span<const std::string_view> full_build_kernel_names() {
  static constexpr std::string_view names[] = {"softmax"};  // entries::softmax()
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
