// The driver's side of the run's decisions: the device description, and the run plan
// (mapper::RunPlan) asked for with this run's settings, grid, MPI broadcast and timings. The
// decisions themselves are the mapper's (mapper/run_plan.hpp).
#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include "calc/fold.hpp"
#include "calibrate/calibrate.hpp"
#include "model/model.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <ostream>

namespace saguaro::host {

namespace {

// Rank 0's bytes on every rank of `comm`: how the run plan's decisions become everyone's.
mapper::Broadcast broadcast_from_root(MPI_Comm comm) {
  return [comm](std::string& s) {
    unsigned long size = s.size();
    MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG, 0, comm);
    s.resize(size);
    MPI_Bcast(s.data(), int(size), MPI_CHAR, 0, comm);
  };
}

// Marks the folded forms of calculation `plain` other than `timed`.
std::vector<bool> other_folded_forms(const calc::Program& program, std::size_t plain,
                                     std::size_t timed) {
  std::vector<bool> marked(program.calculations.size(), false);
  for (const auto& [folded, form] : program.folded_forms)
    marked[folded] = form.plain == plain && folded != timed;
  return marked;
}

} // namespace

// The mappings from Saguaro::cuda_buffering and cuda_block (one per calculation): every input
// gets the chosen strategy where it applies. Backends that take no mappings ignore them.
std::vector<calc::Mapping> Simulation::default_mappings() const {
  const param::Registry& reg = setup_.registry;
  calc::BlockConfig block;
  try {
    block = calc::parse_block_config(reg.get_string("Saguaro", "cuda_block"));
  } catch (const calc::MappingError& e) {
    par_error(setup_, "Saguaro", "cuda_block", e.what());
  }
  const std::string buffering = reg.get_keyword("Saguaro", "cuda_buffering");
  std::vector<calc::Mapping> mappings;
  for (const calc::Calculation& c : setup_.program.calculations)
    mappings.push_back(calc::strategy_mapping(c, buffering, block));
  return mappings;
}

// The mappings the backend compiles (Saguaro::mapper; mapper::plan_mappings says how each is
// chosen): rank 0 maps for its patch and the description the prediction log uses, or the
// configs/devices/ one of the backend's device.
void Simulation::plan_mappings() {
  const param::Registry& reg = setup_.registry;
  const runtime::BackendDescription backend = backend_->description();
  mapper::MappingRequest request;
  request.method = reg.get_keyword("Saguaro", "mapper");
  request.defaults = default_mappings();
  request.fixed = setup_.fixed_mappings;
  request.fixed_path = setup_.mapping_path;
  request.mapped_by_model = backend.mapped_by_model;
  request.root = rank_ == 0;
  request.device = device_;
  request.device_origin = device_origin_;
  request.device_name = backend.device;
  const grid::Index3 n = decomposition_->patch().size();
  request.grid = {n[0], n[1], n[2]};
  request.verify = int(reg.get_int("Saguaro", "mapper_verify"));
  request.cache_dir = reg.get_string("Saguaro", "cache_dir");
  request.mapping_cache = reg.get_bool("Saguaro", "mapping_cache");
  plan_ = mapper::plan_mappings(setup_.program, request, broadcast_from_root(comm_));
  for (std::size_t i = 0; i < plan_.calculations.size(); ++i)
    if (const int form = timed_form(i); form >= 0)
      mapper::drop_candidates_changed_by_folding(setup_.program, i, std::size_t(form), plan_);
}

// The empirical finish times a folded right-hand side (the step launches its folded forms,
// never the plain one) in the folded form most stages launch. Its stores of the stage's
// combinations change which mapping is fastest: par/wave.par at 256^3 on the H100, the plain
// form's finish kept z 32x8x8 (its stages 2-3 form 584 us a launch, the step 1.944 ms) over one
// thread per point (527 us, 1.803 ms); BSSN at 256^3 kept a fission of 4 kernels (step 113.5
// ms) over one of 5 (110.9 ms), for 2-6 s more of compiling on its first run (23.6-24.6 s).
int Simulation::timed_form(std::size_t plain) const {
  const auto forms = folding_.forms.find(int(plain));
  if (forms == folding_.forms.end()) return -1;
  std::map<int, int> stages; // folded form -> stages that launch it
  for (int f : forms->second)
    if (f >= 0) ++stages[f];
  int form = -1, most = 0;
  for (const auto& [f, n] : stages)
    if (n > most) {
      form = f;
      most = n;
    }
  return form;
}

