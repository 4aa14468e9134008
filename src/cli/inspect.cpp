#include "cli/inspect.hpp"

#include "calc/print.hpp"

#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace saguaro::cli {

using calc::Calculation;
using calc::GridFunctionRole;
using calc::Program;

namespace {

nlohmann::json flops_json(const calc::FlopCounts& f) {
  return {{"add", f.add},
          {"mul", f.mul},
          {"div", f.div},
          {"sqrt", f.sqrt},
          {"transcendental", f.transcendental},
          {"other", f.other},
          {"fma", f.fma},
          {"total", f.total()}};
}

std::string offset_text(const calc::Offset& o) {
  return fmt::format("({},{},{})", o[0], o[1], o[2]);
}

std::string output_text(const Calculation& calc, int gf) {
  const auto& ref = calc.grid_functions[gf];
  if (ref.role == GridFunctionRole::RightHandSide)
    return fmt::format("{} (D_t {})", ref.name, ref.evolves);
  return ref.name;
}

nlohmann::json parameters_json(const std::vector<calc::Parameter>& parameters) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : parameters) {
    nlohmann::json jp = {
        {"name", p.name}, {"type", edl::to_string(p.type)}, {"description", p.description}};
    if (p.type == edl::ParameterType::Keyword) {
      jp["default"] = p.default_keyword;
      jp["values"] = p.keyword_values;
    } else if (p.type == edl::ParameterType::Boolean) {
      jp["default"] = p.default_value != 0.0;
    } else {
      jp["default"] = p.default_value;
      jp["min"] = p.min ? nlohmann::json(*p.min) : nlohmann::json(nullptr);
      jp["max"] = p.max ? nlohmann::json(*p.max) : nlohmann::json(nullptr);
    }
    if (!p.inherited_from.empty()) jp["inherited_from"] = p.inherited_from;
    out.push_back(jp);
  }
  return out;
}

std::string parameters_text(const std::vector<calc::Parameter>& parameters) {
  if (parameters.empty()) return "";
  std::string out = "parameters:\n";
  for (const auto& p : parameters) {
    std::string value;
    if (p.type == edl::ParameterType::Keyword)
      value = fmt::format("\"{}\"", p.default_keyword);
    else if (p.type == edl::ParameterType::Boolean)
      value = p.default_value != 0.0 ? "true" : "false";
    else
      value = fmt::format("{}", p.default_value);
    std::string range;
    if (p.min || p.max)
      range = fmt::format(", range {} to {}", p.min ? fmt::format("{}", *p.min) : "-infinity",
                          p.max ? fmt::format("{}", *p.max) : "infinity");
    const std::string from =
        p.inherited_from.empty() ? "" : fmt::format("  (inherited from {})", p.inherited_from);
    out += fmt::format("  {:<12} {:<8} default {}{}  {}{}\n", p.name, edl::to_string(p.type), value,
                       range, p.description.empty() ? "" : "\"" + p.description + "\"", from);
  }
  return out;
}

} // namespace

nlohmann::json program_to_json(const Program& program) {
  nlohmann::json j;
  j["thorn"] = program.thorn;
  j["implements"] = program.implements;
  j["inherits"] = program.inherits;
  j["fd_order"] = program.fd_order;
  j["features"] = program.features;
  j["parameters"] = parameters_json(program.parameters);
  j["variables"] = program.variables;
  j["evolved"] = program.evolved;
  j["groups"] = program.groups;
  j["calculations"] = nlohmann::json::array();
  for (const Calculation& calc : program.calculations) {
    nlohmann::json jc;
    jc["name"] = calc.name;
    jc["schedule"] = calc.schedule_bin;
    jc["schedule_word"] = calc.schedule_word;
    jc["on_boundary"] = calc.on_boundary;
    jc["inputs"] = nlohmann::json::array();
    for (const auto& in : calc.inputs) {
      nlohmann::json stencil = nlohmann::json::array();
      for (const auto& o : in.offsets) stencil.push_back({o[0], o[1], o[2]});
      jc["inputs"].push_back(
          {{"gf", calc.grid_functions[in.grid_function].name}, {"stencil", stencil}});
    }
    jc["outputs"] = nlohmann::json::array();
    for (int gf : calc.outputs) {
      const auto& ref = calc.grid_functions[gf];
      nlohmann::json out = {{"gf", ref.name}, {"role", calc::to_string(ref.role)}};
      if (!ref.evolves.empty()) out["evolves"] = ref.evolves;
      jc["outputs"].push_back(out);
    }
    jc["flops"] = flops_json(calc.flops);
    jc["nodes"] = calc.node_count;
    jc["radius"] = calc.radius;
    jc["stages"] = nlohmann::json::array();
    for (const auto& stage : calc.stages) {
      nlohmann::json js;
      js["stores"] = nlohmann::json::array();
      for (const auto& st : stage.stores)
        js["stores"].push_back(calc.grid_functions[st.grid_function].name);
      js["extent_lo"] = stage.extent_lo;
      js["extent_hi"] = stage.extent_hi;
      jc["stages"].push_back(js);
    }
    j["calculations"].push_back(jc);
  }
  return j;
}

