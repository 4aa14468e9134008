#include "mapper/queues.hpp"

#include "calc/strategy.hpp"
#include "mapper/occupancy.hpp"
#include "model/model.hpp"

#include <algorithm>
#include <cmath>

namespace saguaro::mapper {

std::vector<calc::Mapping> register_queue_candidates(const calc::Calculation& calc,
                                                     const model::Device& device) {
  const calc::Mapping plain = calc::default_mapping(calc);
  if (plain.kernels.empty()) return {};
  const calc::BlockConfig block = plain.kernels.front().block;
  calc::Mapping queues = calc::buffered_mapping(calc, calc::Buffering::Queue, block);
  bool queued = false;
  for (const calc::KernelMapping& k : queues.kernels) queued = queued || !k.buffering.empty();
  if (!queued) return {};
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

} // namespace saguaro::mapper
