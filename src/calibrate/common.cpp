// The parts of `saguaro calibrate` compiled in every build (with or without CUDA).
#include "calibrate/calibrate.hpp"

#include <ctime>

namespace saguaro::calibrate {

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16] = {};
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

} // namespace saguaro::calibrate
