// The breakdown of a time step into interior, boundary shell, exchange and idle time
// (step_breakdown.tsv).

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include "runtime/statistics.hpp"
#include "support/files.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <ostream>
#include <sstream>

namespace saguaro::host {
namespace fs = std::filesystem;

// The breakdown of a time step: the right-hand sides' interior (or whole) launches, their
// boundary shells, the evolved variables' ghost exchange (first pack to last unpack, or the
// self-copies when no message is sent) and the time the compute queue waited for it (idle);
// maxima over ranks go to step_breakdown.tsv.
void Simulation::begin_step_breakdown() {
  executor_->resolve_device_times(); // before their marks go
  fields_->space().clear_marks();
  step_exchanges_.clear();
  step_whole_rhs_.clear();
  timing_step_ = true;
}

void Simulation::end_step_breakdown(double step_seconds) {
  timing_step_ = false;
  runtime::ArraySpace& space = fields_->space();
  std::array<double, 5> row{step_seconds, 0, 0, 0, 0};
  for (const ExchangeMarks& m : step_exchanges_) {
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
  for (const auto& [a, b] : step_whole_rhs_) row[1] += space.seconds(a, b);
  executor_->resolve_device_times(); // before their marks go
  space.clear_marks();
  breakdown_.push_back(row);
}

void Simulation::write_step_breakdown() {
  std::vector<double> flat;
  for (const auto& row : breakdown_) flat.insert(flat.end(), row.begin(), row.end());
  std::vector<double> max(flat.size());
  MPI_Reduce(flat.data(), max.data(), int(flat.size()), MPI_DOUBLE, MPI_MAX, 0, comm_);
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
         "self-copies when no message is sent); idle: the compute queue waiting for it\n";
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
    for (int c = 0; c < 5; ++c) columns[std::size_t(c)].push_back(max[5 * i + std::size_t(c)]);
  log_ << fmt::format("step breakdown, median of {} steps (max over ranks): step {:.4g} ms: "
                      "interior {:.4g}, boundary shell {:.4g}, exchange {:.4g}, idle {:.4g} ms\n",
                      breakdown_.size(), runtime::median(columns[0]) * 1e3,
                      runtime::median(columns[1]) * 1e3, runtime::median(columns[2]) * 1e3,
                      runtime::median(columns[3]) * 1e3, runtime::median(columns[4]) * 1e3);
}

} // namespace saguaro::host
