// The submission plan: names, sizes, the simulation's layout, every segment's parameters, and
// what --dry-run prints. The batch scripts themselves are written in script.cpp.
#include "batch/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <filesystem>

namespace saguaro::batch {
namespace fs = std::filesystem;

namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == '+';
}

// A simulation's name: a directory name and part of the job names.
void check_name(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.' || name[0] == '-' ||
      !std::all_of(name.begin(), name.end(), name_char))
    throw BatchError(fmt::format("'{}' cannot name a simulation: use letters, digits and "
                                 "'_', '-', '.', '+' (not first: '.', '-'); --name sets it",
                                 name));
}

// The simulation directory appears in #SBATCH lines (where '%' means a job's number and blanks
// end a value) and in .par strings (which have no escapes).
void check_directory(const std::string& dir) {
  const bool ok = std::all_of(dir.begin(), dir.end(), [](char c) {
    return name_char(c) || c == '/' || c == ',' || c == '=' || c == '@' || c == '~' || c == ':';
  });
  if (!ok || dir.empty() || dir[0] != '/')
    throw BatchError(fmt::format(
        "the simulations directory '{}' must be an absolute path of letters, digits and "
        "'/_-.+,=@~:' (it is written into #SBATCH lines and .par strings); --basedir sets it",
        dir));
}

// A real number as the .par file reads it back bit for bit.
std::string real(double v) {
  return fmt::format("{}", v);
}

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

// The recorded inputs' names: their own, unless two would be the same.
void name_inputs(const RunSettings& run, SubmissionPlan& plan) {
  auto base = [](const std::string& path) { return fs::path(path).filename().string(); };
  plan.par_name = base(run.par_file);
  plan.edl_name = base(run.edl_file);
  if (plan.edl_name == plan.par_name) plan.edl_name = "equations-" + plan.edl_name;
  if (!run.device_file.empty()) {
    plan.device_name = base(run.device_file);
    if (plan.device_name == plan.par_name || plan.device_name == plan.edl_name)
      plan.device_name = "device-" + plan.device_name;
  }
  if (!run.mapping_file.empty()) {
    plan.mapping_name = base(run.mapping_file);
    if (plan.mapping_name == plan.par_name || plan.mapping_name == plan.edl_name ||
        plan.mapping_name == plan.device_name)
      plan.mapping_name = "mapping-" + plan.mapping_name;
  }
}

// The sizes of the job: nodes, ranks per node (one per GPU), cores per rank, walltime.
void size_the_job(const SubmitRequest& request, const Machine& machine, SubmissionPlan& plan) {
  if (request.nodes < 1) throw BatchError("--nodes must be at least 1");
  if (machine.max_nodes > 0 && request.nodes > machine.max_nodes)
    throw BatchError(fmt::format("--nodes {} is more than {} has ({})", request.nodes, machine.name,
                                 machine.max_nodes));
  plan.nodes = request.nodes;
  if (machine.gpu()) {
    const int g = request.gpus_per_node.value_or(machine.gpus_per_node);
    if (g < 1 || g > machine.gpus_per_node)
      throw BatchError(fmt::format("--gpus-per-node {} is not between 1 and the {} GPUs of a "
                                   "node of {}",
                                   g, machine.gpus_per_node, machine.name));
    plan.gpus_per_node = g;
    plan.ranks_per_node = g; // one MPI rank per GPU
  } else {
    if (request.gpus_per_node && *request.gpus_per_node != 0)
      throw BatchError(fmt::format("--gpus-per-node: {} has no GPUs (gpus_per_node is 0 in {})",
                                   machine.name, machine.file));
    plan.ranks_per_node = machine.ranks_per_node;
  }
  plan.ranks = plan.nodes * plan.ranks_per_node;
  plan.cpus_per_task = std::max(1, machine.cores_per_node / plan.ranks_per_node);

  plan.walltime = request.walltime.value_or(machine.max_walltime);
  if (plan.walltime > machine.max_walltime)
    throw BatchError(fmt::format("--walltime {} is longer than {} allows ({})",
                                 format_walltime(plan.walltime), machine.name,
                                 format_walltime(machine.max_walltime)));
  if (plan.walltime <= machine.walltime_margin)
    throw BatchError(fmt::format("--walltime {} leaves no time to run: {} keeps {} of every job "
                                 "for the final checkpoint (walltime_margin)",
                                 format_walltime(plan.walltime), machine.name,
                                 format_walltime(machine.walltime_margin)));
  plan.max_runtime = double(plan.walltime - machine.walltime_margin) / 60.0;
}

