// The generated time-tiled RK4 step (calc/time_tile.hpp) of a periodic n^3 box against the
// STREAM triad measured in the same process: for the wave equation at fd order 2 and 4, every
// cut of the step into parts (calc::time_tile_splits: the whole step, two parts) and every tile
// calc::time_tile_candidates offers for each part, the median of 11 timings of 10 back-to-back
// launches (CUDA events), the effective bandwidth of the part's compulsory traffic (what it
// reads and writes once: calc::TimeTilePlan::arrays_read + arrays_written per variable; a whole
// step 2 x variables x n^3 doubles). Per cut, the sum of its parts' fastest tiles. Correctness is
// the tests' (test/codegen/test_time_tile.cpp, on the CPU and on the GPU). Beside each, the model's
// prediction (model/time_tile.hpp) with ptxas's registers, from the GPU's configs/devices/
// description. On the GPU machine:
//   build/bin/bench_time_tile [n]
#include "calc/lower.hpp"
#include "calc/time_tile.hpp"
#include "codegen/cuda_time_tile.hpp"
#include "edl/parser.hpp"
#include "model/time_tile.hpp"
#include "runtime/cuda.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <cstdlib>
#include <string>
#include <vector>

using namespace saguaro;

namespace {

const char* kTriad =
    R"(extern "C" __global__ void triad(double* a, const double* b, const double* c,
                                     double s, unsigned long long n) {
  for (unsigned long long t = blockIdx.x * 256ull + threadIdx.x; t < n; t += gridDim.x * 256ull)
    a[t] = b[t] + s * c[t];
})";

