// Start-up checks shared by the run and `saguaro check` (startup_checks.hpp).
#include "schedule/startup_checks.hpp"

#include "schedule/integrators.hpp"
#include "schedule/simulation_internal.hpp"
#include "support/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace saguaro::host {
namespace fs = std::filesystem;

// The ghost width: the widest reach of any calculation, unless the user asks for more.
int ghost_width(const Setup& setup) {
  const param::Registry& reg = setup.registry;
  int needed = 1;
  std::string widest;
  for (const calc::Calculation& c : setup.program.calculations)
    if (int m = runtime::required_margin(c).max(); m > needed) {
      needed = m;
      widest = c.name;
    }
  int ghost = needed;
  if (long g = reg.get_int("Driver", "ghost_size"); g >= 0) {
    if (g < needed)
      par_error(setup, "Driver", "ghost_size",
                fmt::format("Driver::ghost_size = {} is less than the {} points calculation '{}' "
                            "reads beyond the points it computes",
                            g, needed, widest));
    ghost = int(g);
  }
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      std::string name = std::string("boundary_size_") + kFaceNames[a][s];
      long b = reg.get_int("CoordBase", name);
      if (b < 0) continue;
      if (b < needed)
        par_error(setup, "CoordBase", name,
                  fmt::format("CoordBase::{} = {} is less than the stencil reach {} of '{}'", name,
                              b, needed, widest));
      ghost = std::max(ghost, int(b));
    }
  return ghost;
}

// The grid the parameters describe (CoordBase, Periodic), with `ghost` ghost points.
grid::GridSpec grid_spec(const Setup& setup, int ghost) {
  const param::Registry& reg = setup.registry;
  grid::GridSpec spec;
  spec.ghost = ghost;
  const bool all_periodic = reg.get_bool("Periodic", "periodic");
  const char* axis_names[3] = {"x", "y", "z"};
  const bool by_cells = reg.get_keyword("CoordBase", "spacing") == "numcells";
  for (int a = 0; a < 3; ++a) {
    std::string ax = axis_names[a];
    spec.periodic[a] = all_periodic || reg.get_bool("Periodic", "periodic_" + ax);
    double lo = reg.get_real("CoordBase", ax + "min"), hi = reg.get_real("CoordBase", ax + "max");
    if (!(hi > lo))
      par_error(
          setup, "CoordBase", ax + "max",
          fmt::format("CoordBase::{}max = {} must be larger than {}min = {}", ax, hi, ax, lo));
    long cells;
    if (by_cells) {
      cells = reg.get_int("CoordBase", "ncells_" + ax);
    } else {
      double d = reg.get_real("CoordBase", "d" + ax);
      double n = (hi - lo) / d;
      cells = std::lround(n);
      if (cells < 1 || std::abs(n - double(cells)) > 1e-8 * n)
        par_error(setup, "CoordBase", "d" + ax,
                  fmt::format("CoordBase::d{} = {} does not divide {}max - {}min = {} into whole "
                              "cells ({:.6g} cells)",
                              ax, d, ax, ax, hi - lo, n),
                  {{{},
                    "choose d" + ax + " = (" + ax + "max - " + ax +
                        "min) / N, or set CoordBase::spacing = \"numcells\""}});
    }
    spec.origin[a] = lo;
    spec.spacing[a] = (hi - lo) / double(cells);
    spec.points[a] = int(spec.periodic[a] ? cells : cells + 1);
  }
  return spec;
}

