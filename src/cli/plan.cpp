#include "cli/plan.hpp"

#include <stdexcept>

namespace saguaro::cli {

namespace {

nlohmann::json offset_json(const calc::Offset& o) {
  return {o[0], o[1], o[2]};
}

nlohmann::json buffer_json(const calc::Calculation& calc, const calc::SharedBuffer& t, bool plane) {
  nlohmann::json j = {{"grid_function", calc.grid_functions[std::size_t(t.grid_function)].name},
                      {"base_bytes", t.base * sizeof(double)},
                      {"lo", offset_json(t.lo)},
                      {"hi", offset_json(t.hi)},
                      {"nx", t.nx},
                      {"nf", t.nf},
                      {"ne", t.ne}};
  if (plane) j["halo_slots"] = t.halo_slots;
  return j;
}

void check_sizes(const calc::Program& program, const std::vector<calc::Mapping>& mappings) {
  if (mappings.size() != program.calculations.size())
    throw std::invalid_argument("one mapping per calculation expected");
}

} // namespace

nlohmann::json plan_to_json(const calc::Calculation& calc, const calc::CodePlan& plan) {
  const char* axis[3] = {"x", "y", "z"};
  auto gf = [&calc](int g) { return calc.grid_functions[std::size_t(g)].name; };
  nlohmann::json j;
  j["kernel"] = plan.kernel;
  j["stage"] = plan.stage;
  j["block"] = calc::to_string(plan.block);
  j["e"] = axis[plan.e];
  j["f"] = axis[plan.f];
  j["extent_lo"] = plan.extent_lo;
  j["extent_hi"] = plan.extent_hi;
  j["stores"] = nlohmann::json::array();
  for (int st : plan.stores)
    j["stores"].push_back(
        gf(calc.stages[std::size_t(plan.stage)].stores[std::size_t(st)].grid_function));
  j["temporaries_stored"] = plan.temporaries_out;
  j["shared_bytes"] = plan.shared_bytes;
  j["barriers"] = plan.barriers;
  j["register_pipelines"] = nlohmann::json::array();
  for (const calc::RegisterPipeline& p : plan.pipelines)
    j["register_pipelines"].push_back(
        {{"grid_function", gf(p.grid_function)}, {"lo", p.lo}, {"hi", p.hi}});
  j["shared_tiles"] = nlohmann::json::array();
  for (const calc::SharedBuffer& t : plan.tiles)
    j["shared_tiles"].push_back(buffer_json(calc, t, false));
  j["shared_planes"] = nlohmann::json::array();
  for (const calc::SharedBuffer& t : plan.planes)
    j["shared_planes"].push_back(buffer_json(calc, t, true));
  j["inputs"] = nlohmann::json::array();
  for (const calc::PlannedInput& in : plan.inputs) {
    nlohmann::json loads = nlohmann::json::array();
    for (const calc::Load& l : in.loads) {
      nlohmann::json jl = {{"offset", offset_json(l.offset)}, {"buffer", calc::to_string(l.kind)}};
      if (l.buffer >= 0) jl["index"] = l.buffer;
      if (l.kind != calc::BufferKind::Global && l.kind != calc::BufferKind::ReadOnly)
        jl["element"] = l.element;
      loads.push_back(jl);
    }
    j["inputs"].push_back({{"grid_function", gf(in.grid_function)},
                           {"strategy", std::string(1, calc::letter(in.strategy))},
                           {"written", in.written},
                           {"loads", loads}});
  }
  std::size_t evaluated = 0, stores = 0;
  for (const calc::Step& s : plan.steps)
    (s.kind == calc::Step::Kind::StoreField || s.kind == calc::Step::Kind::StoreTemporary
         ? stores
         : evaluated)++;
  j["body"] = {{"values", evaluated}, {"stores", stores}, {"uniform_values", plan.uniforms.size()}};
  // Sums by input (calc/sums_by_input.hpp): per phase its input, values and terms added.
  j["sums_by_input"] = nlohmann::json::array();
  for (const calc::InputPhase& phase : plan.phases) {
    std::size_t terms = 0;
    for (const calc::PartialSum& p : phase.sums) terms += p.terms.size();
    j["sums_by_input"].push_back(
        {{"input",
          phase.grid_function < 0 ? nlohmann::json() : nlohmann::json(gf(phase.grid_function))},
         {"values", phase.steps.size()},
         {"terms", terms}});
  }
  nlohmann::json args = nlohmann::json::array();
  for (const calc::FieldArgument& a : plan.fields)
    args.push_back({{"field", gf(a.grid_function)}, {"written", a.written}});
  for (const calc::TemporaryArgument& t : plan.temporaries)
    args.push_back({{"temporary", t.slot}, {"node", t.node}, {"written", t.written}});
  for (int p : plan.parameters) args.push_back({{"parameter", p}});
  j["arguments"] = args;
  return j;
}

std::string plans_to_text(const calc::Program& program,
                          const std::vector<calc::Mapping>& mappings) {
  check_sizes(program, mappings);
  std::string out;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const calc::Calculation& calc = program.calculations[c];
    const calc::CalculationPlan plan = calc::plan_code(calc, mappings[c]);
    out += (c ? "\n" : "") + std::string("calculation ") + calc.name + ": " +
           calc::to_string(calc, mappings[c]) + "\n";
    if (!plan.temporaries.empty())
      out += "  " + std::to_string(plan.temporaries.size()) + " scratch arrays\n";
    for (const calc::CodePlan& k : plan.kernels) out += calc::to_string(calc, k);
  }
  return out;
}

nlohmann::json plans_to_json(const calc::Program& program,
                             const std::vector<calc::Mapping>& mappings) {
  check_sizes(program, mappings);
  nlohmann::json j = nlohmann::json::array();
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const calc::Calculation& calc = program.calculations[c];
    const calc::CalculationPlan plan = calc::plan_code(calc, mappings[c]);
    nlohmann::json jc = {{"calculation", calc.name},
                         {"mapping", calc::to_string(calc, mappings[c])},
                         {"scratch_arrays", plan.temporaries.size()},
                         {"kernels", nlohmann::json::array()}};
    for (const calc::CodePlan& k : plan.kernels) jc["kernels"].push_back(plan_to_json(calc, k));
    j.push_back(jc);
  }
  return j;
}

} // namespace saguaro::cli
