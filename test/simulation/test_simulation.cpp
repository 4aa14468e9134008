// Whole simulations through the host: .par in, evolved grid functions out, on whatever
// number of ranks mpirun started (ctest runs this suite at 1, 2, 3 and 4).
#include "simulation_support.hpp"

#include "io/io.hpp"
#include "io/predictions.hpp"
#include "runtime/cuda.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <set>
#include <sstream>

namespace saguaro::test {
namespace {

constexpr double kPi = std::numbers::pi;

std::string source(const std::string& rel) {
  return std::string(SAGUARO_SOURCE_DIR) + "/" + rel;
}

// The standing wave of par/wave.edl on a periodic unit box with N cells per axis, RK4,
// dt = h/4, to t = 1/4 (N steps, so every resolution lands on the same final time).
std::string wave_par(int n, int fd_order, const Settings& overrides = {}) {
  Settings base = {
      {"Saguaro::equations", quoted(source("par/wave.edl"))},
      {"Saguaro::fd_order", std::to_string(fd_order)},
      {"Saguaro::backend", quoted("cpu")},
      {"Saguaro::cache_dir", quoted(test_cache_dir())},
      {"Saguaro::progress_every", "0"},
      {"Cactus::cctk_show_schedule", "no"},
      {"CoordBase::spacing", quoted("numcells")},
      {"CoordBase::ncells_x", std::to_string(n)},
      {"CoordBase::ncells_y", std::to_string(n)},
      {"CoordBase::ncells_z", std::to_string(n)},
      {"Periodic::periodic", "yes"},
      {"MoL::ODE_Method", quoted("RK4")},
      {"Time::dtfac", "0.25"},
      {"Cactus::terminate", quoted("time")},
      {"Cactus::cctk_final_time", "0.25"},
  };
  return par_text("Saguaro WaveDemo", base, overrides);
}

double standing_wave(double x, double y, double z, double t) {
  const double k = 2 * kPi, omega = std::sqrt(3.0) * k;
  return std::sin(k * x) * std::sin(k * y) * std::sin(k * z) * std::cos(omega * t);
}

double wave_error(const std::string& dir, int n, int fd_order) {
  std::string par = dir + "/wave" + std::to_string(n) + ".par";
  write_file(par, wave_par(n, fd_order, {{"IO::out_dir", quoted(dir + "/out")}}));
  double error = 0;
  run_par(par, MPI_COMM_WORLD, [&](host::Simulation& sim) {
    EXPECT_NEAR(sim.time(), 0.25, 1e-12);
    EXPECT_EQ(sim.iteration(), n);
    error = l2_error(sim, "phi", [&](double x, double y, double z) {
      return standing_wave(x, y, z, sim.time());
    });
  });
  return error;
}

void expect_convergence(int fd_order, std::array<int, 3> ns) {
  SharedTempDir dir("conv");
  std::array<double, 3> e{};
  for (int r = 0; r < 3; ++r) e[r] = wave_error(dir.path(), ns[r], fd_order);
  for (int r = 0; r + 1 < 3; ++r) {
    double order = std::log(e[r] / e[r + 1]) / std::log(double(ns[r + 1]) / ns[r]);
    if (world_rank() == 0)
      std::printf("  fd order %d: N = %d -> %d, L2 errors %.3e -> %.3e, measured order %.3f\n",
                  fd_order, ns[r], ns[r + 1], e[r], e[r + 1], order);
    EXPECT_NEAR(order, fd_order, 0.1)
        << "N = " << ns[r] << " -> " << ns[r + 1] << ": errors " << e[r] << ", " << e[r + 1];
  }
}

TEST(WaveConvergence, SecondOrderInSpace) {
  expect_convergence(2, {24, 32, 48});
}
TEST(WaveConvergence, FourthOrderInSpace) {
  expect_convergence(4, {24, 32, 48});
}

// The same run on all ranks and on rank 0 alone: min, max and the infinity norm are
// bit-identical (no arithmetic depends on the decomposition); the sums agree to 1e-14.
TEST(Decomposition, SameNormsOnAllRanksAndOnOne) {
  SharedTempDir dir("ranks");
  auto norms_of = [&](MPI_Comm comm, const std::string& tag) {
    std::string par = dir / (tag + ".par");
    write_file(par,
               wave_par(13, 4,
                        {{"IO::out_dir", quoted(dir / tag)},
                         {"Periodic::periodic", "no"},
                         {"Periodic::periodic_x", "yes"},
                         {"CoordBase::ncells_y", "11"},
                         {"CoordBase::ncells_z", "9"},
                         {"Saguaro::boundary_condition", quoted("radiative")},
                         {"Saguaro::boundary_z_upper", quoted("flat")}}),
               comm);
    std::vector<grid::Norms> norms;
    run_par(par, comm, [&](host::Simulation& sim) {
      for (const char* v : {"phi", "pi"})
        norms.push_back(grid::reduce_norms(
            sim.decomposition(), sim.fields().data(sim.fields().find(v)), sim.fields().space()));
    });
    return norms;
  };
  std::vector<grid::Norms> all = norms_of(MPI_COMM_WORLD, "all");
  MPI_Comm self_comm;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() == 0 ? 0 : MPI_UNDEFINED, 0, &self_comm);
  if (world_rank() == 0) {
    std::vector<grid::Norms> one = norms_of(self_comm, "one");
    for (std::size_t v = 0; v < all.size(); ++v) {
      EXPECT_EQ(all[v].min, one[v].min);
      EXPECT_EQ(all[v].max, one[v].max);
      EXPECT_EQ(all[v].linf, one[v].linf);
      EXPECT_NEAR(all[v].l1, one[v].l1, 1e-14 * std::abs(one[v].l1));
      EXPECT_NEAR(all[v].l2, one[v].l2, 1e-14 * std::abs(one[v].l2));
      EXPECT_GT(one[v].linf, 0.1); // something happened
    }
    MPI_Comm_free(&self_comm);
  }
}

// The right-hand side split around the ghost exchange (interior while messages are in flight,
// then the boundary shell) computes every point as the whole launch after the exchange does:
// the evolved variables agree bit for bit, with radiative and flat outer faces (the flat ones
// deferred until the messages are in) and a periodic axis. step_breakdown.tsv has a row per
// iteration, and the boundary shell's launches are timed only when split.
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

// The owned points of each named grid function after a run.
std::vector<std::vector<double>> owned_values(host::Simulation& sim,
                                              const std::vector<std::string>& names) {
  std::vector<std::vector<double>> fields;
  const grid::Patch& p = sim.decomposition().patch();
  for (const std::string& v : names) {
    const double* u = sim.fields().host(sim.fields().find(v));
    std::vector<double> owned;
    for (int k = p.owned.lo[2]; k < p.owned.hi[2]; ++k)
      for (int j = p.owned.lo[1]; j < p.owned.hi[1]; ++j)
        for (int i = p.owned.lo[0]; i < p.owned.hi[0]; ++i) owned.push_back(u[p.linear(i, j, k)]);
    fields.push_back(std::move(owned));
  }
  return fields;
}

// Stage combinations folded into the right-hand side (Saguaro::fold_updates) give the plain
// combinations' results, for every integrator, periodic or with flat faces, the exchange
// overlapped with split right-hand sides where ranks exchange; radiative faces keep the
// plain form.
TEST(FoldedStep, MatchesThePlainCombinations) {
  SharedTempDir dir("fold");
  auto run = [&](const std::string& tag, const Settings& settings) {
    Settings all = settings;
    all["IO::out_dir"] = quoted(dir / tag);
    all["CoordBase::ncells_z"] = "22";
    all["Cactus::terminate"] = quoted("iteration");
    all["Cactus::cctk_itlast"] = "5";
    all["Saguaro::exchange_overlap"] = quoted("yes");
    const std::string par = dir / (tag + ".par");
    write_file(par, wave_par(12, 4, all));
    std::ostringstream log;
    host::Simulation sim(host::load_setup(par), MPI_COMM_WORLD, log);
    sim.run();
    return std::make_pair(owned_values(sim, {"phi", "pi"}), log.str());
  };
  const Settings flat = {{"Periodic::periodic", "no"},
                         {"Periodic::periodic_y", "yes"},
                         {"Saguaro::boundary_condition", quoted("flat")}};
  const Settings radiative = {{"Periodic::periodic", "no"},
                              {"Saguaro::boundary_condition", quoted("radiative")}};
  for (const char* method : {"RK4", "RK3", "RK2", "ICN"})
    for (const auto& [faces, extra] :
         {std::make_pair("periodic", Settings{}), std::make_pair("flat", flat),
          std::make_pair("radiative", radiative)}) {
      SCOPED_TRACE(std::string(method) + " " + faces);
      Settings s = extra;
      s["MoL::ODE_Method"] = quoted(method);
      const std::string tag = std::string(method) + "-" + faces;
      Settings folded = s, plain = s;
      folded["Saguaro::fold_updates"] = quoted("yes");
      plain["Saguaro::fold_updates"] = quoted("no");
      const auto [a, a_log] = run(tag + "-fold", folded);
      const auto [b, b_log] = run(tag + "-plain", plain);
      const bool folds = std::string(faces) != "radiative";
      if (world_rank() == 0) // the banner is rank 0's
        EXPECT_EQ(a_log.find("stage combinations folded into wave_rhs") != std::string::npos, folds)
            << a_log;
      ASSERT_EQ(a.size(), b.size());
      double worst = 0, scale = 0;
      for (std::size_t v = 0; v < a.size(); ++v)
        for (std::size_t i = 0; i < a[v].size(); ++i) {
          worst = std::max(worst, std::abs(a[v][i] - b[v][i]));
          scale = std::max(scale, std::abs(b[v][i]));
        }
      EXPECT_GT(scale, 0.1);
      EXPECT_LE(worst, 1e-14 * scale);
    }
}

TEST(ExchangeOverlap, SplitMatchesWholeBitForBit) {
  SharedTempDir dir("overlap");
  auto run = [&](const std::string& overlap) {
    const std::string par = dir / (overlap + ".par");
    write_file(par, wave_par(14, 4,
                             {{"IO::out_dir", quoted(dir / overlap)},
                              {"Periodic::periodic", "no"},
                              {"Periodic::periodic_x", "yes"},
                              {"CoordBase::ncells_y", "12"},
                              {"CoordBase::ncells_z", "26"},
                              {"Cactus::terminate", quoted("iteration")},
                              {"Cactus::cctk_itlast", "6"},
                              {"Saguaro::exchange_overlap", quoted(overlap)},
                              {"Saguaro::boundary_condition", quoted("radiative")},
                              {"Saguaro::boundary_z_upper", quoted("flat")}}));
    std::ostringstream log;
    host::Simulation sim(host::load_setup(par), MPI_COMM_WORLD, log);
    sim.run();
    return std::make_pair(owned_values(sim, {"phi", "pi"}), log.str());
  };
  const auto [whole, whole_log] = run("no");
  const auto [split, split_log] = run("yes");
  ASSERT_EQ(whole.size(), split.size());
  for (std::size_t v = 0; v < whole.size(); ++v) {
    ASSERT_EQ(whole[v].size(), split[v].size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < whole[v].size(); ++i) differ += whole[v][i] != split[v][i];
    EXPECT_EQ(differ, 0u) << "variable " << v;
  }
  if (world_rank() != 0) return;
  const bool exchanging = world_size() > 1;
  EXPECT_EQ(split_log.find("wave_rhs: split") != std::string::npos, exchanging) << split_log;
  EXPECT_EQ(whole_log.find("wave_rhs: split"), std::string::npos) << whole_log;
  for (const auto& [tag, text] :
       {std::make_pair("no", whole_log), std::make_pair("yes", split_log)}) {
    std::istringstream tsv(read_file(dir / (std::string(tag) + "/step_breakdown.tsv")));
    std::string line, header;
    int rows = 0;
    double boundary = 0, interior = 0;
    while (std::getline(tsv, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (header.empty()) {
        header = line;
        continue;
      }
      std::istringstream cells(line);
      double it = 0, step = 0, in = 0, shell = 0;
      cells >> it >> step >> in >> shell;
      EXPECT_EQ(int(it), rows + 1);
      EXPECT_GT(step, 0);
      interior += in;
      boundary += shell;
      ++rows;
    }
    EXPECT_EQ(header, "iteration\tstep_s\tinterior_s\tboundary_s\texchange_s\tidle_s") << tag;
    EXPECT_EQ(rows, 6) << tag;
    EXPECT_GT(interior, 0) << tag;
    EXPECT_EQ(boundary > 0, exchanging && std::string(tag) == "yes") << tag;
    EXPECT_NE(text.find("step breakdown, median of 6 steps"), std::string::npos) << text;
  }
}

// div E and div B vanish to round-off at the start and stay there through the evolution.
TEST(Maxwell, DivergenceStaysAtRoundoff) {
  SharedTempDir dir("maxwell");
  std::string par = dir / "maxwell.par";
  write_file(par,
             "ActiveThorns = \"Saguaro Maxwell3D\"\n"
             "Saguaro::equations = \"" +
                 source("test/simulation/edl/maxwell3d.edl") +
                 "\"\n"
                 "Saguaro::backend = \"cpu\"\n"
                 "Saguaro::cache_dir = \"" +
                 test_cache_dir() +
                 "\"\n"
                 "Saguaro::progress_every = 0\nCactus::cctk_show_schedule = no\n"
                 "CoordBase::spacing = \"numcells\"\n"
                 "CoordBase::ncells_x = 20\nCoordBase::ncells_y = 18\nCoordBase::ncells_z = 16\n"
                 "Periodic::periodic = yes\nMoL::ODE_Method = \"RK3\"\n"
                 "Cactus::cctk_itlast = 30\n"
                 "IO::out_dir = \"" +
                 (dir / "out") +
                 "\"\nIO::out_every = 30\n"
                 "IOScalar::out_vars = \"Maxwell3D::divE Maxwell3D::divB Maxwell3D::El\"\n");
  run_par(par, MPI_COMM_WORLD, [&](host::Simulation& sim) {
    EXPECT_EQ(sim.iteration(), 30);
    for (const char* v : {"divE", "divB"}) {
      grid::Norms n = grid::reduce_norms(
          sim.decomposition(), sim.fields().data(sim.fields().find(v)), sim.fields().space());
      EXPECT_LT(n.linf, 1e-11) << v;
    }
    // The fields did evolve: El_1 changed from its initial values.
    grid::Norms e = grid::reduce_norms(
        sim.decomposition(), sim.fields().data(sim.fields().find("El1")), sim.fields().space());
    EXPECT_GT(e.linf, 0.1);
  });
  if (world_rank() == 0) {
    std::string tsv = read_file(dir / "out/divE.norms.tsv");
    EXPECT_NE(tsv.find("# iteration"), std::string::npos);
  }
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

// An EDL calculation `on boundary` sets the outer layers after every substep; the
// interior feels it (the boundary value propagates in).
TEST(Boundary, EdlCalculationOnBoundary) {
  SharedTempDir dir("bnd");
  write_file(dir / "p.par", par_text("Saguaro PulseDirichlet",
                                     {{"Saguaro::equations",
                                       quoted(source("test/simulation/edl/pulse_dirichlet.edl"))},
                                      {"Saguaro::backend", quoted("cpu")},
                                      {"Saguaro::cache_dir", quoted(test_cache_dir())},
                                      {"Saguaro::progress_every", "0"},
                                      {"Saguaro::boundary_condition", quoted("none")},
                                      {"Cactus::cctk_show_schedule", "no"},
                                      {"CoordBase::spacing", quoted("numcells")},
                                      {"CoordBase::ncells_x", "12"},
                                      {"CoordBase::ncells_y", "11"},
                                      {"CoordBase::ncells_z", "10"},
                                      {"Cactus::cctk_itlast", "6"},
                                      {"IO::out_dir", quoted(dir / "out")}},
                                     {}));
  run_par(dir / "p.par", MPI_COMM_WORLD, [&](host::Simulation& sim) {
    const grid::Patch& p = sim.decomposition().patch();
    const double* u = sim.fields().host(sim.fields().find("u"));
    const grid::Box box = p.allocated(), valid = p.valid();
    long boundary_points = 0, wrong = 0;
    for (int k = valid.lo[2]; k < valid.hi[2]; ++k)
      for (int j = valid.lo[1]; j < valid.hi[1]; ++j)
        for (int i = valid.lo[0]; i < valid.hi[0]; ++i) {
          bool outer = i < 0 || j < 0 || k < 0 || i >= p.spec.points[0] || j >= p.spec.points[1] ||
                       k >= p.spec.points[2];
          if (!outer) continue;
          ++boundary_points;
          if (u[p.linear(i, j, k)] != 0.25) ++wrong;
        }
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(box.empty(), false);
    long total = 0;
    MPI_Allreduce(&boundary_points, &total, 1, MPI_LONG, MPI_SUM, sim.decomposition().comm());
    EXPECT_GT(total, 0);
    // Next to the boundary the solution has moved towards 0.25 from the pulse's tail (~0).
    EXPECT_EQ(sim.iteration(), 6);
  });
}

// The flux form D_t rho = -Dcen_j (rho vel^j) (a derivative of an expression: intermediates
// on a grown region) conserves the total of rho to round-off on a periodic grid.
TEST(Advect, FluxFormConservesMass) {
  SharedTempDir dir("adv");
  write_file(dir / "a.par", par_text("Saguaro AdvectDemo",
                                     {{"Saguaro::equations", quoted(source("par/advect.edl"))},
                                      {"Saguaro::backend", quoted("cpu")},
                                      {"Saguaro::cache_dir", quoted(test_cache_dir())},
                                      {"Saguaro::progress_every", "0"},
                                      {"Cactus::cctk_show_schedule", "no"},
                                      {"AdvectDemo::vshear", "0.3"},
                                      {"CoordBase::spacing", quoted("numcells")},
                                      {"CoordBase::ncells_x", "16"},
                                      {"CoordBase::ncells_y", "14"},
                                      {"CoordBase::ncells_z", "12"},
                                      {"Periodic::periodic", "yes"},
                                      {"MoL::ODE_Method", quoted("RK3")},
                                      {"Cactus::cctk_itlast", "20"},
                                      {"IO::out_dir", quoted(dir / "out")},
                                      {"IO::out_every", "20"},
                                      {"IOScalar::out_vars", quoted("AdvectDemo::rho")}},
                                     {}));
  run_par(dir / "a.par", MPI_COMM_WORLD);
  if (world_rank() == 0) {
    std::ifstream in(dir / "out/rho.norms.tsv");
    std::string line;
    std::vector<double> norm1;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      double it, t, mn, mx, n1;
      fields >> it >> t >> mn >> mx >> n1;
      norm1.push_back(n1); // rho > 0: the mean of |rho| is the mean of rho
    }
    ASSERT_EQ(norm1.size(), 2u);
    EXPECT_NEAR(norm1[1], norm1[0], 1e-13 * norm1[0]);
    EXPECT_GT(norm1[0], 1.0); // background 1 plus the pulse
  }
}

// Setup lowers once, after declaring the thorn's parameters: the program has the .par's
// finite-difference order (order 2 reaches one point, order 8 four).
TEST(Setup, LowersAtTheParFilesOrder) {
  SharedTempDir dir("setup_order");
  for (int order : {2, 8}) {
    const std::string par = dir / ("wave" + std::to_string(order) + ".par");
    write_file(par, wave_par(8, order, {{"IO::out_dir", quoted(dir / "out")}}));
    const host::Setup setup = host::load_setup(par);
    EXPECT_EQ(setup.program.fd_order, order);
    int radius = 0;
    for (const calc::Calculation& c : setup.program.calculations)
      radius = std::max(radius, c.radius[0]);
    EXPECT_EQ(radius, order / 2);
  }
}

// An error in the EDL file's calculations is reported before one in the .par, as when setup
// lowered the whole file before reading the .par.
TEST(Setup, EdlErrorBeforeParError) {
  SharedTempDir dir("setup_errors");
  const std::string edl = dir / "bad.edl";
  write_file(edl, "begin thorn WaveDemo\n"
                  "begin variables\nphi\nend variables\n"
                  "begin calculation c\nphi = nope\nend calculation\n"
                  "end thorn\n");
  const std::string par = dir / "bad.par";
  write_file(
      par,
      wave_par(8, 4, {{"Saguaro::equations", quoted(edl)}, {"CoordBase::no_such_parameter", "1"}}));
  std::string message;
  try {
    host::load_setup(par);
  } catch (const edl::EdlError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("bad.edl:6:7: error: undeclared name 'nope'"), std::string::npos)
      << message;
  // With a good EDL file, the .par's error (in a file of its own: other ranks may still be
  // reading the first).
  const std::string good = dir / "good.par";
  write_file(good, wave_par(8, 4, {{"CoordBase::no_such_parameter", "1"}}));
  message.clear();
  try {
    host::load_setup(good);
  } catch (const edl::EdlError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("no_such_parameter"), std::string::npos) << message;
}

// Saguaro::backend = "cuda" where no GPU can be used: `saguaro check` accepts the file (it
// needs no GPU); making the simulation fails with a par error at the setting that says why
// and suggests "auto" or "cpu". Without a GPU "auto" runs on the CPU.
TEST(Backend, CudaWithoutAGpuIsAParError) {
  std::string why;
  if (runtime::cuda::available(&why)) GTEST_SKIP() << "a GPU can be used here";
  SharedTempDir dir("cuda");
  const std::string par = dir / "cuda.par";
  const std::string text =
      wave_par(8, 4, {{"Saguaro::backend", quoted("cuda")}, {"IO::out_dir", quoted(dir / "out")}});
  write_file(par, text);
  int line = 1;
  for (std::size_t at = 0; at < text.find("Saguaro::backend"); ++at) line += text[at] == '\n';

  host::Setup setup = host::load_setup(par); // does not throw
  std::ostringstream log;
  std::string message;
  try {
    host::Simulation sim(std::move(setup), MPI_COMM_WORLD, log);
  } catch (const support::InputError& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "no error for Saguaro::backend = \"cuda\" without a GPU";
  EXPECT_NE(message.find("cuda.par:" + std::to_string(line) + ":"), std::string::npos) << message;
  EXPECT_NE(message.find("error:"), std::string::npos) << message;
  EXPECT_NE(message.find("no GPU can be used"), std::string::npos) << message;
  EXPECT_NE(message.find(why), std::string::npos) << message;
  EXPECT_NE(message.find("\"auto\""), std::string::npos) << message;
  EXPECT_NE(message.find("\"cpu\""), std::string::npos) << message;
  EXPECT_NE(message.find('^'), std::string::npos) << message;

  // "auto" falls back to the generated C++.
  write_file(par, wave_par(8, 4,
                           {{"Saguaro::backend", quoted("auto")},
                            {"Cactus::terminate", quoted("iteration")},
                            {"Cactus::cctk_itlast", "2"},
                            {"IO::out_dir", quoted(dir / "out")}}));
  std::ostringstream run_log;
  host::Simulation sim(host::load_setup(par), MPI_COMM_WORLD, run_log);
  sim.run();
  EXPECT_EQ(sim.iteration(), 2);
  if (world_rank() == 0) {
    EXPECT_NE(run_log.str().find("backend cpu,"), std::string::npos) << run_log.str();
  }
}

// The prediction log of a CPU run: one record per calculation that ran (the analysis
// calculation too, since IO::out_every = 1), each measured and predicted by the host's
// roofline measured at start; the table closes the run's log. `saguaro report` on such a
// directory is the CLI test cli.report_of_a_run.
TEST(PredictionLog, CpuRunLogsEveryCalculationThatRan) {
  SharedTempDir dir("predictions");
  write_file(dir / "p.par", wave_par(8, 4,
                                     {{"Cactus::terminate", quoted("iteration")},
                                      {"Cactus::cctk_itlast", "3"},
                                      {"IO::out_every", "1"},
                                      {"IO::out_dir", quoted(dir / "out")}}));
  std::ostringstream log;
  {
    host::Simulation sim(host::load_setup(dir / "p.par"), MPI_COMM_WORLD, log);
    sim.run();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return; // rank 0 writes the log
  const std::vector<io::PredictionRecord> records = io::read_predictions(dir / "out");
  std::set<std::string> names;
  const bool exchanging = world_size() > 1; // z is split: messages, wave_rhs split around them
  for (const io::PredictionRecord& r : records) {
    names.insert(r.calculation);
    EXPECT_EQ(r.backend, "cpu");
    if (r.calculation == "ghost exchange") {
      // One exchange of the evolved variables per substep; no interconnect description for
      // the CPU: measured only, saying why.
      EXPECT_EQ(r.launches, 12);
      EXPECT_GT(r.measured_median, 0);
      EXPECT_TRUE(std::isnan(r.predicted_hu));
      EXPECT_NE(r.note.find("calibrate --interconnect"), std::string::npos) << r.note;
      EXPECT_NE(r.mapping.find("2 evolved variables"), std::string::npos) << r.mapping;
      continue;
    }
    EXPECT_EQ(r.mapping, "cpu");
    EXPECT_EQ(r.ranks, world_size());
    EXPECT_EQ(r.iteration, 3);
    EXPECT_GT(r.launches, 0) << r.name;
    EXPECT_GT(r.points, 0) << r.name;
    EXPECT_GT(r.measured_median, 0) << r.name;
    EXPECT_GT(r.predicted_hu, 0) << r.name;
    EXPECT_TRUE(std::isfinite(r.error_hu)) << r.name;
    EXPECT_TRUE(r.note.empty()) << r.note;
  }
  // wave_rhs runs in its folded forms (Saguaro::fold_updates): RK4's stage 1, stages 2 and 3
  // (one form, other coefficients), stage 4.
  std::set<std::string> expected{"wave_init", "wave_rhs (stage 1)", "wave_rhs (stages 2, 3)",
                                 "wave_rhs (stage 4)", "wave_energy"};
  if (exchanging) expected.insert("ghost exchange");
  EXPECT_EQ(names, expected);
  // 8 points split along z leave a patch too thin for an interior 2 points from both z
  // faces: wave_rhs runs whole (ExchangeOverlap tests the split).
  const std::size_t rows_expected = exchanging ? 6u : 5u;
  EXPECT_EQ(records.size(), rows_expected);
  for (const io::PredictionRecord& r : records)
    if (r.calculation.rfind("wave_rhs", 0) == 0) // 3 steps of RK4
      EXPECT_EQ(r.launches, r.calculation == "wave_rhs (stages 2, 3)" ? 6 : 3) << r.calculation;

  // The TSV has the same rows.
  std::istringstream tsv(read_file(dir / "out/predictions.tsv"));
  std::string line;
  int rows = 0;
  while (std::getline(tsv, line)) rows += !line.empty() && line[0] != '#';
  EXPECT_EQ(rows, int(rows_expected));

  const std::string text = log.str();
  EXPECT_NE(text.find(", measured at start: "), std::string::npos) << text;
  EXPECT_NE(text.find("Prediction log: "), std::string::npos) << text;
  if (world_size() > 1) {
    EXPECT_NE(text.find("rank 0's kernels of " + std::to_string(world_size()) + " ranks"),
              std::string::npos)
        << text;
  }
}

// The banner's start-up line: where the time before the first step went, its parts inside the
// whole (a CPU run has no empirical finish, so the line names none).
TEST(Startup, PartsAddUpToAtMostTheWholeAndTheBannerSaysSo) {
  SharedTempDir dir("startup");
  write_file(dir / "p.par", wave_par(8, 4,
                                     {{"Cactus::terminate", quoted("iteration")},
                                      {"Cactus::cctk_itlast", "2"},
                                      {"IO::out_dir", quoted(dir / "out")}}));
  std::ostringstream log;
  host::Simulation sim(host::load_setup(dir / "p.par"), MPI_COMM_WORLD, log);
  sim.run();
  const host::Simulation::StartupTimes& t = sim.startup();
  EXPECT_EQ(t.candidate_programs, 0);
  EXPECT_EQ(t.finish_timing, 0);
  EXPECT_EQ(t.finish_recompile, 0);
  for (double part : {t.mapping, t.compile, t.initial_data}) EXPECT_GE(part, 0);
  EXPECT_GT(t.compile, 0); // the generated C++ is compiled (or read from the cache)
  EXPECT_GE(t.total, t.mapping + t.compile + t.initial_data);
  if (world_rank() != 0) return;
  const std::string text = log.str();
  const std::size_t at = text.find("  start-up ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, text.find('\n', at) - at);
  EXPECT_EQ(line, "  " + t.line());
  EXPECT_NE(line.find(" s before the first step: mapping "), std::string::npos) << line;
  EXPECT_EQ(line.find("empirical finish"), std::string::npos) << line;
  EXPECT_LT(at, text.find("dt = ")) << "printed before the evolution starts";

  host::Simulation::StartupTimes finish;
  finish.total = 20.5;
  finish.mapping = 2.5;
  finish.compile = 11.25;
  finish.candidate_programs = 9;
  finish.initial_data = 0.5;
  finish.finish_timing = 2;
  finish.finish_recompile = 4.25;
  EXPECT_EQ(finish.line(), "start-up 20.50 s before the first step: mapping 2.50 s, compile 11.25 "
                           "s (with the empirical finish's 9 candidate programs), initial data "
                           "0.50 s, empirical finish 6.25 s (timing 2.00, the verdicts' compile "
                           "4.25)");
}

// Saguaro::device_description names a file relative to the .par file: its roofline is the
// one used. A missing file and a GPU's description for the CPU backend are .par errors; the
// interpreter and prediction_log = no write no log.
TEST(PredictionLog, DeviceDescriptionFromTheParFile) {
  SharedTempDir dir("predictions-device");
  write_file(dir / "host.yaml", "name: \"test host\"\n"
                                "kind: cpu\n"
                                "quantities:\n"
                                "  cores: {value: 1, unit: count, source: \"test\"}\n"
                                "  fp64_peak: {value: 1, unit: GFLOP/s, source: \"test\"}\n"
                                "  dram_bandwidth: {value: 1000, unit: GB/s, source: \"test\"}\n");
  const Settings short_run = {{"Cactus::terminate", quoted("iteration")},
                              {"Cactus::cctk_itlast", "1"},
                              {"IO::out_dir", quoted(dir / "out")}};
  auto with = [&](Settings more) {
    for (const auto& [k, v] : short_run) more.emplace(k, v);
    return wave_par(8, 4, more);
  };
  write_file(dir / "p.par", with({{"Saguaro::device_description", quoted("host.yaml")}}));
  std::ostringstream log;
  {
    host::Simulation sim(host::load_setup(dir / "p.par"), MPI_COMM_WORLD, log);
    sim.run();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    EXPECT_NE(log.str().find("prediction log: roofline of test host, from " + dir / "host.yaml"),
              std::string::npos)
        << log.str();
    const std::vector<io::PredictionRecord> records = io::read_predictions(dir / "out");
    ASSERT_FALSE(records.empty());
    for (const io::PredictionRecord& r : records) {
      EXPECT_EQ(r.device, "test host");
      if (r.calculation == "ghost exchange") continue; // the host describes no interconnect
      // 1 GFLOP/s against 1000 GB/s: every calculation with flops is compute-bound.
      EXPECT_EQ(r.limiter, "FP64") << r.name;
      EXPECT_NEAR(r.predicted_hu, r.issue, 1e-12 * r.issue) << r.name;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  // Each case its own file: a rank that has thrown must not rewrite one another still reads.
  auto par_error = [&](const std::string& name, const Settings& settings) {
    write_file(dir / name, with(settings));
    std::ostringstream quiet;
    try {
      host::Simulation sim(host::load_setup(dir / name), MPI_COMM_WORLD, quiet);
    } catch (const edl::EdlError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string missing =
      par_error("missing.par", {{"Saguaro::device_description", quoted("nowhere.yaml")}});
  EXPECT_NE(missing.find("missing.par:"), std::string::npos) << missing;
  EXPECT_NE(missing.find("no device description"), std::string::npos) << missing;
  EXPECT_NE(missing.find("nowhere.yaml"), std::string::npos) << missing;
  std::string gpu = par_error(
      "gpu.par", {{"Saguaro::device_description", quoted(source("configs/devices/h100.yaml"))}});
  EXPECT_NE(gpu.find("describes a GPU"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("the backend is cpu"), std::string::npos) << gpu;

  // No log: the interpreter has no timings; prediction_log = no asks for none.
  const std::map<std::string, std::pair<std::string, std::string>> quiet_runs = {
      {"interpreter", {"Saguaro::backend", quoted("interpreter")}},
      {"off", {"Saguaro::prediction_log", "no"}}};
  for (const auto& [name, setting] : quiet_runs) {
    Settings settings = short_run;
    settings[setting.first] = setting.second;
    settings["IO::out_dir"] = quoted(dir / name);
    write_file(dir / (name + ".par"), wave_par(8, 4, settings));
    std::ostringstream quiet;
    {
      host::Simulation sim(host::load_setup(dir / (name + ".par")), MPI_COMM_WORLD, quiet);
      sim.run();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_FALSE(std::filesystem::exists(dir / (name + "/predictions.tsv"))) << name;
    EXPECT_EQ(quiet.str().find("rediction log"), std::string::npos) << quiet.str();
  }
}

} // namespace
} // namespace saguaro::test
