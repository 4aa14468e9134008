// Register queues for the empirical finish, and the same kernels with their points summed by
// input: the default mapping (one kernel per stage, z
// 32x8x8) with every input whose stencil has offsets on the z line through the point and off
// it carried along z in registers (strategy q), the rest loaded as before.
//
// A small stencil kernel is bound by L1's wavefronts rather than DRAM on the H200: the wave
// equation at 8th order issues 25 loads of phi a point. Carrying phi's z line in registers
// saves 8 of them, at 9 values of registers a thread; what that is worth depends on how ptxas
// then trades loads in flight for threads in flight (H200, 2026-11-29,
// bench/results/2026-11-29-register-queues-H200.md: 181.7 us at ptxas's 64 registers, 174.0 us
// capped at 5 blocks per SM, 46 registers, 190.8 us at 6 blocks, 40 registers, against 185.2 us
// unbuffered). The model cannot rank these, so the finish times them beside the unbuffered
// kernels.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "model/device.hpp"

#include <optional>
#include <vector>

namespace saguaro::mapper {

// The default mapping with q wherever it applies, at the default block; nullopt when q applies
// to no input.
std::optional<calc::Mapping> register_queue_mapping(const calc::Calculation& calc);

// register_queue_mapping, twice: with ptxas's choice of registers,
// and capped at one block per SM more than the registers it is expected to need allow (the
// register estimate, model::estimated_registers, plus two per value its queues hold). None
// when q applies to no input, or when a kernel's estimate already exceeds twice the registers
// that leave every thread slot of an SM filled (a kernel past that, such as BSSN's right-hand
// side, only spills more with queues).
std::vector<calc::Mapping> register_queue_candidates(const calc::Calculation& calc,
                                                     const model::Device& device);

// The register-queue mapping (or the default one, where q applies to no input) with every
// kernel's points summed by input (calc/sums_by_input.hpp), where that applies to every kernel
// and some input is read at more than one offset: at t_ee = 8 (fewer where a kernel stores
// several sums, so that at most 16 running sums are held), once with ptxas's choice of registers
// and once capped at one block per SM more than the expected registers (the register estimate
// plus two per running sum) allow; at half the points (at least 2) with ptxas's registers, and
// again in rows twice as wide at 2 blocks per SM; and at 2 points with every thread slot of an
// SM filled (queues.cpp says what each won on the H200).
// On the H200 (2026-11-29, bench/results/2026-11-29-sums-by-input-H200.md) B3 went from 648 to
// 518 us (4 blocks per SM) and B2's kernel from 176.8 to 167.3 us (ptxas's registers); at half
// the points B1 and B2 run 2% faster again (2026-11-29-lockstep-model-H200.md).
std::vector<calc::Mapping> sums_by_input_candidates(const calc::Calculation& calc,
                                                    const model::Device& device);

} // namespace saguaro::mapper
