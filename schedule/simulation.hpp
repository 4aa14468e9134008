// The built-in host's driver: a .par file in, a simulation run out.
//
// Setup reads the parameter file and the EDL file it names (Saguaro::equations), declares
// the EDL thorn's parameters next to the built-in components' and Saguaro's, checks every
// setting, and lowers the physics. Simulation builds the grid over the MPI ranks, compiles
// the calculations with the chosen backend, puts them into the schedule, and runs the bins:
//
//   STARTUP PARAMCHECK BASEGRID  INITIAL POSTINITIAL  ANALYSIS(it 0)
//   loop: PRESTEP EVOL(MoL: CalcRHS, update, PostStep per substep) POSTSTEP ANALYSIS
//   TERMINATE
//
// User errors (in the .par or the EDL) are thrown as support::InputError: file:line:col and a
// caret; the CLI exits with status 2.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "grid/grid.hpp"
#include "mapper/run_plan.hpp"
#include "mapper/time_tile.hpp"
#include "model/device.hpp"
#include "param/registry.hpp"
#include "runtime/kernel.hpp"
#include "schedule/schedule.hpp"
#include "schedule/step_fold.hpp"
#include "schedule/step_plan.hpp"

#include <mpi.h>

#include <chrono>
#include <deque>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::host {

// Everything that can be known without a grid: what `saguaro check` validates.
struct Setup {
  std::string par_path;
  std::string edl_path;
  param::ParFile par;
  param::Registry registry;
  calc::Program program;
  schedule::Schedule schedule;
  // Saguaro::device_description when it names a file (read and checked here); none for
  // "auto", which the Simulation resolves once it knows the backend.
  std::optional<model::Device> device;
  std::string device_path;
  // Saguaro::mapping_file when Saguaro::mapper = "fixed" (read and checked here): one mapping
  // per calculation it names; the others take the default.
  std::vector<std::optional<calc::Mapping>> fixed_mappings;
  std::string mapping_path;
};

// Reads and checks the .par file and its EDL file. Throws support::InputError for user errors.
// `overrides` (`saguaro run FILE.par --set TEXT`, param::parse_override) replace the file's
// values of the parameters they set; relative file names still count from the .par file.
Setup load_setup(const std::string& par_path, const std::vector<std::string>& overrides = {});

class Simulation {
public:
  // `log` receives the banner, progress lines, the timer report and the prediction table
  // (rank 0 only).
  Simulation(Setup setup, MPI_Comm comm, std::ostream& log);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // The whole run, from STARTUP to TERMINATE.
  void run();

  // For tests and tools.
  const Setup& setup() const { return setup_; }
  const grid::Decomposition& decomposition() const { return *decomposition_; }
  grid::GridFunctions& fields() { return *fields_; }
  int iteration() const { return iteration_; }
  double time() const { return time_; }
  double dt() const { return dt_; }
  int ghost_width() const { return ghost_; }
  const std::string& output_dir() const { return out_dir_; }
  const schedule::Timers& timers() const { return timers_; }
  // The run's decisions (mappings, the empirical finish's candidates and verdict, launches).
  const mapper::RunPlan& run_plan() const { return plan_; }
  // Saguaro::time_tile's decision (use: the step is time-tiled).
  const mapper::TimeTileChoice& time_tile() const { return time_tile_choice_; }
  // Seconds of each iteration of the evolution loop (PRESTEP to ANALYSIS) on the backend's
  // compute queue, from a mark at its start to one at its end (ArraySpace::mark; on the host
  // the wall clock): what one whole time step costs. The host does not wait for a step's end
  // before it queues the next one, so a GPU's queue never drains between steps; it reads a
  // step's marks once the next step is queued (retire_steps).
  std::vector<double> step_seconds() const;
  // Where the time before the first step went (rank 0's clock), and the banner's line on it.
  struct StartupTimes {
    double mapping = 0;          // the mapper's search (plan_mappings, on rank 0)
    double compile = 0;          // the run's kernels and the finish's candidates
    int candidate_programs = 0;  // the empirical finish's (0: it did not run)
    double initial_data = 0;     // INITIAL, POSTINITIAL and ANALYSIS (or the recovery)
    double finish_timing = 0;    // the empirical finish: its candidates timed,
    double finish_recompile = 0; // and the verdicts' programs compiled
    double total = 0;            // from the start of the construction to the first step
    std::string line() const;
  };
  const StartupTimes& startup() const { return startup_; }

private:
  struct CalcBinding; // a compiled calculation and where its grid functions live

