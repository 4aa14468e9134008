// calibrate_gpu in a build without CUDA (SAGUARO_WITH_CUDA off, or the CUDA toolkit not
// found): there is no GPU to calibrate.
#include "calibrate/calibrate.hpp"

#include <stdexcept>
#include <string>

namespace saguaro::calibrate {

model::Device calibrate_gpu(const model::Device*, const CalibrationOptions&) {
  throw std::runtime_error("no GPU can be calibrated: this build has no CUDA (SAGUARO_WITH_CUDA)");
}

} // namespace saguaro::calibrate
