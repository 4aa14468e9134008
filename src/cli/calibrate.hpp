// `saguaro calibrate`: measure this GPU (or, with --cpu, this host) with microbenchmarks and
// write its device description (model/device.hpp) as YAML.
#pragma once

#include <string>

namespace saguaro::cli {

// `out`: the YAML file to write ("" = standard output); `cpu`: calibrate the host instead of
// the GPU; `base`: a description to take the quantities that are not measured from ("" =
// defaults); `quick`: fewer repeats and smaller buffers. Progress goes to standard error.
// Returns the exit status: 0, 1 when there is nothing to calibrate (no GPU) or a measurement
// fails, 2 when the base description does not read.
int calibrate_main(const std::string& out, bool cpu, const std::string& base, bool quick);

} // namespace saguaro::cli
