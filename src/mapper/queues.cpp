#include "mapper/queues.hpp"

#include "calc/strategy.hpp"
#include "calc/sums_by_input.hpp"
#include "mapper/occupancy.hpp"
#include "model/model.hpp"

#include <algorithm>
#include <cmath>

namespace saguaro::mapper {

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
  std::vector<calc::Mapping> out{queues};
  const int blocks = int(std::floor(device.registers_per_sm / (block.threads() * needed)));
  if (blocks + 1 <= full.blocks) {
    for (calc::KernelMapping& k : queues.kernels) k.block.min_blocks = std::max(1, blocks) + 1;
    out.push_back(queues);
  }
  return out;
}

std::vector<calc::Mapping> sums_by_input_candidates(const calc::Calculation& calc,
                                                    const model::Device& device) {
  constexpr int kMaxRunningSums = 16, kPoints = 8;
  calc::Mapping base = register_queue_mapping(calc).value_or(calc::default_mapping(calc));
  if (base.kernels.empty()) return {};
  bool stencil = false; // some kernel reads an input at more than one offset
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
    k.block.tee = std::min(kPoints, kMaxRunningSums / int(sums->values.size()));
    if (k.block.tee < 2) return {};
    k.block.sums_by_input = true;
  }
  if (!stencil) return {};
  try {
    calc::plan_kernels(calc, base); // the whole mapping's rules, sums by input included
  } catch (const calc::MappingError&) {
    return {};
  }
  // Expected registers: the register estimate plus the running sums (two registers each).
  const int threads = base.kernels.front().block.threads();
  const std::vector<model::KernelProfile> profiles = model::profile_mapping(calc, base);
  double needed = 0;
  for (std::size_t k = 0; k < profiles.size(); ++k) {
    const calc::SumsByInput sums =
        *calc::sums_by_input(calc, calc::plan_kernel(calc, base.kernels[k], {}));
    needed = std::max(needed, model::estimated_registers(profiles[k]) +
                                  2.0 * double(sums.values.size()) * base.kernels[k].block.tee);
  }
  std::vector<calc::Mapping> out{base};
  const OccupancyCap full = full_occupancy_cap(device, threads);
  const int blocks = int(std::floor(device.registers_per_sm / (threads * needed)));
  if (blocks + 1 <= full.blocks) {
    for (calc::KernelMapping& k : base.kernels) k.block.min_blocks = std::max(1, blocks) + 1;
    out.push_back(base);
  }
  return out;
}

} // namespace saguaro::mapper
