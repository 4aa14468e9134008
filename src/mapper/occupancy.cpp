#include "mapper/occupancy.hpp"

#include "model/model.hpp"

#include <algorithm>

namespace saguaro::mapper {

OccupancyCap full_occupancy_cap(const model::Device& device, int threads) {
  if (threads < 1 || device.max_threads_per_sm <= 0 || device.registers_per_sm <= 0) return {};
  int blocks = int(device.max_threads_per_sm) / threads;
  if (device.max_blocks_per_sm > 0) blocks = std::min(blocks, int(device.max_blocks_per_sm));
  blocks = std::min(blocks, calc::kMaxMinBlocks);
  if (blocks < 1) return {};
  return {blocks, model::register_cap(device, threads, blocks)};
}

std::optional<calc::Mapping> full_occupancy_candidate(const calc::Calculation& calc,
                                                      const model::Device& device) {
  calc::Mapping mapping = calc::one_thread_per_point(calc);
  if (mapping.kernels.empty()) return std::nullopt;
  const OccupancyCap cap = full_occupancy_cap(device, mapping.kernels.front().block.threads());
  if (cap.blocks < 1 || cap.registers < 1) return std::nullopt;
  for (const model::KernelProfile& k : model::profile_mapping(calc, mapping))
    if (model::estimated_registers(k) > 2.0 * cap.registers) return std::nullopt;
  for (calc::KernelMapping& k : mapping.kernels) k.block.min_blocks = cap.blocks;
  return mapping;
}

} // namespace saguaro::mapper