// The empirical finish's candidate programs (Saguaro::mapper_verify): set j - 1 is every
// calculation under its j-th candidate (j = 0 is the run plan's own mappings), a calculation
// with fewer keeping its last, one without candidates the run plan's mapping. Empty when no
// calculation has two candidates (the finish off, or every verdict from the cache).
std::vector<std::vector<calc::Mapping>> Simulation::candidate_sets() const {
  std::size_t ranks = 0;
  for (const mapper::CalculationPlan& p : plan_.calculations)
    if (p.candidates.size() >= 2) ranks = std::max(ranks, p.candidates.size());
  std::vector<std::vector<calc::Mapping>> sets;
  for (std::size_t j = 1; j < ranks; ++j) {
    std::vector<calc::Mapping> mappings = plan_.mappings();
    for (std::size_t i = 0; i < mappings.size(); ++i) {
      const auto& list = plan_.calculations[i].candidates;
      if (list.size() >= 2) mappings[i] = list[std::min(j, list.size() - 1)];
    }
    calc::follow_plain_forms(setup_.program, mappings); // the form timed_form picks among them
    sets.push_back(std::move(mappings));
  }
  return sets;
}

// The run's first compile: every calculation under the run plan's mapping and, in the same
// Backend::compile_sets call, the empirical finish's candidates (the CUDA backend compiles
// every distinct module in parallel and caches each alone: BSSN's candidates and the run's
// own kernels compile side by side instead of one after the other).
void Simulation::compile_mappings() {
  const calc::Program& program = setup_.program;
  std::vector<std::vector<calc::Mapping>> sets = candidate_sets();
  startup_.candidate_programs = int(sets.size());
  // The folded forms of a calculation the finish times take its verdict's mapping: compiled
  // after it (verify_mappings), not for the model's pick first (BSSN: three modules of a
  // right-hand side that spills, each compiled twice, and thrown away).
  std::vector<bool> wanted(program.calculations.size(), true);
  if (!sets.empty())
    for (const auto& [folded, form] : program.folded_forms)
      if (plan_.calculations.at(form.plain).candidates.size() >= 2 &&
          timed_form(form.plain) != int(folded))
        wanted.at(folded) = false;
  sets.insert(sets.begin(), plan_.mappings());
  std::vector<std::vector<std::unique_ptr<runtime::CompiledCalculation>>> compiled =
      backend_->compile_sets(program, sets, wanted);
  kernels_ = std::move(compiled.front());
  candidate_kernels_.assign(std::make_move_iterator(compiled.begin() + 1),
                            std::make_move_iterator(compiled.end()));
}

