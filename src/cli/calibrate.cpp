#include "cli/calibrate.hpp"

#include "model/device.hpp"
#include "runtime/calibrate.hpp"
#include "runtime/cuda.hpp"
#include "runtime/disk_cache.hpp"

#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <stdexcept>

namespace saguaro::cli {

int calibrate_main(const std::string& out, bool cpu, const std::string& base, bool quick) {
  runtime::CalibrationOptions options;
  // Recorded in every measured value's source: what was run, as far as it changes the values.
  options.command =
      std::string("saguaro calibrate") + (cpu ? " --cpu" : "") + (quick ? " --quick" : "");
  options.quick = quick;
  options.progress = [](const std::string& line) { std::cerr << line << "\n" << std::flush; };

  std::optional<model::Device> base_device;
  if (!base.empty()) {
    try {
      base_device = model::load_device(base);
    } catch (const model::DeviceError& e) {
      const std::string message = e.what(); // "FILE:LINE:COL: error: ..." with the line shown
      std::cerr << message << (message.empty() || message.back() != '\n' ? "\n" : "");
      return 2;
    }
  }

  model::Device device;
  try {
    if (cpu) {
      std::cerr << "saguaro calibrate: measuring this host's CPU\n";
      device = runtime::calibrate_cpu(options);
    } else {
      std::string why;
      if (!runtime::cuda::available(&why)) {
        std::cerr << "saguaro calibrate: no GPU can be used: " << why
                  << "\n(`saguaro calibrate --cpu` measures this host's CPU instead)\n";
        return 1;
      }
      const runtime::cuda::DeviceInfo info = runtime::cuda::device_info();
      std::cerr << fmt::format("saguaro calibrate: measuring {} ({}, {} SMs){}\n", info.name,
                               info.arch(), info.multiprocessors, quick ? ", quick" : "");
      device = runtime::calibrate_gpu(base_device ? &*base_device : nullptr, options);
    }
  } catch (const std::exception& e) {
    std::cerr << "saguaro calibrate: error: " << e.what() << "\n";
    return 1;
  }

  if (out.empty()) {
    std::cout << model::format_device(device) << std::flush;
    return 0;
  }
  try {
    runtime::write_atomically(out, model::format_device(device), "saguaro calibrate");
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n"; // "saguaro calibrate: cannot write ..."
    return 1;
  }
  std::cerr << "saguaro calibrate: wrote " << out << "\n";
  return 0;
}

} // namespace saguaro::cli
