// The GPU calibration's pieces (internal to calibrate/): the microbenchmark kernels' source
// (gpu_kernels.cpp), device buffers, and the module that launches and times them on the CUDA
// driver's stream (runtime/cuda/driver.hpp, shared with the runtime that owns it).
#pragma once

#include "calibrate/calibrate.hpp"
#include "runtime/cuda.hpp"
#include "runtime/cuda/driver.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::calibrate::gpu {

using runtime::cuda::Driver;
using u64 = unsigned long long;

// The microbenchmarks. Their operations per loop iteration are repeated on the host side
// (kFmaPerIteration and the others below): keep them in step.
extern const char* const kKernels;

constexpr int kFmaPerIteration = 32;        // fp64_fma_rate
constexpr int kSlowOpsPerIteration = 8;     // fp64_div/sqrt/exp/sin_rate
constexpr int kSharedLoadsPerIteration = 8; // shared_load_rate
constexpr unsigned kRateThreads = 256;      // __launch_bounds__ of the rate kernels

// Device memory freed when it goes out of scope.
class DeviceBuffer {
public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    Driver& d = Driver::get();
    SAGUARO_CU(d, cuMemAlloc(&p_, bytes));
  }
  ~DeviceBuffer() {
    if (p_ != 0) Driver::get().api().cuMemFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr get() const { return p_; }
  std::size_t bytes() const { return bytes_; }

private:
  CUdeviceptr p_ = 0;
  std::size_t bytes_ = 0;
};

// The module of microbenchmarks, launching and timing on the driver's stream.
class Bench {
public:
  explicit Bench(const CalibrationOptions& options) : d_(Driver::get()) {
    runtime::cuda::CompileOptions compile_options;
    compile_options.cache_dir = options.cache_dir;
    const runtime::cuda::CompiledModule compiled =
        runtime::cuda::compile(kKernels, d_.info().arch(), compile_options);
    SAGUARO_CU(d_, cuModuleLoadData(&module_, compiled.cubin.data()));
    SAGUARO_CU(d_, cuEventCreate(&start_, CU_EVENT_DEFAULT));
    SAGUARO_CU(d_, cuEventCreate(&end_, CU_EVENT_DEFAULT));
  }
  ~Bench() {
    d_.api().cuStreamSynchronize(d_.stream());
    if (start_ != nullptr) d_.api().cuEventDestroy(start_);
    if (end_ != nullptr) d_.api().cuEventDestroy(end_);
    if (module_ != nullptr) d_.api().cuModuleUnload(module_);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  Driver& driver() { return d_; }

  CUfunction function(const char* name) {
    CUfunction f = nullptr;
    SAGUARO_CU(d_, cuModuleGetFunction(&f, module_, name));
    return f;
  }

  void launch(CUfunction f, unsigned blocks, unsigned threads, void** params) {
    SAGUARO_CU(d_, cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, d_.stream(), params, nullptr));
  }

  // Milliseconds from before the first to after the last of `count` back-to-back launches.
  double time_ms(CUfunction f, unsigned blocks, unsigned threads, void** params, int count = 1) {
    SAGUARO_CU(d_, cuEventRecord(start_, d_.stream()));
    for (int i = 0; i < count; ++i) launch(f, blocks, threads, params);
    SAGUARO_CU(d_, cuEventRecord(end_, d_.stream()));
    SAGUARO_CU(d_, cuEventSynchronize(end_));
    float ms = 0;
    SAGUARO_CU(d_, cuEventElapsedTime(&ms, start_, end_));
    return ms;
  }

  void synchronize() { SAGUARO_CU(d_, cuStreamSynchronize(d_.stream())); }
  void zero(CUdeviceptr p, std::size_t bytes) {
    SAGUARO_CU(d_, cuMemsetD8Async(p, 0, bytes, d_.stream()));
  }

  template <class T>
  std::vector<T> download(CUdeviceptr p, std::size_t n) {
    std::vector<T> host(n);
    SAGUARO_CU(d_, cuMemcpyDtoHAsync(host.data(), p, n * sizeof(T), d_.stream()));
    synchronize();
    return host;
  }
  template <class T>
  void upload(CUdeviceptr p, const std::vector<T>& host) {
    SAGUARO_CU(d_, cuMemcpyHtoDAsync(p, host.data(), host.size() * sizeof(T), d_.stream()));
    synchronize();
  }
  long long cycles(CUdeviceptr p) { return download<long long>(p, 1)[0]; }

  // Blocks of `threads` resident on the whole GPU at once: a grid of this many is one wave.
  unsigned full_wave(CUfunction f, unsigned threads, int sm_count) {
    int per_sm = 0;
    SAGUARO_CU(d_, cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, int(threads), 0));
    if (per_sm <= 0)
      throw std::runtime_error("calibrate: a microbenchmark kernel cannot run with " +
                               std::to_string(threads) + " threads per block");
    return unsigned(per_sm) * unsigned(sm_count);
  }

private:
  Driver& d_;
  CUmodule module_ = nullptr;
  CUevent start_ = nullptr, end_ = nullptr;
};

} // namespace saguaro::calibrate::gpu
