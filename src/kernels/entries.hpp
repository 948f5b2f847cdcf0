// Each kernel file of the table defines exactly one of these; registry.cpp lists them in `list`
// order. A production design: write its file, declare its entry here, add it to the table in
// registry.cpp. A lab kernel (src/kernels/lab/) registers itself instead: SMR_REGISTER_KERNEL,
// registry.hpp.
#pragma once

#include "kernels/registry.hpp"

namespace smr::entries {

KernelInfo unfused_3pass();  // unfused_3pass.cu
KernelInfo fused_row();      // fused_row.cu
KernelInfo online();         // online.cu
KernelInfo softmax();        // softmax.cu: the production dispatch (issue 7); not in a lab build
KernelInfo cudnn();          // cudnn_softmax.cu
KernelInfo copy();           // ceilings.cu
KernelInfo fma();            // ceilings.cu

}  // namespace smr::entries
