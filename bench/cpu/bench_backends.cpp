// Points per second of the generated C++ backend against the reference interpreter, for
// every calculation of an EDL file on an N^3 patch (default: par/wave.edl, 128^3).
//
//   bench_backends [FILE.edl] [N] [--threads T]    prints a table; JSON with --json FILE
//
// Each backend runs each calculation after one warm-up: the C++ backend 15 times, the
// interpreter 3 times (it is some hundred times slower); the median is reported.
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace saguaro;

namespace {

struct Result {
  std::string calc, backend;
  double seconds = 0, points_per_second = 0;
  int reps = 0;
  bool reference = false; // the interpreter's: the speed-ups are over it
};

// The backends compared, with their repeats (the interpreter is slow) and the reference.
struct Compared {
  const char* name;
  int reps;
  bool reference;
};

} // namespace

int main(int argc, char** argv) {
  std::string file = std::string(SAGUARO_SOURCE_DIR) + "/par/wave.edl", json;
  int n = 128;
  std::vector<std::string> positional;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--json") && a + 1 < argc)
      json = argv[++a];
    else if (!std::strcmp(argv[a], "--threads") && a + 1 < argc)
      omp_set_num_threads(std::atoi(argv[++a]));
    else
      positional.push_back(argv[a]);
  }
  if (positional.size() > 0) file = positional[0];
  if (positional.size() > 1) n = std::atoi(positional[1].c_str());

  calc::Program program = calc::lower(edl::parse_file(file), calc::LowerOptions{4});
  int ghost = 1;
  for (const auto& c : program.calculations)
    ghost = std::max(ghost, runtime::required_margin(c).max());
  const int m = n + 2 * ghost;
  const std::size_t points = std::size_t(m) * m * m;
  std::vector<double> params;
  for (const auto& p : program.parameters) params.push_back(p.default_value);

  std::vector<Result> results;
  for (const Compared& compared : {Compared{"cpu", 15, false}, Compared{"interpreter", 3, true}}) {
    const std::string backend_name = compared.name;
    auto backend = runtime::make_backend(backend_name, runtime::BackendOptions{});
    auto kernels = backend->compile(program);
    for (std::size_t c = 0; c < program.calculations.size(); ++c) {
      const calc::Calculation& calc = program.calculations[c];
      std::vector<std::vector<double>> storage(calc.grid_functions.size());
      runtime::KernelArgs args;
      for (std::size_t f = 0; f < storage.size(); ++f) {
        storage[f].resize(points);
        for (std::size_t p = 0; p < points; ++p)
          storage[f][p] = 1.0 + 0.1 * std::sin(0.001 * double(p) + double(f));
        args.fields.push_back(storage[f].data());
      }
      args.alloc = {m, m, m};
      args.lo = {ghost, ghost, ghost};
      args.hi = {ghost + n, ghost + n, ghost + n};
      args.spacing = {1.0 / n, 1.0 / n, 1.0 / n};
      args.parameters = params;
      const int reps = compared.reps;
      kernels[c]->run(args); // warm-up: first touch, caches
      std::vector<double> times;
      for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        kernels[c]->run(args);
        times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      Result res{calc.name, backend_name, runtime::median(times), 0, reps, compared.reference};
      res.points_per_second = double(n) * n * n / res.seconds;
      results.push_back(res);
    }
  }

  fmt::print("{} at {}^3, {} OpenMP threads\n", file, n, omp_get_max_threads());
  fmt::print("{:<16} {:<12} {:>12} {:>16} {:>10}\n", "calculation", "backend", "median [s]",
             "points/s", "speed-up");
  for (const Result& r : results) {
    double interp = 0;
    for (const Result& o : results)
      if (o.calc == r.calc && o.reference) interp = o.seconds;
    fmt::print("{:<16} {:<12} {:>12.4g} {:>16.4g} {:>9.1f}x\n", r.calc, r.backend, r.seconds,
               r.points_per_second, interp / r.seconds);
  }
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\n  \"file\": \"" << file << "\",\n  \"n\": " << n
        << ",\n  \"threads\": " << omp_get_max_threads() << ",\n  \"results\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i)
      out << fmt::format(
          "    {{\"calculation\": \"{}\", \"backend\": \"{}\", \"median_s\": {:.6g}, "
          "\"points_per_s\": {:.6g}, \"reps\": {}}}{}\n",
          results[i].calc, results[i].backend, results[i].seconds, results[i].points_per_second,
          results[i].reps, i + 1 < results.size() ? "," : "");
    out << "  ]\n}\n";
  }
  return 0;
}
