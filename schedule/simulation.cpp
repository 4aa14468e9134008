// The driver: construction (grid, backend, storage, compiled calculations, MoL), the
// schedule's bindings and the run loop.

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"
#include "schedule/startup_checks.hpp"

#include "runtime/backend_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <sstream>

namespace saguaro::host {
namespace fs = std::filesystem;

namespace {

// Whether every rank of `comm` can use the backend `entry`; when not, `why` is the reason the
// first rank without it gives (the same text on every rank, so all of them decide alike).
bool available_everywhere(MPI_Comm comm, const runtime::BackendEntry& entry, std::string& why) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string reason;
  const bool here = entry.available(&reason);
  int first_without = here ? INT_MAX : rank, first = INT_MAX;
  MPI_Allreduce(&first_without, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return true;
  int length = int(reason.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  reason.resize(std::size_t(length));
  MPI_Bcast(reason.data(), length, MPI_CHAR, first, comm);
  why = first > 0 ? fmt::format("rank {}: {}", first, reason) : reason;
  if (why.empty()) why = "no reason given";
  return false;
}

} // namespace

Simulation::Simulation(Setup setup, MPI_Comm comm, std::ostream& log)
    : setup_(std::move(setup)), comm_(comm), log_(log) {
  MPI_Comm_rank(comm_, &rank_);
  const param::Registry& reg = setup_.registry;
  const calc::Program& program = setup_.program;

  ghost_ = host::ghost_width(setup_);
  const grid::GridSpec spec = grid_spec(setup_, ghost_);
  decomposition_ = std::make_unique<grid::Decomposition>(spec, comm_);
  check_output_directories(setup_);
  int on_host = 1; // ranks on this host
  {
    // Every rank decides alike: the largest patch against the least memory per rank of a host.
    MPI_Comm host = MPI_COMM_NULL;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &on_host);
    MPI_Comm_free(&host);
    double points = double(decomposition_->patch().points());
    double per_rank = available_memory() / on_host;
    MPI_Allreduce(MPI_IN_PLACE, &points, 1, MPI_DOUBLE, MPI_MAX, comm_);
    MPI_Allreduce(MPI_IN_PLACE, &per_rank, 1, MPI_DOUBLE, MPI_MIN, comm_);
    check_memory(setup_, points, per_rank, 1);
  }

  // The backend, before any storage: its ArraySpace holds every grid function. "auto" is the
  // registry's first backend that every rank can use (CUDA when every rank has a GPU, else the
  // generated C++).
  const std::string word = reg.get_keyword("Saguaro", "backend");
  const runtime::BackendChoice choice =
      runtime::choose_backend(word, [this](const runtime::BackendEntry& entry, std::string& why) {
        return available_everywhere(comm_, entry, why);
      });
  if (!choice.error.empty())
    par_error(setup_, "Saguaro", "backend",
              fmt::format("Saguaro::backend = \"{}\", but {}", word, choice.error),
              {{{},
                "use \"auto\" (CUDA when a GPU is present, generated C++ otherwise) or "
                "\"cpu\""}});
  runtime::BackendOptions options;
  options.cache_dir = reg.get_string("Saguaro", "cache_dir");
  options.verbose = reg.get_bool("Saguaro", "verbose") && rank_ == 0;
  options.programmatic_launch = reg.get_bool("Saguaro", "programmatic_launch");
  const std::string streaming = reg.get_keyword("Saguaro", "streaming_stores");
  options.streaming_stores = streaming == "yes"  ? runtime::StreamingStores::always
                             : streaming == "no" ? runtime::StreamingStores::never
                                                 : runtime::StreamingStores::automatic;
  // Every calculation of the run works on this rank's patch: kernels printed for its layout,
  // when it is every rank's (otherwise each layout would be compiled on its own rank, and the
  // ranks of one host would run NVRTC side by side instead of sharing one compile).
  const grid::Patch& patch = decomposition_->patch();
  options.array_points =
      std::size_t(patch.pitch()) * std::size_t(patch.alloc()[1]) * std::size_t(patch.alloc()[2]);
  options.ranks_on_host = on_host;
  if (decomposition_->same_rows_on_every_rank())
    options.array_layout = calc::ArrayLayout{patch.pitch(), patch.alloc()[1]};
  backend_ = runtime::make_backend(choice.name, options);
  runtime::ArraySpace& space = backend_->space();
  fields_ = std::make_unique<grid::GridFunctions>(decomposition_->patch(), space);