// The empirical finish (Saguaro::mapper_verify): every candidate mapping of a calculation,
// compiled with the run's own kernels (compile_mappings), is timed over this rank's patch, the
// calculation's outputs saved before and restored after so that the state is untouched;
// mapper::verify_candidates keeps the fastest (and caches the verdict). Every candidate is
// launched once after a warm-up; those within 1.5x of the fastest then get the median of 5
// batches of back-to-back launches, timed in 5 rounds of one batch each (the order turning
// every round), each batch about 2 ms (launches queue as in a step, so a
// mapping of several kernels is not charged a synchronisation per kernel), the others keep
// their one launch's time; always the slowest rank's. A folded right-hand side's close
// finalists are timed over the step's other forms too (time_over_step). The CUDA backend's timings
// of every candidate stay in the prediction log. The verdicts' programs are compiled last: the
// folded forms of every calculation it timed (compile_mappings leaves them out), and whatever
// changed.
void Simulation::verify_mappings() {
  ensure_ghosts();
  const calc::Program& program = setup_.program;
  if (candidate_kernels_.empty()) return;
  const std::size_t ranks = candidate_kernels_.size() + 1;
  // compiled[j - 1][i]: calculation i under its j-th candidate (j = 0: kernels_).
  std::vector<std::vector<std::unique_ptr<runtime::CompiledCalculation>>>& compiled =
      candidate_kernels_;
  const std::vector<std::vector<calc::Mapping>> sets = candidate_sets();
  std::map<std::size_t, std::string> step_notes; // plain -> how its finalists were timed
  auto time = [&](std::size_t plain, const std::vector<calc::Mapping>& list) {
    // A folded right-hand side is timed in the form the step launches most (timed_form).
    const int form = timed_form(plain);
    const std::size_t i = form >= 0 ? std::size_t(form) : plain;
    const CalcBinding& b = *bindings_[i];
    std::vector<CalcBinding> trials;
    for (std::size_t j = 0; j < list.size(); ++j)
      trials.push_back(trial_of(b, j == 0 ? kernels_[i].get() : compiled[j - 1][i].get()));
    std::vector<double> seconds = time_trials(trials, b.outputs, true);
    if (form >= 0) {
      std::string note;
      seconds = time_over_step(plain, i, seconds, sets, note);
      if (!note.empty()) step_notes[plain] = note;
    }
    // Each candidate keeps scratch arrays for its temporaries while it lives: gone once timed
    // (BSSN's candidates hold tens of them, 150 MB each at 256^3).
    for (auto& set : compiled) {
      set[i].reset();
      set[plain].reset();
    }
    return seconds;
  };
  // Each candidate re-priced by the model with ptxas's report of its kernels, in the form it
  // is timed in (rank 0's: it writes the line).
  const std::optional<model::Device> device = pricing_device();
  std::vector<std::future<void>> speculative; // precompiles; waited for before the recompile
  auto price = [&](std::size_t plain, const std::vector<calc::Mapping>& list) {
    const int form = timed_form(plain);
    const std::size_t i = form >= 0 ? std::size_t(form) : plain;
    std::vector<double> out(list.size(), std::nan(""));
    if (!device) return out;
    const mapper::MapperOptions options = patch_mapper_options();
    for (std::size_t j = 0; j < list.size(); ++j) {
      const runtime::CompiledCalculation* k = j == 0 ? kernels_[i].get() : compiled[j - 1][i].get();
      if (k == nullptr) continue;
      std::vector<model::CompiledResources> resources;
      for (const runtime::KernelResources& r : k->kernel_resources())
        resources.push_back(runtime::compiled_resources(r));
      if (resources.empty()) continue;
      try {
        out[j] = mapper::price_mapping(program.calculations[i],
                                       j == 0 ? plan_.mappings()[i] : sets[j - 1][i], *device,
                                       options, resources)
                     .seconds;
      } catch (const std::exception&) { // the model cannot read it: no price
      }
    }
    // The other folded forms of the candidate so priced cheapest start compiling now, while
    // the candidates are timed: the verdict is mostly that candidate, and its forms are then
    // in the cache when the verdict's program is compiled below.
    const std::size_t j = mapper::cheapest_price(out);
    std::vector<bool> wanted = other_folded_forms(program, plain, i);
    if (j < list.size() && std::find(wanted.begin(), wanted.end(), true) != wanted.end())
      speculative.push_back(backend_->precompile(program, j == 0 ? plan_.mappings() : sets[j - 1],
                                                 std::move(wanted)));
    return out;
  };
  const auto time_start = std::chrono::steady_clock::now();
  const std::vector<calc::Mapping> before = plan_.mappings();
  const std::vector<std::string> lines = mapper::verify_candidates(
      program, time, plan_,
      [&](std::size_t plain) {
        const int form = timed_form(plain);
        const auto note = step_notes.find(plain);
        return form < 0 ? std::string()
                        : program.calculations[std::size_t(form)].name +
                              (note == step_notes.end() ? std::string() : note->second);
      },
      price);
  candidate_kernels_.clear();
  startup_.finish_timing =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - time_start).count();
  if (rank_ == 0) {
    for (const std::string& line : lines) log_ << "  " << line << "\n";
    log_ << fmt::format("  mapper_verify: {} candidate program(s), compiled with the run's "
                        "kernels, timed in {:.2f} s{}\n",
                        ranks - 1, startup_.finish_timing,
                        plan_.verdicts ? "; verdicts cached for the next run" : "");
  }
  const bool whole =
      std::all_of(kernels_.begin(), kernels_.end(), [](const auto& k) { return k != nullptr; });
  const auto recompile_start = std::chrono::steady_clock::now();
  for (std::future<void>& f : speculative) f.wait();
  if (plan_.mappings() == before && whole) return;
  kernels_ = backend_->compile(program, plan_.mappings());
  startup_.finish_recompile =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - recompile_start).count();
  if (rank_ == 0 && !backend_->compile_summary().empty())
    log_ << "  mapper_verify: the verdicts' programs: " << backend_->compile_summary() << "\n";
  for (std::size_t i = 0; i < bindings_.size(); ++i) bindings_[i]->kernel = kernels_[i].get();
}

