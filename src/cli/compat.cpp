// `saguaro check --compat` (compat.hpp).
#include "cli/compat.hpp"

#include "param/et_compat.hpp"
#include "schedule/simulation.hpp"
#include "schedule/startup_checks.hpp"
#include "support/diagnostics.hpp"

#include <ostream>

namespace saguaro::cli {

void print_warnings(const std::vector<std::string>& warnings, std::ostream& err) {
  for (const std::string& w : warnings) err << w;
}

int compat_main(const std::string& par_file, const std::vector<std::string>& overrides,
                std::ostream& out, std::ostream& err) {
  param::ParFile par = param::parse_par_file(par_file, /*keep_going=*/true);
  std::vector<param::ParFile> parsed;
  for (const std::string& text : overrides) parsed.push_back(param::parse_override(text, par_file));
  param::apply_overrides(par, parsed);

  // The whole check, as `saguaro check` runs it; its registry knows the EDL thorn when the
  // file names one that loads.
  std::string problems;
  param::Registry registry = param::Registry::with_builtin_components();
  try {
    host::Setup setup = host::load_setup(par_file, overrides);
    host::check_startup(setup);
    registry = setup.registry;
  } catch (const support::InputError& e) {
    problems = e.what();
  }
  const param::Translation translation = param::translate_et(par, registry, true);
  out << param::format_compat_report(translation, par_file);
  for (const support::Diagnostic& w : translation.warnings) err << support::render(w);
  err << problems;
  return problems.empty() ? 0 : 2;
}

} // namespace saguaro::cli
