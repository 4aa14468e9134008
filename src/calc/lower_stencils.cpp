// Pass `stencils`, finite-difference stencils: each component equation's right side becomes a
// value in the calculation's DAG, its summed indices expanded into sums and its derivatives
// replaced by their stencils (the built-in D, DupwindAnti, DupwindSymm of the run's order, or
// a user operator's definition). A stencil of a stencil composes exactly; a derivative of any
// other expression reads an intermediate grid function that computes the expression first.
// Stores and the values later equations read are recorded for staging and the race check.
#include "calc/lower_passes.hpp"

#include "calc/fd_coefficients.hpp"
#include "calc/rational.hpp"

#include <algorithm>
#include <numbers>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::calc {

using edl::EdlError;
using edl::Expr;
using edl::Index;

namespace {

const char* const kCoordinates[] = {"x", "y", "z"};
const char* const kSpacings[] = {"dx", "dy", "dz"};

int levi_civita(int a, int b, int c) {
  if (a == b || b == c || a == c) return 0;
  // Even permutations of (1,2,3) are +1.
  return ((b - a + 3) % 3 == 1 && (c - b + 3) % 3 == 1) ? 1 : -1;
}

} // namespace

void build_equation(LoweringState& state, CalculationLowering& work, std::size_t equation) {
  const ExpandedEquation& expanded = work.equations[equation];
  const edl::Equation& eq = *expanded.equation;
  Lowerer lowerer(state, &work);
  for (const ExpandedEquation::Component& component : expanded.components) {
    NodeId value = lowerer.lower(*eq.rhs, component.env);
    work.calc.dag.pin(value); // a named value is computed once, however often it is used
    if (expanded.temporary) {
      work.current[component.name] = value;
      continue;
    }
    int gf;
    if (eq.time_derivative) {
      // A boundary calculation's D_t is the right-hand side on the outer boundary: one per
      // variable besides the one of the interior.
      const bool boundary = work.calc.on_boundary;
      auto& evolved = boundary ? state.boundary_evolved_at : state.evolved_at;
      auto [first, inserted] = evolved.emplace(component.name, eq.loc);
      if (!inserted)
        throw EdlError(eq.loc,
                       boundary ? fmt::format("'{}' has two D_t equations on the boundary; "
                                              "every evolved variable gets at most one there",
                                              component.name)
                                : fmt::format("'{}' has two D_t equations; every evolved "
                                              "variable gets exactly one",
                                              component.name),
                       {{first->second, "the first is here"}});
      gf = lowerer.grid_function(component.name + "rhs", GridFunctionRole::RightHandSide,
                                 component.name);
    } else {
      gf = lowerer.grid_function(component.name, GridFunctionRole::Variable, "");
      work.current[component.name] = value;
    }
    work.stored_at.emplace(gf, eq.lhs.loc);
    auto existing = std::find_if(work.stores.begin(), work.stores.end(),
                                 [&](const auto& st) { return st.first == gf; });
    if (existing != work.stores.end())
      existing->second = value;
    else
      work.stores.emplace_back(gf, value);
  }
}

int Lowerer::grid_function(const std::string& name, GridFunctionRole role,
                           const std::string& evolves) {
  Calculation& calc = work->calc;
  int index = calc.find_grid_function(name);
  if (index >= 0) return index;
  calc.grid_functions.push_back(GridFunctionRef{name, role, evolves});
  work->intermediate_stage.push_back(-1);
  return static_cast<int>(calc.grid_functions.size() - 1);
}

int Lowerer::index_value(const Index& index, const Env& env, const edl::SourceLoc& where) {
  if (!index.is_symbol()) return index.component;
  auto it = env.find(index.symbol);
  if (it == env.end())
    throw EdlError(where, fmt::format("internal error: index '{}' is unbound", index.symbol));
  return it->second;
}

// Calls `body` for every assignment of `dummies` (values 1..3) added to `env` and sums.
NodeId Lowerer::sum_over(const std::vector<std::string>& dummies, const Env& env,
                         const std::function<NodeId(const Env&)>& body) {
  if (dummies.empty()) return body(env);
  std::vector<std::pair<NodeId, double>> terms;
  std::size_t count = 1;
  for (std::size_t k = 0; k < dummies.size(); ++k) count *= 3;
  for (std::size_t combo = 0; combo < count; ++combo) {
    Env inner = env;
    std::size_t c = combo;
    for (const auto& d : dummies) {
      inner[d] = int(c % 3) + 1;
      c /= 3;
    }
    terms.emplace_back(body(inner), 1.0);
  }
  return dag->add(std::move(terms));
}