// The description the prediction log predicts with: the one Saguaro::device_description names
// (for the backend's kind of hardware), else the one the backend is modelled with
// (calibrate::modelled_device: the host's roofline measured now, or the configs/devices/ file
// of its GPU). Only rank 0 writes the log, so only rank 0 looks for one or measures.
void Simulation::choose_device() {
  const runtime::BackendDescription backend = backend_->description();
  const bool modelled = backend.model != runtime::DeviceModel::none;
  prediction_log_ = setup_.registry.get_bool("Saguaro", "prediction_log") && modelled;
  if (setup_.device && modelled) {
    const model::Device& d = *setup_.device;
    const bool host = d.kind == "cpu";
    if (host != (backend.model == runtime::DeviceModel::host_roofline))
      par_error(setup_, "Saguaro", "device_description",
                fmt::format("Saguaro::device_description '{}' describes a {} ({}), but the "
                            "backend is {}",
                            setup_.device_path, host ? "CPU" : "GPU", d.name, backend.name),
                {{{},
                  host ? "name a GPU's description from configs/devices/, or \"auto\""
                       : "name a description of this host's CPU (`saguaro calibrate` measures "
                         "one), or \"auto\" to measure it at start"}});
    device_ = d;
    device_origin_ = "from " + setup_.device_path;
    if (!backend.device.empty() && backend.device != d.name)
      device_origin_ += fmt::format(" (not this run's {})", backend.device);
    return;
  }
  if (!prediction_log_ || rank_ != 0) return;
  calibrate::ModelledDevice m =
      calibrate::modelled_device(backend, fmt::format("saguaro run {}", setup_.par_path));
  device_ = std::move(m.device);
  device_origin_ = std::move(m.origin);
  device_note_ = std::move(m.note);
}

// Which right-hand sides are split around the evolved variables' ghost exchange
// (Saguaro::exchange_overlap; mapper::plan_launches decides), and how messages travel
// (Saguaro::cuda_aware_mpi).
void Simulation::plan_launches() {
  const param::Registry& reg = setup_.registry;
  runtime::ArraySpace& space = fields_->space();
  const std::string aware = reg.get_keyword("Saguaro", "cuda_aware_mpi");
  const bool device_pointers =
      aware == "yes" || (aware == "auto" && grid::mpi_takes_device_pointers());
  decomposition_->use_device_messages(space.on_device() && device_pointers);
  decomposition_->use_peer_messages(reg.get_bool("Saguaro", "cuda_ipc"));
  decomposition_->use_direct_ghosts(reg.get_bool("Saguaro", "cuda_ipc_ghosts"));
  if (!decomposition_->has_remote_faces()) return;

  mapper::ExchangeRequest request;
  request.overlap = reg.get_keyword("Saguaro", "exchange_overlap");
  request.evolved = int(evolved_.size());
  request.phase_bytes = decomposition_->message_bytes(int(evolved_.size()));
  request.transport = decomposition_->transport(space);
  const grid::Patch& patch = decomposition_->patch();
  // The shell lies along the faces whose ghosts arrive by message and along the outer faces
  // (their flat boundaries are applied once the messages are in).
  request.shell_faces = decomposition_->remote_faces();
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s)
      request.shell_faces[a][s] = request.shell_faces[a][s] || patch.outer[a][s];
  const grid::Index3 n = patch.size();
  request.owned = {{ghost_, ghost_, ghost_}, {ghost_ + n[0], ghost_ + n[1], ghost_ + n[2]}};
  request.grid = {n[0], n[1], n[2]};
  for (const auto& b : bindings_)
    request.splittable.push_back(b->rhs && !b->pointwise && !b->calc->on_boundary);
  if (backend_->description().model == runtime::DeviceModel::gpu_description && device_ &&
      device_->kind == "gpu" && model::describes_interconnect(*device_))
    request.device = device_;
  mapper::plan_launches(setup_.program, request, broadcast_from_root(comm_), plan_);
  for (std::size_t i = 0; i < bindings_.size(); ++i) {
    bindings_[i]->split = plan_.calculations[i].split;
    bindings_[i]->regions = plan_.calculations[i].regions;
  }
  exchange_overlap_ = plan_.any_split();
}

// A calculation's binding launching `kernel` as the finish times it: no ghost exchange, not
// split.
Simulation::CalcBinding Simulation::trial_of(const CalcBinding& binding,
                                             runtime::CompiledCalculation* kernel) {
  CalcBinding trial = binding;
  trial.kernel = kernel;
  trial.rhs = true;
  trial.split = false;
  return trial;
}

double Simulation::time_batch(const CalcBinding& trial, int launches) {
  runtime::ArraySpace& space = fields_->space();
  space.synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < launches; ++r) run_calculation(trial);
  space.synchronize();
  double t =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / launches;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm_); // the slowest rank's
  return t;
}

