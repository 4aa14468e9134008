// Temporal fusion of a whole explicit Runge-Kutta step (issue 22): one kernel evaluates every
// stage of a tile kept on chip, so that a step reads the state once and writes the new state
// once, where the plain step moves 16 arrays per variable (RK4, folded) or 31 (unfolded).
//
// The method applies to integrators whose Butcher tableau has only a sub-diagonal,
//   Y_1 = y,  Y_{s+1} = y + a_s dt k_s,  y_new = y + dt sum_s b_s k_s,  k_s = f(Y_s)
// (RK4, the midpoint rule, Heun, Euler; the caller gives the number of stages), and to right-hand
// sides that read only the evolved variables, without coordinates or time. The tile is a
// column of tx x ty points streamed along z (2.5D): stage s is evaluated on the column grown by
// (stages - s) radii in x and y, each plane radius[2] planes behind the previous stage's, so
// that one thread owns one column of the grown tile for all stages: the stage inputs along z,
// the state and the accumulator live in the thread's registers (queues), and only the centre
// planes of the variables read at x/y neighbours go through shared memory. The grown columns
// wrap around the periodic box, so the step needs no ghost zones: it applies to one patch that
// covers a periodic box (one rank, periodic faces, no post-step but the ghost fill).
// codegen/cuda_time_tile.hpp prints it, model/time_tile.hpp prices it, mapper/time_tile.hpp
// decides whether a run takes it, schedule/step_plan.hpp's time-tiled plan launches it.
#pragma once

#include "calc/calculation.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace saguaro::calc {

// A tile: tx x ty output columns per block, nz output planes per block.
struct TimeTile {
  int tx = 32, ty = 8, nz = 128;
  bool operator==(const TimeTile&) const = default;
};

struct TimeTilePlan {
  int stages = 0;
  std::vector<int> state; // per evolved variable: its Calculation::grid_functions index
  std::vector<int> rhs;   // per evolved variable: the index of its k in stages[0].stores
  std::array<int, 3> radius{0, 0, 0}; // the largest |offset| of any load, per axis
  std::vector<bool> in_plane;         // per variable: read at x/y neighbours
  TimeTile tile;

  // How far stage 1's columns reach beyond the tile along x and y: stages x radius.
  int halo(int axis) const { return stages * radius[std::size_t(axis)]; }
  int block_x() const { return tile.tx + 2 * halo(0); }
  int block_y() const { return tile.ty + 2 * halo(1); }
  int threads() const { return block_x() * block_y(); } // one per column of the grown tile
  // Double-buffered centre planes: 2 x stages x (variables read in plane) x threads doubles.
  std::size_t shared_bytes() const;
  // The fraction of the threads' stage evaluations that a plain step would make too (the
  // rest is the grown tile's redundant work, and the z pipeline's fill).
  double useful_fraction() const;
  // "time tile 32x8x128 (stages 4, halo 4x4, 640 threads)"
  std::string text() const;
};

// Why `calc` cannot be evaluated time-tiled for the evolved variables `state` with right-hand
// sides `rhs` (grid function names, matched ignoring case); "" when it can. `stages` > 0.
std::string time_tile_obstacle(const Calculation& calc, const std::vector<std::string>& state,
                               const std::vector<std::string>& rhs, int stages);

// The plan (throws std::invalid_argument with time_tile_obstacle's reason, or when the tile's
// block would exceed 1024 threads).
TimeTilePlan plan_time_tile(const Calculation& calc, const std::vector<std::string>& state,
                            const std::vector<std::string>& rhs, int stages, const TimeTile& tile);

// The tiles a mapper considers for a calculation of this radius: blocks of at most 1024
// threads whose useful fraction is at least 1/4, z chunks of 64 and 128 planes.
std::vector<TimeTile> time_tile_candidates(const Calculation& calc, int stages);

} // namespace saguaro::calc
