// `saguaro check --compat FILE.par`: for an Einstein Toolkit parameter file, which thorns run
// (built-in components and their aliases, the EDL thorn), which are accepted without effect,
// which are missing, and every setting's fate; then every problem of the file.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace saguaro::cli {

// Returns the exit status: 0 when the file would run, 2 when it has errors (syntax, missing
// thorns, unsupported settings, or any other problem `saguaro check` finds).
int compat_main(const std::string& par_file, const std::vector<std::string>& overrides,
                std::ostream& out, std::ostream& err);

// Prints `warnings` (rendered diagnostics) to `err`.
void print_warnings(const std::vector<std::string>& warnings, std::ostream& err);

} // namespace saguaro::cli
