#include "mapper/queues.hpp"

#include "calc/strategy.hpp"
#include "calc/sums_by_input.hpp"
#include "mapper/occupancy.hpp"
#include "model/model.hpp"

#include <algorithm>
#include <cmath>

namespace saguaro::mapper {

namespace {
// `base` with ptxas's choice of registers, then, where an SM can hold more of its blocks, capped
// at one block per SM more than `needed` registers a thread (what its kernels are expected to
// use) allow.
std::vector<calc::Mapping> uncapped_and_capped(calc::Mapping base, double needed,
                                               const model::Device& device) {
  const int threads = base.kernels.front().block.threads();
  const OccupancyCap full = full_occupancy_cap(device, threads);
  std::vector<calc::Mapping> out{base};
  const int blocks = int(std::floor(device.registers_per_sm / (threads * needed)));
  if (blocks + 1 <= full.blocks) {
    for (calc::KernelMapping& k : base.kernels) k.block.min_blocks = std::max(1, blocks) + 1;
    out.push_back(std::move(base));
  }
  return out;
}
} // namespace

std::optional<calc::Mapping> register_queue_mapping(const calc::Calculation& calc) {
  const calc::Mapping plain = calc::default_mapping(calc);
  if (plain.kernels.empty()) return std::nullopt;
  calc::Mapping queues =
      calc::buffered_mapping(calc, calc::Buffering::Queue, plain.kernels.front().block);
  for (const calc::KernelMapping& k : queues.kernels)
    if (!k.buffering.empty()) return queues;
  return std::nullopt;
}

std::vector<calc::Mapping> register_queue_candidates(const calc::Calculation& calc,
                                                     const model::Device& device) {
  std::optional<calc::Mapping> found = register_queue_mapping(calc);
  if (!found) return {};
  calc::Mapping queues = *found;
  const calc::BlockConfig block = queues.kernels.front().block;
  const OccupancyCap full = full_occupancy_cap(device, block.threads());
  if (full.registers < 1) return {};
  double needed = 0; // the most registers a kernel of the mapping is expected to need
  for (const model::KernelProfile& k : model::profile_mapping(calc, queues)) {
    const double estimate = model::estimated_registers(k);
    if (estimate > 2.0 * full.registers) return {};
    double held = 0; // values the queues hold, two registers each
    for (const model::KernelProfile::Input& in : k.inputs)
      if (in.strategy == calc::Buffering::Queue)
        held += 1 + calc::stencil_shape(in.offsets, block.iteration_axis).s_e;
    needed = std::max(needed, estimate + 2 * held);
  }
  return uncapped_and_capped(std::move(queues), needed, device);
}

std::vector<calc::Mapping> sums_by_input_candidates(const calc::Calculation& calc,
                                                    const model::Device& device) {
  constexpr int kPoints = 8;
  using calc::kMaxRunningSums;
  calc::Mapping base = register_queue_mapping(calc).value_or(calc::default_mapping(calc));
  if (base.kernels.empty()) return {};
  bool stencil = false;             // some kernel reads an input at more than one offset
  std::vector<double> running_sums; // per kernel: its stored values times its points
  for (calc::KernelMapping& k : base.kernels) {
    std::optional<calc::SumsByInput> sums;
    try {
      const calc::KernelPlan plan = calc::plan_kernel(calc, k, {});
      sums = calc::sums_by_input(calc, plan);
      for (const calc::InputStencil& in : plan.inputs) stencil = stencil || in.offsets.size() > 1;
    } catch (const calc::MappingError&) {
      return {};
    }
    if (!sums) return {};
    const int values = int(sums->values.size());
    k.block.tee = std::min(kPoints, kMaxRunningSums / values);
    if (k.block.tee < 2) return {};
    k.block.sums_by_input = true;
    running_sums.push_back(double(values * k.block.tee));
  }
  if (!stencil) return {};
  try {
    calc::plan_kernels(calc, base); // the whole mapping's rules, sums by input included
  } catch (const calc::MappingError&) {
    return {};
  }
  // Expected registers: the register estimate plus the running sums (two registers each).
  const std::vector<model::KernelProfile> profiles = model::profile_mapping(calc, base);
  double needed = 0;
  for (std::size_t k = 0; k < profiles.size(); ++k)
    needed = std::max(needed, model::estimated_registers(profiles[k]) + 2.0 * running_sums[k]);
  // And at half the points (at least 2), with ptxas's registers: the wave equation's fastest
  // (H200: B1 z 32x8x4 138.1-138.9 us against 140.3-143.2 at 8 points, B2 162.4-163.6 against
  // 165.0-166.2; B3 keeps 8 points, 4/SM; bench/results/2026-11-29-lockstep-model-H200.md).
  calc::Mapping half = base;
  bool halves = true;
  for (calc::KernelMapping& k : half.kernels) {
    k.block.tee /= 2;
    halves = halves && k.block.tee >= 2;
  }
  // And at 2 points with every thread slot of an SM filled (full_occupancy_cap: 32 registers
  // at 256 threads, room for a few running sums). ptxas's estimate-defying fits decide it, so
  // the finish times it: on the H200, B4 (Maxwell, 12 sums) ran z 32x8x2 8/SM at 32 registers
  // without a spill in 493.1-493.8 us against 520.7-534.4 for the same kernel uncapped or at
  // 4/SM (492.6 with every input read-only), and B2 at 162.7 us against 162.9-165.6 at 4 and 8
  // points (two bench_mapper recordings of 2026-11-29-lockstep-model-H200.md);
  // where it loses (B1 141 against 136 us, B3 562 against 512) the screening launch says so.
  calc::Mapping packed = base;
  const OccupancyCap full = full_occupancy_cap(device, base.kernels.front().block.threads());
  for (calc::KernelMapping& k : packed.kernels) {
    k.block.tee = 2;
    k.block.min_blocks = full.blocks;
  }
  // And the half-points kernel in rows twice as wide (z 64x4) at 2 blocks per SM, where ptxas
  // may give it up to 128 registers and keeps more loads in flight: B1's fastest in both
  // recordings, 135.7-135.8 us against 138.1-138.9 for the half-points kernel above (80
  // registers against 48); B2 and B3 lose with it (187 against 163 us, 546 against 512).
  calc::Mapping wide = half;
  bool widens = halves;
  for (calc::KernelMapping& k : wide.kernels) {
    widens = widens && k.block.tf % 2 == 0;
    k.block.tx *= 2;
    k.block.tf /= 2;
    k.block.min_blocks = 2;
  }
  std::vector<calc::Mapping> out = uncapped_and_capped(std::move(base), needed, device);
  if (halves) out.push_back(std::move(half));
  if (widens) out.push_back(std::move(wide));
  if (full.blocks > 0 && std::find(out.begin(), out.end(), packed) == out.end())
    out.push_back(std::move(packed));
  return out;
}

} // namespace saguaro::mapper
