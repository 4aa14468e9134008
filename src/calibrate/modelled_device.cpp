// The description a backend is modelled with when the .par file names none.
#include "calibrate/calibrate.hpp"

#include <fmt/format.h>

#include <exception>

namespace saguaro::calibrate {

ModelledDevice modelled_device(const runtime::BackendDescription& backend,
                               const std::string& command) {
  ModelledDevice out;
  switch (backend.model) {
  case runtime::DeviceModel::none: break;
  case runtime::DeviceModel::host_roofline: {
    static const model::Device measured = [&] {
      CalibrationOptions options;
      options.quick = true;
      options.command = command;
      return calibrate_cpu(options);
    }();
    out.device = measured;
    out.origin = "measured at start";
    break;
  }
  case runtime::DeviceModel::gpu_description: {
    const std::string path = model::find_device_description(backend.device);
    if (path.empty()) {
      out.note = fmt::format("no device description in configs/devices/ is for {}: measured "
                             "times only (`saguaro calibrate` measures one)",
                             backend.device);
      break;
    }
    try {
      out.device = model::load_device(path);
      out.origin = "from " + path;
    } catch (const std::exception& e) {
      out.note = fmt::format("the device description {} does not read ({}): measured times "
                             "only",
                             path, e.what());
    }
    break;
  }
  }
  return out;
}

} // namespace saguaro::calibrate