  // Boundary conditions per outer face.
  const std::string all_faces = reg.get_keyword("Saguaro", "boundary_condition");
  bool ghosts_refilled = true; // every outer face periodic or flat (step_fold.hpp)
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      std::string face = reg.get_keyword("Saguaro", std::string("boundary_") + kFaceNames[a][s]);
      boundary_[a][s] = grid::boundary_kind_from_string(face == "default" ? all_faces : face);
      ghosts_refilled =
          ghosts_refilled && (spec.periodic[a] || boundary_[a][s] == grid::BoundaryKind::Flat);
    }

  // The right-hand side of each evolved variable, and the stage combinations folded into the
  // right-hand sides that can compute them (their folded forms join the program's
  // calculations, to be mapped and compiled with the others).
  const std::vector<std::string> rhs_names = schedule::rhs_fields(program);
  const schedule::Integrator& integrator =
      schedule::find_integrator(reg.get_keyword("MoL", "ODE_Method"));
  folding_ = schedule::fold_step(setup_.program, integrator, rhs_names,
                                 reg.get_keyword("Saguaro", "fold_updates"), ghosts_refilled,
                                 backend_->description().mapped_by_model);
  setup_.fixed_mappings.resize(program.calculations.size());

  // Storage: the thorn's variables, right-hand sides and intermediates, and the integrator's
  // registers per evolved variable.
  for (const std::string& v : program.variables) fields_->add(v);
  for (const calc::Calculation& c : program.calculations)
    for (const calc::GridFunctionRef& gf : c.grid_functions) fields_->add(gf.name);
  for (std::size_t v = 0; v < program.evolved.size(); ++v) {
    evolved_.push_back(fields_->find(program.evolved[v]));
    rhs_.push_back(fields_->add(rhs_names[v]));
    evolved_u0_.push_back(reg.get_real("Saguaro", "radiative_value"));
  }
  const int registers = schedule::kFirstScratchRegister + int(integrator.scratch.size());
  step_registers_.assign(std::size_t(registers), {});
  for (int r = 0; r < registers; ++r)
    for (std::size_t v = 0; v < program.evolved.size(); ++v)
      step_registers_[std::size_t(r)].push_back(fields_->add(
          schedule::StepFolding::register_field(integrator, r, program.evolved[v], rhs_names[v])));

  choose_device();

  // Map and compile.
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  auto t = std::chrono::steady_clock::now();
  plan_mappings();
  startup_.mapping = since(t);
  t = std::chrono::steady_clock::now();
  compile_mappings();
  startup_.compile = since(t);

  for (std::size_t i = 0; i < program.calculations.size(); ++i) {
    const calc::Calculation& c = program.calculations[i];
    auto b = std::make_unique<CalcBinding>();
    b->calc = &c;
    b->kernel = kernels_[i].get();
    for (const calc::GridFunctionRef& gf : c.grid_functions)
      b->field_index.push_back(fields_->find(gf.name));
    runtime::Margin m = runtime::required_margin(c);
    b->pointwise = m.max() == 0;
    b->rhs = support::lower(c.schedule_bin) == "mol_calcrhs" ||
             support::lower(c.schedule_bin) == "mol_rhsboundaries";
    for (int o : c.outputs) b->outputs.push_back(b->field_index[o]);
    bindings_.push_back(std::move(b));
  }
  plan_launches();

