// The time of a time-tiled step (calc/time_tile.hpp, printed by codegen/cuda_time_tile.hpp), in
// the form of Prajapati's time-tiling model (seed prajapati-thesis-analytical-cost-models.txt,
// Appendix A, eqs. A.7, A.11-A.13): the blocks run in rounds of k per SM, and a round takes
// what its tiles' compute and transfers take,
//
//   T = T_launch + max(rounds x planes x T_plane / clock, DRAM bytes / W_GM, L2 bytes / W_L2)
//   rounds = ceil(blocks / (k N_SM)),  planes = nz + 2 stages r_z (the z pipeline's fill)
//   T_plane = max(k x issue, latency)            [cycles per plane of one round]
//
// Beyond the paper, for this kernel's design:
//   - The tile streams along z with the next plane loaded one ahead, so its transfers overlap
//     its compute (the thesis's HHC tiles load, compute, store: m' + c); DRAM and L2 enter as
//     bounds on the whole step instead of a per-tile m'.
//   - A part of a step (some of its stages) moves what it reads and writes
//     (calc::TimeTilePlan::arrays_read, arrays_written) where a whole step moves 2 arrays.
//   - issue: the block's instructions of one plane at the SM's rates (Chemora's issue term):
//     per thread, every stage's right-hand side (the calculation's flops) and its two
//     combinations per variable (one fma each) at the FP64 rate, the shared-memory loads of the
//     x/y neighbours, the centre planes' shared stores, the state's global load and store and
//     the spills' local traffic at the load/store rate, and kPlaneOverheadInstructions of
//     index arithmetic (the periodic wrap, the queue shifts) at the FP64 rate.
//   - latency: one plane's dependent chain in one warp: the global load not hidden by the one
//     plane of look-ahead (L_g), the barrier (L_b), and per stage a shared load (L_s) and the
//     right-hand side's longest chain of arithmetic (depth x L_f), plus L_m.
// Registers: ptxas's when the kernel was compiled, else estimated_time_tile_registers.
#pragma once

#include "calc/calculation.hpp"
#include "calc/time_tile.hpp"
#include "model/device.hpp"
#include "model/model.hpp"

#include <array>
#include <string>

namespace saguaro::model {

// Index arithmetic per thread and plane that the counts above do not see (the wrap of the
// grown column's z index, the queues' shifts, the store's bounds test), in FP64-rate slots;
// chosen so that the B1 tiles without spills come within ~10% on the H100
// (bench/results/2026-11-25-time-tile-H100.md).
inline constexpr double kPlaneOverheadInstructions = 24;

// Registers per thread before ptxas: the queues of every stage's inputs along z (2 r_z + 1
// planes per variable), the state's and the accumulator's, as doubles, over the model's base
// (kRegisterBase). B1 (RK4, radius 1, 2 variables): 96, ptxas 90-92.
int estimated_time_tile_registers(const calc::TimeTilePlan& plan);

// The longest chain of dependent arithmetic from a load to a store of `calc` (an n-term sum or
// product counts n - 1): the latency of one right-hand-side evaluation in units of L_f.
int arithmetic_depth(const calc::Calculation& calc);

struct TimeTilePrediction {
  bool valid = true;
  std::string invalid_reason;
  int registers = 0; // per thread
  bool registers_from_ptxas = false;
  int spill_bytes = 0;
  int blocks_per_sm = 0; // k
  std::string occupancy_limit;
  long blocks = 0;
  double rounds = 0;
  int planes = 0; // per block
  // Cycles per plane of one block: its instructions at the SM's rates, its dependent chain.
  double issue = 0, latency = 0;
  // Seconds of the whole step.
  double compute = 0, dram = 0, l2 = 0, launch = 0, seconds = 0;
  std::string limiter; // "issue", "latency", "DRAM", "L2"
  // "0.49 ms (issue-bound: 640 threads x 2.8 cycles per plane, 1 block per SM, 4 rounds)"
  std::string text() const;
};

// One time-tiled step (or part of one: calc::TimeTilePlan::first, stages) over a periodic box of
// `extent` points per axis.
TimeTilePrediction predict_time_tile(const calc::Calculation& calc, const calc::TimeTilePlan& plan,
                                     const std::array<long, 3>& extent, const Device& device,
                                     const CompiledResources& compiled = {});

} // namespace saguaro::model
