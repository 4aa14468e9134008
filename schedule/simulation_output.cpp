// Output: the prediction log, norms, HDF5 files, checkpoints, recovery, and termination.

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include "io/io.hpp"
#include "io/predictions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <utility>

namespace saguaro::host {
namespace fs = std::filesystem;

// Writes predictions.tsv and .jsonl with rank 0's kernels (nothing crosses ranks); at the end
// also prints the table. Between, it writes every IO::out_every iterations but at most every
// 10 s, so that copying the timings (and, on a GPU, waiting for them) stays a small cost of a
// long run. A log that cannot be written is reported, not fatal: the physics matters more.
// Returns whether it wrote.
bool Simulation::write_prediction_log(bool at_end) {
  if (!prediction_log_ || rank_ != 0) return false;
  const auto now = std::chrono::steady_clock::now();
  if (!at_end && last_prediction_log_ != std::chrono::steady_clock::time_point{} &&
      now - last_prediction_log_ < std::chrono::seconds(10))
    return false;
  last_prediction_log_ = now;
  const std::vector<runtime::KernelTiming> timings = backend_->kernel_timings();
  if (timings.empty()) return false;
  io::PredictionSource source;
  source.backend = backend_->name();
  source.host = backend_->description().model == runtime::DeviceModel::host_roofline;
  source.device = device_ ? &*device_ : nullptr;
  source.note = device_note_;
  source.ranks = decomposition_->patch().ranks;
  source.iteration = iteration_;
  std::vector<io::PredictionRecord> records;
  try {
    records = io::prediction_records(setup_.program, plan_.mappings(), timings, source,
                                     plan_.candidates());
    for (io::PredictionRecord& r : records)
      if (r.kernel < 0 && source.device != nullptr && !source.host) // a time-tiled kernel
        for (std::size_t p = 0; p < time_tile_choice_.predicted.size(); ++p)
          if (time_tile_choice_.parts.at(p).first == -r.kernel &&
              time_tile_choice_.predicted[p].seconds > 0)
            io::price_time_tile(r, time_tile_choice_.predicted[p]);
    if (!exchange_samples_.empty())
      records.push_back(io::exchange_record(exchange_samples_, plan_.exchange_predicted,
                                            plan_.exchange_words, source));
    io::write_predictions(out_dir_, records);
  } catch (const std::exception& e) {
    log_ << "saguaro: the prediction log was not written: " << e.what() << "\n" << std::flush;
    return false;
  }
  if (at_end) log_ << "\n" << io::prediction_table(records);
  return true;
}

bool Simulation::output_due(int every) const {
  return every > 0 && iteration_ % every == 0;
}

static int every_or_default(const param::Registry& reg, const std::string& thorn) {
  long every = reg.get_int(thorn, "out_every");
  return int(every < 0 ? reg.get_int("IO", "out_every") : every);
}

bool Simulation::analysis_due() const {
  const param::Registry& reg = setup_.registry;
  return (!norm_vars_.empty() && output_due(every_or_default(reg, "IOScalar"))) ||
         (!hdf5_vars_.empty() && output_due(every_or_default(reg, "IOHDF5")));
}

// HDF5 output and checkpoints read the ghosts at their own periods; a calculation with a
// stencil reads them whenever it runs: at ANALYSIS when output is due, at PRESTEP or POSTSTEP
// every step. (The last state's exchange, once per run, is left out.)
int Simulation::ghost_reader_period() const {
  const param::Registry& reg = setup_.registry;
  int period = 0;
  auto take = [&period](long every) {
    if (every > 0) period = period == 0 ? int(every) : std::min(period, int(every));
  };
  if (!hdf5_vars_.empty()) take(every_or_default(reg, "IOHDF5"));
  take(reg.get_int("IO", "checkpoint_every"));
  for (const auto& b : bindings_) {
    if (b->pointwise || b->rhs) continue;
    const std::string bin = support::upper(b->calc->schedule_bin);
    if (bin == "PRESTEP" || bin == "POSTSTEP") take(1);
    // At ANALYSIS it runs when the norms or HDF5 output are due (analysis_due); HDF5's period
    // is taken above.
    if (bin == "ANALYSIS" && !norm_vars_.empty()) take(every_or_default(reg, "IOScalar"));
  }
  return period;
}

void Simulation::output_norms() {
  if (norm_vars_.empty() || !output_due(every_or_default(setup_.registry, "IOScalar"))) return;
  io::OutputStamp stamp{iteration_, time_, dt_};
  for (const std::string& v : norm_vars_)
    io::append_norms(out_dir_, *decomposition_, v, fields_->data(fields_->find(v)), stamp,
                     fields_->space());
}

void Simulation::output_hdf5() {
  if (hdf5_vars_.empty() || !output_due(every_or_default(setup_.registry, "IOHDF5"))) return;
  ensure_ghosts(); // the files hold the outer boundary points
  io::OutputStamp stamp{iteration_, time_, dt_};
  if (rank_ == 0) fs::create_directories(out_dir_);
  MPI_Barrier(comm_);
  const std::string params = setup_.registry.to_par_text();
  const std::string thorn = support::upper(setup_.program.implements);
  for (const std::string& v : hdf5_vars_)
    io::write_hdf5(out_dir_, decomposition_->patch(), thorn, v, fields_->host(fields_->find(v)),
                   stamp, params);
}

void Simulation::checkpoint(bool force) {
  long every = setup_.registry.get_int("IO", "checkpoint_every");
  bool due = every > 0 && iteration_ > 0 && iteration_ % every == 0;
  if (!(due || force) || iteration_ == last_checkpoint_) return;
  ensure_ghosts();
  std::vector<std::string> names;
  std::vector<const double*> data;
  for (int e : evolved_) {
    names.push_back(fields_->name(e));
    data.push_back(fields_->host(e));
  }
  io::write_checkpoint(checkpoint_dir_, *decomposition_, names, data,
                       io::CheckpointState{iteration_, time_, dt_}, setup_.registry.to_par_text(),
                       int(setup_.registry.get_int("IO", "checkpoint_keep")));
  last_checkpoint_ = iteration_;
  if (rank_ == 0)
    log_ << fmt::format("checkpoint at iteration {} in {}\n", iteration_, checkpoint_dir_)
         << std::flush;
}

// Continues from the newest usable checkpoint: a damaged one is reported and the one before it
// tried (io::recover_newest_checkpoint; every rank tries the same ones and agrees on each).
// Without a checkpoint, "autoprobe" starts afresh and "auto" stops; with checkpoints of which
// none is usable, both stop (a fresh start would truncate the output of the run they belong
// to), listing what was tried.
bool Simulation::recover() {
  const param::Registry& reg = setup_.registry;
  const std::string mode = reg.get_keyword("IO", "recover");
  if (mode == "no") return false;
  std::string dir = param::expand_parfile(reg.get_string("IO", "recover_dir"), setup_.par_path);
  if (dir.empty()) dir = checkpoint_dir_;
  std::vector<std::string> names;
  std::vector<double*> data;
  for (int e : evolved_) {
    names.push_back(fields_->name(e));
    data.push_back(fields_->host_mirror(e));
  }
  const io::Recovery found = io::recover_newest_checkpoint(dir, *decomposition_, names, data);
  if (rank_ == 0)
    for (const io::UnusableCheckpoint& bad : found.unusable)
      log_ << fmt::format("saguaro: warning: the checkpoint at iteration {} in {} is unusable, "
                          "trying the one before it: {}\n",
                          bad.iteration, dir, bad.reason)
           << std::flush;
  if (!found.state) {
    if (found.complete.empty()) {
      if (mode == "auto")
        par_error(setup_, "IO", "recover",
                  fmt::format("IO::recover = \"auto\" but there is no checkpoint in '{}'", dir),
                  {{{}, "use \"autoprobe\" to start from initial data when there is none"}});
      return false;
    }
    std::vector<support::Note> tried;
    for (const io::UnusableCheckpoint& bad : found.unusable)
      tried.push_back({{}, fmt::format("tried iteration {}: {}", bad.iteration, bad.reason)});
    par_error(setup_, "IO", "recover",
              fmt::format("IO::recover = \"{}\" but none of the {} checkpoint{} in '{}' is usable",
                          mode, found.complete.size(), found.complete.size() == 1 ? "" : "s", dir),
              std::move(tried));
  }
  for (int e : evolved_) fields_->upload(e);
  iteration_ = found.state->iteration;
  time_ = found.state->time;
  dt_ = found.state->dt;
  last_checkpoint_ = iteration_;
  if (rank_ == 0)
    log_ << fmt::format("recovered from iteration {} (t = {}) in {}\n", iteration_, time_, dir)
         << std::flush;
  return true;
}

// What the run does with the output files an earlier run left in IO::out_dir, decided once at
// the start: a recovered run continues them (the norms cut back to the iteration it continues
// from; HDF5 datasets after it are replaced as they are written again), a fresh run starts
// them anew when IO::truncate_files says so (as Cactus does), else appends.
void Simulation::start_output(bool recovered) {
  if (recovered) {
    for (const std::string& v : norm_vars_) io::keep_norms_through(out_dir_, v, iteration_, comm_);
    return;
  }
  if (!setup_.registry.get_bool("IO", "truncate_files")) return;
  for (const std::string& v : norm_vars_) io::truncate_norms(out_dir_, v, comm_);
  for (const std::string& v : hdf5_vars_) io::remove_hdf5_output(out_dir_, v, comm_);
}

// The end of a run's output: what the HDF5 writes kept for the next one goes.
void Simulation::finish_output() {
  for (const std::string& v : hdf5_vars_) io::finish_hdf5(out_dir_, v, rank_);
}

bool Simulation::terminate() const {
  const param::Registry& reg = setup_.registry;
  const std::string how = reg.get_keyword("Cactus", "terminate");
  const int itlast = int(reg.get_int("Cactus", "cctk_itlast"));
  const double final_time = reg.get_real("Cactus", "cctk_final_time");
  bool by_iteration = iteration_ >= itlast;
  bool by_time = final_time >= 0 && time_ >= final_time - 1e-9 * dt_;
  if (how == "never") return false;
  if (how == "iteration") return by_iteration;
  if (how == "time") return by_time;
  if (how == "all") return by_iteration && by_time;
  return by_iteration || by_time; // any, either, runtime (max_runtime is checked by run())
}

} // namespace saguaro::host
