// `saguaro calibrate`: microbenchmarks that measure the quantities of a device description
// (model/device.hpp) on the hardware at hand. Each quantity is measured by a kernel (or loop)
// designed so that it dominates, repeated, and the median kept; every measured value's source
// reads `calibrated <date> <device> <command>`.
#pragma once

#include "model/device.hpp"

#include <functional>
#include <string>
#include <vector>

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

// The line t = latency_s + seconds_per_byte * bytes through the timings of messages of several
// sizes (`saguaro calibrate --interconnect`): model::Device's interconnect_latency and
// interconnect_bandwidth.
struct LinearFit {
  double latency_s = 0;        // >= 0
  double seconds_per_byte = 0; // > 0
};
// Least squares of the relative residuals (a + b bytes_i - t_i) / t_i, so that the small
// messages, which decide the latency, count as much as the large ones, whose absolute noise
// alone exceeds the latency. A negative intercept is clamped to 0 (b refitted through the
// origin). Throws std::invalid_argument when the vectors differ in length, a time is not
// positive, there are fewer than 2 distinct sizes, or the times do not grow with the size.
LinearFit fit_latency_bandwidth(const std::vector<double>& bytes,
                                const std::vector<double>& seconds);

} // namespace saguaro::runtime
