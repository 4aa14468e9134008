// Whole runs of one backend against another (test_gpu_simulation.cpp, test_kokkos_simulation.cpp):
// the example thorns on a small grid for 10 RK4 steps, every variable compared at every valid
// point of this rank.
#pragma once

#include "simulation_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace saguaro::test {

struct Case {
  std::string name, thorn, edl;
  bool periodic;
};

inline std::string case_par(const Case& c, const std::string& dir, const Settings& overrides) {
  Settings base = {
      {"Saguaro::equations", quoted(std::string(SAGUARO_SOURCE_DIR) + "/" + c.edl)},
      {"Saguaro::cache_dir", quoted(test_cache_dir())},
      {"Saguaro::progress_every", "0"},
      {"Cactus::cctk_show_schedule", "no"},
      {"CoordBase::spacing", quoted("numcells")},
      {"CoordBase::ncells_x", "20"},
      {"CoordBase::ncells_y", "14"},
      {"CoordBase::ncells_z", "11"},
      {"CoordBase::xmin", "-0.5"},
      {"CoordBase::ymin", "-0.45"},
      {"CoordBase::zmin", "-0.4"},
      {"Periodic::periodic", c.periodic ? "yes" : "no"},
      {"MoL::ODE_Method", quoted("RK4")},
      {"Time::dtfac", "0.25"},
      {"Cactus::terminate", quoted("iteration")},
      {"Cactus::cctk_itlast", "10"},
      {"IO::out_dir", quoted(dir + "/out")},
  };
  return par_text("Saguaro " + c.thorn, base, overrides);
}

// Every variable of the thorn at the valid points of this rank, after the run; `also` (when
// given) sees the finished simulation too.
inline std::map<std::string, std::vector<double>>
run_case(const std::string& par, const std::function<void(host::Simulation&)>& also = {}) {
  std::map<std::string, std::vector<double>> out;
  run_par(par, MPI_COMM_WORLD, [&](host::Simulation& sim) {
    if (also) also(sim);
    const grid::Patch& p = sim.decomposition().patch();
    const grid::Box v = p.valid();
    for (const std::string& name : sim.setup().program.variables) {
      const double* u = sim.fields().host(sim.fields().find(name));
      std::vector<double>& values = out[name];
      for (int k = v.lo[2]; k < v.hi[2]; ++k)
        for (int j = v.lo[1]; j < v.hi[1]; ++j)
          for (int i = v.lo[0]; i < v.hi[0]; ++i) values.push_back(u[p.linear(i, j, k)]);
    }
  });
  return out;
}

// Every variable of `actual` against `expected` at every valid point, relative to
// max(1, |values|); returns the largest difference.
inline double expect_close(const std::map<std::string, std::vector<double>>& expected_run,
                           const std::map<std::string, std::vector<double>>& actual_run,
                           double tolerance) {
  double worst = 0;
  for (const auto& [name, expected] : expected_run) {
    const std::vector<double>& actual = actual_run.at(name);
    EXPECT_EQ(actual.size(), expected.size()) << name;
    if (actual.size() != expected.size()) continue;
    double max_rel = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      double rel = std::fabs(actual[i] - expected[i]) /
                   std::max({1.0, std::fabs(actual[i]), std::fabs(expected[i])});
      if (!(rel <= max_rel)) {
        max_rel = rel;
        at = i;
      }
    }
    EXPECT_LE(max_rel, tolerance) << name << " at valid point " << at << ": " << actual[at]
                                  << " vs " << expected[at];
    worst = std::max(worst, max_rel);
  }
  return worst;
}

} // namespace saguaro::test
