// Runs with a time-tiled step (Saguaro::time_tile, docs/gpu.md "Time-tiled steps"): on the GPU
// every variable after 10 steps equals the plain step's run on the CPU to 1e-12 (the wave
// equation and Maxwell's equations at fd order 2, RK4 and the sub-diagonal second-order
// methods; the wave equation at fd order 4, whose step is two parts of two stages); everywhere, the
// runs that cannot take one say why, and "yes" there is a parameter error at its line.
#include "backend_comparison.hpp"

#include "runtime/cuda.hpp"
#include "support/diagnostics.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace saguaro::test {
namespace {

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

TEST(TimeTiledRun, MatchesThePlainStepOnTheGpu) {
  std::string why;
  if (!runtime::cuda::available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (world_size() > 1) GTEST_SKIP() << "a time-tiled step runs on one rank";
  struct Run {
    Case c;
    const char* integrator;
    const char* fd_order = "2";
    std::size_t parts = 0; // the kernels the step needs (0: as the model finds best)
  };
  const Run runs[] = {
      {{"wave_periodic", "WaveDemo", "par/wave.edl", true}, "RK4"},
      {{"maxwell", "MaxwellDemo", "par/maxwell.edl", true}, "RK4"},
      {{"wave_periodic", "WaveDemo", "par/wave.edl", true}, "RK2"},
      {{"wave_periodic", "WaveDemo", "par/wave.edl", true}, "RK2-midpoint"},
      {{"wave_periodic", "WaveDemo", "par/wave.edl", true}, "ICN"},
      {{"wave_periodic", "WaveDemo", "par/wave.edl", true}, "RK4", "4", 2},
  };
  for (const Run& r : runs) {
    SCOPED_TRACE(r.c.name + " " + r.integrator);
    SharedTempDir dir("time_tiled_" + r.c.name);
    const std::string par = dir.path() + "/run.par";
    const Settings common = {{"Saguaro::fd_order", r.fd_order},
                             {"MoL::ODE_Method", quoted(r.integrator)},
                             {"Cactus::cctk_itlast", "10"}};
    auto with = [&](Settings s) {
      s.insert(common.begin(), common.end());
      return s;
    };
    write_file(par, case_par(r.c, dir.path(), with({{"Saguaro::backend", quoted("cpu")}})));
    const auto reference = run_case(par);
    write_file(par, case_par(r.c, dir.path(),
                             with({{"Saguaro::backend", quoted("cuda")},
                                   {"Saguaro::time_tile", quoted("yes")}})));
    mapper::TimeTileChoice choice;
    const auto tiled = run_case(par, [&](host::Simulation& sim) { choice = sim.time_tile(); });
    EXPECT_TRUE(choice.use) << choice.reason;
    if (r.parts > 0) EXPECT_EQ(choice.parts.size(), r.parts) << choice.reason;
    const double worst = expect_close(reference, tiled, 1e-12);
    std::printf("[ info ] %s %s, %s: largest relative difference %.3g\n", r.c.name.c_str(),
                r.integrator, choice.text().c_str(), worst);
  }
}

// Why not, in the run's words: the CPU backend (CI's), more than one rank, a grid that is not
// periodic, an integrator with more than a sub-diagonal, an 8th-order stencil's halo.
TEST(TimeTiledRun, SaysWhyNot) {
  const Case periodic{"wave_periodic", "WaveDemo", "par/wave.edl", true};
  const Case outer{"wave_radiative", "WaveDemo", "par/wave.edl", false};
  const bool gpu = runtime::cuda::available() && world_size() == 1;
  struct Expect {
    Case c;
    Settings settings;
    std::string because;
  };
  std::vector<Expect> cases = {
      {periodic,
       {{"Saguaro::backend", quoted("cpu")}},
       "the cpu backend makes no time-tiled steps"},
  };
  if (gpu) {
    cases.push_back({outer, {{"Saguaro::fd_order", "2"}}, "not periodic along x"});
    cases.push_back({periodic,
                     {{"Saguaro::fd_order", "2"}, {"MoL::ODE_Method", quoted("RK3")}},
                     "more than a sub-diagonal"});
    cases.push_back({periodic, {{"Saguaro::fd_order", "8"}}, "no tile of at most 1024 threads"});
  }
  for (const Expect& e : cases) {
    SCOPED_TRACE(e.because);
    SharedTempDir dir("time_tile_why_not");
    const std::string par = dir.path() + "/run.par";
    Settings s = e.settings;
    s["Cactus::cctk_itlast"] = "1";
    s["Saguaro::time_tile"] = quoted("auto");
    write_file(par, case_par(e.c, dir.path(), s));
    mapper::TimeTileChoice choice;
    run_case(par, [&](host::Simulation& sim) { choice = sim.time_tile(); });
    EXPECT_FALSE(choice.use);
    EXPECT_NE(choice.reason.find(e.because), std::string::npos) << choice.reason;
    // "yes" makes it the parameter's error, at its line.
    s["Saguaro::time_tile"] = quoted("yes");
    write_file(par, case_par(e.c, dir.path(), s));
    try {
      run_case(par);
      ADD_FAILURE() << "Saguaro::time_tile = \"yes\" ran";
    } catch (const support::InputError& error) {
      const std::string what = error.what();
      EXPECT_NE(what.find("Saguaro::time_tile = \"yes\", but"), std::string::npos) << what;
      EXPECT_NE(what.find(e.because), std::string::npos) << what;
      EXPECT_NE(what.find("run.par:"), std::string::npos) << what;
    }
  }
}

} // namespace
} // namespace saguaro::test
