// Helpers for whole-simulation tests: a temporary directory shared by the ranks, .par files
// written into it (the standing wave of par/wave.edl among them), runs through the library
// (host::Simulation) on any communicator.
#pragma once

#include "grid/grid.hpp"
#include "mpi_support.hpp"
#include "schedule/simulation.hpp"

#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

namespace saguaro::test {

// Writes `text` to `path` on rank 0 of comm, then everybody proceeds.
inline void write_file(const std::string& path, const std::string& text,
                       MPI_Comm comm = MPI_COMM_WORLD) {
  if (world_rank(comm) == 0) std::ofstream(path) << text;
  MPI_Barrier(comm);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A kernel cache shared by every test of the process, so each program compiles once.
inline std::string test_cache_dir() {
  static const std::string dir = [] {
    auto p = std::filesystem::temp_directory_path() / "saguaro-test-kernel-cache";
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return dir;
}

// Parameter settings, `Thorn::name` -> value as written in a .par file.
using Settings = std::map<std::string, std::string>;

inline std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

// A .par file: `base` with `overrides` replacing or adding settings (a .par file may set
// each parameter once).
inline std::string par_text(const std::string& active, Settings base, const Settings& overrides) {
  for (const auto& [k, v] : overrides) base[k] = v;
  std::string text = "ActiveThorns = " + quoted(active) + "\n";
  for (const auto& [k, v] : base) text += k + " = " + v + "\n";
  return text;
}

// `rel`, a path below the source tree (such as "par/wave.edl"), as an absolute path.
inline std::string source(const std::string& rel) {
  return std::string(SAGUARO_SOURCE_DIR) + "/" + rel;
}

// The standing wave of par/wave.edl on a periodic unit box with N cells per axis, RK4,
// dt = h/4, to t = 1/4 (N steps, so every resolution lands on the same final time).
inline std::string wave_par(int n, int fd_order, const Settings& overrides = {}) {
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

// Runs the .par file on `comm`; `inspect` sees the finished simulation.
inline void run_par(const std::string& par_path, MPI_Comm comm,
                    const std::function<void(host::Simulation&)>& inspect = {}) {
  std::ostringstream log;
  host::Simulation sim(host::load_setup(par_path), comm, log);
  sim.run();
  if (inspect) inspect(sim);
}

// L2 norm over the whole grid of (field - exact(x, y, z)) at the owned points.
inline double l2_error(host::Simulation& sim, const std::string& var,
                       const std::function<double(double, double, double)>& exact) {
  const grid::Patch& p = sim.decomposition().patch();
  const double* u = sim.fields().host(sim.fields().find(var));
  double sum = 0;
  long long n = 0;
  for (int k = p.owned.lo[2]; k < p.owned.hi[2]; ++k)
    for (int j = p.owned.lo[1]; j < p.owned.hi[1]; ++j)
      for (int i = p.owned.lo[0]; i < p.owned.hi[0]; ++i) {
        double e = u[p.linear(i, j, k)] -
                   exact(p.coordinate(0, i), p.coordinate(1, j), p.coordinate(2, k));
        sum += e * e;
        ++n;
      }
  double global_sum = 0;
  long long global_n = 0;
  MPI_Allreduce(&sum, &global_sum, 1, MPI_DOUBLE, MPI_SUM, sim.decomposition().comm());
  MPI_Allreduce(&n, &global_n, 1, MPI_LONG_LONG, MPI_SUM, sim.decomposition().comm());
  return std::sqrt(global_sum / double(global_n));
}

} // namespace saguaro::test
