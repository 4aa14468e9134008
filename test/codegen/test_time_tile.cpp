// The time-tiled step (calc/time_tile.hpp, codegen/cuda_time_tile.hpp) without a GPU: the
// generated kernel runs on the CPU (cuda_emulator.hpp: real threads, real barriers) and one
// step of it must equal the plain step, the reference interpreter's right-hand side and the
// stage combinations, to 1e-12 relative on a periodic box whose sides the tile does not divide;
// NVRTC compiles it for sm_90 without spills; what cannot be time-tiled is refused with why.
#include <gtest/gtest.h>

#include "calc/lower.hpp"
#include "calc/time_tile.hpp"
#include "codegen/cuda_time_tile.hpp"
#include "cuda_emulator.hpp"
#include "edl/parser.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"
#include "runtime/runtime_support.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace saguaro::test {
namespace {

calc::Program load(const std::string& file, int fd_order) {
  return calc::lower(edl::parse_file(std::string(SAGUARO_SOURCE_DIR) + "/" + file),
                     calc::LowerOptions{fd_order});
}

const calc::Calculation& rhs_of(const calc::Program& p) {
  for (const calc::Calculation& c : p.calculations)
    if (c.schedule_bin == "MoL_CalcRHS") return c;
  throw std::runtime_error("no right-hand side");
}

std::vector<std::string> rhs_names(const calc::Program& p) {
  std::vector<std::string> out;
  for (const std::string& v : p.evolved) out.push_back(v + "rhs");
  return out;
}

// A sub-diagonal tableau: a (stages - 1 entries) and b (stages), as p/q pairs.
struct Tableau {
  std::vector<std::array<int, 2>> a, b;
};
const Tableau kRK4{{{1, 2}, {1, 2}, {1, 1}}, {{1, 6}, {1, 3}, {1, 3}, {1, 6}}};
const Tableau kMidpoint{{{1, 2}}, {{0, 1}, {1, 1}}};
const Tableau kEuler{{}, {{1, 1}}};

// One step of `tableau` on a periodic box of `n` points (ghost width = the radius), both ways;
// returns max |time-tiled - plain| / max |plain| over the evolved variables.
// How a test runs the generated kernel: (kernel, plan, grid, its 5 V arrays in the calling
// convention's order, an empty one passed as null, the launch's argument pointers given the
// array pointers). The arrays hold the kernel's results afterwards.
using Arguments = std::function<std::vector<void*>(std::vector<double*>&)>;
using Runner = std::function<void(const codegen::TimeTileKernel&, const calc::TimeTilePlan&,
                                  std::array<unsigned, 3>, std::vector<std::vector<double>>&,
                                  const Arguments&)>;

// On the CPU, by the emulator.
void emulated(const codegen::TimeTileKernel& k, const calc::TimeTilePlan& plan,
              std::array<unsigned, 3> grid, std::vector<std::vector<double>>& arrays,
              const Arguments& arguments) {
  // A directory per test: ctest runs the tests as processes in parallel, and the emulator's
  // files are numbered per process.
  CudaEmulator emu(k, int(plan.state.size()),
                   ::testing::TempDir() + "/time_tile_" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::vector<double*> pointers;
  for (auto& a : arrays) pointers.push_back(a.empty() ? nullptr : a.data());
  std::vector<void*> launch = arguments(pointers);
  emu.launch(k.name, grid, {unsigned(plan.threads()), 1}, launch.data());
}

// On the GPU, compiled by NVRTC.
void on_gpu(const codegen::TimeTileKernel& k, const calc::TimeTilePlan& plan,
            std::array<unsigned, 3> grid, std::vector<std::vector<double>>& arrays,
            const Arguments& arguments) {
  runtime::ArraySpace& space = runtime::cuda::device_space();
  std::vector<double*> pointers;
  for (auto& a : arrays) {
    pointers.push_back(a.empty() ? nullptr : space.allocate(a.size()));
    if (!a.empty()) space.from_host(pointers.back(), a.data(), a.size());
  }
  runtime::cuda::KernelModule module(k.source);
  std::vector<void*> launch = arguments(pointers);
  module.launch(k.name, grid, {unsigned(plan.threads()), 1, 1}, launch.data(), k.shared_bytes);
  for (std::size_t i = 0; i < arrays.size(); ++i)
    if (!arrays[i].empty()) space.to_host(arrays[i].data(), pointers[i], arrays[i].size());
  space.synchronize();
  for (double* p : pointers)
    if (p) space.release(p);
}

// `parts`: the stages per kernel (calc::time_tile_splits' form; empty: all in one kernel).
double step_difference(const calc::Program& program, const Tableau& tableau,
                       const calc::TimeTile& tile, std::array<int, 3> n,
                       const Runner& run = emulated, std::vector<int> parts = {}) {
  const calc::Calculation& c = rhs_of(program);
  const int S = int(tableau.b.size());
  if (parts.empty()) parts = {S};
  const calc::TimeTilePlan plan =
      calc::plan_time_tile(c, program.evolved, rhs_names(program), S, tile, 1, parts.front());
  const int V = int(plan.state.size());
  const int gw = std::max({c.radius[0], c.radius[1], c.radius[2]});
  runtime::KernelArgs args;
  for (int a = 0; a < 3; ++a) {
    args.lo[a] = gw;
    args.hi[a] = gw + n[a];
    args.alloc[a] = n[a] + 2 * gw;
  }
  args.pitch = args.alloc[0] + 3; // a padded row
  args.spacing = {0.11, 0.13, 0.12};
  args.parameters.assign(program.parameters.size(), 0.7);
  const std::size_t points = args.array_points();
  const double dt = 0.02;
  auto at = [&](int i, int j, int k) {
    return std::size_t(k) * args.alloc[1] * args.pitch + std::size_t(j) * args.pitch + i;
  };
  auto wrap = [&](std::vector<double>& f) { // periodic ghosts
    for (int k = 0; k < args.alloc[2]; ++k)
      for (int j = 0; j < args.alloc[1]; ++j)
        for (int i = 0; i < args.alloc[0]; ++i) {
          auto w = [&](int x, int a) { return gw + ((x - gw) % n[a] + n[a]) % n[a]; };
          f[at(i, j, k)] = f[at(w(i, 0), w(j, 1), w(k, 2))];
        }
  };
  std::vector<std::vector<double>> y(V, std::vector<double>(points, 0.0));
  for (int v = 0; v < V; ++v)
    for (int k = gw; k < gw + n[2]; ++k)
      for (int j = gw; j < gw + n[1]; ++j)
        for (int i = gw; i < gw + n[0]; ++i)
          y[v][at(i, j, k)] = std::sin(0.7 * i + 0.3 * v) * std::cos(0.5 * j - 0.2 * k) +
                              0.1 * noise(at(i, j, k), v);
  auto coefficient = [dt](std::array<int, 2> r) { return (dt * r[0]) / r[1]; };

  // The plain step: k_s = f(Y_s) by the interpreter, then the combinations.
  auto reference = runtime::make_backend("interpreter", {})->compile(program);
  std::size_t index = 0;
  while (&program.calculations[index] != &c) ++index;
  std::vector<std::vector<double>> Y = y, acc = y, k(V, std::vector<double>(points, 0.0));
  std::vector<std::vector<double>> storage(c.grid_functions.size(),
                                           std::vector<double>(points, 0.0));
  for (int s = 0; s < S; ++s) {
    for (int v = 0; v < V; ++v) wrap(Y[v]);
    runtime::KernelArgs ra = args;
    ra.fields.clear();
    for (std::size_t g = 0; g < c.grid_functions.size(); ++g)
      ra.fields.push_back(storage[g].data());
    for (int v = 0; v < V; ++v) ra.fields[std::size_t(plan.state[v])] = Y[v].data();
    for (int v = 0; v < V; ++v)
      ra.fields[std::size_t(c.stages[0].stores[std::size_t(plan.rhs[v])].grid_function)] =
          k[v].data();
    reference[index]->run(ra);
    for (int v = 0; v < V; ++v)
      for (std::size_t p = 0; p < points; ++p) {
        acc[v][p] = (s == 0 ? y[v][p] : acc[v][p]) + coefficient(tableau.b[s]) * k[v][p];
        if (s + 1 < S) Y[v][p] = y[v][p] + coefficient(tableau.a[s]) * k[v][p];
      }
  }

  // The time-tiled step: its parts in turn, Y_{l+1} and the accumulator between them.
  std::vector<std::vector<double>> out(V, std::vector<double>(points, 0.0));
  std::vector<std::vector<double>> carried_y, carried_acc;
  codegen::CudaGeometry g = runtime::cuda::geometry_of(args);
  std::vector<double> ta, tb;
  for (int s = 0; s < S; ++s) {
    tb.push_back(coefficient(tableau.b[s]));
    if (s + 1 < S) ta.push_back(coefficient(tableau.a[s]));
  }
  codegen::TimeTileTableau tab = codegen::time_tile_tableau(ta, tb);
  int first = 1;
  for (int count : parts) {
    const calc::TimeTilePlan part =
        calc::plan_time_tile(c, program.evolved, rhs_names(program), S, tile, first, count);
    const codegen::TimeTileKernel kernel =
        codegen::generate_time_tile_cuda(c, part, "saguaro_time_tiled_step");
    EXPECT_EQ(kernels_not_waiting_first(kernel.source), std::vector<std::string>{});
    std::vector<double> parameters;
    for (int q : kernel.parameters) parameters.push_back(args.parameters[std::size_t(q)]);
    // y, x, acc, y_out, acc_out; what a part does not take stays empty (null).
    std::vector<std::vector<double>> arrays = y;
    for (int v = 0; v < V; ++v) arrays.push_back(first > 1 ? carried_y[v] : std::vector<double>{});
    for (int v = 0; v < V; ++v)
      arrays.push_back(first > 1 ? carried_acc[v] : std::vector<double>{});
    for (int v = 0; v < V; ++v) arrays.emplace_back(points, 0.0);
    for (int v = 0; v < V; ++v)
      arrays.push_back(part.ends_step() ? std::vector<double>{} : std::vector<double>(points, 0.0));
    run(kernel, part, codegen::time_tile_grid(part, args.lo, args.hi), arrays,
        [&](std::vector<double*>& pointers) {
          std::vector<void*> launch;
          for (double*& p : pointers) launch.push_back(&p);
          launch.push_back(&g);
          launch.push_back(&tab);
          for (double& p : parameters) launch.push_back(&p);
          return launch;
        });
    if (part.ends_step()) {
      out.assign(arrays.begin() + 3 * V, arrays.begin() + 4 * V);
    } else {
      carried_y.assign(arrays.begin() + 3 * V, arrays.begin() + 4 * V);
      carried_acc.assign(arrays.begin() + 4 * V, arrays.end());
    }
    first += count;
  }
  double diff = 0, scale = 0;
  for (int v = 0; v < V; ++v)
    for (int kk = gw; kk < gw + n[2]; ++kk)
      for (int j = gw; j < gw + n[1]; ++j)
        for (int i = gw; i < gw + n[0]; ++i) {
          const std::size_t p = at(i, j, kk);
          diff = std::max(diff, std::fabs(out[v][p] - acc[v][p]));
          scale = std::max(scale, std::fabs(acc[v][p]));
        }
  return diff / scale;
}

TEST(TimeTile, TheWaveEquationsRK4StepEqualsThePlainStep) {
  const calc::Program wave2 = load("par/wave.edl", 2);
  EXPECT_LT(step_difference(wave2, kRK4, {4, 3, 5}, {10, 9, 11}), 1e-12);
  const calc::Program wave4 = load("par/wave.edl", 4);
  EXPECT_LT(step_difference(wave4, kRK4, {3, 2, 4}, {9, 13, 7}), 1e-12);
}

TEST(TimeTile, OtherTableausAndMaxwellEqualThePlainStep) {
  const calc::Program wave2 = load("par/wave.edl", 2);
  EXPECT_LT(step_difference(wave2, kMidpoint, {5, 4, 3}, {11, 8, 10}), 1e-12);
  EXPECT_LT(step_difference(wave2, kEuler, {4, 4, 4}, {8, 9, 6}), 1e-12);
  const calc::Program maxwell = load("par/maxwell.edl", 2);
  EXPECT_LT(step_difference(maxwell, kRK4, {4, 3, 6}, {9, 10, 8}), 1e-12);
}

// A step in two parts (Y_{l+1} and the accumulator stored by the first, loaded by the second)
// equals the plain step at every cut, and with stencils of radius 1 and 2.
TEST(TimeTile, AStepInTwoPartsEqualsThePlainStep) {
  const calc::Program wave4 = load("par/wave.edl", 4);
  EXPECT_LT(step_difference(wave4, kRK4, {5, 3, 4}, {9, 13, 7}, emulated, {2, 2}), 1e-12);
  EXPECT_LT(step_difference(wave4, kRK4, {4, 2, 3}, {10, 7, 9}, emulated, {1, 3}), 1e-12);
  const calc::Program wave2 = load("par/wave.edl", 2);
  EXPECT_LT(step_difference(wave2, kRK4, {4, 3, 5}, {10, 9, 11}, emulated, {3, 1}), 1e-12);
  EXPECT_LT(step_difference(wave2, kMidpoint, {5, 4, 3}, {11, 8, 10}, emulated, {1, 1}), 1e-12);
  const calc::Program maxwell = load("par/maxwell.edl", 4);
  EXPECT_LT(step_difference(maxwell, kRK4, {4, 3, 6}, {9, 10, 8}, emulated, {2, 2}), 1e-12);
}

TEST(TimeTile, OnTheGpuTheStepEqualsThePlainStep) {
  std::string why;
  if (!runtime::cuda::available(&why)) GTEST_SKIP() << why;
  const calc::Program wave2 = load("par/wave.edl", 2);
  EXPECT_LT(step_difference(wave2, kRK4, {32, 8, 128}, {70, 37, 150}, on_gpu), 1e-12);
  EXPECT_LT(step_difference(wave2, kRK4, {16, 16, 64}, {33, 40, 29}, on_gpu), 1e-12);
  const calc::Program wave4 = load("par/wave.edl", 4);
  EXPECT_LT(step_difference(wave4, kRK4, {16, 8, 64}, {40, 24, 50}, on_gpu), 1e-12);
  EXPECT_LT(step_difference(wave4, kRK4, {32, 8, 64}, {70, 37, 90}, on_gpu, {2, 2}), 1e-12);
}

TEST(TimeTile, NvrtcCompilesTheWaveStepWithoutSpills) {
  if (!runtime::cuda::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  const calc::Program wave2 = load("par/wave.edl", 2);
  const calc::Calculation& c = rhs_of(wave2);
  const calc::TimeTilePlan plan =
      calc::plan_time_tile(c, wave2.evolved, rhs_names(wave2), 4, {32, 8, 128});
  EXPECT_EQ(plan.threads(), 40 * 16);
  const codegen::TimeTileKernel k = codegen::generate_time_tile_cuda(c, plan, "wave_step");
  runtime::cuda::CompileOptions options;
  options.cache_dir = ::testing::TempDir() + "/time_tile_nvrtc";
  const runtime::cuda::CompiledModule m = runtime::cuda::compile(k.source, "sm_90", options);
  ASSERT_TRUE(m.kernels.count("wave_step")) << m.log;
  EXPECT_EQ(m.kernels.at("wave_step").spill_stores, 0) << m.log;
  EXPECT_GT(m.kernels.at("wave_step").registers, 0);
}

TEST(TimeTile, WhatCannotBeTimeTiledIsRefusedWithTheReason) {
  const calc::Program wave2 = load("par/wave.edl", 2);
  const calc::Calculation& rhs = rhs_of(wave2);
  EXPECT_EQ(calc::time_tile_obstacle(rhs, wave2.evolved, rhs_names(wave2), 4), "");
  const calc::Calculation* energy = nullptr;
  for (const calc::Calculation& c : wave2.calculations)
    if (c.name == "wave_energy") energy = &c;
  ASSERT_NE(energy, nullptr);
  EXPECT_NE(calc::time_tile_obstacle(*energy, wave2.evolved, rhs_names(wave2), 4)
                .find("does not compute the right-hand side of phi"),
            std::string::npos);
  EXPECT_NE(calc::time_tile_obstacle(rhs, {"phi"}, {"phirhs"}, 4).find("pirhs"), std::string::npos);
  EXPECT_THROW(calc::plan_time_tile(rhs, wave2.evolved, rhs_names(wave2), 4, {64, 32, 64}),
               std::invalid_argument); // 72 x 40 threads
  // The 8th-order stencil's halo (4 stages x radius 4) leaves no tile worth taking, nor does
  // the 4th-order one's; two stages of the 4th-order stencil (halo 4) do.
  EXPECT_TRUE(calc::time_tile_candidates(rhs_of(load("par/wave.edl", 8)), 4).empty());
  EXPECT_TRUE(calc::time_tile_candidates(rhs_of(load("par/wave.edl", 4)), 4).empty());
  EXPECT_FALSE(calc::time_tile_candidates(rhs_of(load("par/wave.edl", 4)), 2).empty());
  EXPECT_FALSE(calc::time_tile_candidates(rhs, 4).empty());
  // Parts: inside the step, and what they move.
  EXPECT_THROW(calc::plan_time_tile(rhs, wave2.evolved, rhs_names(wave2), 4, {32, 8, 64}, 3, 3),
               std::invalid_argument);
  const calc::TimeTilePlan second =
      calc::plan_time_tile(rhs, wave2.evolved, rhs_names(wave2), 4, {32, 8, 64}, 3, 2);
  EXPECT_TRUE(second.ends_step());
  EXPECT_EQ(second.arrays_read(), 3);
  EXPECT_EQ(second.arrays_written(), 1);
  EXPECT_EQ(second.halo(0), 2);
  EXPECT_EQ(second.text(), "time tile 32x8x64 (stages 3-4 of 4, halo 2x2, 432 threads)");
  const calc::TimeTilePlan first =
      calc::plan_time_tile(rhs, wave2.evolved, rhs_names(wave2), 4, {32, 8, 64}, 1, 2);
  EXPECT_FALSE(first.ends_step());
  EXPECT_EQ(first.arrays_read(), 1);
  EXPECT_EQ(first.arrays_written(), 2);
  // A last part of one stage needs Y_4 and the accumulator, not the state.
  const calc::TimeTilePlan last =
      calc::plan_time_tile(rhs, wave2.evolved, rhs_names(wave2), 4, {32, 8, 64}, 4, 1);
  EXPECT_FALSE(last.reads_state());
  EXPECT_EQ(last.arrays_read(), 2);
  EXPECT_EQ(last.arrays_read_grown(), 1);
  EXPECT_TRUE(second.reads_state());
  EXPECT_EQ(calc::time_tile_splits(4),
            (std::vector<std::vector<int>>{{4}, {1, 3}, {2, 2}, {3, 1}}));
  EXPECT_EQ(calc::time_tile_splits(1), (std::vector<std::vector<int>>{{1}}));
}

TEST(TimeTile, NvrtcCompilesTheFourthOrderWavesPartsWithoutSpills) {
  if (!runtime::cuda::built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  const calc::Program wave4 = load("par/wave.edl", 4);
  const calc::Calculation& c = rhs_of(wave4);
  runtime::cuda::CompileOptions options;
  options.cache_dir = ::testing::TempDir() + "/time_tile_nvrtc_parts";
  for (int first : {1, 3}) {
    const calc::TimeTilePlan plan =
        calc::plan_time_tile(c, wave4.evolved, rhs_names(wave4), 4, {32, 8, 128}, first, 2);
    EXPECT_EQ(plan.threads(), 40 * 16);
    const codegen::TimeTileKernel k = codegen::generate_time_tile_cuda(c, plan, "wave_part");
    const runtime::cuda::CompiledModule m = runtime::cuda::compile(k.source, "sm_90", options);
    ASSERT_TRUE(m.kernels.count("wave_part")) << m.log;
    EXPECT_EQ(m.kernels.at("wave_part").spill_stores, 0) << m.log;
  }
}

} // namespace
} // namespace saguaro::test
