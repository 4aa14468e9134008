// Whole simulations through the host, on whatever number of ranks mpirun started (ctest runs
// this suite at 1, 2, 3 and 4): checkpoints and recovery, and the output files (norms and
// HDF5) a run writes, truncates or appends to.
#include "simulation_support.hpp"

#include "io/io.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace saguaro::test {
namespace {

// A run_par callback that appends every allocated point of phi and pi to `into` (the two
// checkpoint tests compare a resumed run with a straight one by these).
std::function<void(host::Simulation&)> all_points_into(std::vector<std::vector<double>>& into) {
  return [&into](host::Simulation& sim) {
    const grid::Patch& p = sim.decomposition().patch();
    for (const char* v : {"phi", "pi"}) {
      const double* u = sim.fields().host(sim.fields().find(v));
      into.emplace_back(u, u + p.points());
    }
  };
}

// A run interrupted at iteration 10 and recovered from its checkpoint ends bit-identical to
// a run that went straight through, and writes the same norms.
TEST(Checkpoint, RecoveredRunIsBitIdentical) {
  SharedTempDir dir("ckpt");
  auto par_text = [&](const std::string& out, int itlast, const std::string& recover) {
    return wave_par(12, 4,
                    {{"IO::out_dir", quoted(dir / out)},
                     {"Cactus::terminate", quoted("iteration")},
                     {"Cactus::cctk_itlast", std::to_string(itlast)},
                     {"IO::out_every", "5"},
                     {"IO::checkpoint_every", "10"},
                     {"IO::recover", quoted(recover)},
                     {"IOHDF5::out_every", "10"},
                     {"IOHDF5::out_vars", quoted("WaveDemo::phi")},
                     {"Periodic::periodic", "no"},
                     {"Saguaro::boundary_condition", quoted("radiative")}});
  };
  std::vector<std::vector<double>> straight, resumed;
  write_file(dir / "a.par", par_text("a", 20, "no"));
  run_par(dir / "a.par", MPI_COMM_WORLD, all_points_into(straight));
  write_file(dir / "b1.par", par_text("b", 12, "no")); // stops at 12: checkpoint at 10
  run_par(dir / "b1.par", MPI_COMM_WORLD);
  write_file(dir / "b2.par", par_text("b", 20, "auto"));
  run_par(dir / "b2.par", MPI_COMM_WORLD, [&](host::Simulation& sim) {
    EXPECT_EQ(sim.iteration(), 20);
    all_points_into(resumed)(sim);
  });
  ASSERT_EQ(straight.size(), resumed.size());
  for (std::size_t v = 0; v < straight.size(); ++v) {
    // Compare the valid points (owned and outer boundary) bit for bit.
    EXPECT_EQ(straight[v], resumed[v]) << "variable " << v;
  }
  if (world_rank() == 0) {
    EXPECT_EQ(read_file(dir / "a/phi.norms.tsv"), read_file(dir / "b/phi.norms.tsv"));
    EXPECT_EQ(read_file(dir / "a/pi.norms.tsv"), read_file(dir / "b/pi.norms.tsv"));
  }
}

// A damaged newest checkpoint (here truncated, as a full disk or an interrupted copy leaves it)
// is reported with its file and the one before it used: the run still ends bit-identical to one
// that went straight through, with the same norms (issue 23: H5Fopen failed, MPI_Abort).
TEST(Checkpoint, DamagedNewestCheckpointFallsBackToThePreviousOne) {
  SharedTempDir dir("ckfb");
  auto par_text = [&](const std::string& out, int itlast, const std::string& recover) {
    return wave_par(12, 4,
                    {{"IO::out_dir", quoted(dir / out)},
                     {"Cactus::terminate", quoted("iteration")},
                     {"Cactus::cctk_itlast", std::to_string(itlast)},
                     {"IO::out_every", "5"},
                     {"IO::checkpoint_every", "10"},
                     {"IO::checkpoint_keep", "2"},
                     {"IO::recover", quoted(recover)},
                     {"IOHDF5::out_every", "10"},
                     {"IOHDF5::out_vars", quoted("WaveDemo::phi")}});
  };
  std::vector<std::vector<double>> straight, resumed;
  write_file(dir / "a.par", par_text("a", 40, "no"));
  run_par(dir / "a.par", MPI_COMM_WORLD, all_points_into(straight));
  write_file(dir / "b1.par", par_text("b", 34, "no")); // checkpoints at 20 and 30 kept
  run_par(dir / "b1.par", MPI_COMM_WORLD);
  const std::string damaged = dir / "b/checkpoints/checkpoint.chkpt.it_30.file_0.h5";
  if (world_rank() == 0) std::filesystem::resize_file(damaged, 1000);
  MPI_Barrier(MPI_COMM_WORLD);

  write_file(dir / "b2.par", par_text("b", 40, "auto"));
  std::ostringstream log;
  {
    host::Simulation sim(host::load_setup(dir / "b2.par"), MPI_COMM_WORLD, log);
    sim.run();
    EXPECT_EQ(sim.iteration(), 40);
    all_points_into(resumed)(sim);
  }
  ASSERT_EQ(straight.size(), resumed.size());
  for (std::size_t v = 0; v < straight.size(); ++v) EXPECT_EQ(straight[v], resumed[v]) << v;
  if (world_rank() == 0) {
    EXPECT_NE(log.str().find("warning: the checkpoint at iteration 30"), std::string::npos)
        << log.str();
    EXPECT_NE(log.str().find(damaged), std::string::npos) << log.str();
    EXPECT_NE(log.str().find("recovered from iteration 20"), std::string::npos) << log.str();
    EXPECT_EQ(read_file(dir / "a/phi.norms.tsv"), read_file(dir / "b/phi.norms.tsv"));
    EXPECT_EQ(read_file(dir / "a/pi.norms.tsv"), read_file(dir / "b/pi.norms.tsv"));
  }
}

// A second fresh run into the same directory starts its output anew, as Cactus's
// IO::truncate_files (default yes) says (issue 23: it appended to the norms of the first).
TEST(Output, AFreshRunTruncatesTheOutputOfAnEarlierRun) {
  SharedTempDir dir("trunc");
  write_file(dir / "w.par", wave_par(10, 2,
                                     {{"IO::out_dir", quoted(dir / "out")},
                                      {"Cactus::terminate", quoted("iteration")},
                                      {"Cactus::cctk_itlast", "4"},
                                      {"IO::out_every", "2"},
                                      {"IOHDF5::out_every", "2"},
                                      {"IOScalar::out_vars", quoted("WaveDemo::phi")},
                                      {"IOHDF5::out_vars", quoted("WaveDemo::phi")}}));
  run_par(dir / "w.par", MPI_COMM_WORLD);
  const std::string first = read_file(dir / "out/phi.norms.tsv");
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 5); // 2 header lines, it 0 2 4
  // Debris an earlier run on more ranks left: gone with the rest.
  const std::string stale = dir / "out/phi.file_9.h5";
  if (world_rank() == 0) std::ofstream(stale) << "x";
  run_par(dir / "w.par", MPI_COMM_WORLD);
  if (world_rank() == 0) {
    EXPECT_EQ(read_file(dir / "out/phi.norms.tsv"), first);
    EXPECT_FALSE(std::filesystem::exists(stale));
  }
  const std::string file = dir / ("out/phi.file_" + std::to_string(world_rank()) + ".h5");
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  H5G_info_t info{};
  H5Gget_info(f, &info);
  EXPECT_EQ(info.nlinks, 4u); // it 0, 2, 4 and the metadata group
  H5Fclose(f);
  EXPECT_FALSE(std::filesystem::exists(file + ".prev")); // dropped at the end of the run
}

