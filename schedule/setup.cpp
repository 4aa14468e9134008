// Setup: the .par file and its EDL file read, declared and checked (load_setup); what
// `saguaro check` validates, without a grid.

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "mapper/mapping_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace saguaro::host {
namespace fs = std::filesystem;

namespace {

// The EDL thorn's `begin parameters` block as param.ccl declarations, so one registry
// checks them like every other thorn's.
std::vector<param::Declaration> edl_declarations(const calc::Program& program) {
  std::vector<param::Declaration> out;
  for (const calc::Parameter& p : program.parameters) {
    param::Declaration d;
    d.thorn = program.thorn;
    d.name = p.name;
    d.description = p.description;
    d.access = param::Access::Private;
    param::RangeItem range;
    range.lo = p.min;
    range.hi = p.max;
    range.text = fmt::format("{}:{}", p.min ? fmt::format("{}", *p.min) : "*",
                             p.max ? fmt::format("{}", *p.max) : "*");
    switch (p.type) {
    case edl::ParameterType::Real:
      d.type = param::Type::Real;
      d.default_value = p.default_value;
      d.ranges.push_back(range);
      break;
    case edl::ParameterType::Int:
      d.type = param::Type::Int;
      d.default_value = long(std::lround(p.default_value));
      d.ranges.push_back(range);
      break;
    case edl::ParameterType::Boolean:
      d.type = param::Type::Boolean;
      d.default_value = p.default_value != 0.0;
      break;
    case edl::ParameterType::Keyword:
      d.type = param::Type::Keyword;
      d.default_value = p.default_keyword;
      for (const std::string& word : p.keyword_values) {
        param::RangeItem item;
        item.text = word;
        d.ranges.push_back(item);
      }
      break;
    }
    out.push_back(std::move(d));
  }
  return out;
}

// Where an EDL calculation lands: a bin (`at initial`) or a group (`in MoL_CalcRHS`).
schedule::ScheduleItem schedule_item(const calc::Calculation& calc, const std::string& thorn) {
  schedule::ScheduleItem item;
  item.name = calc.name;
  item.thorn = thorn;
  item.lang = "EDL";
  item.description = fmt::format("EDL calculation {}{}", calc.name,
                                 calc.on_boundary ? " (on the outer boundary)" : "");
  item.loc = calc.loc;
  std::string bin = support::upper(calc.schedule_bin);
  if (bin.rfind("CCTK_", 0) == 0) bin = bin.substr(5);
  const auto& bins = schedule::bins();
  if (std::find(bins.begin(), bins.end(), bin) != bins.end()) {
    item.at = true;
    item.where = bin;
    if (bin == "ANALYSIS") item.before = {"IOScalar_OutputNorms"};
  } else {
    item.at = false;
    item.where = calc.schedule_bin;
    const std::string group = support::lower(item.where);
    if (group == "mol_calcrhs" || group == "mol_rhsboundaries") {
      // A right-hand side on the outer boundary (`on boundary`, or MoL's group for them,
      // MoL_RHSBoundaries, which runs after MoL_CalcRHS) follows the built-in boundary
      // condition on the right-hand sides, so that it has the last word there.
      item.where = "MoL_CalcRHS";
      if (calc.on_boundary)
        item.after = {"Boundary_RHS"};
      else
        item.before = {"Boundary_RHS"};
    } else if (support::lower(item.where) == "mol_poststep") {
      item.where = "MoL_PostStep";
      item.after = {"Boundary_ApplyOuter"};
    }
  }
  return item;
}

} // namespace

