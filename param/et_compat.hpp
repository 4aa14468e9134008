// Einstein Toolkit parameter files in Saguaro: the established thorns' names (IOUtil,
// CarpetIOScalar, CarpetX, ODESolvers, SymBase, ...) translated to Saguaro's built-in
// components by one table (param/et/thorns.yaml), before the registry checks the file.
//
// A thorn in ActiveThorns is one of: provided (a built-in component, Saguaro, the EDL
// thorn), an alias (the table maps its parameters to built-in ones), infrastructure or
// output (accepted; what it does is implicit or not written), or missing (an error: a run
// must not silently lose physics; Saguaro::missing_thorns = "warn" makes it a warning).
#pragma once

#include "param/registry.hpp"

#include <string>
#include <vector>

namespace saguaro::param {

// One thorn of the file, as `saguaro check --compat` lists it.
struct CompatThorn {
  std::string thorn;
  support::SourceLoc loc; // its ActiveThorns entry (invalid: named only as a qualifier)
  // "runs" (provided or an alias), "no-op" (infrastructure), "not written" (output),
  // "missing".
  std::string status;
  std::string note;
  std::vector<std::string> settings; // "CarpetX::ncells_x (line 12) -> CoordBase::ncells_x"
};

struct Translation {
  ParFile par; // names of Saguaro's components; the aliases' implied defaults added
  std::vector<support::Diagnostic> errors, warnings;
  std::vector<CompatThorn> thorns;
};

// Translates `par` for `registry` (which knows the built-in components and the EDL thorn).
// `missing_is_error`: whether a missing thorn is an error or a warning.
Translation translate_et(const ParFile& par, const Registry& registry, bool missing_is_error);

// The table's thorn names, sorted (for did-you-mean and tests).
std::vector<std::string> et_thorn_names();

// `saguaro check --compat`: what runs, what is ignored, what is missing.
std::string format_compat_report(const Translation& translation, const std::string& path);

} // namespace saguaro::param