// Folding a constant may fail (0**-1, 1e308*10) and a composed stencil may grow too wide:
// report either at the innermost expression being built.
NodeId Lowerer::lower(const Expr& e, const Env& env) {
  try {
    return lower_node(e, env);
  } catch (const std::domain_error&) {
    throw EdlError(e.loc, "this constant expression has no finite value (division by zero, "
                          "overflow, or a function outside its domain)");
  } catch (const std::out_of_range&) {
    throw EdlError(e.loc, "the stencil of this derivative reaches more than 500 points from "
                          "the grid point");
  }
}

NodeId Lowerer::lower_node(const Expr& e, const Env& env) {
  const IndexInfo& info = analyse_indices(e);
  Dag& d = *dag;
  switch (e.kind) {
  case Expr::Kind::Number: return d.constant(e.value);
  case Expr::Kind::Tensor:
    return sum_over(info.dummies, env, [&](const Env& inner) { return lower_tensor(e, inner); });
  case Expr::Kind::Derivative:
    return sum_over(info.dummies, env,
                    [&](const Env& inner) { return lower_derivative(e, inner); });
  case Expr::Kind::Call: {
    Function fn;
    function_from_name(e.name, fn);
    std::vector<NodeId> args;
    for (const auto& a : e.args) args.push_back(lower(*a, env));
    return d.call(fn, std::move(args));
  }
  case Expr::Kind::Negate: return d.neg(lower(*e.args[0], env));
  case Expr::Kind::Add:
  case Expr::Kind::Subtract: {
    std::vector<std::pair<NodeId, double>> terms;
    for (const auto& [term, sign] : chain(e)) terms.emplace_back(lower(*term, env), sign);
    return d.add(std::move(terms));
  }
  case Expr::Kind::Multiply: {
    auto factors = chain(e);
    return sum_over(info.dummies, env, [&](const Env& inner) {
      std::vector<std::pair<NodeId, double>> values;
      for (const auto& [factor, sign] : factors) values.emplace_back(lower(*factor, inner), 1.0);
      return d.mul(std::move(values));
    });
  }
  case Expr::Kind::Divide: {
    NodeId num = lower(*e.args[0], env), den = lower(*e.args[1], env);
    double v = 1.0;
    if (d.is_constant(den, &v) && v == 0.0)
      throw EdlError(e.loc, "division by zero: the denominator is the constant 0");
    return d.div(num, den);
  }
  case Expr::Kind::Modulo: {
    NodeId a = lower(*e.args[0], env), b = lower(*e.args[1], env);
    return d.call(Function::Fmod, {a, b});
  }
  case Expr::Kind::Power: {
    NodeId a = lower(*e.args[0], env), b = lower(*e.args[1], env);
    return d.power(a, b);
  }
  }
  return d.constant(0.0);
}

NodeId Lowerer::lower_tensor(const Expr& e, const Env& env) {
  Dag& d = *dag;
  if (def != nullptr && e.name == def->def->operand.name) {
    Offset offset{0, 0, 0};
    for (const Index& i : e.indices) offset[def->axis_of.at(i.symbol)] += i.shift;
    return d.shift(def->operand, offset);
  }
  if (def != nullptr && e.name == "h") {
    int axis =
        e.indices.empty() ? def->axis_of.begin()->second : def->axis_of.at(e.indices[0].symbol);
    return d.spacing(axis);
  }
  if (auto it = s.tensors.find(e.name); it != s.tensors.end()) {
    std::string component = e.name;
    for (const Index& i : e.indices) component += std::to_string(index_value(i, env, e.loc));
    if (auto cur = work->current.find(component); cur != work->current.end()) return cur->second;
    if (it->second.kind == TensorSymbol::Kind::Temporary)
      throw EdlError(e.loc, fmt::format("temporary '{}' is used before it is assigned in "
                                        "calculation '{}'",
                                        component, work->calc.name));
    return d.load(grid_function(component, GridFunctionRole::Variable, ""));
  }
  if (s.component_of.count(e.name) && e.indices.empty()) { // `El1`, a component by name
    if (auto cur = work->current.find(e.name); cur != work->current.end()) return cur->second;
    if (s.tensors.at(s.component_of.at(e.name)).kind == TensorSymbol::Kind::Temporary)
      throw EdlError(e.loc, fmt::format("temporary '{}' is used before it is assigned in "
                                        "calculation '{}'",
                                        e.name, work->calc.name));
    return d.load(grid_function(e.name, GridFunctionRole::Variable, ""));
  }
  if (auto it = s.parameter_index.find(e.name); it != s.parameter_index.end())
    return d.parameter(it->second);
  for (int a = 0; a < 3; ++a) {
    if (e.name == kCoordinates[a]) return d.coordinate(a);
    if (e.name == kSpacings[a]) return d.spacing(a);
  }
  if (e.name == "t") return d.time();
  if (e.name == "PI") return d.constant(std::numbers::pi);
  if (e.name == "E") return d.constant(std::numbers::e);
  if (e.name == "Euc" || e.name == "delta")
    return d.constant(
        index_value(e.indices[0], env, e.loc) == index_value(e.indices[1], env, e.loc) ? 1.0 : 0.0);
  if (e.name == "Eps")
    return d.constant(levi_civita(index_value(e.indices[0], env, e.loc),
                                  index_value(e.indices[1], env, e.loc),
                                  index_value(e.indices[2], env, e.loc)));
  throw undeclared(e.name, e.loc, "a grid function, temporary, parameter or built-in");
}