Setup load_setup(const std::string& par_path, const std::vector<std::string>& overrides) {
  Setup setup;
  setup.par_path = par_path;
  setup.par = param::parse_par_file(par_path, /*keep_going=*/true);
  std::vector<param::ParFile> parsed;
  for (const std::string& text : overrides) parsed.push_back(param::parse_override(text, par_path));
  param::apply_overrides(setup.par, parsed);
  setup.registry = param::Registry::with_builtin_components();

  // Without its EDL file the .par file is still checked against the built-in components, so
  // that one run lists every problem (an Einstein Toolkit file's missing thorns among them).
  auto without_edl = [&](support::Diagnostic problem) {
    std::vector<support::Diagnostic> all;
    try {
      setup.registry.apply(setup.par);
    } catch (const support::InputError& e) {
      all = e.diagnostics();
    }
    all.push_back(std::move(problem));
    throw support::InputError(std::move(all));
  };
  const param::Assignment* eq = setup.par.find("Saguaro", "equations");
  if (eq == nullptr || eq->text.empty())
    without_edl({"error",
                 support::SourceLoc{setup.par.source, 1, 1, 1},
                 "Saguaro::equations is not set",
                 {{{},
                   "name the EDL file with the physics, e.g. "
                   "Saguaro::equations = \"wave.edl\" (relative to the .par file)"}}});
  fs::path edl = eq->text;
  if (edl.is_relative()) edl = fs::path(par_path).parent_path() / edl;
  setup.edl_path = edl.lexically_normal().string();
  if (!fs::is_regular_file(edl))
    without_edl({"error",
                 eq->value_loc,
                 fmt::format("no EDL file '{}'", setup.edl_path),
                 {{{}, "Saguaro::equations is relative to the .par file's directory"}}});

  // Lower through parameter declaration, declare the thorn's parameters and check the .par
  // against every declaration, then finish the lowering once, at the run's
  // finite-difference order.
  edl::Thorn thorn = edl::parse_file(setup.edl_path);
  calc::LoweringState lowering = calc::start_lowering(thorn, calc::LowerOptions{4});
  calc::run_lowering(lowering, "parameters");
  try {
    setup.registry.declare_thorn(lowering.program.thorn); // activatable without parameters too
    setup.registry.declare_all(edl_declarations(lowering.program));
    setup.registry.apply(setup.par);
  } catch (...) {
    // An error in the rest of the EDL file is reported before one in the .par, as it always
    // was: finish the lowering (it throws the EDL error if there is one), else rethrow.
    calc::finish_lowering(std::move(lowering));
    throw;
  }
  calc::set_fd_order(lowering, int(setup.registry.get_int("Saguaro", "fd_order")));
  calc::set_mixed_derivatives(lowering, calc::mixed_derivatives_from(setup.registry.get_string(
                                            "Saguaro", "mixed_derivatives")));
  setup.program = calc::finish_lowering(std::move(lowering));

  // A named device description is read here, so `saguaro check` finds a bad one.
  if (const std::string description = setup.registry.get_string("Saguaro", "device_description");
      description != "auto") {
    fs::path path = description;
    if (path.is_relative()) path = fs::path(par_path).parent_path() / path;
    setup.device_path = path.lexically_normal().string();
    if (!fs::is_regular_file(path))
      par_error(setup, "Saguaro", "device_description",
                fmt::format("no device description '{}'", setup.device_path),
                {{{},
                  "Saguaro::device_description is relative to the .par file's directory; "
                  "configs/devices/ holds one YAML file per GPU model, or use \"auto\""}});
    try {
      setup.device = model::load_device(setup.device_path);
    } catch (const std::exception& e) {
      // The description's own diagnostic (its file:line:col and caret) follows as a note.
      par_error(setup, "Saguaro", "device_description",
                fmt::format("the device description '{}' does not read", setup.device_path),
                {{{}, e.what()}});
    }
  }

  // A fixed mapping file is read here too, so `saguaro check` finds its errors.
  setup.fixed_mappings.assign(setup.program.calculations.size(), std::nullopt);
  if (setup.registry.get_keyword("Saguaro", "mapper") == "fixed") {
    const std::string file = setup.registry.get_string("Saguaro", "mapping_file");
    if (file.empty())
      par_error(setup, "Saguaro", "mapper",
                "Saguaro::mapper = \"fixed\" needs Saguaro::mapping_file",
                {{{}, "`saguaro map FILE.edl --device D.yaml --save F` writes one"}});
    fs::path path = file;
    if (path.is_relative()) path = fs::path(par_path).parent_path() / path;
    setup.mapping_path = path.lexically_normal().string();
    if (!fs::is_regular_file(path))
      par_error(setup, "Saguaro", "mapping_file",
                fmt::format("no mapping file '{}'", setup.mapping_path),
                {{{}, "Saguaro::mapping_file is relative to the .par file's directory"}});
    try {
      const mapper::MappingFile mf = mapper::load_mapping_file(setup.mapping_path, setup.program);
      for (const mapper::MappingFileEntry& e : mf.entries)
        for (std::size_t i = 0; i < setup.program.calculations.size(); ++i)
          if (setup.program.calculations[i].name == e.calculation)
            setup.fixed_mappings[i] = e.mapping;
    } catch (const mapper::MappingFileError& e) {
      par_error(setup, "Saguaro", "mapping_file",
                fmt::format("the mapping file '{}' does not read", setup.mapping_path),
                {{{}, e.what()}});
    }
  }

  setup.schedule = schedule::Schedule::with_builtin_components();
  for (const calc::Calculation& c : setup.program.calculations)
    setup.schedule.add(schedule_item(c, setup.program.thorn));
  setup.schedule.validate();

  // Settings that are each in range but do not make a run together (Cactus's PARAMCHECK).
  const param::Registry& reg = setup.registry;
  if (reg.get_keyword("Time", "timestep_method") == "given" &&
      reg.get_real("Time", "timestep") <= 0)
    par_error(setup, "Time", "timestep_method",
              "Time::timestep_method = \"given\" needs a positive Time::timestep");
  const std::string terminate = reg.get_keyword("Cactus", "terminate");
  if ((terminate == "time" || terminate == "all") && reg.get_real("Cactus", "cctk_final_time") < 0)
    par_error(
        setup, "Cactus", "terminate",
        fmt::format("Cactus::terminate = \"{}\" needs Cactus::cctk_final_time >= 0", terminate));
  if (terminate == "runtime" && reg.get_real("Cactus", "max_runtime") <= 0)
    par_error(setup, "Cactus", "terminate",
              fmt::format("Cactus::terminate = \"{}\" needs Cactus::max_runtime > 0 (minutes)",
                          terminate));
  // Saguaro::backend = "cuda" is checked where the backend is made (Simulation): checking
  // a .par file needs no GPU.
  return setup;
}

std::string output_directory(const Setup& setup) {
  return param::expand_parfile(setup.registry.get_string("IO", "out_dir"), setup.par_path);
}

} // namespace saguaro::host
