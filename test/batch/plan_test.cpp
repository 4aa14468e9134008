// The submission plan: sizes, layout, the example GPU cluster's scripts (ranks per GPU,
// walltime, binding), the chain's dependencies, every segment's parameters, and the requests
// a machine cannot take.
#include "batch/plan.hpp"
#include "param/registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace saguaro::batch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kDir = std::string(SAGUARO_SOURCE_DIR) + "/configs/machines/";

RunSettings wave_run() {
  RunSettings run;
  run.par_file = "/src/par/wave.par";
  run.edl_file = "/src/par/wave.edl";
  run.terminate = "time";
  run.final_time = 0.5773502691896258;
  run.executable = "/build/bin/saguaro";
  run.version = "saguaro 0.1.0";
  run.created = "2025-01-01T00:00:00+0000";
  return run;
}

SubmitRequest gpu_request() {
  SubmitRequest r;
  r.nodes = 2;
  r.walltime = 12 * 3600;
  r.chain = 3;
  r.basedir = "/scratch/sims";
  return r;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(Plan, ExampleGpuClusterOneRankPerGpu) {
  const Machine m = load_machine(kDir + "example-gpu.yaml");
  const SubmissionPlan p = plan_submission(gpu_request(), m, wave_run());
  EXPECT_EQ(p.name, "wave");
  EXPECT_EQ(p.dir, "/scratch/sims/wave");
  EXPECT_EQ(p.ranks, 8);
  EXPECT_EQ(p.ranks_per_node, 4);
  EXPECT_EQ(p.gpus_per_node, 4);
  EXPECT_EQ(p.cpus_per_task, 16);
  EXPECT_DOUBLE_EQ(p.max_runtime, 710.0); // 12 h less the 10 min margin
  ASSERT_EQ(p.segments.size(), 3u);
  const std::string& s = p.segments[1].script;
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* line :
       {"#SBATCH --job-name=wave-0001\n", "#SBATCH --partition=gpu\n",
        "#SBATCH --account=my-project\n", "#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=4\n",
        "#SBATCH --cpus-per-task=16\n", "#SBATCH --gpus-per-node=4\n", "#SBATCH --time=12:00:00\n",
        "#SBATCH --chdir=/scratch/sims/wave/output-0001\n",
        "#SBATCH --output=/scratch/sims/wave/output-0001/job.out\n", "#SBATCH --exclusive\n",
        "module load cuda/12.4\n", "export OMP_NUM_THREADS=16\n", "export OMPI_MCA_pml=ucx\n",
        "srun --ntasks=8 --ntasks-per-node=4 --cpus-per-task=16 --cpu-bind=cores --mpi=pmix "
        "/scratch/sims/wave/exe/saguaro run wave.par \\\n",
        "--set 'IO::recover = \"auto\"'", "--set 'Cactus::max_runtime = 710'"})
    EXPECT_THAT(s, HasSubstr(line));
  // Every #SBATCH line comes before the first command.
  EXPECT_LT(s.rfind("#SBATCH"), s.find("module load"));
}

TEST(Plan, FewerGpusAndGres) {
  Machine m = load_machine(kDir + "example-gpu.yaml");
  m.gpu_request = "gres";
  SubmitRequest r = gpu_request();
  r.gpus_per_node = 2;
  r.nodes = 1;
  const SubmissionPlan p = plan_submission(r, m, wave_run());
  EXPECT_EQ(p.ranks, 2);
  EXPECT_EQ(p.cpus_per_task, 32);
  EXPECT_THAT(p.segments[0].script, HasSubstr("#SBATCH --gres=gpu:2\n"));
  EXPECT_THAT(p.segments[0].script, Not(HasSubstr("--gpus-per-node")));
  EXPECT_THAT(p.segments[0].script, HasSubstr("srun --ntasks=2 --ntasks-per-node=2"));
}

TEST(Plan, MpirunLauncher) {
  Machine m = load_machine(kDir + "example-gpu.yaml");
  m.launcher = {"mpirun", {"-x", "LD_LIBRARY_PATH"}};
  const SubmissionPlan p = plan_submission(gpu_request(), m, wave_run());
  EXPECT_THAT(p.segments[0].script,
              HasSubstr("mpirun -n 8 --map-by ppr:4:node:PE=16 --bind-to core -x "
                        "LD_LIBRARY_PATH /scratch/sims/wave/exe/saguaro run wave.par"));
  m.cpu_bind = "none";
  EXPECT_THAT(plan_submission(gpu_request(), m, wave_run()).segments[0].script,
              HasSubstr("mpirun -n 8 --map-by ppr:4:node --bind-to none"));
}

