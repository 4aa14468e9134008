// Full occupancy by a register cap: one thread per point compiled with
// __launch_bounds__(threads, N), N the blocks that take every thread slot of an SM
// (calc::BlockConfig::min_blocks), so that ptxas keeps the kernel within registers per SM /
// (threads x N) registers.
//
// Given only the block size, ptxas spends registers on loads in flight per thread: the vacuum
// Maxwell right-hand side (4th order, 48 loads a point) takes 64 registers, 4 blocks of 256
// threads per SM, where 32 registers (8 blocks, every slot) hold it without a spill. Written by
// hand at 32 registers it ran at 86% of the H100's triad; the generated kernel at 64 registers
// and the suite's naive one at 77-78% (bench/results/2026-11-27-stencil-variants-H100.md).
// Which wins, threads in flight or loads in flight per thread, depends on the kernel and the
// GPU, so the empirical finish times the capped kernel beside the uncapped one
// (MapResult::register_fits) instead of the model choosing.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "model/device.hpp"

#include <optional>

namespace saguaro::mapper {

// The blocks of `threads` threads that fill an SM of `device` (its thread slots, at most its
// block slots), and the registers per thread that leaves: {blocks, registers}; {0, 0} when the
// description lacks the sizes.
struct OccupancyCap {
  int blocks = 0;
  int registers = 0;
};
OccupancyCap full_occupancy_cap(const model::Device& device, int threads);

// calc::one_thread_per_point with every kernel's blocks per SM set to full_occupancy_cap, where
// no kernel's estimated registers (model::estimated_registers) exceed twice the cap; nullopt
// otherwise (BSSN's right-hand side would spill kilobytes). The estimate cannot tell which
// small kernels ptxas keeps within the cap anyway (Maxwell's and the 8th-order wave's are both
// estimated at 45-48 registers; ptxas gives them 64 and 32), so it is offered for all of them:
// where ptxas needed no more than the cap, the finish times a twin of one thread per point, one
// small module's compile and one screening launch.
std::optional<calc::Mapping> full_occupancy_candidate(const calc::Calculation& calc,
                                                      const model::Device& device);

} // namespace saguaro::mapper