  // Output.
  out_dir_ = output_directory(setup_);
  std::string cp = param::expand_parfile(reg.get_string("IO", "checkpoint_dir"), setup_.par_path);
  checkpoint_dir_ = cp.empty() ? (fs::path(out_dir_) / "checkpoints").string() : cp;
  norm_vars_ = output_variables(setup_, "IOScalar", "out_vars");
  hdf5_vars_ = output_variables(setup_, "IOHDF5", "out_vars");

  plan_step();      // time integration
  plan_time_tile(); // or all of its stages in one kernel

  parameters_ = parameter_values(); // fixed for the run: nothing is steerable yet
  executor_ = std::make_unique<schedule::Executor>(setup_.schedule, timers_);
  executor_->time_device(&fields_->space()); // a GPU's: device times beside the host's
  bind_schedule();
  if (auto unbound = executor_->unbound(); !unbound.empty())
    throw std::logic_error("scheduled functions without an implementation: " + unbound.front());
}

Simulation::~Simulation() = default;

// "start-up 29.8 s before the first step: mapping 3.1 s, compile 8.8 s, ..." (the parts a run
// had; the rest of the total is the grid, storage, output set-up and the device's start).
std::string Simulation::StartupTimes::line() const {
  std::string s = fmt::format("start-up {:.2f} s before the first step: mapping {:.2f} s, compile "
                              "{:.2f} s",
                              total, mapping, compile);
  if (candidate_programs > 0)
    s += fmt::format(" (with the empirical finish's {} candidate program{})", candidate_programs,
                     candidate_programs == 1 ? "" : "s");
  s += fmt::format(", initial data {:.2f} s", initial_data);
  if (candidate_programs > 0)
    s += fmt::format(", empirical finish {:.2f} s (timing {:.2f}, the verdicts' compile {:.2f})",
                     finish_timing + finish_recompile, finish_timing, finish_recompile);
  return s;
}

void Simulation::bind_schedule() {
  schedule::Executor& ex = *executor_;
  const param::Registry& reg = setup_.registry;
  ex.bind("Driver_SetupGrid", [] {}); // done at construction: storage must exist to bind
  ex.bind("Time_Simple", [this, &reg] {
    const grid::Real3& h = decomposition_->patch().spec.spacing;
    dt_ = reg.get_keyword("Time", "timestep_method") == "given"
              ? reg.get_real("Time", "timestep")
              : reg.get_real("Time", "dtfac") * std::min({h[0], h[1], h[2]});
  });
  ex.bind("MoL_Evolution", [this] {
    const double t0 = time_;
    const schedule::StepPlan& plan = step_->plan();
    if (!plan.entry_pending) ensure_ghosts();
    // What the last step left pending the plan's first (`carried`) operations finish, unless
    // something between the steps did (the initial data's exchange, an analysis stencil).
    step_carries_ = ghosts_pending_;
    exchange_skipped_ = false;
    ghosts_pending_ = boundary_pending_ = false;
    step_->step(t0, dt_, [this](const schedule::StepOp& op, double t) { run_step_op(op, t); });
    ghosts_pending_ = plan.exit_pending;
    boundary_pending_ = plan.exit_boundary_pending;
    time_ = t0 + dt_;
  });
  ex.bind("MoL_PostStepInitial", [this] { executor_->run("MoL_PostStep"); });
  // Outside the step (initial data, a recovered state) these run where they are scheduled;
  // inside it the step plan places the exchange and the boundaries.
  ex.bind("Driver_SyncEvolved", [this] {
    exchange_begin();
    exchange_finish();
  });
  ex.bind("Boundary_ApplyOuter", [this] { boundary_state(); });
  ex.bind("Boundary_RHS", [this] { boundary_rhs(); });
  ex.bind("IOScalar_OutputNorms", [this] { output_norms(); });
  ex.bind("IOHDF5_Output", [this] { output_hdf5(); });
  ex.bind("IO_Checkpoint", [this] { checkpoint(false); });
  ex.bind("Timers_Report", [this] {
    executor_->resolve_device_times();
    if (rank_ == 0) log_ << "\nTimers (rank 0):\n" << timers_.report();
  });
  for (const auto& b : bindings_) {
    const CalcBinding* binding = b.get();
    const bool analysis = support::upper(binding->calc->schedule_bin) == "ANALYSIS";
    ex.bind(binding->calc->name, [this, binding, analysis] {
      // Analysis quantities are only computed when something will be written.
      if (analysis && !analysis_due()) return;
      run_calculation(*binding);
    });
  }
}

