// The progress line: iteration, time, speed and the estimated time to the end of the run.
#include "schedule/schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace saguaro::schedule {

namespace {

// 4.2 s, 26 s, 3.5 min, 2.1 h
std::string format_duration(double seconds) {
  if (seconds < 10) return fmt::format("{:.1f} s", seconds);
  if (seconds < 100) return fmt::format("{:.0f} s", seconds);
  if (seconds < 100 * 60) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

} // namespace

Progress::Progress(int itlast, double final_time, double interval_seconds)
    : itlast_(itlast), final_time_(final_time), interval_(interval_seconds) {}

std::string Progress::update(int iteration, double time) {
  auto now = std::chrono::steady_clock::now();
  if (start_iteration_ < 0) {
    start_ = last_ = now;
    start_iteration_ = iteration;
    start_time_ = time;
    return "";
  }
  if (std::chrono::duration<double>(now - last_).count() < interval_) return "";
  last_ = now;

  double elapsed = std::chrono::duration<double>(now - start_).count();
  double rate = elapsed > 0 ? double(iteration - start_iteration_) / elapsed : 0.0;
  std::string line =
      itlast_ > 0 ? fmt::format("it {}/{}", iteration, itlast_) : fmt::format("it {}", iteration);
  line += fmt::format("  t = {:.4f}", time);
  line +=
      rate < 1 ? fmt::format("  ({:.3f} steps/s)", rate) : fmt::format("  ({:.1f} steps/s)", rate);

  // The run ends at cctk_itlast or cctk_final_time, whichever comes first.
  double eta = -1;
  if (itlast_ > 0 && rate > 0) eta = double(std::max(0, itlast_ - iteration)) / rate;
  if (final_time_ > 0 && elapsed > 0 && time > start_time_) {
    double sim_rate = (time - start_time_) / elapsed;
    double by_time = std::max(0.0, final_time_ - time) / sim_rate;
    eta = eta < 0 ? by_time : std::min(eta, by_time);
  }
  if (eta >= 0) line += "  ETA " + format_duration(eta);
  return line;
}

} // namespace saguaro::schedule
