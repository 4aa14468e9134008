#include "cli/inspect.hpp"

#include "calc/print.hpp"

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

} // namespace

nlohmann::json program_to_json(const Program& program) {
  nlohmann::json j;
  j["thorn"] = program.thorn;
  j["implements"] = program.implements;
  j["inherits"] = program.inherits;
  j["fd_order"] = program.fd_order;
  j["features"] = program.features;
  j["parameters"] = nlohmann::json::array();
  for (const auto& p : program.parameters) {
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
    j["parameters"].push_back(jp);
  }
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
  if (!program.parameters.empty()) {
    out += "parameters:\n";
    for (const auto& p : program.parameters) {
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
      out += fmt::format("  {:<12} {:<8} default {}{}  {}\n", p.name, edl::to_string(p.type), value,
                         range, p.description.empty() ? "" : "\"" + p.description + "\"");
    }
  }
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

} // namespace saguaro::cli