std::string program_to_text(const Program& program, bool expressions) {
  std::string out = fmt::format("thorn {} (implements {}), finite differences of order {}\n",
                                program.thorn, program.implements, program.fd_order);
  out += parameters_text(program.parameters);
  out += fmt::format("grid functions ({}): {}\n", program.variables.size(),
                     fmt::join(program.variables, " "));
  out += fmt::format("evolved ({}): {}\n", program.evolved.size(),
                     program.evolved.empty() ? "none"
                                             : fmt::format("{}", fmt::join(program.evolved, " ")));
  for (const Calculation& calc : program.calculations) {
    out += fmt::format("\ncalculation {}  scheduled {} {}{}\n", calc.name, calc.schedule_word,
                       calc.schedule_bin, calc.on_boundary ? " on boundary" : "");
    out += fmt::format("  inputs ({}):\n", calc.inputs.size());
    for (const auto& in : calc.inputs) {
      std::vector<std::string> offsets;
      for (const auto& o : in.offsets) offsets.push_back(offset_text(o));
      out += fmt::format("    {:<10} {} point{}: {}\n", calc.grid_functions[in.grid_function].name,
                         in.offsets.size(), in.offsets.size() == 1 ? "" : "s",
                         fmt::join(offsets, " "));
    }
    std::vector<std::string> outputs;
    for (int gf : calc.outputs) outputs.push_back(output_text(calc, gf));
    out += fmt::format("  outputs ({}): {}\n", outputs.size(), fmt::join(outputs, ", "));
    const auto& f = calc.flops;
    out += fmt::format("  flops per point: {} (add {}, mul {}, div {}, sqrt {}, transcendental {}, "
                       "other {}; fma-able pairs {})\n",
                       f.total(), f.add, f.mul, f.div, f.sqrt, f.transcendental, f.other, f.fma);
    out += fmt::format("  DAG: {} nodes; stencil radius {},{},{}\n", calc.node_count,
                       calc.radius[0], calc.radius[1], calc.radius[2]);
    out += fmt::format("  stages: {}\n", calc.stages.size());
    if (calc.stages.size() > 1) {
      for (std::size_t s = 0; s < calc.stages.size(); ++s) {
        const auto& stage = calc.stages[s];
        std::vector<std::string> names;
        for (const auto& st : stage.stores)
          names.push_back(calc.grid_functions[st.grid_function].name);
        out += fmt::format("    stage {}: {} on the interior extended by ({},{},{}) below and "
                           "({},{},{}) above\n",
                           s, fmt::join(names, " "), stage.extent_lo[0], stage.extent_lo[1],
                           stage.extent_lo[2], stage.extent_hi[0], stage.extent_hi[1],
                           stage.extent_hi[2]);
      }
    }
    if (expressions) out += "  expressions:\n" + calc::print_calculation(calc, program.parameters);
  }
  return out;
}

// ---- the lowering's state after a pass ------------------------------------------------------

