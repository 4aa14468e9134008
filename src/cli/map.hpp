// `saguaro map FILE.edl --device F.yaml [--grid N|NXxNYxNZ] [--format text|json]`: what the
// mapper chooses for every calculation — kernels, block configurations, strategies, predicted
// times and their parts — with the runners-up, the search's statistics and, per chosen kernel,
// the buffering assignment step by step (Hu et al.'s Figure 3: by efficiency, eq. 3, and by
// performance alone).
#pragma once

#include "mapper/mapper.hpp"

#include <iosfwd>
#include <string>

namespace saguaro::cli {

struct MapCommand {
  std::string edl_file;
  std::string device_file;  // a description (configs/devices/*.yaml)
  std::string grid = "256"; // N or NXxNYxNZ: interior points of one patch
  std::string format = "text";
  std::string method = "model";
  std::string save;  // write the chosen mappings here (a mapping file, for `fixed`)
  bool plan = false; // also print the chosen mappings' kernel plans (calc/code_plan.hpp)
  int fd_order = 4;
  std::string mixed_derivatives = "auto"; // calc::MixedDerivatives
};

// Returns the exit status: 0; 2 for bad input (EDL errors, a bad grid or device file).
int map_main(const MapCommand& command, std::ostream& out, std::ostream& err);

} // namespace saguaro::cli
