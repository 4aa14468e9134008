// `saguaro calibrate`: microbenchmarks that measure the quantities of a device description
// (model/device.hpp) on the hardware at hand. Each quantity is measured by a kernel (or loop)
// designed so that it dominates, repeated, and the median kept; every measured value's source
// reads `calibrated <date> <device> <command>`.
#pragma once

#include "model/device.hpp"

#include <functional>
#include <string>

namespace saguaro::runtime {

struct CalibrationOptions {
  std::string command = "saguaro calibrate"; // recorded in every measured value's source
  bool quick = false;    // fewer repeats and smaller buffers (tests; the CPU run-time roofline)
  int repeats = 0;       // 0: the default (more when !quick)
  std::string cache_dir; // NVRTC cache for the microbenchmark kernels ("" = default)
  std::function<void(const std::string&)> progress; // one line per measurement, if set
};

// Measures the GPU this process uses. Quantities that are properties rather than measurements
// (sizes, limits) come from the driver's device attributes. `base`, when given, supplies what
// is neither measured nor an attribute (software parameters of Table IIIb, beta, ...) with its
// sources; otherwise defaults from the paper are used and say so. Throws std::runtime_error
// without a GPU.
model::Device calibrate_gpu(const model::Device* base, const CalibrationOptions& options);

// Measures this host for the CPU backend's roofline: triad bandwidth over all cores
// (OpenMP) and the FP64 rate of independent fused multiply-adds on all cores.
model::Device calibrate_cpu(const CalibrationOptions& options);

// "2026-11-21": today's date, UTC (for sources).
std::string today();

} // namespace saguaro::runtime
