// Whole runs on the Kokkos backend against the same runs on the cpu backend: every example
// thorn for 10 RK4 steps with periodic and outer (radiative) boundaries, and the BSSN gauge
// wave, on however many ranks the suite runs with; the MoL updates, boundaries and ghost
// packing run in the Kokkos array space. Every grid function to 1e-12 relative at every valid
// point. Skipped in a build without Kokkos.
#include "backend_comparison.hpp"

#include "runtime/kokkos.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace saguaro::test {
namespace {

constexpr double kTolerance = 1e-12;

class KokkosMatchesCpu : public ::testing::TestWithParam<Case> {};

TEST_P(KokkosMatchesCpu, TenSteps) {
  std::string why;
  if (!runtime::kokkos::available(&why)) GTEST_SKIP() << why;
  const Case& c = GetParam();
  SharedTempDir dir("kokkos_" + c.name);
  const std::string par = dir.path() + "/run.par";
  write_file(par, case_par(c, dir.path(), {{"Saguaro::backend", quoted("cpu")}}));
  const auto reference = run_case(par);
  for (const char* block : {"z 32x8x8", "y 16x4x3"}) {
    SCOPED_TRACE(block);
    write_file(par, case_par(c, dir.path(),
                             {{"Saguaro::backend", quoted("kokkos")},
                              {"Saguaro::mapper", quoted("default")},
                              {"Saguaro::cuda_block", quoted(block)}}));
    const double worst = expect_close(reference, run_case(par), kTolerance);
    if (world_rank() == 0)
      std::printf("[ info ] %s, block %s: largest relative difference Kokkos vs CPU %.3g\n",
                  c.name.c_str(), block, worst);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, KokkosMatchesCpu,
    ::testing::Values(Case{"wave_periodic", "WaveDemo", "par/wave.edl", true},
                      Case{"wave_radiative", "WaveDemo", "par/wave.edl", false},
                      Case{"maxwell", "MaxwellDemo", "par/maxwell.edl", true},
                      Case{"advect", "AdvectDemo", "par/advect.edl", true},
                      Case{"microbench", "MicroBench", "par/microbench.edl", false}),
    [](const auto& info) { return info.param.name; });

// The BSSN gauge wave (par/bssn/bssn.edl, amplitude 0.1, 1+log slicing and Gamma-driver shift,
// Kreiss-Oliger dissipation) after 10 RK4 steps.
TEST(KokkosMatchesCpuBssn, GaugeWaveAfterTenSteps) {
  std::string why;
  if (!runtime::kokkos::available(&why)) GTEST_SKIP() << why;
  const Case c{"bssn", "SaguaroBSSN", "par/bssn/bssn.edl", true};
  SharedTempDir dir("kokkos_bssn");
  const std::string par = dir.path() + "/run.par";
  const Settings physics = {
      {"Saguaro::fd_order", "4"}, {"SaguaroBSSN::gwAmp", "0.1"}, {"SaguaroBSSN::epsdiss", "0.1"}};
  auto with = [&](Settings s) {
    s.insert(physics.begin(), physics.end());
    return s;
  };
  write_file(par, case_par(c, dir.path(), with({{"Saguaro::backend", quoted("cpu")}})));
  const auto reference = run_case(par);
  write_file(par, case_par(c, dir.path(), with({{"Saguaro::backend", quoted("kokkos")}})));
  const double worst = expect_close(reference, run_case(par), kTolerance);
  if (world_rank() == 0)
    std::printf("[ info ] bssn: largest relative difference Kokkos vs CPU %.3g\n", worst);
}

} // namespace
} // namespace saguaro::test