NodeId Lowerer::lower_derivative(const Expr& e, const Env& env) {
  Dag& d = *dag;
  const int fd_order = s.options.fd_order;
  std::vector<int> axes;
  for (const Index& i : e.indices) axes.push_back(index_value(i, env, e.loc) - 1);
  NodeId operand = lower(*e.args[0], env);
  // A stencil applied to a stencil composes exactly; anything else is computed first into an
  // intermediate grid function that the stencil then reads.
  if (!d.is_stencil_linear(operand)) operand = d.load(intermediate(operand));

  // A derivative is one value, as in Kranc's generated code: computed once, then used.
  NodeId result;
  std::optional<NodeId> inner; // a nested mixed derivative's D_a f
  if (s.operators.count(e.name)) {
    if (const edl::DerivativeDef* def = select_operator(s, e.name, axes)) {
      result = apply_user_operator(*def, e, axes, operand);
    } else {
      // Several directions from a one-direction definition: D_ij = D_i D_j.
      const edl::DerivativeDef* one = one_direction_operator(s, e.name);
      if (one == nullptr)
        throw EdlError(e.loc, fmt::format("no definition of '{}' fits these directions", e.name));
      result = operand;
      for (std::size_t k = axes.size(); k-- > 0;)
        result = apply_user_operator(*one, e, {axes[k]}, result);
    }
  } else if (e.name == "DupwindAnti" || e.name == "DupwindSymm") {
    const UpwindParts parts = upwind_first_derivative(fd_order);
    result = apply_weights(operand, e.name == "DupwindAnti" ? parts.antisymmetric : parts.symmetric,
                           axes[0]);
  } else if (axes.size() == 1) {
    result = apply_weights(operand, centered_first_derivative(fd_order), axes[0]);
  } else if (axes[0] == axes[1]) {
    result = apply_weights(operand, centered_second_derivative(fd_order), axes[0], 2);
  } else if (work != nullptr && s.options.nested_mixed() && std::min(axes[0], axes[1]) == 0) {
    // D_1b f as D_b (D_1 f), D_1 f stored in an intermediate grid function a stage earlier and
    // shared by D_12 and D_13 (LowerOptions::mixed). Only along x: a stage computes all its
    // stores over one region, D_1 f's widened by the radius along y and z, so a D_2 f beside it
    // (for D_23) would read twice the radius along y and double the ghost width a run needs.
    // D_23 stays the product stencil.
    const auto first = centered_first_derivative(fd_order);
    inner = apply_weights(operand, first, 0);
    d.pin(*inner);
    result = apply_weights(d.load(intermediate(*inner)), first, std::max(axes[0], axes[1]));
  } else {
    auto first = centered_first_derivative(fd_order);
    result = apply_weights(operand, first, axes[0], 1, &first, axes[1]);
  }
  d.pin(result);
  // Remember where each grid function is first read at a neighbour, for the race check (a
  // nested mixed derivative reads it in the intermediate's stage).
  // (A constant expression, a parameter's default, has no calculation and reads nothing.)
  if (work == nullptr) return result;
  std::vector<NodeId> roots{result};
  if (inner) roots.push_back(*inner);
  for (NodeId id : d.reachable(roots)) {
    const Node& n = d.node(id);
    if (n.op == Op::Load && n.offset != Offset{0, 0, 0})
      work->stencil_use.emplace(n.index, e.args[0]->loc);
  }
  return result;
}

