// Pieces the driver's files share (schedule/simulation*.cpp, setup.cpp, step_breakdown.cpp):
// not part of the host's interface.
#pragma once

#include "schedule/simulation.hpp"

#include "support/diagnostics.hpp"
#include "support/text.hpp"

#include <string>
#include <utility>
#include <vector>

namespace saguaro::host {

// A user error in the .par file, at the setting of thorn::name (the file's start when unset).
[[noreturn]] inline void par_error(const Setup& setup, const std::string& thorn,
                                   const std::string& name, const std::string& message,
                                   std::vector<support::Note> notes = {}) {
  support::SourceLoc loc = setup.registry.set_at(thorn, name);
  if (!loc.valid()) loc = support::SourceLoc{setup.par.source, 1, 1, 1};
  throw support::InputError(loc, message, std::move(notes));
}

// The outer faces' parameter suffixes, [axis][lower/upper].
inline const char* const kFaceNames[3][2] = {
    {"x_lower", "x_upper"}, {"y_lower", "y_upper"}, {"z_lower", "z_upper"}};

// A compiled calculation, the GridFunctions index of each of its grid functions, and the
// regions it covers.
struct Simulation::CalcBinding {
  const calc::Calculation* calc = nullptr;
  const runtime::CompiledCalculation* kernel = nullptr;
  std::vector<int> field_index; // per calc.grid_functions
  bool pointwise = false;       // reads nothing at a nonzero offset: runs on every point
  bool rhs = false;             // in MoL_CalcRHS: its outputs need no ghost exchange
  std::vector<int> outputs;     // GridFunctions indices of the last stage's stores
  // A right-hand side split around the evolved variables' ghost exchange (the run plan's launches):
  // its interior overlaps the messages, its boundary shell follows them.
  bool split = false;
  calc::RegionSplit regions;
};

} // namespace saguaro::host
