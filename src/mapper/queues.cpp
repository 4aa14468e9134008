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
  const int threads = base.kernels.front().block.threads();
  double needed = 0; // the most registers a kernel is expected to need
  for (calc::KernelMapping& k : base.kernels) {
    calc::KernelPlan plan;
    std::optional<calc::SumsByInput> sums;
    try {
      plan = calc::plan_kernel(calc, k, {});
      sums = calc::sums_by_input(calc, plan);
    } catch (const calc::MappingError&) {
      return {};
    }
    int inputs = 0;
    for (const calc::InputGroup& g : sums ? sums->groups : std::vector<calc::InputGroup>{})
      inputs += g.grid_function >= 0;
    if (!sums || inputs < kSumsByInputMinInputs) return {};
    const int values = int(sums->values.size());
    k.block.tee = std::min(kPoints, kMaxRunningSums / values);
    if (k.block.tee < 2) return {};
    k.block.sums_by_input = true;
    // Live at once: the running sums, one input's queue and its loads of a point, and ~32
    // registers of indices and addresses (ptxas gave the micro-benchmark 76 uncapped: 8 sums, a
    // queue of 3, 9 loads).
    double input_values = 0;
    for (const calc::InputStencil& in : plan.inputs) {
      const calc::StencilShape shape = calc::stencil_shape(in.offsets, k.block.iteration_axis);
      input_values = std::max(input_values, double(in.offsets.size()) + 1 + shape.s_e);
    }
    needed = std::max(needed, 32 + 2 * (values * k.block.tee + input_values));
  }
  try {
    calc::plan_kernels(calc, base); // the whole mapping's rules, sums by input included
  } catch (const calc::MappingError&) {
    return {};
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
