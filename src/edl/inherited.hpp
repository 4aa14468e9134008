// The variables of the Einstein Toolkit base thorns that an EDL thorn may `inherit` (Kranc's
// InheritedImplementations). Saguaro is the only thorn of its run, so an inherited variable is a
// grid function it allocates and the thorn reads or writes by the name the base thorn's
// interface.ccl gives it (`alp`, `gxx`, `eTtt`, `rho`, `w_lorentz`). A vector group (`vel[3]`)
// is a tensor of rank 1: `vel^i`, components `vel1 vel2 vel3` (Cactus's vel[0..2]).
#pragma once

#include "support/source.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::edl {

struct InheritedVariable {
  std::string name;
  int rank = 0;      // 0: a scalar grid function; 1: a vector group (name[3])
  std::string group; // the interface.ccl group it belongs to
};

struct InheritedThorn {
  std::string name; // as interface.ccl's IMPLEMENTS writes it
  std::vector<InheritedVariable> variables;
};

// Every thorn `inherit` knows, in a fixed order.
const std::vector<InheritedThorn>& inherited_thorns();
// The thorn of that name, compared without regard to case as Cactus does; nullptr if unknown.
const InheritedThorn* find_inherited_thorn(std::string_view name);
// "ADMBase, Grid, HydroBase, StaticConformal, TmunuBase": for messages.
std::string inherited_thorn_names();

// A thorn that is not built in is read from its interface.ccl (interface_ccl.cpp): the
// CCTK_REAL grid functions (TYPE=gf) of its public and protected groups, in file order.
// Throws support::InputError (file:line:col) where the file is not valid interface.ccl.
InheritedThorn read_interface_ccl(const std::shared_ptr<const support::SourceFile>& file,
                                  std::string thorn);
// Where THORN/interface.ccl is looked for, in order: beside the EDL file (`DIR/THORN`,
// `DIR/../THORN`, DIR the EDL file's folder), then `P/THORN` for each P of the
// colon-separated SAGUARO_THORN_PATH. The thorn's folder is matched without regard to case.
std::vector<std::string> interface_ccl_places(const std::string& edl_file, std::string_view thorn);
// The thorn read from the first of those places that exists; nullopt if none does.
std::optional<InheritedThorn> find_interface_ccl_thorn(const std::string& edl_file,
                                                       std::string_view thorn);

} // namespace saguaro::edl