nlohmann::json make_record(const SubmitRequest& request, const Machine& machine,
                           const RunSettings& run, const SubmissionPlan& plan) {
  nlohmann::json segments = nlohmann::json::array();
  for (const Segment& s : plan.segments) {
    nlohmann::json j = {{"index", s.index},
                        {"dir", fs::path(s.dir).filename().string()},
                        {"job_name", s.job_name},
                        {"job_id", nullptr}};
    if (s.stop_iteration >= 0) j["stop_iteration"] = s.stop_iteration;
    segments.push_back(j);
  }
  return {{"format", "saguaro-simulation-1"},
          {"name", plan.name},
          {"created", run.created},
          {"command", run.command_line},
          {"machine", {{"name", machine.name}, {"file", machine.file}}},
          {"par_file", run.par_file},
          {"edl_file", run.edl_file},
          {"executable", {{"source", run.executable}, {"version", run.version}}},
          {"nodes", plan.nodes},
          {"ranks", plan.ranks},
          {"ranks_per_node", plan.ranks_per_node},
          {"gpus_per_node", plan.gpus_per_node},
          {"cpus_per_task", plan.cpus_per_task},
          {"walltime", format_walltime(plan.walltime)},
          {"max_runtime_minutes", plan.max_runtime},
          {"chain", request.chain},
          {"dependency", kDependency},
          {"segments", segments}};
}

} // namespace

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  });
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> segment_overrides(const RunSettings& run, const SubmissionPlan& plan,
                                           int index, const std::string& out_dir,
                                           long stop_iteration) {
  // The run's condition, or the walltime less the margin (Cactus::max_runtime), whichever comes
  // first: "any" with each part kept only where the run's own condition has it.
  const std::string& t = run.terminate;
  if (t == "all")
    throw BatchError("Cactus::terminate = \"all\" cannot be split into segments: a segment "
                     "stops at its walltime whatever else is reached; use \"any\", "
                     "\"iteration\" or \"time\"");
  const bool any = t == "any" || t == "either";
  long itlast = (t == "iteration" || any) ? run.itlast : long(INT_MAX);
  if (stop_iteration >= 0) itlast = std::min(itlast, stop_iteration);
  const double final_time = (t == "time" || any) ? run.final_time : -1.0;
  double runtime = plan.max_runtime;
  if ((t == "runtime" || any) && run.max_runtime > 0) runtime = std::min(runtime, run.max_runtime);

  std::vector<std::string> o;
  o.push_back("Saguaro::equations = " + quoted(plan.edl_name));
  if (!plan.device_name.empty())
    o.push_back("Saguaro::device_description = " + quoted(plan.device_name));
  if (!plan.mapping_name.empty())
    o.push_back("Saguaro::mapping_file = " + quoted(plan.mapping_name));
  o.push_back("IO::out_dir = " + quoted(out_dir));
  o.push_back("IO::checkpoint_dir = " + quoted(plan.checkpoint_dir));
  o.push_back("IO::recover_dir = \"\"");
  o.push_back("IO::checkpoint_on_terminate = yes");
  // The first segment starts afresh (or, requeued, from its own checkpoint); the others must
  // find the previous segment's checkpoint.
  o.push_back(std::string("IO::recover = ") + (index == 0 ? "\"autoprobe\"" : "\"auto\""));
  o.push_back("Cactus::terminate = \"any\"");
  o.push_back(fmt::format("Cactus::cctk_itlast = {}", itlast));
  o.push_back("Cactus::cctk_final_time = " + real(final_time));
  o.push_back("Cactus::max_runtime = " + real(runtime));
  return o;
}

