// The time of one HDF5 output against the length of the run (issue 23): a run's outputs every
// EVERY iterations up to LAST, as the driver makes them (io::write_hdf5 for each output
// variable, one rank, host arrays as the CPU backend hands them over), each output timed, the
// series repeated; prints per output iteration the median over the repetitions and writes them
// as JSON. Acceptance: the output at iteration 800 within 20% of the one at 10.
//
//   bench_hdf5_writes [--cells 24] [--vars 2] [--every 10] [--last 800] [--repeats 9]
//                     [--dir DIR] [--json FILE]
//
// Only io::write_hdf5 is called, whose signature has not changed, so this file builds against
// earlier revisions too (bench/io/run.sh BASE_REV does).
#include "grid/grid.hpp"
#include "io/io.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int option(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}
std::string option(int argc, char** argv, const char* name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int cells = option(argc, argv, "--cells", 24);
  const int vars = option(argc, argv, "--vars", 2);
  const int every = option(argc, argv, "--every", 10);
  const int last = option(argc, argv, "--last", 800);
  const int repeats = option(argc, argv, "--repeats", 9);
  const std::string json = option(argc, argv, "--json", std::string());
  const fs::path dir =
      option(argc, argv, "--dir",
             (fs::temp_directory_path() / ("bench-hdf5-" + std::to_string(getpid()))).string());

  // The standing wave's grid of par/wave.par at `cells`^3, periodic, ghost width 2 (fd order 4).
  saguaro::grid::GridSpec spec;
  spec.points = {cells, cells, cells};
  spec.origin = {0.0, 0.0, 0.0};
  spec.spacing = {1.0 / cells, 1.0 / cells, 1.0 / cells};
  spec.periodic = {true, true, true};
  spec.ghost = 2;
  saguaro::grid::Decomposition decomposition(spec, MPI_COMM_WORLD);
  const saguaro::grid::Patch& patch = decomposition.patch();
  std::vector<std::vector<double>> fields(vars, std::vector<double>(patch.points()));
  for (int v = 0; v < vars; ++v)
    for (std::size_t p = 0; p < fields[v].size(); ++p)
      fields[v][p] = std::sin(0.001 * double(p) + v);
  const std::string parameters(2000, '#'); // a .par file's worth of parameter text

  std::vector<int> iterations;
  for (int it = 0; it <= last; it += every) iterations.push_back(it);
  std::vector<std::vector<double>> seconds(iterations.size()); // [output][repeat]
  for (int r = 0; r < repeats; ++r) {
    fs::remove_all(dir);
    for (std::size_t k = 0; k < iterations.size(); ++k) {
      const int it = iterations[k];
      const auto start = std::chrono::steady_clock::now();
      for (int v = 0; v < vars; ++v)
        saguaro::io::write_hdf5(dir.string(), patch, "WAVEDEMO", "var" + std::to_string(v),
                                fields[v].data(), {it, 0.01 * it, 0.01}, parameters);
      seconds[k].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  fs::remove_all(dir);

  std::printf("HDF5 output of %d variable(s), %d^3 cells (%zu values per dataset), every %d "
              "iterations to %d, %d repetitions; ms per output (all variables), median:\n",
              vars, cells, patch.points(), every, last, repeats);
  std::printf("%10s %10s %10s %10s\n", "iteration", "median", "min", "max");
  for (std::size_t k = 0; k < iterations.size(); ++k) {
    const int it = iterations[k];
    if (it == every || it == last || it % (last / 8 > 0 ? last / 8 : 1) == 0)
      std::printf("%10d %10.3f %10.3f %10.3f\n", it, 1e3 * median(seconds[k]),
                  1e3 * *std::min_element(seconds[k].begin(), seconds[k].end()),
                  1e3 * *std::max_element(seconds[k].begin(), seconds[k].end()));
  }
  const std::size_t first = iterations.size() > 1 ? 1 : 0, final = iterations.size() - 1;
  const double at_first = median(seconds[first]), at_last = median(seconds[final]);
  std::printf("at iteration %d: %.3f ms, at %d: %.3f ms, ratio %.3f\n", iterations[first],
              1e3 * at_first, iterations[final], 1e3 * at_last, at_last / at_first);

  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"cells\": " << cells << ", \"vars\": " << vars << ", \"every\": " << every
        << ", \"last\": " << last << ", \"repeats\": " << repeats
        << ", \"values_per_dataset\": " << patch.points() << ", \"outputs\": [";
    for (std::size_t k = 0; k < iterations.size(); ++k) {
      out << (k ? ", " : "") << "{\"iteration\": " << iterations[k] << ", \"seconds\": [";
      for (std::size_t r = 0; r < seconds[k].size(); ++r) out << (r ? ", " : "") << seconds[k][r];
      out << "]}";
    }
    out << "]}\n";
  }
  MPI_Finalize();
  return 0;
}
