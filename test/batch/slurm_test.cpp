// Slurm's commands and what they print; a simulation's record and its status table.
#include "batch/record.hpp"
#include "batch/slurm.hpp"
#include "batch/machine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace saguaro::batch {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Slurm, JobIdOfSbatch) {
  EXPECT_EQ(parse_job_id("123\n"), "123");
  EXPECT_EQ(parse_job_id("\n456;cluster\n"), "456");
  EXPECT_FALSE(parse_job_id(""));
  EXPECT_FALSE(parse_job_id("Submitted batch job 7\n")); // not --parsable
  EXPECT_FALSE(parse_job_id("sbatch: error: Batch job submission failed\n"));
}

TEST(Slurm, Commands) {
  EXPECT_THAT(squeue_command({"1", "2"}), ElementsAre("squeue", "--noheader", "--states=all",
                                                      "--jobs=1,2", "--format=%i|%T|%M|%r"));
  EXPECT_THAT(sacct_command({"3"}),
              ElementsAre("sacct", "--noheader", "--parsable2", "--allocations", "--jobs=3",
                          "--format=JobID,State,Elapsed"));
  EXPECT_THAT(scancel_command({"4", "5"}), ElementsAre("scancel", "4", "5"));
}

TEST(Slurm, ParseSqueueAndSacct) {
  const std::vector<JobState> q =
      parse_squeue("12|RUNNING|1:02|None\n13|PENDING|0:00|Dependency\nslurm_load_jobs error\n");
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].state, "RUNNING");
  EXPECT_EQ(q[0].elapsed, "1:02");
  EXPECT_EQ(q[0].reason, "");
  EXPECT_EQ(q[1].reason, "Dependency");
  const std::vector<JobState> a = parse_sacct("14|CANCELLED by 0|00:00:03\n15|TIMEOUT|01:00:00\n");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].state, "CANCELLED");
  EXPECT_EQ(a[1].elapsed, "01:00:00");
  EXPECT_TRUE(finished_state("TIMEOUT"));
  EXPECT_TRUE(finished_state("COMPLETED"));
  EXPECT_FALSE(finished_state("PENDING"));
  EXPECT_FALSE(finished_state("RUNNING"));
  EXPECT_FALSE(finished_state("UNKNOWN"));
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("saguaro-batch-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(Record, ReadLocateAndReport) {
  const fs::path base = fresh_dir("record");
  const fs::path sim = base / "run";
  write(sim / "simulation.json", R"({"format": "saguaro-simulation-1", "name": "run",
    "machine": {"name": "local"}, "walltime": "00:05:00",
    "segments": [{"index": 0, "dir": "output-0000", "job_id": "7"},
                 {"index": 1, "dir": "output-0001", "job_id": "8"},
                 {"index": 2, "dir": "output-0002", "job_id": null}]})");
  write(sim / "output-0000/job.out", "it 3/8  t = 0.1\ncheckpoint at iteration 8 in x\n"
                                     "finished at iteration 8, t = 0.3\n");
  write(sim / "output-0001/run/phi.norms.tsv", "# iteration\ttime\n12\t0.5\n16\t0.6\n");
  EXPECT_EQ(last_iteration((sim / "output-0000").string()), 8);
  EXPECT_EQ(last_iteration((sim / "output-0001").string()), 16);
  EXPECT_EQ(last_iteration((sim / "output-0002").string()), -1);

  EXPECT_EQ(locate_simulation("run", base.string()), sim.string());
  EXPECT_EQ(locate_simulation(sim.string(), ""), sim.string());
  EXPECT_THROW(locate_simulation("other", base.string()), BatchError);
  EXPECT_THROW(locate_simulation("run", ""), BatchError);
  EXPECT_EQ(simulations_in(base.string()), std::vector<std::string>{sim.string()});

  const SimulationRecord r = read_record(sim.string());
  ASSERT_EQ(r.segments.size(), 3u);
  EXPECT_EQ(r.segments[1].job_id, "8");
  EXPECT_EQ(r.segments[2].job_id, "");
  std::vector<SegmentStatus> s = {{r.segments[0], {"7", "COMPLETED", "0:05", ""}, 8},
                                  {r.segments[1], {"8", "RUNNING", "0:02", ""}, 16},
                                  {r.segments[2], {"", "NOT SUBMITTED", "", ""}, -1}};
  const std::string table = format_status(r, s);
  EXPECT_THAT(table, HasSubstr("simulation run (" + sim.string() + "), machine local"));
  EXPECT_THAT(table, HasSubstr("running: output-0001; last iteration reached: 16; 1 of 3"));
  EXPECT_THAT(table,
              HasSubstr("output-0000           7  COMPLETED           0:05               8\n"));

  write(base / "bad/simulation.json", "{\"format\": \"other\"}");
  EXPECT_THROW(read_record((base / "bad").string()), BatchError);
  fs::remove_all(base);
}

} // namespace
} // namespace saguaro::batch
