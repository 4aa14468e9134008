// What a run validates at start-up, before it allocates or writes anything, as functions that
// the run (Simulation's constructor) and `saguaro check` both call: `check` is the run minus the
// evolution. Each throws support::InputError at the setting it is about; check_startup runs them
// all and reports every problem at once.
#pragma once

#include "grid/grid.hpp"
#include "schedule/simulation.hpp"

#include <string>
#include <vector>

namespace saguaro::host {

// The ghost width: the widest reach of any calculation, unless Driver::ghost_size or a
// CoordBase::boundary_size_* asks for more (less is an error).
int ghost_width(const Setup& setup);
// The grid CoordBase and Periodic describe, with `ghost` ghost points (a spacing that does not
// divide the box is an error).
grid::GridSpec grid_spec(const Setup& setup, int ghost);
// IOScalar::out_vars, IOHDF5::out_vars and the like resolved to the EDL thorn's variables
// (groups and tensors expanded, "all"); an unknown name is an error.
std::vector<std::string> output_variables(const Setup& setup, const std::string& thorn,
                                          const std::string& name);

// The arrays a run holds per grid point: the thorn's variables, every calculation's grid
// functions, the right-hand sides and the integrator's scratch per evolved variable.
int arrays_per_point(const Setup& setup);
// The bytes of `points` grid points (ghosts included) of every array, against `available` bytes
// of memory; an error at the grid's size when they do not fit. `ranks` share `available`.
void check_memory(const Setup& setup, double points, double available, int ranks);
// The memory this host can give a run now (MemAvailable of /proc/meminfo; the physical memory
// where that is unknown).
double available_memory();
// IO::out_dir and IO::checkpoint_dir: every component of the path short enough for the file
// system (NAME_MAX) and none an existing file that is not a directory.
void check_output_directories(const Setup& setup);

// Every check above on one rank's view of the whole grid (as `saguaro check` runs it): throws
// one support::InputError carrying every problem found.
void check_startup(const Setup& setup);

} // namespace saguaro::host
