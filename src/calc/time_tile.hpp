// Temporal fusion of a whole explicit Runge-Kutta step (issue 22): one kernel evaluates every
// stage of a tile kept on chip, so that a step reads the state once and writes the new state
// once, where the plain step moves 12 arrays per variable (RK4, folded) or 25 (unfolded).
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
//
// The depth of the fusion: a kernel may evaluate a run of consecutive stages (a *part*) instead
// of all of them. Then a step is several parts in turn; a part that is not the last stores the
// next stage's state Y_{l+1} and the accumulator y + dt sum_{s<=l} b_s k_s (own points only),
// and the part after it loads them (with its grown columns, wrapped as before) beside the
// state. Fewer stages per kernel mean a smaller halo (stages x radius): a radius-2 stencil,
// whose four-stage halo leaves no tile worth taking, fits two parts of two stages (RK4: 7
// arrays moved per variable and step instead of the plain step's 16).
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
  int stages = 0;         // evaluated by this kernel: first .. first + stages - 1
  int first = 1;          // the first of them (1-based)
  int total = 0;          // the integrator's stages (0: the same as `stages`)
  std::vector<int> state; // per evolved variable: its Calculation::grid_functions index
  std::vector<int> rhs;   // per evolved variable: the index of its k in stages[0].stores
  std::array<int, 3> radius{0, 0, 0}; // the largest |offset| of any load, per axis
  std::vector<bool> in_plane;         // per variable: read at x/y neighbours
  TimeTile tile;

  int last() const { return first + stages - 1; }
  // The step's stages (those of every part).
  int step_stages() const { return total > 0 ? total : stages; }
  // Whether this part ends the step (writes the new state; else Y_{last+1} and the accumulator).
  bool ends_step() const { return last() >= step_stages(); }
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
  // Whether it reads the state: the first stage's input, or for a combination Y_{s+1} = y + ...
  // (a last part of one stage needs only Y_first and the accumulator).
  bool reads_state() const { return first == 1 || stages > 1 || !ends_step(); }
  // Arrays per evolved variable it reads from and writes to memory: the state (and, after the
  // first part, Y_first and the accumulator); the new state (or Y_{last+1} and the accumulator).
  int arrays_read() const { return first == 1 ? 1 : 2 + (reads_state() ? 1 : 0); }
  // Of those, the arrays read on the grown columns (the rest on the own columns only).
  int arrays_read_grown() const { return first == 1 ? 1 : 1 + (reads_state() ? 1 : 0); }
  int arrays_written() const { return ends_step() ? 1 : 2; }
  // "time tile 32x8x128 (stages 4, halo 4x4, 640 threads)", "... (stages 1-2 of 4, ...)"
  std::string text() const;
};

// Why `calc` cannot be evaluated time-tiled for the evolved variables `state` with right-hand
// sides `rhs` (grid function names, matched ignoring case); "" when it can. `stages` > 0.
std::string time_tile_obstacle(const Calculation& calc, const std::vector<std::string>& state,
                               const std::vector<std::string>& rhs, int stages);

// The plan of a whole step of `stages` stages, or (with `first` and `count`) of the part that
// evaluates stages first .. first + count - 1 of them (throws std::invalid_argument with
// time_tile_obstacle's reason, for a part outside the step, or when the tile's block would
// exceed 1024 threads).
TimeTilePlan plan_time_tile(const Calculation& calc, const std::vector<std::string>& state,
                            const std::vector<std::string>& rhs, int stages, const TimeTile& tile,
                            int first = 1, int count = 0);

// The ways to cut a step of `stages` stages into parts of consecutive stages that the mapper
// prices: the whole step, then two parts (each cut point). Each entry lists the parts' stage
// counts in order ({4}, {1, 3}, {2, 2}, {3, 1} for RK4). More parts would need more arrays than
// every integrator has in between, and move nearly the plain step's bytes.
std::vector<std::vector<int>> time_tile_splits(int stages);

// The tiles a mapper considers for a calculation of this radius and a kernel of `stages`
// stages: blocks of at most 1024 threads whose useful fraction is at least 1/4, z chunks of 64
// and 128 planes.
std::vector<TimeTile> time_tile_candidates(const Calculation& calc, int stages);

} // namespace saguaro::calc
