#include "calc/code_plan.hpp"

#include "calc/strategy.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace saguaro::calc {

const char* to_string(BufferKind k) {
  switch (k) {
  case BufferKind::Global: return "global";
  case BufferKind::ReadOnly: return "read-only";
  case BufferKind::Register: return "register";
  case BufferKind::SharedTile: return "shared tile";
  case BufferKind::SharedPlane: return "shared plane";
  }
  return "?";
}

namespace {

CodePlan plan_one(const Calculation& calc, const KernelMapping& km, const KernelPlan& kp, int index,
                  const std::map<NodeId, int>& slot) {
  const Dag& dag = calc.dag;
  const Stage& stage = calc.stages[std::size_t(km.stage)];
  CodePlan plan;
  plan.kernel = index;
  plan.stage = km.stage;
  plan.block = km.block;
  plan.e = km.block.iteration_axis;
  plan.f = km.block.f_axis();
  plan.extent_lo = stage.extent_lo;
  plan.extent_hi = stage.extent_hi;
  plan.stores = km.stores;
  plan.temporaries_out = int(km.temporaries.size());

  // Inputs and their buffers, in grid-function order (shared memory is laid out so).
  const std::set<int> written(kp.outputs.begin(), kp.outputs.end());
  std::size_t shared = 0; // doubles
  std::map<std::pair<int, Offset>, Load> load_of;
  for (const InputStencil& s : kp.inputs) {
    PlannedInput in;
    in.grid_function = s.grid_function;
    if (auto it = km.buffering.find(s.grid_function); it != km.buffering.end())
      in.strategy = it->second;
    in.written = written.count(s.grid_function) > 0;
    PlanBuilder builder(plan, shared);
    in.loads = strategy(in.strategy).plan(builder, in.grid_function, s.offsets);
    if (in.loads.size() != s.offsets.size())
      throw std::logic_error(std::string("buffering strategy ") + letter(in.strategy) +
                             " planned " + std::to_string(in.loads.size()) + " loads for " +
                             std::to_string(s.offsets.size()) + " offsets");
    for (const Load& l : in.loads) load_of[{s.grid_function, l.offset}] = l;
    plan.inputs.push_back(std::move(in));
  }
  plan.shared_bytes = shared * sizeof(double);
  plan.barriers = !plan.tiles.empty() || !plan.planes.empty();

  // The body in evaluation_order (depth first from each stored value in turn; the id order
  // computed every derivative first and BSSN's right-hand side spilled 5.7 KB per thread),
  // earlier kernels' temporaries loaded where first used, each store right after its value. A
  // kernel that reads a grid function it writes keeps its stores at the end, where no load can
  // see them.
  bool reads_what_it_writes = false;
  for (const InputStencil& s : kp.inputs)
    reads_what_it_writes = reads_what_it_writes || written.count(s.grid_function) > 0;
  std::vector<Step> stores;
  std::vector<Step>& store_to = reads_what_it_writes ? stores : plan.steps;
  const std::set<NodeId> loaded(kp.temporaries_in.begin(), kp.temporaries_in.end());
  std::set<Offset> global_offsets;
  std::map<NodeId, std::vector<int>> field_stores; // value -> grid functions it is stored to
  for (int st : km.stores) {
    const Store& s = stage.stores[std::size_t(st)];
    field_stores[s.value].push_back(s.grid_function);
  }
  const std::set<NodeId> temporaries_out(km.temporaries.begin(), km.temporaries.end());
  for (NodeId id : evaluation_order(dag, kp)) {
    const Node& n = dag.node(id);
    if (loaded.count(id)) {
      plan.steps.push_back({Step::Kind::LoadTemporary, id, slot.at(id), {}});
    } else {
      Step step{Step::Kind::Evaluate, id, -1, {}};
      if (n.op == Op::Load) {
        step.load = load_of.at({n.index, n.offset});
        if ((step.load.kind == BufferKind::Global || step.load.kind == BufferKind::ReadOnly) &&
            n.offset != Offset{0, 0, 0})
          global_offsets.insert(n.offset);
      } else if (n.op == Op::Coordinate) {
        plan.coordinates[std::size_t(n.index)] = true;
      }
      plan.steps.push_back(step);
    }
    if (auto f = field_stores.find(id); f != field_stores.end()) {
      for (int g : f->second) store_to.push_back({Step::Kind::StoreField, id, g, {}});
      field_stores.erase(f);
    }
    if (temporaries_out.count(id))
      store_to.push_back({Step::Kind::StoreTemporary, id, slot.at(id), {}});
  }
  for (int st : km.stores) { // values uniform over the grid: hoisted, never in the order
    const Store& s = stage.stores[std::size_t(st)];
    if (field_stores.count(s.value))
      store_to.push_back({Step::Kind::StoreField, s.value, s.grid_function, {}});
  }
  plan.steps.insert(plan.steps.end(), stores.begin(), stores.end());
  plan.global_offsets.assign(global_offsets.begin(), global_offsets.end());

  // Values uniform over the grid, and the parameters among them.
  std::set<int> parameters;
  for (NodeId id : dag.reachable(kp.roots)) {
    const Node& n = dag.node(id);
    if (!n.uniform || n.op == Op::Constant) continue;
    plan.uniforms.push_back(id);
    if (n.op == Op::Parameter) parameters.insert(n.index);
  }
  plan.parameters.assign(parameters.begin(), parameters.end());

  // Sums by input: each phase evaluates what its terms need, in the body's order (a value that
  // reads no grid function, such as a coordinate, is evaluated again in every phase using it).
  if (km.block.sums_by_input) {
    std::optional<SumsByInput> by_input = sums_by_input(calc, kp);
    if (!by_input || plan.barriers) // plan_kernel refuses both
      throw std::logic_error("plan_code: sums by input were not checked");
    plan.sums = by_input->values;
    for (const InputGroup& group : by_input->groups) {
      std::vector<NodeId> terms;
      for (const PartialSum& p : group.sums)
        for (const auto& term : p.terms) terms.push_back(term.first);
      std::vector<NodeId> needed = dag.reachable(terms);
      InputPhase phase{group.grid_function, {}, group.sums};
      for (const Step& step : plan.steps)
        if (step.kind == Step::Kind::Evaluate &&
            std::binary_search(needed.begin(), needed.end(), step.node))
          phase.steps.push_back(step);
      plan.phases.push_back(std::move(phase));
    }
  }

  // Arguments.
  std::set<int> fields = written;
  for (const InputStencil& s : kp.inputs) fields.insert(s.grid_function);
  for (int g : fields) plan.fields.push_back({g, written.count(g) > 0});
  for (NodeId t : kp.temporaries_in) plan.temporaries.push_back({t, slot.at(t), false});
  for (NodeId t : km.temporaries) plan.temporaries.push_back({t, slot.at(t), true});
  return plan;
}

} // namespace

