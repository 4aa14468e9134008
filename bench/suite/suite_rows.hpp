// What bench_suite's files share: the options and the context of a run, the CPU reference and
// the patch a row runs on, the whole step's description and result, and the functions one file
// defines and another calls (each described where it is defined). bench_suite.cpp runs the suite
// and writes the references, the manifest, the JSON and the table; suite_rows.cpp the right-hand
// side's rows (Saguaro, Kokkos, naive CUDA) and the checking and timing every row shares;
// whole_step.cpp the whole step's runs and the naive whole step.
#pragma once

#include "../common/benchmarks.hpp"
#include "../common/patch.hpp"
#include "mapper/mapper.hpp"
#include "model/device.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::bench::suite {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr double kTolerance = 1e-10; // relative, against the CPU reference

struct Options {
  int n = 256;
  std::string data = "build/bench-suite", json_path, device_path = "auto", cache;
  int repeats = 30, batch = 10, warmup = 5, step_iterations = 25;
  std::vector<std::string> benchmarks;
  bool reference_only = false, step = true;
  std::string command;
};

// ---- files (bench_suite.cpp) ---------------------------------------------------------------

void write_text(const fs::path& path, const std::string& text);

// ---- arrays, timing and the roofline (suite_rows.cpp) --------------------------------------

std::vector<double> interior(const std::vector<double>& full, const std::array<int, 3>& alloc,
                             int pitch, int g, const std::array<int, 3>& size);
std::vector<double> interior(const std::vector<double>& full, const runtime::KernelArgs& args,
                             int g, int n);
std::vector<double> download(runtime::ArraySpace& space, const double* array, std::size_t points);
double relative_error(const std::vector<double>& x, const std::vector<double>& ref);
json statistics(const std::vector<double>& samples);
std::vector<double> time_batches(const Options& opt, const std::function<void()>& evaluate,
                                 runtime::ArraySpace& space);
std::string naive_source();
json triad_bandwidth(runtime::cuda::KernelModule& module, runtime::ArraySpace& space, int repeats);

// ---- one benchmark -------------------------------------------------------------------------

struct Reference {
  std::vector<std::string> outputs;        // grid function names
  std::vector<int> output_gf;              // their Calculation::grid_functions indices
  std::vector<std::vector<double>> values; // interior, per output
};

struct Patch {
  runtime::ArraySpace* space = nullptr;
  std::vector<double*> arrays;
  runtime::KernelArgs args;
  Patch(const calc::Program& program, const calc::Calculation& calc, int n, runtime::ArraySpace& s,
        const bench::PatchFill& fill)
      : space(&s) {
    args = bench::device_patch(program, calc, n, s, arrays, fill);
  }
  ~Patch() {
    for (double* d : arrays) space->release(d);
  }
  Patch(const Patch&) = delete;
  Patch& operator=(const Patch&) = delete;
};

struct Context {
  Options opt;
  std::optional<model::Device> device; // the model's description of this GPU
  std::string device_path;
  double triad_Bps = 0;
  double fp64_peak = 0; // [FLOP/s] from the description (0: none)
  bool failed = false;  // a system disagreed with the reference
};

// The right-hand side's rows and the FP64 peak they are rated against (suite_rows.cpp).
double fp64_peak_flops(const model::Device& d);
json run_saguaro(Context& ctx, const bench::Benchmark& b, const bench::LoadedBenchmark& lb,
                 mapper::Method method, bool finish, const Reference& ref, double bytes);
json run_kokkos(Context& ctx, const bench::Benchmark& b, const bench::LoadedBenchmark& lb,
                const Reference& ref, double bytes);
json run_naive(Context& ctx, runtime::cuda::KernelModule& module, const bench::Benchmark& b,
               const bench::LoadedBenchmark& lb, const Reference& ref, double bytes);

// ---- the whole step ------------------------------------------------------------------------

// A whole step: a periodic n^3 box of a benchmark's equations at its fd order, RK4, as the
// `saguaro` driver runs it. `settings` are the EDL thorn's parameters set in the .par (the
// benchmark patch's overrides and the initial data's).
struct WholeStep {
  std::string thorns; // ActiveThorns
  std::map<std::string, double> settings;
  std::string initial_data; // what the initial data is, for the manifest
};

struct StepRun {
  std::vector<std::string> variables;     // the evolved grid functions
  std::vector<std::vector<double>> state; // per variable, over the owned points (n^3)
  std::vector<double> step_seconds;
  std::string log;
  std::string variant; // "time tile 32x8x128 (...)" or "plain" (Saguaro::time_tile's decision)
  double dt = 0;
  std::array<double, 3> spacing{};
  std::array<int, 3> points{};
};

// The whole step's runs and the naive whole step (whole_step.cpp).
std::optional<WholeStep> whole_step_of(const bench::Benchmark& b);
StepRun run_steps(const Options& opt, const bench::Benchmark& b, const std::string& thorn,
                  const WholeStep& ws, const std::string& backend, const std::string& mapper,
                  int iterations, const std::string& cache);
double step_error(const StepRun& got, const StepRun& ref);
json naive_step(Context& ctx, runtime::cuda::KernelModule& module, const StepRun& s0,
                const StepRun& s1);

} // namespace saguaro::bench::suite
