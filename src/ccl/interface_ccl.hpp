// Cactus's interface.ccl as another thorn reads it (`inherit THORN` in an EDL script), and where
// a thorn's CCL files are found. The EDL stage and the host share these readers (ccl/ sits
// before both).
#pragma once

#include "support/source.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::ccl {

struct InterfaceVariable {
  std::string name;
  int rank = 0;      // 0: a scalar grid function; 1: a vector group (name[3])
  std::string group; // the interface.ccl group it belongs to
};

// What a thorn's interface.ccl offers other thorns.
struct Interface {
  std::string name; // the thorn's name, as the caller gave it
  std::vector<InterfaceVariable> variables;
};

// The CCTK_REAL grid functions (TYPE=gf) of the public and protected groups, in file order.
// Throws support::InputError (file:line:col) where the file is not valid interface.ccl.
Interface read_interface_ccl(const std::shared_ptr<const support::SourceFile>& file,
                             std::string thorn);

// Where THORN/FILE (interface.ccl, param.ccl) is looked for, in order: beside BESIDE (`DIR/THORN`,
// `DIR/../THORN`, DIR the folder of the file BESIDE, e.g. an EDL script), then `P/THORN` for each
// P of the colon-separated SAGUARO_THORN_PATH.
std::vector<std::string> thorn_file_places(const std::string& beside, std::string_view thorn,
                                           std::string_view file_name);
// The first of those thorn folders that holds an interface.ccl (every Cactus thorn has one),
// its name matched without regard to case; nullopt if none does.
std::optional<std::string> find_thorn_folder(const std::string& beside, std::string_view thorn);

} // namespace saguaro::ccl
