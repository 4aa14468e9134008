// The breakdown of a time step into interior, boundary shell, exchange and idle time
// (step_breakdown.tsv).

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include "runtime/statistics.hpp"
#include "support/files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>

namespace saguaro::host {
namespace fs = std::filesystem;

// The breakdown of a time step: the right-hand sides' interior (or whole) launches, their
// boundary shells, the evolved variables' ghost exchange (first pack to last unpack, or the
// self-copies when no message is sent) and the time the compute queue waited for it (idle);
// maxima over ranks go to step_breakdown.tsv.
// A step's marks are read one step later: the host queues step n + 1 while a GPU works on step
// n, and only then waits for step n's marks, so the GPU's queue does not drain between steps.
// Measured on the H100 (par/wave.par, 2026-11-27, bench/results/2026-11-27-step-overheads-
// H100.md) this is within the noise against waiting for every step (48^3: 0.071 against 0.073
// ms); what the GPU had waited for were the timing events of every scheduled function (0.17
// -> 0.07-0.09 ms per step once they are sampled: Executor::device_timing).
void Simulation::begin_step_breakdown() {
  runtime::ArraySpace& space = fields_->space();
  if (steps_in_flight_.empty()) {
    executor_->resolve_device_times(); // what ran before the loop, before its marks go
    space.clear_marks();
  }
  step_exchanges_.clear();
  step_whole_rhs_.clear();
  // The scheduled functions' device times on the sampled steps only (the first, then every
  // Saguaro::device_timer_every-th): Executor::device_timing says why.
  const bool sampled = (iteration_ - 1) % device_timer_every_ == 0;
  using Timing = schedule::Executor::DeviceTiming;
  executor_->device_timing(sampled ? Timing::sampled_step : Timing::unsampled_step);
  steps_in_flight_.push_back(
      {space.mark(runtime::ArraySpace::Queue::compute), -1, sampled, {}, {}});
  // The parts' marks (about six per exchange on two queues) on the sampled steps only: on
  // every step they cost the H100 58 us of a 0.617 ms step of the wave on 4 GPUs and 55 us of
  // 2.000 ms on one (bench/results/2026-11-27-exchange-signals-H100-x4.md).
  timing_step_ = sampled;
}

void Simulation::end_step_breakdown() {
  timing_step_ = false;
  executor_->device_timing(schedule::Executor::DeviceTiming::always);
  StepMarks& step = steps_in_flight_.back();
  step.end = fields_->space().mark(runtime::ArraySpace::Queue::compute);
  step.exchanges = std::move(step_exchanges_);
  step.whole_rhs = std::move(step_whole_rhs_);
  step_exchanges_.clear();
  step_whole_rhs_.clear();
  retire_steps(1);
}

void Simulation::retire_steps(std::size_t keep) {
  runtime::ArraySpace& space = fields_->space();
  while (steps_in_flight_.size() > keep) {
    const StepMarks step = std::move(steps_in_flight_.front());
    steps_in_flight_.pop_front();
    const std::array<double, 5> row = step_row(step);
    breakdown_.push_back(row);
    timers_.add_step(row[0], step.sampled);
    // Marks up to the next step's first: the executor's of this step's functions, then the
    // marks themselves.
    const int next =
        steps_in_flight_.empty() ? std::numeric_limits<int>::max() : steps_in_flight_.front().begin;
    executor_->resolve_device_times(next);
    space.release_marks_before(next);
  }
}

std::array<double, 5> Simulation::step_row(const StepMarks& step) {
  runtime::ArraySpace& space = fields_->space();
  constexpr double unmeasured = std::numeric_limits<double>::quiet_NaN();
  if (!step.sampled)
    return {space.seconds(step.begin, step.end), unmeasured, unmeasured, unmeasured, unmeasured};
  std::array<double, 5> row{space.seconds(step.begin, step.end), 0, 0, 0, 0};
  for (const ExchangeMarks& m : step.exchanges) {
    row[1] += space.seconds(m.before, m.interior_done);
    row[2] += space.seconds(m.joined, m.shell_done);
    if (m.started >= 0 && m.finished >= 0) {
      const double x = space.seconds(m.started, m.finished);
      row[3] += x;
      exchange_samples_.push_back(x);
    } else {
      row[3] += space.seconds(m.before, m.joined);
    }
    row[4] += std::max(0.0, space.seconds(m.interior_done, m.joined));
  }
  for (const auto& [a, b] : step.whole_rhs) row[1] += space.seconds(a, b);
  return row;
}

std::vector<double> Simulation::step_seconds() const {
  std::vector<double> out;
  for (const auto& row : breakdown_) out.push_back(row[0]);
  return out;
}

void Simulation::write_step_breakdown() {
  // Unmeasured parts (NaN) go through the maximum as -1 (every rank samples the same steps).
  std::vector<double> flat;
  for (const auto& row : breakdown_)
    for (double x : row) flat.push_back(std::isnan(x) ? -1.0 : x);
  std::vector<double> max(flat.size());
  MPI_Reduce(flat.data(), max.data(), int(flat.size()), MPI_DOUBLE, MPI_MAX, 0, comm_);
  for (double& x : max)
    if (x < 0) x = std::numeric_limits<double>::quiet_NaN();
  if (rank_ != 0 || breakdown_.empty()) return;
  const grid::Patch& patch = decomposition_->patch();
  const grid::Index3 n = patch.size();
  std::string split;
  for (const auto& b : bindings_)
    if (b->split) split += (split.empty() ? "" : " ") + b->calc->name;
  std::ostringstream out;
  out << fmt::format("# saguaro step breakdown: {}, {} rank{} as {} x {} x {}, patch {} x {} x {}, "
                     "backend {}; ghost exchange: {}; split around it: {}\n",
                     setup_.par_path, patch.ranks, patch.ranks == 1 ? "" : "s",
                     decomposition_->dims()[0], decomposition_->dims()[1],
                     decomposition_->dims()[2], n[0], n[1], n[2], backend_->name(),
                     plan_.exchange_words.empty() ? "no messages" : plan_.exchange_words,
                     split.empty() ? "none" : split);
  out << "# seconds per step, the maximum over ranks. interior: right-hand-side launches over "
         "the interior (the whole patch when not split); boundary: over the boundary shell; "
         "exchange: the evolved variables' ghost exchange, first pack to last unpack (the "
         "self-copies when no message is sent); idle: the compute queue waiting for it. The "
         "parts are measured on the sampled steps (Saguaro::device_timer_every), nan on the "
         "others\n";
  out << "iteration\tstep_s\tinterior_s\tboundary_s\texchange_s\tidle_s\n";
  const int first = iteration_ - int(breakdown_.size()) + 1;
  for (std::size_t i = 0; i < breakdown_.size(); ++i) {
    out << first + int(i);
    for (int c = 0; c < 5; ++c) out << fmt::format("\t{:.6e}", max[5 * i + std::size_t(c)]);
    out << "\n";
  }
  try {
    fs::create_directories(out_dir_);
    support::write_atomically(fs::path(out_dir_) / "step_breakdown.tsv", out.str(), "saguaro");
  } catch (const std::exception& e) {
    log_ << "saguaro: step_breakdown.tsv was not written: " << e.what() << "\n";
    return;
  }
  std::array<std::vector<double>, 5> columns;
  for (std::size_t i = 0; i < breakdown_.size(); ++i)
    for (int c = 0; c < 5; ++c)
      if (const double x = max[5 * i + std::size_t(c)]; !std::isnan(x))
        columns[std::size_t(c)].push_back(x);
  log_ << fmt::format("step breakdown, median of {} steps (max over ranks): step {:.4g} ms",
                      breakdown_.size(), runtime::median(columns[0]) * 1e3);
  if (columns[1].empty()) // a short run after a restart: no step was sampled
    log_ << "; the parts were not sampled (Saguaro::device_timer_every)\n";
  else
    log_ << fmt::format("; of the {} sampled: interior {:.4g}, boundary shell {:.4g}, exchange "
                        "{:.4g}, idle {:.4g} ms\n",
                        columns[1].size(), runtime::median(columns[1]) * 1e3,
                        runtime::median(columns[2]) * 1e3, runtime::median(columns[3]) * 1e3,
                        runtime::median(columns[4]) * 1e3);
}

} // namespace saguaro::host