SubmissionPlan plan_submission(const SubmitRequest& request, const Machine& machine,
                               const RunSettings& run) {
  SubmissionPlan plan;
  plan.machine = machine.name;
  plan.name = request.name.empty() ? fs::path(run.par_file).stem().string() : request.name;
  check_name(plan.name);
  if (request.chain < 1 || request.chain > 9999)
    throw BatchError(fmt::format("--chain {} is not between 1 and 9999", request.chain));
  if (request.segment_iterations && *request.segment_iterations < 1)
    throw BatchError("--segment-iterations must be at least 1");
  size_the_job(request, machine, plan);

  plan.basedir = fs::path(request.basedir).lexically_normal().string();
  if (plan.basedir.size() > 1 && plan.basedir.back() == '/') plan.basedir.pop_back();
  check_directory(plan.basedir);
  plan.dir = (fs::path(plan.basedir) / plan.name).string();
  plan.record_path = plan.dir + "/simulation.json";
  plan.checkpoint_dir = plan.dir + "/checkpoints";
  plan.executable = plan.dir + "/exe/saguaro";
  name_inputs(run, plan);

  plan.directories = {plan.dir, plan.dir + "/exe", plan.checkpoint_dir};
  plan.copies.push_back({run.executable, plan.executable, true});
  const std::string stem = fs::path(plan.par_name).stem().string();
  for (int k = 0; k < request.chain; ++k) {
    Segment s;
    s.index = k;
    s.dir = fmt::format("{}/output-{:04}", plan.dir, k);
    s.job_name = fmt::format("{}-{:04}", plan.name, k);
    s.script_path = s.dir + "/job.sh";
    s.log_path = s.dir + "/job.out";
    s.out_dir = s.dir + "/" + stem;
    if (request.segment_iterations) s.stop_iteration = (k + 1) * *request.segment_iterations;
    s.overrides = segment_overrides(run, plan, k, s.out_dir, s.stop_iteration);
    plan.directories.push_back(s.dir);
    plan.copies.push_back({run.par_file, s.dir + "/" + plan.par_name, false});
    plan.copies.push_back({run.edl_file, s.dir + "/" + plan.edl_name, false});
    if (!plan.device_name.empty())
      plan.copies.push_back({run.device_file, s.dir + "/" + plan.device_name, false});
    if (!plan.mapping_name.empty())
      plan.copies.push_back({run.mapping_file, s.dir + "/" + plan.mapping_name, false});
    plan.segments.push_back(std::move(s));
  }
  for (Segment& s : plan.segments) {
    s.script = batch_script(plan, machine, s);
    plan.files.push_back({s.script_path, s.script, true});
  }
  plan.record = make_record(request, machine, run, plan);
  plan.files.push_back({plan.record_path, plan.record.dump(2) + "\n", false});
  return plan;
}

std::vector<std::string> sbatch_command(const Segment& segment, const std::string& previous) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  if (!previous.empty()) argv.push_back(fmt::format("--dependency={}:{}", kDependency, previous));
  argv.push_back(segment.script_path);
  return argv;
}

std::string describe(const SubmissionPlan& plan) {
  std::string out = fmt::format(
      "simulation {} in {} (machine {}): {} segment{} of {} on {} node{}, {} MPI rank{} ({} per "
      "node{}, {} core{} each)\n",
      plan.name, plan.dir, plan.machine, plan.segments.size(), plan.segments.size() == 1 ? "" : "s",
      format_walltime(plan.walltime), plan.nodes, plan.nodes == 1 ? "" : "s", plan.ranks,
      plan.ranks == 1 ? "" : "s", plan.ranks_per_node,
      plan.gpus_per_node > 0 ? ", one per GPU" : "", plan.cpus_per_task,
      plan.cpus_per_task == 1 ? "" : "s");
  out += fmt::format("every segment checkpoints and stops after at most {:.4g} minutes "
                     "(Cactus::max_runtime: the walltime less the machine's margin)\n",
                     plan.max_runtime);
  out += "\nwould create:\n";
  for (const std::string& d : plan.directories) out += "  " + d + "/\n";
  for (const FileToCopy& c : plan.copies) out += fmt::format("  {}  (from {})\n", c.to, c.from);
  for (const FileToWrite& f : plan.files) out += "  " + f.path + "\n";
  for (const Segment& s : plan.segments)
    out += fmt::format("\n# ---- {} ----\n{}", s.script_path, s.script);
  out += "\nwould submit:\n";
  for (const Segment& s : plan.segments) {
    const std::string previous =
        s.index == 0 ? std::string()
                     : fmt::format("<job of {}>", plan.segments[s.index - 1].job_name);
    std::string line;
    for (const std::string& a : sbatch_command(s, previous))
      line += (line.empty() ? "" : " ") + (a.find('<') == std::string::npos ? shell_quote(a) : a);
    out += "  " + line + "\n";
  }
  return out;
}

} // namespace saguaro::batch