template <class Launch>
double median_seconds(Launch launch) {
  std::vector<double> t;
  launch(); // warm-up
  for (int r = 0; r < 11; ++r) t.push_back(launch());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const int g = 4; // ghost width: the arrays as a run allocates them for fd order 8
  runtime::ArraySpace& space = runtime::cuda::device_space();
  const std::size_t points = std::size_t(n + 2 * g) * (n + 2 * g) * (n + 2 * g);
  const runtime::cuda::DeviceInfo info = runtime::cuda::device_info();
  fmt::print("# {} (driver {}, NVRTC {}), {}^3 periodic, ghost width {}\n", info.name,
             info.driver_version, runtime::cuda::nvrtc_version(), n, g);

  std::vector<double*> arrays;
  // y, x, acc, y_out, acc_out of 2 variables (codegen/cuda_time_tile.hpp's convention).
  for (int i = 0; i < 2 * codegen::kTimeTileArraysPerVariable; ++i) {
    arrays.push_back(space.allocate(points));
    std::vector<double> init(points);
    for (std::size_t p = 0; p < points; ++p) init[p] = 1e-3 * double((p * 7 + i) % 1013);
    space.from_host(arrays.back(), init.data(), points);
  }
  runtime::cuda::KernelModule triad(kTriad);
  double s = 1.5;
  unsigned long long count = points;
  void* targs[] = {&arrays[0], &arrays[1], &arrays[2], &s, &count};
  const double triad_s = median_seconds([&] {
    return triad.time("triad", {132 * 8, 1, 1}, {256, 1, 1}, targs, 10) / 10;
  });
  const double triad_bw = 3.0 * 8 * double(points) / triad_s;
  fmt::print("triad: {:.1f} us, {:.0f} GB/s\n\n", triad_s * 1e6, triad_bw / 1e9);
  const std::string description = model::find_device_description(info.name);
  const std::optional<model::Device> device =
      description.empty() ? std::nullopt : std::optional(model::load_device(description));
  fmt::print("| stencil | stages | tile | threads | shared | registers | time [ms] | GB/s | "
             "% triad | predicted [ms] | error |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::string> cuts; // per cut: its parts' fastest tiles

  codegen::CudaGeometry geometry{};
  for (int a = 0; a < 3; ++a) {
    geometry.alloc[a] = n + 2 * g;
    geometry.lo[a] = g;
    geometry.hi[a] = g + n;
    geometry.spacing[a] = 1.0 / n;
  }
  geometry.pitch = n + 2 * g;
  const double dt = 0.25 / n;
  codegen::TimeTileTableau tab = codegen::time_tile_tableau(
      {(dt * 1) / 2, (dt * 1) / 2, dt}, {(dt * 1) / 6, (dt * 1) / 3, (dt * 1) / 3, (dt * 1) / 6});
  for (int order : {2, 4}) {
    const calc::Program program =
        calc::lower(edl::parse_file(std::string(SAGUARO_SOURCE_DIR) + "/par/wave.edl"),
                    calc::LowerOptions{order});
    const calc::Calculation* rhs = nullptr;
    for (const calc::Calculation& c : program.calculations)
      if (c.schedule_bin == "MoL_CalcRHS") rhs = &c;
    std::vector<std::string> rhs_names;
    for (const std::string& v : program.evolved) rhs_names.push_back(v + "rhs");
    for (const std::vector<int>& split : calc::time_tile_splits(4)) {
      int first = 1;
      double cut_ms = 0;
      std::string cut_tiles;
      for (int count : split) {
        double best = 1e30;
        std::string best_tile;
        for (const calc::TimeTile& tile : calc::time_tile_candidates(*rhs, count)) {
          const calc::TimeTilePlan plan =
              calc::plan_time_tile(*rhs, program.evolved, rhs_names, 4, tile, first, count);
          const codegen::TimeTileKernel k =
              codegen::generate_time_tile_cuda(*rhs, plan, "saguaro_step");
          runtime::cuda::KernelModule module(k.source);
          std::vector<double> parameters(k.parameters.size(), 1.0);
          std::vector<double*> pointers = arrays;
          std::vector<void*> args;
          for (double*& p : pointers) args.push_back(&p);
          args.push_back(&geometry);
          args.push_back(&tab);
          for (double& p : parameters) args.push_back(&p);
          const auto grid = codegen::time_tile_grid(plan, {g, g, g}, {g + n, g + n, g + n});
          const double step = median_seconds([&] {
            return module.time(k.name, grid, {unsigned(k.threads), 1, 1}, args.data(), 10,
                               k.shared_bytes) /
                   10;
          });
          const double bytes = double(plan.arrays_read() + plan.arrays_written()) *
                               double(plan.state.size()) * 8.0 * double(n) * n * n;
          const runtime::cuda::PtxasReport& r = module.resources().at(k.name);
          std::string predicted = "n/a | n/a";
          if (device) {
            model::CompiledResources compiled;
            compiled.registers = r.registers;
            compiled.spill_bytes = r.spill_stores + r.spill_loads;
            const model::TimeTilePrediction p =
                model::predict_time_tile(*rhs, plan, {n, n, n}, *device, compiled);
            predicted = fmt::format("{:.3f} ({}) | {:+.1f}%", p.seconds * 1e3, p.limiter,
                                    100 * (p.seconds - step) / step);
          }
          const std::string stages =
              count == 4 ? "1-4" : fmt::format("{}-{} of 4", first, first + count - 1);
          fmt::print(
              "| fd{} | {} | {}x{}x{} | {} | {} B | {}{} | {:.3f} | {:.0f} | {:.1f}% | {} |\n",
              order, stages, tile.tx, tile.ty, tile.nz, k.threads, k.shared_bytes, r.registers,
              r.spill_stores + r.spill_loads > 0
                  ? fmt::format(" ({} B spilled)", r.spill_stores + r.spill_loads)
                  : "",
              step * 1e3, bytes / step / 1e9, 100.0 * bytes / step / triad_bw, predicted);
          if (step < best) {
            best = step;
            best_tile = fmt::format("{}x{}x{}", tile.tx, tile.ty, tile.nz);
          }
        }
        if (best_tile.empty()) {
          cut_ms = -1;
          break;
        }
        cut_ms += best * 1e3;
        cut_tiles += (cut_tiles.empty() ? "" : " + ") + best_tile;
        first += count;
      }
      cuts.push_back(fmt::format("fd{} cut {}: {}", order, fmt::join(split, "+"),
                                 cut_ms < 0 ? std::string("no tile")
                                            : fmt::format("{:.3f} ms ({})", cut_ms, cut_tiles)));
    }
  }
  fmt::print("\nThe step per cut (the fastest tile of each part):\n");
  for (const std::string& c : cuts) fmt::print("  {}\n", c);
  for (double* p : arrays) space.release(p);
  return 0;
}