// sum_k w_k f(x + k e_a) / h_a^power; with `wb`, the product stencil of a mixed derivative
// along axes a and b.
NodeId Lowerer::apply_weights(NodeId operand, const std::vector<StencilWeight>& wa, int axis_a,
                              int power, const std::vector<StencilWeight>* wb, int axis_b) {
  Dag& d = *dag;
  // D(u + c) = D(u) for uniform c: drop the uniform terms first, so they leave no rounding
  // residue in the stencil sum.
  if (d.node(operand).op == Op::Add) {
    Node sum = d.node(operand);
    std::vector<std::pair<NodeId, double>> varying;
    for (std::size_t k = 0; k < sum.kids.size(); ++k)
      if (!d.node(sum.kids[k]).uniform) varying.emplace_back(sum.kids[k], sum.weights[k]);
    operand = d.add(std::move(varying));
  }
  // Points of the stencil where the shifted operand coincides (a uniform operand, or one
  // that does not vary along the axis) are summed exactly, so such a derivative is exactly 0.
  std::map<NodeId, Rational> weights;
  for (const auto& a : wa) {
    Offset offset{0, 0, 0};
    offset[axis_a] = a.offset;
    if (axis_b < 0) {
      weights[d.shift(operand, offset)] += a.weight;
      continue;
    }
    for (const auto& b : *wb) {
      Offset both = offset;
      both[axis_b] += b.offset;
      weights[d.shift(operand, both)] += a.weight * b.weight;
    }
  }
  std::vector<std::pair<NodeId, double>> terms;
  for (const auto& [node, w] : weights)
    if (!w.is_zero()) terms.emplace_back(node, w.to_double());
  std::vector<std::pair<NodeId, double>> factors{{d.add(std::move(terms)), 1.0},
                                                 {d.spacing(axis_a), -double(power)}};
  if (axis_b >= 0) factors.emplace_back(d.spacing(axis_b), -1.0);
  return d.mul(std::move(factors));
}

NodeId Lowerer::apply_user_operator(const edl::DerivativeDef& definition, const Expr& use,
                                    const std::vector<int>& axes, NodeId operand) {
  DefinitionContext ctx;
  ctx.def = &definition;
  ctx.operand = operand;
  const auto& slots = definition.operand.indices;
  std::vector<std::string> distinct;
  for (const Index& i : slots)
    if (std::find(distinct.begin(), distinct.end(), i.symbol) == distinct.end())
      distinct.push_back(i.symbol);
  if (axes.size() == slots.size()) {
    for (std::size_t k = 0; k < slots.size(); ++k) {
      auto [it, inserted] = ctx.axis_of.emplace(slots[k].symbol, axes[k]);
      if (!inserted && it->second != axes[k])
        throw EdlError(use.loc, fmt::format("'{}' is defined on '{}' with a repeated index, so "
                                            "its directions must be equal",
                                            definition.name, definition.operand.name));
    }
  } else {
    for (std::size_t k = 0; k < distinct.size(); ++k) ctx.axis_of[distinct[k]] = axes[k];
  }
  const DefinitionContext* saved = def;
  def = &ctx;
  NodeId result;
  try {
    result = lower(*definition.rhs, {});
  } catch (...) {
    def = saved;
    throw;
  }
  def = saved;
  return result;
}

// The intermediate grid function holding `value`; one per distinct expression.
int Lowerer::intermediate(NodeId value) {
  if (auto it = work->intermediate_of.find(value); it != work->intermediate_of.end())
    return it->second;
  int stage = 0;
  for (NodeId id : dag->reachable({value})) {
    const Node& n = dag->node(id);
    if (n.op == Op::Load && work->intermediate_stage[n.index] >= 0)
      stage = std::max(stage, work->intermediate_stage[n.index] + 1);
  }
  int gf = grid_function(fmt::format("{}_tmp{}", work->calc.name, work->intermediate_of.size() + 1),
                         GridFunctionRole::Intermediate, "");
  work->intermediate_stage[gf] = stage;
  work->intermediate_of[value] = gf;
  return gf;
}

} // namespace saguaro::calc