  void bind_schedule();
  void run_calculation(const CalcBinding& binding);
  runtime::KernelArgs kernel_args(const CalcBinding& binding) const;
  void run_region(const CalcBinding& binding, const calc::Region& region, const std::string& part);
  void run_regions(const CalcBinding& binding, const std::vector<calc::Region>& boxes,
                   const std::string& part);
  // The step plan (schedule/step_plan.hpp), built once from MoL::ODE_Method's integrator and
  // the functions of MoL_CalcRHS and MoL_PostStep; MoL_Evolution runs it, run_step_op
  // carries out its operations other than the combinations (simulation_step.cpp).
  void plan_step();
  // Makes `plan` the run's step: its runner over the integrator's registers (swaps exchange
  // the grid functions' arrays).
  void start_step(schedule::StepPlan plan);
  // The program.calculations index of a binding.
  std::size_t calculation_of(const CalcBinding* binding) const;
  void run_step_op(const schedule::StepOp& op, double time);
  // Saguaro::time_tile (simulation_time_tile.cpp): whether the step is time-tiled (the mapper's
  // decision, mapper/time_tile.hpp), and then the step plan's variant and its compiled kernel.
  void plan_time_tile();
  void decide_time_tile_again(); // after the empirical finish changed a mapping
  std::string time_tile_obstacle(int& tiled) const;
  std::optional<model::Device> pricing_device() const;
  mapper::MapperOptions patch_mapper_options() const;
  double plain_step_seconds(const model::Device& device) const;
  double exchange_fill_seconds(const model::Device& device) const;
  void run_time_tile(const schedule::StepOp& op);
  // The evolved variables' ghost exchange in two halves, placed by the plan.
  void exchange_begin();
  void exchange_finish();
  void ensure_ghosts(); // between steps: the exchange (and boundaries) a step left pending
  void begin_step_breakdown();
  void end_step_breakdown();
  // Reads the breakdown of every step in flight but the last `keep` (waiting for their marks)
  // and releases their marks.
  void retire_steps(std::size_t keep);
  struct StepMarks;
  std::array<double, 5>
  step_row(const StepMarks& step); // {step, interior, boundary, exchange, idle}
  void write_step_breakdown();
  std::vector<double> parameter_values() const;
  // The run plan (mapper::RunPlan), step by step: the mappings before compiling, the launch
  // splits once compiled, the verification of candidates on the initial data.
  std::vector<calc::Mapping> default_mappings() const;
  void plan_mappings();
  std::vector<std::vector<calc::Mapping>> candidate_sets() const;
  // The folded form of right-hand side `plain` that the empirical finish times in its place
  // (the one most stages launch), or -1: the finish times the plain form.
  int timed_form(std::size_t plain) const;
  void compile_mappings();
  void plan_launches();
  void verify_mappings();
  // The finish's timings (verify_mappings): one batch of `launches` back-to-back launches
  // (seconds per launch, the slowest rank's); candidates' times of `trials` with `outputs`
  // restored after; the close finalists of a folded right-hand side over the step's forms.
  static CalcBinding trial_of(const CalcBinding& binding, runtime::CompiledCalculation* kernel);
  double time_batch(const CalcBinding& trial, int launches);
  std::vector<double> time_trials(const std::vector<CalcBinding>& trials,
                                  const std::vector<int>& outputs, bool screen);
  std::vector<double> time_over_step(std::size_t plain, std::size_t timed,
                                     const std::vector<double>& seconds,
                                     const std::vector<std::vector<calc::Mapping>>& sets,
                                     std::string& note);
  bool output_due(int every) const;
  bool analysis_due() const;
  // Every how many steps code between steps reads the evolved variables' ghosts (0: never),
  // which is where a time-tiled step's exchange happens.
  int ghost_reader_period() const;
  bool terminate() const;
  void output_norms();
  void output_hdf5();
  void choose_device();
  bool write_prediction_log(bool at_end);
  void checkpoint(bool force);
  bool recover();
  void start_output(bool recovered);
  void finish_output();
  void boundary_rhs();
  void boundary_state();

  Setup setup_;
  MPI_Comm comm_;
  std::ostream& log_;
  int rank_ = 0;

  int ghost_ = 1;
  // The backend before the storage: the grid functions and MoL's scratch live in its
  // ArraySpace, so they must go (members are destroyed in reverse order) before it does.
  std::unique_ptr<runtime::Backend> backend_;
  std::unique_ptr<grid::Decomposition> decomposition_;
  std::unique_ptr<grid::GridFunctions> fields_;
  std::vector<std::unique_ptr<runtime::CompiledCalculation>> kernels_;
  // The empirical finish's candidates, compiled with kernels_ and released once timed:
  // [j - 1][i] is calculation i under its j-th candidate.
  std::vector<std::vector<std::unique_ptr<runtime::CompiledCalculation>>> candidate_kernels_;
  std::vector<std::unique_ptr<CalcBinding>> bindings_;
  // The run's decisions: per calculation the mapping the backend compiled (the prediction log
  // prices them), Saguaro::mapper_verify's candidates, the launch splits, the exchange's
  // description and the banner's lines on what the mapper did; the same on every rank.
  mapper::RunPlan plan_;
  std::vector<int> evolved_, rhs_; // GridFunctions indices, evolved_[v] <-> rhs_[v]
  std::vector<double> evolved_u0_; // radiative value at infinity per evolved variable
  std::vector<double> parameters_; // the EDL thorn's parameter values, kernel order
  std::array<std::array<grid::BoundaryKind, 2>, 3> boundary_{};

