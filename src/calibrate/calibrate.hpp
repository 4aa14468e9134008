// `saguaro calibrate`: microbenchmarks that measure the quantities of a device description
// (model/device.hpp) on the hardware at hand. Each quantity is measured by a kernel (or loop)
// designed so that it dominates, repeated, and the median kept; every measured value's source
// reads `calibrated <date> <device> <command>`.
//
// The calibrate stage: after runtime (it launches through the backends' machinery) and grid
// (the interconnect is timed through the ghost exchange); the host asks it for the description
// a backend is modelled with (modelled_device), the CLI for the commands.
#pragma once

#include "model/device.hpp"
#include "runtime/kernel.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::calibrate {

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

// The description a backend's kernels are predicted with when none is named
// (Saguaro::device_description = auto): for DeviceModel::host_roofline the host's roofline,
// measured once per process (quick: a fraction of a second) on the OpenMP threads the generated
// code runs on; for DeviceModel::gpu_description the configs/devices/ file whose name is the
// backend's device's. `origin`: the banner's words on where it came from; `note`: why there is
// none (the prediction log's note).
struct ModelledDevice {
  std::optional<model::Device> device;
  std::string origin, note;
};
ModelledDevice modelled_device(const runtime::BackendDescription& backend,
                               const std::string& command);

// `saguaro calibrate`: `out`: the YAML file to write ("" = standard output); `cpu`: calibrate
// the host instead of the GPU; `base`: a description to take the quantities that are not
// measured from ("" = defaults); `quick`: fewer repeats and smaller buffers. Progress goes to
// standard error. Returns the exit status: 0, 1 when there is nothing to calibrate (no GPU) or a
// measurement fails, 2 when the base description does not read.
int device_command(const std::string& out, bool cpu, const std::string& base, bool quick);

// `mpirun -n 2 saguaro calibrate --interconnect`: times the ghost exchange (grid::
// Decomposition::sync) between ranks 0 and 1 for messages of 8 KiB to 64 MiB (`quick`: to
// 1 MiB), fits latency + bytes / bandwidth, and writes the description `base` (default: the
// one configs/devices/ has for this GPU; required with `cpu`) with interconnect_latency and
// interconnect_bandwidth set. `cpu`: host arrays instead of the GPU's. Initialises and
// finalises MPI itself; rank 0 reports and writes. Returns the exit status: 0; 1 on 1 rank,
// without a GPU (and no `cpu`), with no description of this GPU, or when a measurement fails;
// 2 when the base description does not read or `cpu` comes without `base`.
int interconnect_command(const std::string& out, bool cpu, const std::string& base, bool quick);

} // namespace saguaro::calibrate