CalculationPlan plan_code(const Calculation& calc, const Mapping& mapping) {
  const std::vector<KernelPlan> plans = plan_kernels(calc, mapping);
  CalculationPlan out;
  out.temporaries = temporary_arrays(mapping);
  std::map<NodeId, int> slot;
  for (std::size_t t = 0; t < out.temporaries.size(); ++t) slot.emplace(out.temporaries[t], int(t));
  for (std::size_t k = 0; k < mapping.kernels.size(); ++k)
    out.kernels.push_back(plan_one(calc, mapping.kernels[k], plans[k], int(k), slot));
  return out;
}

std::string to_string(const Calculation& calc, const CodePlan& plan) {
  auto offset = [](const Offset& o) {
    return "(" + std::to_string(o[0]) + "," + std::to_string(o[1]) + "," + std::to_string(o[2]) +
           ")";
  };
  const char* axis[3] = {"x", "y", "z"};
  auto gf = [&calc](int g) { return calc.grid_functions[std::size_t(g)].name; };
  std::ostringstream o;
  o << "kernel " << plan.kernel << " (stage " << plan.stage << "): block " << to_string(plan.block)
    << ", e = " << axis[plan.e] << ", f = " << axis[plan.f] << "; region extended by "
    << offset(plan.extent_lo) << " below and " << offset(plan.extent_hi) << " above\n";
  o << "  stores:";
  for (int st : plan.stores)
    o << " " << gf(calc.stages[std::size_t(plan.stage)].stores[std::size_t(st)].grid_function);
  if (plan.temporaries_out > 0) o << " and " << plan.temporaries_out << " temporaries";
  o << "\n  shared memory: " << plan.shared_bytes << " bytes per block"
    << (plan.barriers ? ", barriers" : ", no barriers") << "\n";
  for (const RegisterPipeline& p : plan.pipelines)
    o << "  register pipeline " << gf(p.grid_function) << ": " << axis[plan.e] << " offsets "
      << p.lo << " .. " << p.hi << "\n";
  for (const auto* set : {&plan.tiles, &plan.planes})
    for (const SharedBuffer& t : *set)
      o << "  " << (set == &plan.tiles ? "shared tile " : "shared plane ") << gf(t.grid_function)
        << ": " << t.nx << " x " << t.nf << " x " << t.ne << " (x, " << axis[plan.f] << ", "
        << axis[plan.e] << ") at " << t.base * sizeof(double) << " bytes, stencil " << offset(t.lo)
        << " .. " << offset(t.hi)
        << (set == &plan.planes ? ", halo slots " + std::to_string(t.halo_slots) : "") << "\n";
  for (const PlannedInput& in : plan.inputs) {
    o << "  input " << gf(in.grid_function) << " [" << letter(in.strategy) << "]"
      << (in.written ? " (written)" : "") << ":";
    for (const Load& l : in.loads) {
      o << " " << offset(l.offset) << "=" << to_string(l.kind);
      if (l.kind == BufferKind::Register) o << "[" << l.element << "]";
      if (l.kind == BufferKind::SharedTile || l.kind == BufferKind::SharedPlane)
        o << "[" << (l.element >= 0 ? "+" : "") << l.element << "]";
    }
    o << "\n";
  }
  std::size_t evaluated = 0, stores = 0;
  for (const Step& s : plan.steps)
    (s.kind == Step::Kind::StoreField || s.kind == Step::Kind::StoreTemporary ? stores
                                                                              : evaluated)++;
  o << "  body: " << evaluated << " values, " << stores << " stores; " << plan.uniforms.size()
    << " uniform values; arguments: " << plan.fields.size() << " fields, "
    << plan.temporaries.size() << " temporaries, " << plan.parameters.size() << " parameters\n";
  if (!plan.phases.empty()) {
    o << "  sums by input: " << plan.sums.size() << (plan.sums.size() == 1 ? " sum" : " sums")
      << " over " << plan.block.tee << " points, in phases";
    for (const InputPhase& phase : plan.phases) {
      std::size_t terms = 0;
      for (const PartialSum& p : phase.sums) terms += p.terms.size();
      o << " " << (phase.grid_function < 0 ? "(no input)" : gf(phase.grid_function)) << " ("
        << terms << (terms == 1 ? " term" : " terms") << ", " << phase.steps.size() << " values)";
    }
    o << "\n";
  }
  return o.str();
}

} // namespace saguaro::calc
