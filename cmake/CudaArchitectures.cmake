# Which GPUs the build compiles device code for: CMAKE_CUDA_ARCHITECTURES, chosen here (before
# project()) unless the command line or a preset sets it.
#
#   SMR_CUDA_ARCHITECTURES=auto      (the default; the release preset) `native` where the machine
#                                    has a GPU (`nvidia-smi -L` lists one), else `portable`
#   SMR_CUDA_ARCHITECTURES=native    CMake's native: the architectures of the GPUs present
#                                    (CMake fails to configure where there is none)
#   SMR_CUDA_ARCHITECTURES=portable  (the portable preset) every card the lab supports: SASS for
#                                    sm_75 (Turing: T4), 80 (A100), 86 (RTX 30x0), 89 (L4, RTX
#                                    40x0), 90 (H100, H200) and, where the toolkit has them, 100
#                                    (B200) and 120 (RTX 50x0), plus PTX for the newest of these,
#                                    which the driver compiles for a later card at load
#   anything else                    taken as CMAKE_CUDA_ARCHITECTURES itself (e.g. 80-virtual)
#
# Device code that needs a newer architecture than some of these is guarded in the source
# (src/kernels/common/arch.cuh). The portable list is read from the toolkit (nvcc
# --list-gpu-arch), so an older toolkit (CUDA 12.6 has no sm_100) builds what it can.
set(SMR_CUDA_ARCHITECTURES auto CACHE STRING
    "auto (native where a GPU is present, else portable), native, portable, or a CMAKE_CUDA_ARCHITECTURES list")

set(SMR_PORTABLE_SM 75 80 86 89 90 100 120)

# The portable list for the toolkit at hand, in `out`.
function(smr_portable_architectures out)
  set(nvcc "${CMAKE_CUDA_COMPILER}")
  if(NOT nvcc AND DEFINED ENV{CUDACXX})
    set(nvcc "$ENV{CUDACXX}")
  endif()
  if(NOT nvcc)
    find_program(SMR_NVCC nvcc PATHS /usr/local/cuda/bin)
    set(nvcc "${SMR_NVCC}")
  endif()
  set(listed "")
  if(nvcc)
    execute_process(COMMAND "${nvcc}" --list-gpu-arch OUTPUT_VARIABLE listed
                    RESULT_VARIABLE rc ERROR_QUIET)
    if(NOT rc EQUAL 0)
      set(listed "")
    endif()
  endif()
  set(archs "")
  foreach(sm IN LISTS SMR_PORTABLE_SM)
    if(listed MATCHES "compute_${sm}([^0-9]|$)" OR (NOT listed AND sm LESS_EQUAL 90))
      list(APPEND archs ${sm})
    endif()
  endforeach()
  if(NOT listed)
    message(WARNING "nvcc --list-gpu-arch gave nothing: the portable set is sm_75 ... sm_90")
  endif()
  # SASS for each; the newest also as PTX (CMake's "NN" is NN-real plus NN-virtual).
  list(POP_BACK archs newest)
  list(TRANSFORM archs APPEND "-real")
  list(APPEND archs ${newest})
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# SMR_CUDA_ARCH_MODE: what was chosen -- native, portable, or explicit (a list given here or on the
# command line); tests/CMakeLists.txt checks a portable build's images.
set(SMR_CUDA_ARCH_MODE explicit)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(smr_mode "${SMR_CUDA_ARCHITECTURES}")
  if(smr_mode STREQUAL "auto")
    execute_process(COMMAND nvidia-smi -L OUTPUT_VARIABLE smr_gpus RESULT_VARIABLE smr_rc
                    ERROR_QUIET)
    if(smr_rc EQUAL 0 AND smr_gpus MATCHES "GPU")
      set(smr_mode native)
    else()
      set(smr_mode portable)
    endif()
  endif()
  if(smr_mode STREQUAL "portable")
    smr_portable_architectures(CMAKE_CUDA_ARCHITECTURES)
    set(SMR_CUDA_ARCH_MODE portable)
  elseif(smr_mode STREQUAL "native")
    set(CMAKE_CUDA_ARCHITECTURES native)
    set(SMR_CUDA_ARCH_MODE native)
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${smr_mode}")
  endif()
  message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES} "
                 "(SMR_CUDA_ARCHITECTURES=${SMR_CUDA_ARCHITECTURES}: ${smr_mode})")
endif()
