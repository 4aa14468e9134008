#include "cli/batch.hpp"

#include "batch/machine.hpp"
#include "batch/plan.hpp"
#include "batch/record.hpp"
#include "batch/submit.hpp"
#include "schedule/simulation.hpp"
#include "support/diagnostics.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <ostream>

#ifndef SAGUARO_VERSION
#define SAGUARO_VERSION "unknown"
#endif

namespace saguaro::cli {
namespace fs = std::filesystem;

namespace {

constexpr int kBadInput = 2;

std::optional<std::string> environment(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// --machine, else $SAGUARO_MACHINE; "" when neither names one.
std::string machine_name(const BatchCommand& c) {
  if (!c.machine.empty()) return c.machine;
  return environment("SAGUARO_MACHINE").value_or("");
}

batch::Machine machine_of(const BatchCommand& c) {
  const std::string name = machine_name(c);
  if (name.empty())
    throw batch::BatchError("which machine? give --machine NAME (configs/machines/NAME.yaml) or "
                            "set $SAGUARO_MACHINE");
  return batch::load_machine(batch::find_machine(name));
}

// --basedir, else the machine's simulations directory (when a machine is named); absolute.
std::string basedir_of(const BatchCommand& c, bool need) {
  std::string dir = c.basedir;
  if (dir.empty() && (need || !machine_name(c).empty()))
    dir = batch::expand_path(machine_of(c).simulations, environment);
  return dir.empty() ? dir : fs::absolute(dir).lexically_normal().string();
}

std::string now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return text;
}

// What the plan needs of the .par file: read and checked by the host, as `saguaro check`.
batch::RunSettings run_settings(const BatchCommand& c) {
  const host::Setup setup = host::load_setup(c.par_file);
  const param::Registry& reg = setup.registry;
  batch::RunSettings run;
  run.par_file = fs::absolute(c.par_file).lexically_normal().string();
  run.edl_file = fs::absolute(setup.edl_path).lexically_normal().string();
  if (!setup.device_path.empty())
    run.device_file = fs::absolute(setup.device_path).lexically_normal().string();
  if (!setup.mapping_path.empty())
    run.mapping_file = fs::absolute(setup.mapping_path).lexically_normal().string();
  run.terminate = reg.get_keyword("Cactus", "terminate");
  run.itlast = reg.get_int("Cactus", "cctk_itlast");
  run.final_time = reg.get_real("Cactus", "cctk_final_time");
  run.max_runtime = reg.get_real("Cactus", "max_runtime");
  run.executable = fs::read_symlink("/proc/self/exe").string();
  run.version = std::string("saguaro ") + SAGUARO_VERSION;
  run.created = now_iso8601();
  run.command_line = c.command_line;
  return run;
}

// The command's body, its BatchError a message with status 2.
template <typename F>
int guarded(const char* command, std::ostream& err, F body) {
  try {
    return body();
  } catch (const batch::BatchError& e) {
    err << fmt::format("saguaro {}: error: {}\n", command, e.what());
    return kBadInput;
  }
}

} // namespace

BatchCommands add_batch_commands(CLI::App& app, BatchCommand& c) {
  BatchCommands commands;
  const std::string machine_help =
      "the machine: configs/machines/NAME.yaml (or $SAGUARO_MACHINES/NAME.yaml, or a path to a "
      ".yaml file); default $SAGUARO_MACHINE";
  const std::string basedir_help = "the simulations directory (default: the machine's)";

  CLI::App* submit = app.add_subcommand(
      "submit", "submit a simulation to a batch scheduler (Slurm): its directory SIM/output-NNNN, "
                "one job per segment, each recovering from the checkpoint of the one before");
  submit->add_option("parfile", c.par_file, "the .par file")->required();
  submit->add_option("--machine", c.machine, machine_help);
  submit->add_option("--nodes", c.nodes, "nodes per job")->capture_default_str();
  submit->add_option("--gpus-per-node", c.gpus_per_node,
                     "GPUs (and MPI ranks) per node (default: all of a node's)");
  submit->add_option("--walltime", c.walltime,
                     "each job's time limit, HH:MM:SS (default: the machine's max_walltime)");
  submit
      ->add_option("--chain", c.chain,
                   "segments: jobs run one after the other, each recovering from the "
                   "previous one's checkpoint")
      ->capture_default_str();
  submit->add_option("--segment-iterations", c.segment_iterations,
                     "segment k stops at iteration (k+1)*N at the latest (besides its walltime)");
  submit->add_option("--name", c.name, "the simulation's name (default: the .par file's)");
  submit->add_option("--basedir", c.basedir, basedir_help);
  submit->add_flag("--dry-run", c.dry_run,
                   "print the layout, the batch scripts and the sbatch commands; create and "
                   "submit nothing");
  commands.submit = submit;

  CLI::App* jobs = app.add_subcommand(
      "jobs", "the state of a submitted simulation's jobs (squeue, sacct), which segment runs "
              "and the last iteration reached; without SIM every simulation of the machine");
  jobs->add_option("sim", c.sim, "the simulation's name or directory");
  jobs->add_option("--machine", c.machine, machine_help);
  jobs->add_option("--basedir", c.basedir, basedir_help);
  commands.jobs = jobs;

  CLI::App* cancel = app.add_subcommand("cancel", "cancel a simulation's pending and running jobs");
  cancel->add_option("sim", c.sim, "the simulation's name or directory")->required();
  cancel->add_option("--machine", c.machine, machine_help);
  cancel->add_option("--basedir", c.basedir, basedir_help);
  commands.cancel = cancel;
  return commands;
}

int submit_main(const BatchCommand& c, std::ostream& out, std::ostream& err) {
  return guarded("submit", err, [&] {
    const batch::Machine machine = machine_of(c);
    batch::SubmitRequest request;
    request.nodes = c.nodes;
    request.gpus_per_node = c.gpus_per_node;
    if (!c.walltime.empty()) {
      request.walltime = batch::parse_walltime(c.walltime);
      if (!request.walltime || *request.walltime <= 0)
        throw batch::BatchError(
            fmt::format("--walltime '{}' is not a time as HH:MM:SS (or D-HH:MM:SS)", c.walltime));
    }
    request.chain = c.chain;
    request.segment_iterations = c.segment_iterations;
    request.name = c.name;
    request.basedir = basedir_of(c, true);
    const batch::RunSettings run = run_settings(c);
    const batch::SubmissionPlan plan = batch::plan_submission(request, machine, run);
    if (c.dry_run) {
      out << batch::describe(plan);
      return 0;
    }
    const std::vector<std::string> ids = batch::carry_out(plan, out);
    out << fmt::format("simulation {} in {}: {} job{} submitted; `saguaro jobs {} --machine {}` "
                       "follows them\n",
                       plan.name, plan.dir, ids.size(), ids.size() == 1 ? "" : "s", plan.name,
                       machine_name(c));
    return 0;
  });
}

int jobs_main(const BatchCommand& c, std::ostream& out, std::ostream& err) {
  return guarded("jobs", err, [&] {
    const std::string basedir = basedir_of(c, false);
    std::vector<std::string> dirs;
    if (!c.sim.empty()) {
      dirs.push_back(batch::locate_simulation(c.sim, basedir));
    } else {
      if (basedir.empty())
        throw batch::BatchError("which simulations? name one, or give --machine NAME (or set "
                                "$SAGUARO_MACHINE) or --basedir DIR for all of them");
      dirs = batch::simulations_in(basedir);
      if (dirs.empty()) out << fmt::format("no simulations in {}\n", basedir);
    }
    for (const std::string& dir : dirs) {
      const batch::SimulationRecord record = batch::read_record(dir);
      std::vector<std::string> ids;
      for (const batch::RecordedSegment& s : record.segments)
        if (!s.job_id.empty()) ids.push_back(s.job_id);
      const std::map<std::string, batch::JobState> states = batch::query_jobs(ids);
      std::vector<batch::SegmentStatus> statuses;
      for (const batch::RecordedSegment& s : record.segments) {
        batch::SegmentStatus status{s, {}, batch::last_iteration(s.dir)};
        if (auto it = states.find(s.job_id); it != states.end())
          status.job = it->second;
        else
          status.job.state = "NOT SUBMITTED";
        statuses.push_back(status);
      }
      out << batch::format_status(record, statuses);
    }
    return 0;
  });
}

int cancel_main(const BatchCommand& c, std::ostream& out, std::ostream& err) {
  return guarded("cancel", err, [&] {
    const batch::SimulationRecord record =
        batch::read_record(batch::locate_simulation(c.sim, basedir_of(c, false)));
    const std::vector<std::string> cancelled = batch::cancel(record);
    if (cancelled.empty()) {
      out << fmt::format("simulation {}: no job is pending or running\n", record.name);
    } else {
      std::string list;
      for (const std::string& id : cancelled) list += (list.empty() ? "" : " ") + id;
      out << fmt::format("simulation {}: cancelled job{} {}\n", record.name,
                         cancelled.size() == 1 ? "" : "s", list);
    }
    return 0;
  });
}

} // namespace saguaro::cli
