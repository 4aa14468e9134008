// Order statistics of repeated timings: the median every measurement reports (calibration,
// the prediction log, the benchmarks) and other quantiles of error distributions.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace saguaro::runtime {

// The q-quantile (0 <= q <= 1) of `values`, interpolating linearly between order statistics.
// Throws std::invalid_argument when there are no values.
inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  std::sort(values.begin(), values.end());
  const double at = q * double(values.size() - 1);
  const std::size_t lo = std::size_t(at);
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (at - double(lo)) * (values[hi] - values[lo]);
}

// The median: the middle value, or the mean of the middle two.
inline double median(std::vector<double> values) {
  return quantile(std::move(values), 0.5);
}

} // namespace saguaro::runtime
