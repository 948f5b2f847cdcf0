// Each kernel file defines exactly one of these; registry.cu lists them in `list` order.
// A new design: write its file, declare its entry here, add it to the table in registry.cu.
#pragma once

#include "kernels/registry.hpp"

namespace smr::entries {

KernelInfo unfused_3pass();  // unfused_3pass.cu
KernelInfo fused_row();      // fused_row.cu
KernelInfo online();         // online.cu
KernelInfo softmax();        // softmax.cu: the production dispatch (issue 7)
KernelInfo cudnn();          // cudnn_softmax.cu
KernelInfo copy();           // ceilings.cu
KernelInfo fma();            // ceilings.cu
#ifdef SMR_BUILD_LAB
KernelInfo fused_starter();  // lab/fused_row_starter.cu (docs/lab/answers' solution with SMR_LAB_SOLUTION)
#endif

}  // namespace smr::entries