TEST(Plan, ChainedByAfterany) {
  const Machine m = load_machine(kDir + "example-gpu.yaml");
  const SubmissionPlan p = plan_submission(gpu_request(), m, wave_run());
  EXPECT_THAT(sbatch_command(p.segments[0], ""),
              ElementsAre("sbatch", "--parsable", "/scratch/sims/wave/output-0000/job.sh"));
  EXPECT_THAT(sbatch_command(p.segments[2], "41"),
              ElementsAre("sbatch", "--parsable", "--dependency=afterany:41",
                          "/scratch/sims/wave/output-0002/job.sh"));
  const std::string text = describe(p);
  EXPECT_THAT(text, HasSubstr("sbatch --parsable /scratch/sims/wave/output-0000/job.sh\n"));
  EXPECT_THAT(text, HasSubstr("sbatch --parsable --dependency=afterany:<job of wave-0000> "
                              "/scratch/sims/wave/output-0001/job.sh\n"));
  EXPECT_THAT(text, HasSubstr("--dependency=afterany:<job of wave-0001>"));
}

TEST(Plan, Layout) {
  const Machine m = load_machine(kDir + "local.yaml");
  SubmitRequest r;
  r.basedir = "/tmp/sims/";
  r.name = "run1";
  r.chain = 2;
  RunSettings run = wave_run();
  run.device_file = "/src/configs/devices/h100.yaml";
  const SubmissionPlan p = plan_submission(r, m, run);
  EXPECT_EQ(p.dir, "/tmp/sims/run1");
  EXPECT_THAT(p.directories,
              ElementsAre("/tmp/sims/run1", "/tmp/sims/run1/exe", "/tmp/sims/run1/checkpoints",
                          "/tmp/sims/run1/output-0000", "/tmp/sims/run1/output-0001"));
  std::vector<std::string> copied;
  for (const FileToCopy& c : p.copies) copied.push_back(c.to);
  EXPECT_TRUE(has(copied, "/tmp/sims/run1/exe/saguaro"));
  EXPECT_TRUE(has(copied, "/tmp/sims/run1/output-0001/wave.par"));
  EXPECT_TRUE(has(copied, "/tmp/sims/run1/output-0001/wave.edl"));
  EXPECT_TRUE(has(copied, "/tmp/sims/run1/output-0000/h100.yaml"));
  EXPECT_EQ(p.record["segments"].size(), 2u);
  EXPECT_EQ(p.record["machine"]["name"], "local");
  EXPECT_EQ(p.record["executable"]["version"], "saguaro 0.1.0");
  EXPECT_EQ(p.record["dependency"], "afterany");
  EXPECT_EQ(p.walltime, 3600); // the machine's max_walltime
  EXPECT_THAT(p.segments[0].overrides,
              ::testing::Contains("Saguaro::device_description = \"h100.yaml\""));
  // A CPU machine: ranks_per_node ranks, no GPU lines, no binding with cpu_bind: none.
  EXPECT_EQ(p.ranks, 1);
  EXPECT_THAT(p.segments[0].script, Not(HasSubstr("gpus")));
  EXPECT_THAT(p.segments[0].script, HasSubstr("srun --ntasks=1 --ntasks-per-node=1 "
                                              "--cpus-per-task=2 --mpi=pmix"));
}

// The segment's parameters as the registry reads them, after the file's.
param::Registry applied(const std::vector<std::string>& overrides) {
  param::ParFile par = param::parse_par_text("wave.par", "ActiveThorns = \"Saguaro\"\n");
  std::vector<param::ParFile> parsed;
  for (const std::string& o : overrides) parsed.push_back(param::parse_override(o, "wave.par"));
  param::apply_overrides(par, parsed);
  param::Registry reg = param::Registry::with_builtin_components();
  reg.apply(par);
  return reg;
}

TEST(Plan, SegmentParametersRecoverAndStop) {
  const Machine m = load_machine(kDir + "local.yaml");
  SubmitRequest r;
  r.basedir = "/tmp/sims";
  r.chain = 3;
  r.walltime = 300;
  r.segment_iterations = 8;
  RunSettings run = wave_run();
  run.terminate = "iteration";
  run.itlast = 20;
  const SubmissionPlan p = plan_submission(r, m, run);
  for (int k = 0; k < 3; ++k) {
    const param::Registry reg = applied(p.segments[std::size_t(k)].overrides);
    EXPECT_EQ(reg.get_keyword("IO", "recover"), k == 0 ? "autoprobe" : "auto");
    EXPECT_EQ(reg.get_string("IO", "checkpoint_dir"), "/tmp/sims/wave/checkpoints");
    EXPECT_EQ(reg.get_string("IO", "recover_dir"), "");
    EXPECT_EQ(reg.get_string("IO", "out_dir"),
              "/tmp/sims/wave/output-000" + std::to_string(k) + "/wave");
    EXPECT_TRUE(reg.get_bool("IO", "checkpoint_on_terminate"));
    EXPECT_EQ(reg.get_string("Saguaro", "equations"), "wave.edl");
    EXPECT_EQ(reg.get_keyword("Cactus", "terminate"), "any");
    EXPECT_EQ(reg.get_int("Cactus", "cctk_itlast"), std::min(20, 8 * (k + 1)));
    EXPECT_EQ(reg.get_real("Cactus", "cctk_final_time"), -1.0);
    EXPECT_DOUBLE_EQ(reg.get_real("Cactus", "max_runtime"), (300.0 - 20.0) / 60.0);
  }
}