std::vector<std::string> output_variables(const Setup& setup, const std::string& thorn,
                                          const std::string& name) {
  const calc::Program& program = setup.program;
  std::string text = setup.registry.get_string(thorn, name);
  std::vector<std::string> out;
  auto add = [&](const std::string& v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  std::istringstream words(text);
  std::string word;
  std::vector<std::string> known;
  for (const std::string& v : program.variables) known.push_back(program.thorn + "::" + v);
  for (const auto& [g, members] : program.groups) known.push_back(program.thorn + "::" + g);
  for (const auto& [t, members] : program.tensors) known.push_back(program.thorn + "::" + t);
  while (words >> word) {
    if (support::lower(word) == "all") {
      for (const std::string& v : program.variables) add(v);
      continue;
    }
    std::string var = word;
    if (auto p = word.find("::"); p != std::string::npos) {
      std::string t = word.substr(0, p);
      if (support::lower(t) != support::lower(program.thorn) &&
          support::lower(t) != support::lower(program.implements))
        par_error(setup, thorn, name,
                  fmt::format("{}::{} names '{}', which is not a variable of thorn {}", thorn, name,
                              word, program.thorn),
                  support::did_you_mean(word, known));
      var = word.substr(p + 2);
    }
    bool found = false;
    for (const std::string& v : program.variables)
      if (support::lower(v) == support::lower(var)) {
        add(v);
        found = true;
      }
    // A group, or a tensor by its name (El for El1 El2 El3).
    for (const auto* sets : {&program.groups, &program.tensors})
      for (const auto& [g, members] : *sets)
        if (support::lower(g) == support::lower(var)) {
          for (const std::string& m : members) add(m);
          found = true;
        }
    if (!found)
      par_error(setup, thorn, name,
                fmt::format("{}::{} names '{}', which is not a variable or group of thorn {}",
                            thorn, name, word, program.thorn),
                support::did_you_mean(word, known));
  }
  return out;
}

int arrays_per_point(const Setup& setup) {
  const calc::Program& program = setup.program;
  std::set<std::string> names(program.variables.begin(), program.variables.end());
  for (const calc::Calculation& c : program.calculations)
    for (const calc::GridFunctionRef& gf : c.grid_functions) names.insert(gf.name);
  int rhs = 0; // right-hand sides no calculation names (the driver adds "<v>rhs")
  for (const std::string& v : program.evolved) {
    bool named = false;
    for (const calc::Calculation& c : program.calculations)
      for (const calc::GridFunctionRef& gf : c.grid_functions)
        named = named || (gf.role == calc::GridFunctionRole::RightHandSide && gf.evolves == v);
    rhs += named ? 0 : 1;
  }
  const schedule::Integrator& integrator =
      schedule::find_integrator(setup.registry.get_keyword("MoL", "ODE_Method"));
  return int(names.size()) + rhs + int(program.evolved.size() * integrator.scratch.size());
}

double available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    double kib = 0;
    if (key == "MemAvailable:" && meminfo >> kib) return kib * 1024.0;
    meminfo.ignore(1 << 10, '\n');
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

void check_memory(const Setup& setup, double points, double available, int ranks) {
  const int arrays = arrays_per_point(setup);
  const double need = 8.0 * double(arrays) * points;
  if (available <= 0 || need <= available / std::max(1, ranks)) return;
  const param::Registry& reg = setup.registry;
  const bool by_cells = reg.get_keyword("CoordBase", "spacing") == "numcells";
  par_error(setup, "CoordBase", by_cells ? "ncells_x" : "dx",
            fmt::format("the grid needs about {:.3g} GiB ({} arrays of {:.4g} points with ghosts, "
                        "8 bytes each){}, but {:.3g} GiB of memory are available",
                        need / double(1 << 30), arrays, points,
                        ranks > 1 ? fmt::format(" on each of {} ranks of this host", ranks) : "",
                        available / double(1 << 30) / std::max(1, ranks)),
            {{{}, "a coarser grid, or more nodes (each rank holds its part of the grid)"}});
}

void check_output_directories(const Setup& setup) {
  const param::Registry& reg = setup.registry;
  for (const char* name : {"out_dir", "checkpoint_dir"}) {
    const fs::path dir = param::expand_parfile(reg.get_string("IO", name), setup.par_path);
    for (const fs::path& part : dir)
      if (part.native().size() > NAME_MAX)
        par_error(setup, "IO", name,
                  fmt::format("IO::{} has a path component of {} characters; the file system "
                              "takes at most {}",
                              name, part.native().size(), NAME_MAX));
    std::error_code ec;
    if (!dir.empty() && fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      par_error(setup, "IO", name,
                fmt::format("IO::{} = \"{}\" is a file, not a directory", name, dir.string()));
  }
}

void check_startup(const Setup& setup) {
  std::vector<support::Diagnostic> found;
  auto run = [&](auto&& check) {
    try {
      check();
    } catch (const support::InputError& e) {
      found.insert(found.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  };
  grid::GridSpec spec;
  bool have_grid = false;
  run([&] {
    spec = grid_spec(setup, ghost_width(setup));
    have_grid = true;
  });
  if (have_grid)
    run([&] {
      double points = 1;
      for (int a = 0; a < 3; ++a) points *= double(spec.points[a] + 2 * spec.ghost);
      check_memory(setup, points, available_memory(), 1);
    });
  run([&] { output_variables(setup, "IOScalar", "out_vars"); });
  run([&] { output_variables(setup, "IOHDF5", "out_vars"); });
  run([&] { check_output_directories(setup); });
  if (!found.empty()) throw support::InputError(std::move(found));
}

} // namespace saguaro::host