// IO::truncate_files = no: a fresh run appends to what it finds.
TEST(Output, WithoutTruncateFilesAFreshRunAppends) {
  SharedTempDir dir("append");
  write_file(dir / "w.par", wave_par(10, 2,
                                     {{"IO::out_dir", quoted(dir / "out")},
                                      {"IO::truncate_files", "no"},
                                      {"Cactus::terminate", quoted("iteration")},
                                      {"Cactus::cctk_itlast", "4"},
                                      {"IO::out_every", "2"},
                                      {"IOScalar::out_vars", quoted("WaveDemo::phi")}}));
  run_par(dir / "w.par", MPI_COMM_WORLD);
  run_par(dir / "w.par", MPI_COMM_WORLD);
  if (world_rank() == 0) {
    const std::string text = read_file(dir / "out/phi.norms.tsv");
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 8); // one header, it 0 2 4 twice
  }
}

// The driver's HDF5 output opens with the HDF5 C API and carries Carpet's names.
TEST(Output, HDF5DatasetsPerIteration) {
  SharedTempDir dir("h5");
  write_file(dir / "w.par", wave_par(10, 2,
                                     {{"IO::out_dir", quoted(dir / "out")},
                                      {"Cactus::terminate", quoted("iteration")},
                                      {"Cactus::cctk_itlast", "4"},
                                      {"IOHDF5::out_every", "2"},
                                      {"IOHDF5::out_vars", quoted("WaveDemo::phi")}}));
  int ranks = 1;
  run_par(dir / "w.par", MPI_COMM_WORLD,
          [&](host::Simulation& sim) { ranks = sim.decomposition().patch().ranks; });
  int rank = world_rank();
  std::string file = dir / ("out/phi.file_" + std::to_string(rank) + ".h5");
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0) << file;
  for (int it : {0, 2, 4}) {
    std::string name =
        "WAVEDEMO::phi it=" + std::to_string(it) + " tl=0 rl=0 c=" + std::to_string(rank);
    EXPECT_GT(H5Lexists(f, name.c_str(), H5P_DEFAULT), 0) << name;
  }
  EXPECT_EQ(H5Lexists(f, "WAVEDEMO::phi it=1 tl=0 rl=0 c=0", H5P_DEFAULT), 0);
  H5Fclose(f);
  EXPECT_GE(ranks, 1);
}

} // namespace
} // namespace saguaro::test
