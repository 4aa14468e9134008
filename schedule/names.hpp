// Name helpers shared by the schedule's sources (internal; not part of the API).
//
// Cactus compares schedule names without regard to case (support/text.hpp): `MoL_CalcRHS`,
// `mol_calcrhs` and `MOL_CALCRHS` name the same group, and `CCTK_EVOL`, `evol` and `EVOL` the
// same bin.
#pragma once

#include "support/text.hpp"

#include <string>
#include <string_view>

namespace saguaro::schedule::detail {

// A bin name as bins() spells it: upper case, without Cactus's `CCTK_` prefix. The result
// need not be a bin; callers check.
inline std::string normalise_bin(std::string_view name) {
  std::string up = support::upper(name);
  if (up.size() > 5 && up.compare(0, 5, "CCTK_") == 0) up.erase(0, 5);
  return up;
}

} // namespace saguaro::schedule::detail
