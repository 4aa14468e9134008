// A segment's batch script: #SBATCH lines, the environment, and the launch of one MPI rank per
// GPU (or per ranks_per_node on a CPU machine) with its cores bound.
#include "batch/plan.hpp"

#include <fmt/format.h>

namespace saguaro::batch {

namespace {

std::string sbatch_lines(const SubmissionPlan& plan, const Machine& machine,
                         const Segment& segment) {
  std::string out;
  auto line = [&](const std::string& option) { out += "#SBATCH " + option + "\n"; };
  line("--job-name=" + segment.job_name);
  if (!machine.partition.empty()) line("--partition=" + machine.partition);
  if (!machine.account.empty()) line("--account=" + machine.account);
  line(fmt::format("--nodes={}", plan.nodes));
  line(fmt::format("--ntasks-per-node={}", plan.ranks_per_node));
  line(fmt::format("--cpus-per-task={}", plan.cpus_per_task));
  if (plan.gpus_per_node > 0)
    line(machine.gpu_request == "gres" ? fmt::format("--gres=gpu:{}", plan.gpus_per_node)
                                       : fmt::format("--gpus-per-node={}", plan.gpus_per_node));
  line("--time=" + format_walltime(plan.walltime));
  line("--chdir=" + segment.dir);
  line("--output=" + segment.log_path);
  for (const std::string& option : machine.sbatch_options) line(option);
  return out;
}

std::string environment(const SubmissionPlan& plan, const Machine& machine) {
  std::string out;
  for (const std::string& l : machine.prologue) out += l + "\n";
  for (const std::string& m : machine.modules) out += "module load " + shell_quote(m) + "\n";
  out += fmt::format("export OMP_NUM_THREADS={}\n", plan.cpus_per_task);
  if (machine.cpu_bind == "cores") out += "export OMP_PLACES=cores OMP_PROC_BIND=close\n";
  for (const auto& [name, value] : machine.environment)
    out += fmt::format("export {}={}\n", name, shell_quote(value));
  return out;
}

// The launcher and its placement of ranks: srun (its own binding) or Open MPI's mpirun.
std::vector<std::string> launch(const SubmissionPlan& plan, const Machine& machine) {
  std::vector<std::string> argv;
  const bool bind = machine.cpu_bind == "cores";
  if (machine.launcher.command == "srun") {
    // Slurm 22.05 and later do not pass the job's --cpus-per-task to srun: it is repeated.
    argv = {"srun", fmt::format("--ntasks={}", plan.ranks),
            fmt::format("--ntasks-per-node={}", plan.ranks_per_node),
            fmt::format("--cpus-per-task={}", plan.cpus_per_task)};
    if (bind) argv.push_back("--cpu-bind=cores");
  } else {
    argv = {"mpirun",
            "-n",
            std::to_string(plan.ranks),
            "--map-by",
            bind ? fmt::format("ppr:{}:node:PE={}", plan.ranks_per_node, plan.cpus_per_task)
                 : fmt::format("ppr:{}:node", plan.ranks_per_node),
            "--bind-to",
            bind ? "core" : "none"};
  }
  for (const std::string& o : machine.launcher.options) argv.push_back(o);
  return argv;
}

} // namespace

std::string batch_script(const SubmissionPlan& plan, const Machine& machine,
                         const Segment& segment) {
  const int count = int(plan.segments.size());
  std::string out = "#!/bin/bash\n";
  out += fmt::format("# Saguaro simulation {}, segment {} of {}: written by `saguaro submit` "
                     "(docs/batch.md).\n",
                     plan.name, segment.index + 1, count);
  out += segment.index == 0
             ? "# It starts from initial data (requeued: from its own checkpoint) and checkpoints "
               "when it stops.\n"
             : fmt::format("# It recovers from the newest checkpoint in {} and checkpoints when "
                           "it stops.\n",
                           plan.checkpoint_dir);
  out += sbatch_lines(plan, machine, segment);
  out += fmt::format("\n{}\n", environment(plan, machine));
  out += fmt::format("echo \"saguaro: simulation {} segment {} of {} (output-{:04}), job "
                     "${{SLURM_JOB_ID}} on ${{SLURM_JOB_NODELIST}}, $(date)\"\n",
                     plan.name, segment.index + 1, count, segment.index);
  out += shell_quote(plan.executable) + " --version\n";
  std::string command;
  for (const std::string& a : launch(plan, machine)) command += shell_quote(a) + " ";
  command += shell_quote(plan.executable) + " run " + shell_quote(plan.par_name);
  for (const std::string& o : segment.overrides) command += " \\\n    --set " + shell_quote(o);
  out += command + "\n";
  out += "status=$?\n";
  out += fmt::format("echo \"saguaro: segment {} of {} ended with status $status, $(date)\"\n",
                     segment.index + 1, count);
  out += "exit $status\n";
  return out;
}

} // namespace saguaro::batch
