// Which right-hand sides compute the integrator's stage combinations themselves, decided
// once at setup, and their folded forms (calc::fold_stores) added to the program so that the
// mapper maps them, the backend compiles them and the prediction log prices them like any
// calculation; the step plan (step_plan.hpp) then launches them in place of the plain form.
//
// A calculation of MoL_CalcRHS folds the stages of its variables when:
//   - it stores their k in its last stage, and no calculation anywhere else reads or writes
//     those k (a later reader would find them unwritten);
//   - every ghost point of the state is refilled after each stage by the exchange or a flat
//     boundary (a folded kernel writes the new state on the owned points only, where the
//     plain combination writes every point: static and radiative faces, which take the
//     boundary's own right-hand side, keep the plain form);
//   - the stage writes no array the right-hand side reads (the table's methods never do);
//   - Saguaro::fold_updates allows it.
// Stages of one form (ICN's second and third: y1 = y0 + b k) share one
// folded calculation, the coefficients being parameters appended to the program's, set per
// launch from stage_coefficients (step_plan.hpp).
#pragma once

#include "calc/calculation.hpp"
#include "schedule/integrators.hpp"

#include <map>
#include <string>
#include <vector>

namespace saguaro::schedule {

struct StepFolding {
  // The grid function of an integrator's register for an evolved variable: the variable
  // itself (y), its right-hand side (k), or "<variable>_<register>" (phi_acc, phi_y1).
  static std::string register_field(const Integrator& integrator, int reg,
                                    const std::string& variable, const std::string& rhs);
  // program.calculations index -> per stage (index 0 unused) its folded form's index, or -1.
  std::map<int, std::vector<int>> forms;
  // program.calculations index -> the evolved variables (program.evolved indices) it folds.
  std::map<int, std::vector<int>> produces;
  int first_coefficient = 0; // program.parameters index of the stages' first coefficient
  int coefficients = 0;      // how many were appended
  std::string note;          // the banner's line: what folds, or why nothing does
};

// The right-hand side's grid function of each of program.evolved, as fold_step takes them: the
// grid function some calculation stores as its right-hand side, else "<variable>rhs".
std::vector<std::string> rhs_fields(const calc::Program& program);

// Adds the folded forms (and the coefficient parameters) to `program`; `rhs_fields[v]` is the
// right-hand side's grid function of program.evolved[v]. `mode` is Saguaro::fold_updates;
// `ghosts_refilled` says whether every outer face of the grid is periodic or flat; `fold_large`
// whether "auto" folds right-hand sides of more than 2000 operations too (the host: on a
// backend whose mappings the model chooses). Each folded form is recorded in
// program.folded_forms: the mapper gives it its plain form's kernels (calc::fold_mapping).
StepFolding fold_step(calc::Program& program, const Integrator& integrator,
                      const std::vector<std::string>& rhs_fields, const std::string& mode,
                      bool ghosts_refilled, bool fold_large);

} // namespace saguaro::schedule