namespace {

using calc::CalculationLowering;
using calc::LoweringState;

// How far the lowering has come: pass positions are those of calc::lowering_passes().
bool has_run(const LoweringState& state, std::string_view pass) {
  return static_cast<int>(state.passes_run) > calc::find_lowering_pass(pass);
}

std::vector<std::string> passes_run(const LoweringState& state) {
  std::vector<std::string> names;
  for (std::size_t p = 0; p < state.passes_run; ++p)
    names.push_back(calc::lowering_passes()[p].name);
  return names;
}

// The program as far as it is built; complete once staging has run.
Program snapshot(const LoweringState& state) {
  Program program = state.program;
  for (const CalculationLowering& work : state.calculations)
    program.calculations.push_back(work.calc);
  for (const auto& v : program.variables)
    if (state.evolved_at.count(v)) program.evolved.push_back(v);
  return program;
}

// The temporaries' components, in declaration order.
std::vector<std::string> temporaries(const LoweringState& state) {
  std::vector<std::string> out;
  for (const auto& ref : state.thorn->temporaries) {
    std::vector<std::string> names{ref.name};
    for (std::size_t r = 0; r < ref.indices.size(); ++r) {
      std::vector<std::string> next;
      for (const auto& prefix : names)
        for (int c = 1; c <= 3; ++c) next.push_back(prefix + std::to_string(c));
      names = std::move(next);
    }
    out.insert(out.end(), names.begin(), names.end());
  }
  return out;
}

std::string index_list(const std::vector<calc::IndexUse>& uses) {
  std::vector<std::string> parts;
  for (const auto& u : uses) parts.push_back((u.upper ? "^" : "_") + u.symbol);
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, " "));
}

std::string source_line(const edl::SourceLoc& loc) {
  if (!loc.valid()) return "";
  std::string_view line = loc.file->line(loc.line);
  const auto begin = line.find_first_not_of(" \t");
  return begin == std::string_view::npos ? "" : std::string(line.substr(begin));
}

std::string component_text(const calc::ExpandedEquation::Component& c) {
  std::vector<std::string> values;
  for (const auto& [letter, value] : c.env) values.push_back(fmt::format("{}={}", letter, value));
  return values.empty() ? c.name : fmt::format("{} ({})", c.name, fmt::join(values, ","));
}

std::string role_text(const calc::GridFunctionRef& ref) {
  if (ref.role == GridFunctionRole::RightHandSide) return "D_t " + ref.evolves;
  return calc::to_string(ref.role);
}

// The values the stencils pass built, printed as the stages will hold them: intermediates,
// then the calculation's stores.
calc::Calculation as_one_stage(const CalculationLowering& work) {
  calc::Calculation calc = work.calc;
  calc::Stage stage;
  for (const auto& [value, gf] : work.intermediate_of) stage.stores.push_back({gf, value});
  for (const auto& [gf, value] : work.stores) stage.stores.push_back({gf, value});
  calc.stages = {stage};
  return calc;
}

} // namespace

nlohmann::json lowering_to_json(const LoweringState& state) {
  nlohmann::json j;
  if (has_run(state, "staging")) j = program_to_json(snapshot(state));
  j["after"] = state.passes_run == 0 ? "" : calc::lowering_passes()[state.passes_run - 1].name;
  j["passes"] = passes_run(state);
  if (has_run(state, "staging")) return j;
  const Program& program = state.program;
  j["thorn"] = program.thorn;
  j["implements"] = program.implements;
  j["fd_order"] = program.fd_order;
  j["variables"] = program.variables;
  j["tensors"] = program.tensors;
  j["temporaries"] = temporaries(state);
  if (has_run(state, "parameters")) j["parameters"] = parameters_json(program.parameters);
  if (!has_run(state, "indices")) return j;
  j["operators"] = nlohmann::json::array();
  for (const auto& [name, def] : state.operators) j["operators"].push_back(name);
  j["groups"] = program.groups;
  j["calculations"] = nlohmann::json::array();
  for (const CalculationLowering& work : state.calculations) {
    const calc::Calculation& calc = work.calc;
    nlohmann::json jc = {{"name", calc.name},
                         {"schedule", calc.schedule_bin},
                         {"schedule_word", calc.schedule_word},
                         {"on_boundary", calc.on_boundary}};
    jc["equations"] = nlohmann::json::array();
    for (const calc::ExpandedEquation& eq : work.equations) {
      nlohmann::json je = {{"line", eq.equation->loc.line},
                           {"lhs", eq.equation->lhs.name},
                           {"time_derivative", eq.equation->time_derivative},
                           {"temporary", eq.temporary}};
      je["free"] = nlohmann::json::array();
      for (const auto& u : eq.free) je["free"].push_back((u.upper ? "^" : "_") + u.symbol);
      je["summed"] = nlohmann::json::array();
      for (const auto& u : eq.summed) je["summed"].push_back(u.symbol);
      je["components"] = nlohmann::json::array();
      for (const auto& c : eq.components)
        je["components"].push_back({{"name", c.name}, {"indices", c.env}});
      jc["equations"].push_back(je);
    }
    if (has_run(state, "stencils")) {
      jc["grid_functions"] = nlohmann::json::array();
      for (const auto& ref : calc.grid_functions) {
        nlohmann::json g = {{"name", ref.name}, {"role", calc::to_string(ref.role)}};
        if (!ref.evolves.empty()) g["evolves"] = ref.evolves;
        jc["grid_functions"].push_back(g);
      }
      jc["stores"] = nlohmann::json::array();
      for (const auto& [gf, value] : work.stores)
        jc["stores"].push_back(calc.grid_functions[gf].name);
      jc["intermediates"] = nlohmann::json::array();
      for (const auto& [value, gf] : work.intermediate_of)
        jc["intermediates"].push_back(calc.grid_functions[gf].name);
      jc["dag_nodes"] = calc.dag.size();
    }
    j["calculations"].push_back(jc);
  }
  return j;
}