  // The ghost exchange of the evolved variables. With exchange_overlap_ (a split right-hand
  // side), the step plan begins each exchange where its ghosts are first read and leaves the
  // last one to the next step: ghosts_pending_ (and boundary_pending_, the flat boundaries
  // behind it) until then, for whatever reads ghosts between steps.
  bool exchange_overlap_ = false;
  bool ghosts_pending_ = false, boundary_pending_ = false;
  // Per step: timing marks (ArraySpace::mark) of each exchange and of right-hand sides run
  // whole; per iteration the breakdown {step, interior, boundary, exchange, idle} seconds.
  struct ExchangeMarks {
    int before = -1, interior_done = -1, joined = -1, shell_done = -1; // compute queue
    int started = -1, finished = -1;                                   // exchange queue
  };
  bool timing_step_ = false;
  bool interior_in_flight_ = false; // a split interior ran since the exchange began
  bool step_carries_ = true;        // the plan's `carried` operations run this step
  bool exchange_skipped_ = false;   // the carried exchange was done between the steps
  bool joining_ = false;            // only boundaries ran since the exchange finished
  std::vector<ExchangeMarks> step_exchanges_;
  std::vector<std::array<int, 2>> step_whole_rhs_;
  // Steps queued and not yet read: their first and last marks and the marks above; per step
  // read, breakdown_'s row.
  struct StepMarks {
    int begin = -1, end = -1;
    bool sampled = true; // its functions timed on the device (Saguaro::device_timer_every)
    std::vector<ExchangeMarks> exchanges;
    std::vector<std::array<int, 2>> whole_rhs;
  };
  std::deque<StepMarks> steps_in_flight_; // the last one is the step running, when one is
  int device_timer_every_ = 1;            // Saguaro::device_timer_every
  std::vector<std::array<double, 5>> breakdown_;
  std::vector<double> exchange_samples_; // measured exchanges with messages [s]

  schedule::Timers timers_;
  std::unique_ptr<schedule::Executor> executor_;
  // The step plan's runner (its scratch lives in the backend's space) and, per function of
  // the plan, its scheduled item and, for a calculation, its binding.
  struct StepTarget {
    const schedule::ScheduleItem* item = nullptr;
    const CalcBinding* binding = nullptr;
    std::vector<const CalcBinding*> folded; // per stage (1..): its folded form, if any
  };
  // The stage combinations folded into right-hand sides, and the integrator's registers as
  // grid functions ([register][variable] GridFunctions indices; swaps exchange their arrays).
  schedule::StepFolding folding_;
  std::vector<std::vector<int>> step_registers_;
  std::unique_ptr<schedule::StepRunner> step_;
  std::vector<StepTarget> step_targets_;
  // The plan's functions (MoL_CalcRHS's, MoL_PostStep's), kept to rebuild it time-tiled.
  std::vector<schedule::StepFunction> step_functions_[2];
  // The time-tiled step when the mapper chose it: its decision and its kernel.
  mapper::TimeTileChoice time_tile_choice_;
  std::vector<std::unique_ptr<runtime::CompiledTimeTile>> time_tiles_; // per part, in order

  int iteration_ = 0;
  double time_ = 0.0; // of the state being worked on (substep times inside MoL)
  double dt_ = 0.0;
  std::string out_dir_, checkpoint_dir_;
  std::vector<std::string> norm_vars_, hdf5_vars_;
  int last_checkpoint_ = -1;

  // The prediction log (Saguaro::prediction_log): rank 0 writes it.
  bool prediction_log_ = false;
  std::optional<model::Device> device_;
  std::string device_origin_; // the banner's words on where device_ came from
  std::string device_note_;   // why there is no device_ (the log's note)
  std::chrono::steady_clock::time_point last_prediction_log_{};
  // When the run started (the object was made): Cactus::max_runtime counts from here, so that
  // setup, compilation and the mapper's choice are inside a batch job's walltime budget.
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  StartupTimes startup_;
};

// Output and checkpoint directories as the parameters name them ($parfile expanded,
// relative to the working directory).
std::string output_directory(const Setup& setup);

} // namespace saguaro::host