TEST(Plan, TerminationConditionsMapToAny) {
  const Machine m = load_machine(kDir + "local.yaml");
  SubmitRequest r;
  r.basedir = "/tmp/sims";
  r.walltime = 600;
  RunSettings run = wave_run();
  const double w = (600.0 - 20.0) / 60.0;
  struct Case {
    const char* terminate;
    double max_runtime;
    long itlast;
    double final_time, runtime;
  };
  for (const Case& c :
       {Case{"time", 0, 2147483647, run.final_time, w}, Case{"iteration", 0, 10, -1, w},
        Case{"any", 0, 10, run.final_time, w}, Case{"any", 2, 10, run.final_time, 2},
        Case{"runtime", 3, 2147483647, -1, 3}, Case{"runtime", 60, 2147483647, -1, w},
        Case{"never", 0, 2147483647, -1, w}}) {
    run.terminate = c.terminate;
    run.max_runtime = c.max_runtime;
    const param::Registry reg = applied(plan_submission(r, m, run).segments[0].overrides);
    EXPECT_EQ(reg.get_keyword("Cactus", "terminate"), "any") << c.terminate;
    EXPECT_EQ(reg.get_int("Cactus", "cctk_itlast"), c.itlast) << c.terminate;
    EXPECT_EQ(reg.get_real("Cactus", "cctk_final_time"), c.final_time) << c.terminate; // exact
    EXPECT_DOUBLE_EQ(reg.get_real("Cactus", "max_runtime"), c.runtime) << c.terminate;
  }
  run.terminate = "all";
  EXPECT_THROW(plan_submission(r, m, run), BatchError);
}

std::string refusal(SubmitRequest r, const Machine& m, const RunSettings& run = wave_run()) {
  try {
    plan_submission(r, m, run);
  } catch (const BatchError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Plan, RequestsTheMachineCannotTake) {
  const Machine gpu = load_machine(kDir + "example-gpu.yaml");
  const Machine cpu = load_machine(kDir + "local.yaml");
  SubmitRequest r = gpu_request();
  r.nodes = 65;
  EXPECT_THAT(refusal(r, gpu), HasSubstr("--nodes 65 is more than example-gpu has (64)"));
  r = gpu_request();
  r.gpus_per_node = 8;
  EXPECT_THAT(refusal(r, gpu), HasSubstr("--gpus-per-node 8 is not between 1 and the 4 GPUs"));
  r = gpu_request();
  r.walltime = 49 * 3600;
  EXPECT_THAT(refusal(r, gpu), HasSubstr("--walltime 2-01:00:00 is longer than example-gpu "
                                         "allows (2-00:00:00)"));
  r.walltime = 600;
  EXPECT_THAT(refusal(r, gpu), HasSubstr("leaves no time to run"));
  r = gpu_request();
  r.nodes = 1;
  r.walltime = 600;
  r.gpus_per_node = 1;
  EXPECT_THAT(refusal(r, cpu), HasSubstr("local has no GPUs"));
  r = gpu_request();
  r.name = "../up";
  EXPECT_THAT(refusal(r, gpu), HasSubstr("'../up' cannot name a simulation"));
  r = gpu_request();
  r.basedir = "sims";
  EXPECT_THAT(refusal(r, gpu), HasSubstr("must be an absolute path"));
  r.basedir = "/scratch/my sims";
  EXPECT_THAT(refusal(r, gpu), HasSubstr("must be an absolute path of letters"));
  r = gpu_request();
  r.chain = 0;
  EXPECT_THAT(refusal(r, gpu), HasSubstr("--chain 0"));
  r = gpu_request();
  r.segment_iterations = 0;
  EXPECT_THAT(refusal(r, gpu), HasSubstr("--segment-iterations"));
}

TEST(Plan, ShellQuote) {
  EXPECT_EQ(shell_quote("/a/b-c_d.e"), "/a/b-c_d.e");
  EXPECT_EQ(shell_quote("--mpi=pmix"), "--mpi=pmix");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote(""), "''");
}

} // namespace
} // namespace saguaro::batch