std::string lowering_to_text(const LoweringState& state, bool expressions) {
  const auto names = passes_run(state);
  std::string out = fmt::format("after pass '{}' ({} of {} lowering passes: {})\n",
                                names.empty() ? "" : names.back(), names.size(),
                                calc::lowering_passes().size(), fmt::join(names, ", "));
  if (state.passes_run > 0)
    out += fmt::format("  {}\n", calc::lowering_passes()[state.passes_run - 1].summary);
  if (has_run(state, "staging")) return out + program_to_text(snapshot(state), expressions);
  const Program& program = state.program;
  out += fmt::format("thorn {} (implements {}), finite differences of order {}\n", program.thorn,
                     program.implements, program.fd_order);
  out += fmt::format("grid functions ({}): {}\n", program.variables.size(),
                     fmt::join(program.variables, " "));
  const auto temps = temporaries(state);
  out += fmt::format("temporaries ({}): {}\n", temps.size(),
                     temps.empty() ? "none" : fmt::format("{}", fmt::join(temps, " ")));
  if (has_run(state, "parameters")) out += parameters_text(program.parameters);
  if (!has_run(state, "indices")) return out;
  std::vector<std::string> operators;
  for (const auto& [name, def] : state.operators) operators.push_back(name);
  out += fmt::format("derivative operators ({}): {}\n", operators.size(),
                     operators.empty() ? "none" : fmt::format("{}", fmt::join(operators, " ")));
  for (const auto& [group, members] : program.groups)
    out += fmt::format("group {}: {}\n", group, fmt::join(members, " "));
  for (const CalculationLowering& work : state.calculations) {
    const calc::Calculation& calc = work.calc;
    out += fmt::format("\ncalculation {}  scheduled {} {}{}\n", calc.name, calc.schedule_word,
                       calc.schedule_bin, calc.on_boundary ? " on boundary" : "");
    for (const calc::ExpandedEquation& eq : work.equations) {
      std::vector<std::string> components;
      for (const auto& c : eq.components) components.push_back(component_text(c));
      std::vector<std::string> summed;
      for (const auto& u : eq.summed) summed.push_back(u.symbol);
      out += fmt::format("  line {}: {}\n    free {}; summed {}; {} component{}: {}\n",
                         eq.equation->loc.line, source_line(eq.equation->loc), index_list(eq.free),
                         summed.empty() ? "none" : fmt::format("{}", fmt::join(summed, " ")),
                         components.size(), components.size() == 1 ? "" : "s",
                         fmt::join(components, ", "));
    }
    if (!has_run(state, "stencils")) continue;
    std::vector<std::string> gfs;
    for (const auto& ref : calc.grid_functions)
      gfs.push_back(fmt::format("{} ({})", ref.name, role_text(ref)));
    out += fmt::format("  grid functions ({}): {}\n", gfs.size(), fmt::join(gfs, ", "));
    out += fmt::format("  DAG: {} nodes\n  values:\n", calc.dag.size());
    out += calc::print_calculation(as_one_stage(work), program.parameters);
  }
  return out;
}

} // namespace saguaro::cli
