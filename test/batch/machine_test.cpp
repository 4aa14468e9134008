// Machine descriptions: the two in configs/machines/, every mistake with its file:line:col,
// walltimes and paths.
#include "batch/machine.hpp"
#include "support/diagnostics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace saguaro::batch {
namespace {

using ::testing::HasSubstr;

const std::string kDir = std::string(SAGUARO_SOURCE_DIR) + "/configs/machines/";

TEST(Machine, TheLocalTestCluster) {
  const Machine m = load_machine(kDir + "local.yaml");
  EXPECT_EQ(m.name, "local");
  EXPECT_EQ(m.scheduler, "slurm");
  EXPECT_EQ(m.partition, "debug");
  EXPECT_FALSE(m.gpu());
  EXPECT_EQ(m.ranks_per_node, 1);
  EXPECT_EQ(m.launcher.command, "srun");
  EXPECT_EQ(m.max_walltime, 3600);
  EXPECT_EQ(m.walltime_margin, 20);
  EXPECT_EQ(m.simulations, "$HOME/simulations");
}

TEST(Machine, TheExampleGpuCluster) {
  const Machine m = load_machine(kDir + "example-gpu.yaml");
  EXPECT_EQ(m.name, "example-gpu");
  EXPECT_EQ(m.gpus_per_node, 4);
  EXPECT_EQ(m.cores_per_node, 64);
  EXPECT_EQ(m.account, "my-project");
  EXPECT_EQ(m.max_walltime, 48 * 3600);
  EXPECT_EQ(m.walltime_margin, 600);
  EXPECT_EQ(m.cpu_bind, "cores");
  EXPECT_EQ(m.modules.size(), 2u);
  ASSERT_EQ(m.environment.size(), 1u);
  EXPECT_EQ(m.environment[0].first, "OMPI_MCA_pml");
  EXPECT_EQ(m.sbatch_options, std::vector<std::string>{"--exclusive"});
}

const std::string kMinimal = "name: m\ncores_per_node: 8\nmax_walltime: \"01:00:00\"\n"
                             "simulations: /tmp/s\n";

std::string error_of(const std::string& yaml) {
  try {
    parse_machine(yaml, "m.yaml");
  } catch (const support::InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return "";
}

TEST(Machine, Defaults) {
  const Machine m = parse_machine(kMinimal, "m.yaml");
  EXPECT_EQ(m.gpus_per_node, 0);
  EXPECT_EQ(m.ranks_per_node, 1);
  EXPECT_EQ(m.walltime_margin, 300);
  EXPECT_EQ(m.launcher.command, "srun");
  EXPECT_TRUE(m.partition.empty());
  EXPECT_EQ(parse_machine(kMinimal + "launcher: mpirun\n", "m.yaml").launcher.command, "mpirun");
}

TEST(Machine, ErrorsNameTheirPlace) {
  EXPECT_THAT(error_of(kMinimal + "partiton: gpu\n"),
              HasSubstr("m.yaml:5:1: error: unknown key 'partiton'"));
  EXPECT_THAT(error_of(kMinimal + "partiton: gpu\n"), HasSubstr("did you mean 'partition'"));
  EXPECT_THAT(error_of("name: m\n"), HasSubstr("needs cores_per_node, max_walltime, simulations"));
  EXPECT_THAT(error_of(kMinimal + "gpus_per_node: four\n"),
              HasSubstr("m.yaml:5:16: error: gpus_per_node is a whole number from 0"));
  EXPECT_THAT(error_of("name: m\ncores_per_node: 8\nmax_walltime: 1h\nsimulations: /s\n"),
              HasSubstr("m.yaml:3:15: error: max_walltime is a time as HH:MM:SS"));
  EXPECT_THAT(error_of(kMinimal + "scheduler: pbs\n"), HasSubstr("scheduler is one of \"slurm\""));
  EXPECT_THAT(error_of(kMinimal + "launcher: {command: aprun}\n"),
              HasSubstr("launcher command is one of \"srun\", \"mpirun\""));
  EXPECT_THAT(error_of(kMinimal + "gpus_per_node: 4\nranks_per_node: 2\n"),
              HasSubstr("ranks_per_node is for CPU machines"));
  EXPECT_THAT(error_of(kMinimal + "walltime_margin: \"02:00:00\"\n"),
              HasSubstr("walltime_margin (02:00:00) must be shorter than max_walltime"));
  EXPECT_THAT(error_of(kMinimal + "modules: cuda\n"), HasSubstr("modules is a list"));
  EXPECT_THAT(error_of(kMinimal + "environment: {1X: a}\n"),
              HasSubstr("'1X' is not an environment variable's name"));
  EXPECT_THAT(error_of(kMinimal + "name: n\n"), HasSubstr("'name' is given twice"));
  EXPECT_THAT(error_of("name: [m\n"), HasSubstr("not valid YAML"));
  EXPECT_THAT(error_of("- a\n- b\n"), HasSubstr("a machine description is a map"));
}

TEST(Machine, FindByNameOrPath) {
  EXPECT_EQ(find_machine("local"), kDir + "local.yaml");
  EXPECT_EQ(find_machine(kDir + "example-gpu.yaml"), kDir + "example-gpu.yaml");
  try {
    find_machine("locl");
    FAIL() << "found a machine 'locl'";
  } catch (const BatchError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no machine 'locl'"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'local'?"));
    EXPECT_THAT(e.what(), HasSubstr("example-gpu"));
  }
  EXPECT_THROW(find_machine("/no/such/machine.yaml"), BatchError);
}

TEST(Walltime, ParseAndFormat) {
  EXPECT_EQ(parse_walltime("01:30:00"), 5400);
  EXPECT_EQ(parse_walltime("48:00:00"), 48 * 3600);
  EXPECT_EQ(parse_walltime("2-00:00:10"), 2 * 86400 + 10);
  EXPECT_EQ(parse_walltime("05:30"), 330);
  EXPECT_EQ(parse_walltime("90"), 5400);
  for (const char* bad :
       {"", "1:60:00", "1:00:61", "a:00:00", "1:2:3:4", "1-02:00", "-1:00:00", "01:00:00 ", "1h"})
    EXPECT_FALSE(parse_walltime(bad)) << bad;
  EXPECT_EQ(format_walltime(5400), "01:30:00");
  EXPECT_EQ(format_walltime(86399), "23:59:59");
  EXPECT_EQ(format_walltime(2 * 86400 + 10), "2-00:00:10");
}

TEST(ExpandPath, HomeAndVariables) {
  const std::map<std::string, std::string> env = {{"HOME", "/home/u"}, {"SCRATCH", "/s"}};
  auto lookup = [&](const std::string& n) -> std::optional<std::string> {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  EXPECT_EQ(expand_path("~/sims", lookup), "/home/u/sims");
  EXPECT_EQ(expand_path("$SCRATCH/sims", lookup), "/s/sims");
  EXPECT_EQ(expand_path("${SCRATCH}x/$HOME", lookup), "/sx//home/u");
  EXPECT_EQ(expand_path("/plain/~x", lookup), "/plain/~x");
  EXPECT_THROW(expand_path("$WORK/sims", lookup), BatchError);
  EXPECT_THROW(expand_path("${SCRATCH", lookup), BatchError);
  EXPECT_THROW(expand_path("a/$/b", lookup), BatchError);
}

} // namespace
} // namespace saguaro::batch
