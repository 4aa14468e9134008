// Whole simulations through the host: .par in, evolved grid functions out, on whatever
// number of ranks mpirun started (ctest runs this suite at 1, 2, 3 and 4). Here, what the
// evolutions compute: the wave's convergence order, the same norms on any decomposition, folded
// stage combinations and the exchange split around the right-hand side against the plain
// step, Maxwell's constraints, an EDL boundary calculation, a conservative flux form.
#include "simulation_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace saguaro::test {
namespace {

constexpr double kPi = std::numbers::pi;

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

// The right-hand side split around the ghost exchange (interior while messages are in flight,
// then the boundary shell) computes every point as the whole launch after the exchange does:
// the evolved variables agree bit for bit, with radiative and flat outer faces (the flat ones
// deferred until the messages are in) and a periodic axis. step_breakdown.tsv has a row per
// iteration (its parts on the sampled steps), and the boundary shell's launches are timed only
// when split.
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
      std::string cell[4];
      cells >> cell[0] >> cell[1] >> cell[2] >> cell[3];
      const double it = std::stod(cell[0]), step = std::stod(cell[1]), in = std::stod(cell[2]),
                   shell = std::stod(cell[3]);
      EXPECT_EQ(int(it), rows + 1);
      EXPECT_GT(step, 0);
      // the parts on the sampled steps (Saguaro::device_timer_every, 8: the first), nan after
      EXPECT_EQ(std::isnan(in), rows > 0) << tag << " row " << rows;
      EXPECT_EQ(std::isnan(shell), rows > 0) << tag << " row " << rows;
      if (rows == 0) {
        interior += in;
        boundary += shell;
      }
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

} // namespace
} // namespace saguaro::test
