// The fit behind `saguaro calibrate --interconnect` (the measurement, under MPI, is the
// command's own: interconnect.cpp). Compiled in every build.
#include "calibrate/calibrate.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

namespace saguaro::calibrate {

LinearFit fit_latency_bandwidth(const std::vector<double>& bytes,
                                const std::vector<double>& seconds) {
  if (bytes.size() != seconds.size())
    throw std::invalid_argument("fit_latency_bandwidth: " + std::to_string(bytes.size()) +
                                " sizes but " + std::to_string(seconds.size()) + " times");
  std::set<double> sizes;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (!(seconds[i] > 0) || !std::isfinite(seconds[i]))
      throw std::invalid_argument("fit_latency_bandwidth: a time that is not positive");
    if (!(bytes[i] >= 0) || !std::isfinite(bytes[i]))
      throw std::invalid_argument("fit_latency_bandwidth: a size that is negative");
    sizes.insert(bytes[i]);
  }
  if (sizes.size() < 2)
    throw std::invalid_argument(
        "fit_latency_bandwidth: a latency and a bandwidth need at least 2 distinct message sizes");

  // Weighted least squares, weights 1 / t^2: minimise sum w (a + b x - t)^2.
  double sw = 0, sx = 0, st = 0, sxx = 0, sxt = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const double w = 1 / (seconds[i] * seconds[i]), x = bytes[i], t = seconds[i];
    sw += w;
    sx += w * x;
    st += w * t;
    sxx += w * x * x;
    sxt += w * x * t;
  }
  LinearFit fit;
  const double det = sw * sxx - sx * sx; // > 0: two distinct sizes
  fit.seconds_per_byte = (sw * sxt - sx * st) / det;
  fit.latency_s = (st - fit.seconds_per_byte * sx) / sw;
  if (fit.latency_s < 0) { // noise, or a cost that grows faster than linearly: no latency
    fit.latency_s = 0;
    fit.seconds_per_byte = sxt / sxx;
  }
  if (!(fit.seconds_per_byte > 0))
    throw std::invalid_argument(
        "fit_latency_bandwidth: the times do not grow with the message size");
  return fit;
}

} // namespace saguaro::calibrate