void Simulation::run() {
  const param::Registry& reg = setup_.registry;
  const grid::Patch& patch = decomposition_->patch();
  const calc::Program& program = setup_.program;
  schedule::Executor& ex = *executor_;
  const int itlast = int(reg.get_int("Cactus", "cctk_itlast"));
  const double final_time = reg.get_real("Cactus", "cctk_final_time");
  const std::string how = reg.get_keyword("Cactus", "terminate");
  time_ = reg.get_real("Cactus", "cctk_initial_time");

  if (rank_ == 0) {
    log_ << fmt::format("saguaro: {} from {}\n", program.thorn, setup_.edl_path);
    log_ << fmt::format("  grid {} x {} x {} points, spacing ({:g}, {:g}, {:g}), ghost width {}, "
                        "{} rank{} as {} x {} x {}\n",
                        patch.spec.points[0], patch.spec.points[1], patch.spec.points[2],
                        patch.spec.spacing[0], patch.spec.spacing[1], patch.spec.spacing[2], ghost_,
                        patch.ranks, patch.ranks == 1 ? "" : "s", decomposition_->dims()[0],
                        decomposition_->dims()[1], decomposition_->dims()[2]);
    const runtime::BackendDescription described = backend_->description();
    std::string backend = described.name;
    if (!described.device_detail.empty()) backend += fmt::format(" ({})", described.device_detail);
    log_ << fmt::format("  backend {}, fd order {}, {}\n", backend, program.fd_order,
                        reg.get_keyword("MoL", "ODE_Method"));
    if (const std::string summary = backend_->compile_summary(); !summary.empty())
      log_ << "  " << summary << "\n";
    for (const std::string& line : plan_.log) log_ << "  " << line << "\n";
    log_ << "  " << folding_.note << "\n";
    if (!time_tile_choice_.reason.empty()) log_ << "  " << time_tile_choice_.reason << "\n";
    std::istringstream plan(step_->plan().text()); // its first line; every operation if verbose
    for (std::string line; std::getline(plan, line) && (!line.empty());) {
      log_ << "  " << line << "\n";
      if (!reg.get_bool("Saguaro", "verbose")) break;
    }
    if (prediction_log_ && device_ && device_->kind == "cpu")
      log_ << fmt::format("  prediction log: roofline of {}, {}: {:.1f} GB/s DRAM (triad), {:.1f} "
                          "GFLOP/s FP64, {:g} core{}\n",
                          device_->name, device_origin_, device_->dram_bandwidth,
                          device_->fp64_peak, device_->cores, device_->cores == 1 ? "" : "s");
    else if (prediction_log_ && device_)
      log_ << fmt::format("  prediction log: model of {}, {}\n", device_->name, device_origin_);
    else if (prediction_log_)
      log_ << "  prediction log: " << device_note_ << "\n";
    if (reg.get_bool("Cactus", "cctk_show_schedule")) log_ << setup_.schedule.tree();
    log_ << std::flush; // a run killed later still leaves its banner in a redirected log
  }

  for (const char* bin : {"STARTUP", "PARAMCHECK", "BASEGRID"}) ex.run(bin);
  const auto initial_start = std::chrono::steady_clock::now();
  const bool recovered = recover();
  start_output(recovered);
  if (!recovered) {
    ex.run("INITIAL");
    ex.run("POSTINITIAL");
    ex.run("ANALYSIS");
  } else {
    executor_->run("MoL_PostStep"); // ghosts and outer boundaries of the recovered state
  }
  fields_->space().synchronize();
  startup_.initial_data =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - initial_start).count();
  // The empirical finish runs on the initial (or recovered) state, which it leaves as it was.
  const std::vector<calc::Mapping> before_finish = plan_.mappings();
  verify_mappings();
  if (plan_.mappings() != before_finish) decide_time_tile_again();
  startup_.total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (rank_ == 0) log_ << "  " << startup_.line() << "\n" << std::flush;
  // What ends the run: with "any" (a batch job's segment, docs/batch.md) each part that can;
  // cctk_itlast = 2147483647 (the largest) is no iteration limit.
  const double max_runtime = reg.get_real("Cactus", "max_runtime") * 60.0;
  const bool any = how == "any" || how == "either", all = how == "all";
  const bool by_iteration = how == "iteration" || ((any || all) && itlast < INT_MAX);
  const bool by_time = how == "time" || ((any || all) && final_time >= 0);
  if (rank_ == 0) {
    std::vector<std::string> ends;
    if (by_time) ends.push_back(fmt::format("t = {:g}", final_time));
    if (by_iteration) ends.push_back(fmt::format("iteration {}", itlast));
    if ((any || how == "runtime") && max_runtime > 0)
      ends.push_back(fmt::format("{:g} minutes", max_runtime / 60.0));
    std::string until = ends.empty() ? std::string("the end") : ends[0];
    for (std::size_t i = 1; i < ends.size(); ++i)
      until += (i + 1 < ends.size() ? ", " : all ? " and " : " or ") + ends[i];
    log_ << fmt::format("  dt = {:g}; running to {}{}\n", dt_, until,
                        any && ends.size() > 1 ? ", whichever comes first" : "")
         << std::flush;
  }

  const long log_every = reg.get_int("IO", "out_every");
  device_timer_every_ = int(std::max<long>(1, reg.get_int("Saguaro", "device_timer_every")));
  schedule::Progress progress(by_iteration ? itlast : -1, by_time ? final_time : -1,
                              reg.get_real("Saguaro", "progress_every"));
  progress.update(iteration_, time_);
  while (!terminate()) {
    if ((how == "runtime" || how == "any" || how == "either") && max_runtime > 0) {
      double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      int stop = elapsed >= max_runtime;
      MPI_Bcast(&stop, 1, MPI_INT, 0, comm_);
      if (stop) break;
    }
    ++iteration_;
    begin_step_breakdown();
    ex.run("PRESTEP");
    ex.run("EVOL");
    ex.run("POSTSTEP");
    ex.run("ANALYSIS");
    end_step_breakdown(); // reads the step before this one: this one stays in flight
    if (log_every > 0 && iteration_ % log_every == 0) write_prediction_log(false);
    if (rank_ == 0 && reg.get_real("Saguaro", "progress_every") > 0)
      if (std::string line = progress.update(iteration_, time_); !line.empty())
        log_ << line << "\n" << std::flush;
  }
  retire_steps(0);
  ensure_ghosts(); // the final state whole, ghosts included
  if (reg.get_bool("IO", "checkpoint_on_terminate")) checkpoint(true);
  ex.run("TERMINATE");
  finish_output();
  write_step_breakdown();
  if (rank_ == 0) {
    log_ << fmt::format("\nfinished at iteration {}, t = {:.6g}\n", iteration_, time_);
    const bool logged = write_prediction_log(true);
    if (!norm_vars_.empty() || !hdf5_vars_.empty() || logged)
      log_ << fmt::format("output in {}{}\n", fs::absolute(out_dir_).lexically_normal().string(),
                          logged ? " (`saguaro report` draws predictions.svg from the prediction "
                                   "log there)"
                                 : "");
  }
}

} // namespace saguaro::host