// With `screen`, one launch of each after a warm-up first: a candidate over kScreen times the
// fastest cannot win and keeps that time; the others get the median of 5 batches (BSSN: four of
// its ten candidates take 85-95 ms against 28, and timing them fully was half of the finish's
// 5 s). The batches go in rounds, one batch of each per round in an order that turns every
// round, so that a drift of the GPU's clock or of its caches over the timing is spread over
// every candidate instead of favouring the ones timed first or last.
std::vector<double> Simulation::time_trials(const std::vector<CalcBinding>& trials,
                                            const std::vector<int>& outputs, bool screen) {
  runtime::ArraySpace& space = fields_->space();
  const std::size_t points = decomposition_->patch().points();
  std::vector<std::pair<double*, double*>> saved; // (field, copy)
  for (int f : outputs) {
    double* copy = space.allocate(points);
    space.copy(copy, fields_->data(f), points);
    saved.push_back({fields_->data(f), copy});
  }
  constexpr double kScreen = 1.5;
  std::vector<double> seconds;
  for (const CalcBinding& trial : trials) {
    time_batch(trial, 1); // warm-up
    seconds.push_back(time_batch(trial, 1));
  }
  const double fastest = *std::min_element(seconds.begin(), seconds.end());
  std::vector<std::size_t> finalists;
  std::vector<int> launches(trials.size(), 1);
  for (std::size_t j = 0; j < trials.size(); ++j) {
    if (screen && seconds[j] > kScreen * fastest) continue;
    finalists.push_back(j);
    launches[j] = int(std::clamp(std::ceil(2e-3 / std::max(seconds[j], 1e-7)), 1.0, 100.0));
  }
  std::vector<std::vector<double>> runs(trials.size());
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t n = 0; n < finalists.size(); ++n) {
      const std::size_t j = finalists[(n + r) % finalists.size()];
      runs[j].push_back(time_batch(trials[j], launches[j]));
    }
  for (std::size_t j : finalists) seconds[j] = runtime::median(runs[j]);
  for (const auto& [field, copy] : saved) {
    space.copy(field, copy, points);
    space.release(copy);
  }
  return seconds;
}

// The finalists within kClose of the fastest in right-hand side `plain`'s timed form `timed`,
// where its step launches other folded forms (every stage a folded one), are timed in those too,
// compiled here (the verdict's forms would be compiled after the finish anyway), and every
// candidate's time becomes a time per launch over the step (mapper::step_weighted_times;
// `note` says so). Otherwise `seconds` unchanged.
std::vector<double> Simulation::time_over_step(std::size_t plain, std::size_t timed,
                                               const std::vector<double>& seconds,
                                               const std::vector<std::vector<calc::Mapping>>& sets,
                                               std::string& note) {
  constexpr double kClose = 1.03;
  const calc::Program& program = setup_.program;
  const auto stage_forms = folding_.forms.find(int(plain));
  const std::vector<bool> others = other_folded_forms(program, plain, timed);
  const double fastest = *std::min_element(seconds.begin(), seconds.end());
  std::vector<std::size_t> close;
  for (std::size_t j = 0; j < seconds.size(); ++j)
    if (seconds[j] <= kClose * fastest) close.push_back(j);
  if (stage_forms == folding_.forms.end() || close.size() < 2 ||
      std::find(others.begin(), others.end(), true) == others.end() ||
      !std::all_of(stage_forms->second.begin() + 1, stage_forms->second.end(),
                   [](int f) { return f >= 0; }))
    return seconds;
  std::vector<std::vector<calc::Mapping>> close_sets;
  for (std::size_t j : close) close_sets.push_back(j == 0 ? plan_.mappings() : sets.at(j - 1));
  const std::vector<std::vector<std::unique_ptr<runtime::CompiledCalculation>>> forms =
      backend_->compile_sets(program, close_sets, others);
  std::map<int, std::vector<double>> form_seconds; // other form -> per close candidate
  for (std::size_t f = 0; f < others.size(); ++f) {
    if (!others[f]) continue;
    std::vector<CalcBinding> trials;
    for (std::size_t c = 0; c < close.size(); ++c)
      trials.push_back(trial_of(*bindings_[f], forms[c][f].get()));
    form_seconds[int(f)] = time_trials(trials, bindings_[f]->outputs, false);
  }
  std::vector<double> step(close.size(), 0.0);
  int launches = 0;
  for (std::size_t s = 1; s < stage_forms->second.size(); ++s, ++launches)
    for (std::size_t c = 0; c < close.size(); ++c) {
      const int f = stage_forms->second[s];
      step[c] += f == int(timed) ? seconds[close[c]] : form_seconds.at(f)[c];
    }
  note = fmt::format("; the {} within {:.0f}% of the fastest also in its other forms, every time "
                     "per launch over the step's {}",
                     close.size(), (kClose - 1) * 100, launches);
  return mapper::step_weighted_times(seconds, close, step, launches);
}

} // namespace saguaro::host
