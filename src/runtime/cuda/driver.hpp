// The CUDA driver, loaded at run time: dlopen("libcuda.so.1") and every function resolved
// through cuGetProcAddress_v2 for the CUDA version this build was compiled against, so the
// same binary runs (without the CUDA backend) where there is no driver. Internal to runtime/.
//
// One Driver per process: the device of this rank (local MPI rank % device count), its primary
// context, made current on every thread that asks for the driver, and one stream that every
// operation of the CUDA backend is queued on.
#pragma once

#include "runtime/cuda.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <array>
#include <string>

namespace saguaro::runtime::cuda {

// The driver functions used, each with the cudaTypedefs.h type of the version that
// cuGetProcAddress returns for CUDA_VERSION.
#define SAGUARO_CUDA_DRIVER_FUNCTIONS(X)                                                           \
  X(cuGetErrorName, PFN_cuGetErrorName_v6000)                                                      \
  X(cuGetErrorString, PFN_cuGetErrorString_v6000)                                                  \
  X(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020)                                              \
  X(cuInit, PFN_cuInit_v2000)                                                                      \
  X(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000)                                                  \
  X(cuDeviceGet, PFN_cuDeviceGet_v2000)                                                            \
  X(cuDeviceGetName, PFN_cuDeviceGetName_v2000)                                                    \
  X(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000)                                          \
  X(cuDeviceTotalMem, PFN_cuDeviceTotalMem_v3020)                                                  \
  X(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000)                                  \
  X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000)                                                    \
  X(cuStreamCreate, PFN_cuStreamCreate_v2000)                                                      \
  X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000)                                            \
  X(cuStreamCreateWithPriority, PFN_cuStreamCreateWithPriority_v5050)                              \
  X(cuCtxGetStreamPriorityRange, PFN_cuCtxGetStreamPriorityRange_v5050)                            \
  X(cuStreamWaitEvent, PFN_cuStreamWaitEvent_v3020)                                                \
  X(cuStreamWaitValue64, PFN_cuStreamWaitValue64_v11070)                                           \
  X(cuStreamWriteValue64, PFN_cuStreamWriteValue64_v11070)                                         \
  X(cuMemHostAlloc, PFN_cuMemHostAlloc_v2020)                                                      \
  X(cuMemFreeHost, PFN_cuMemFreeHost_v2000)                                                        \
  X(cuIpcGetMemHandle, PFN_cuIpcGetMemHandle_v4010)                                                \
  X(cuIpcOpenMemHandle, PFN_cuIpcOpenMemHandle_v11000)                                             \
  X(cuIpcCloseMemHandle, PFN_cuIpcCloseMemHandle_v4010)                                            \
  X(cuMemAlloc, PFN_cuMemAlloc_v3020)                                                              \
  X(cuMemFree, PFN_cuMemFree_v3020)                                                                \
  X(cuMemGetAddressRange, PFN_cuMemGetAddressRange_v3020)                                          \
  X(cuMemsetD8Async, PFN_cuMemsetD8Async_v3020)                                                    \
  X(cuMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020)                                                \
  X(cuMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020)                                                \
  X(cuModuleLoadData, PFN_cuModuleLoadData_v2000)                                                  \
  X(cuModuleUnload, PFN_cuModuleUnload_v2000)                                                      \
  X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000)                                            \
  X(cuFuncSetAttribute, PFN_cuFuncSetAttribute_v9000)                                              \
  X(cuFuncGetAttribute, PFN_cuFuncGetAttribute_v2020)                                              \
  X(cuLaunchKernel, PFN_cuLaunchKernel_v4000)                                                      \
  X(cuLaunchKernelEx, PFN_cuLaunchKernelEx_v11060)                                                 \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor,                                                   \
    PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050)                                         \
  X(cuEventCreate, PFN_cuEventCreate_v2000)                                                        \
  X(cuEventRecord, PFN_cuEventRecord_v2000)                                                        \
  X(cuEventQuery, PFN_cuEventQuery_v2000)                                                          \
  X(cuEventSynchronize, PFN_cuEventSynchronize_v2000)                                              \
  X(cuEventElapsedTime, PFN_cuEventElapsedTime_v12080)                                             \
  X(cuEventDestroy, PFN_cuEventDestroy_v4000)

struct DriverApi {
#define SAGUARO_CUDA_DRIVER_MEMBER(name, type) type name = nullptr;
  SAGUARO_CUDA_DRIVER_FUNCTIONS(SAGUARO_CUDA_DRIVER_MEMBER)
#undef SAGUARO_CUDA_DRIVER_MEMBER
};

class Driver {
public:
  // The process's driver with its context current on the calling thread. Throws
  // std::runtime_error saying why when there is no usable GPU (the reason is found once and
  // kept: later calls throw the same message without retrying).
  static Driver& get();
  // Never throws; false with the reason in `why` when get() would throw.
  static bool usable(std::string* why);

  const DriverApi& api() const { return api_; }
  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_; }
  const DeviceInfo& info() const { return info_; }

  // Launches `fn` on `stream` (cuLaunchKernel's arguments). With `after_previous` and where
  // the device has Hopper's programmatic dependent launch, the launch may begin while the
  // kernel before it on the stream is still finishing (its last blocks), so its blocks are
  // resident when that kernel ends: the kernel waits for that kernel's memory itself, first
  // thing (SAGUARO_AFTER_PREVIOUS_KERNEL, which every kernel Saguaro compiles begins with).
  CUresult launch(CUfunction fn, const std::array<unsigned, 3>& grid,
                  const std::array<unsigned, 3>& block, unsigned shared_bytes, CUstream stream,
                  void** params, bool after_previous) const;
  // Whether launch() uses programmatic dependent launch: asked for (the default; the backend's
  // BackendOptions::programmatic_launch) and the device has it (compute capability >= 9.0).
  bool programmatic_launch() const { return programmatic_launch_; }
  void set_programmatic_launch(bool wanted) {
    programmatic_launch_ = wanted && info_.cc_major >= 9;
  }

  // Throws std::runtime_error "CUDA driver: <call> failed: CUDA_ERROR_... (description)" unless
  // `result` is CUDA_SUCCESS.
  void check(CUresult result, const char* call) const;
  // The name and description of an error code, "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string describe(CUresult result) const;

  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

private:
  Driver() = default;
  // The one driver object (nullptr with the reason in *error when it cannot be used).
  static Driver* instance(const std::string** error);
  void load();
  void bind_this_thread();

  DriverApi api_;
  void* library_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  DeviceInfo info_;
  bool programmatic_launch_ = false;
};

// SAGUARO_CU(driver, cuMemAlloc(&p, bytes)): calls the driver's function and throws with the
// call's text on failure.
#define SAGUARO_CU(driver, call) (driver).check((driver).api().call, #call)

} // namespace saguaro::runtime::cuda
