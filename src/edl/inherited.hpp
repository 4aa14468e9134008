// The variables of the Einstein Toolkit base thorns that an EDL thorn may `inherit` (Kranc's
// InheritedImplementations). Saguaro is the only thorn of its run, so an inherited variable is a
// grid function it allocates and the thorn reads or writes by the name the base thorn's
// interface.ccl gives it (`alp`, `gxx`, `eTtt`, `rho`, `w_lorentz`). A vector group (`vel[3]`)
// is a tensor of rank 1: `vel^i`, components `vel1 vel2 vel3` (Cactus's vel[0..2]).
// A thorn not built in is read from its own interface.ccl and param.ccl (ccl/): its grid
// functions, and the parameters it lets an inheriting thorn see.
#pragma once

#include "ccl/interface_ccl.hpp"
#include "edl/ast.hpp"
#include "support/source.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::edl {

using InheritedVariable = ccl::InterfaceVariable;

// A global or restricted parameter of an inherited thorn's param.ccl, of a type the EDL has,
// with its default: the script reads it by name as one of its own parameters.
struct InheritedParameter {
  std::string thorn; // the inherited thorn, as `inherit` names it
  std::string name;
  ParameterType type = ParameterType::Real;
  std::string description;
  double default_value = 0.0;              // real, int, boolean (0/1)
  std::string default_keyword;             // keyword: as the param.ccl declares it
  std::vector<std::string> keyword_values; // keyword
  SourceLoc loc;                           // its declaration in the param.ccl
};

struct InheritedThorn {
  std::string name; // as interface.ccl's IMPLEMENTS writes it
  std::vector<InheritedVariable> variables;
  std::vector<InheritedParameter> parameters; // a thorn read from its CCL files only
};

// Every thorn `inherit` knows, in a fixed order.
const std::vector<InheritedThorn>& inherited_thorns();
// The thorn of that name, compared without regard to case as Cactus does; nullptr if unknown.
const InheritedThorn* find_inherited_thorn(std::string_view name);
// "ADMBase, Grid, HydroBase, StaticConformal, TmunuBase": for messages.
std::string inherited_thorn_names();

// Where THORN/interface.ccl is looked for (ccl::thorn_file_places): beside the EDL file
// (`DIR/THORN`, `DIR/../THORN`), then on SAGUARO_THORN_PATH.
std::vector<std::string> interface_ccl_places(const std::string& edl_file, std::string_view thorn);
// A thorn that is not built in, read from the first of those folders that holds its
// interface.ccl: the grid functions of its interface.ccl and, where the folder has a param.ccl,
// the global and restricted REAL, INT, BOOLEAN and KEYWORD parameters (scalars) declared there
// (private ones are the thorn's own, as in Cactus; STRING and array parameters the EDL cannot
// read). nullopt if no folder has one. Throws support::InputError (file:line:col) where a file
// is not valid CCL or a default is not of its parameter's type.
std::optional<InheritedThorn> find_ccl_thorn(const std::string& edl_file, std::string_view thorn);

} // namespace saguaro::edl
