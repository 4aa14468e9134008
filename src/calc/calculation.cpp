#include "calc/calculation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace saguaro::calc {

const char* to_string(GridFunctionRole role) {
  switch (role) {
  case GridFunctionRole::Variable: return "variable";
  case GridFunctionRole::RightHandSide: return "rhs";
  case GridFunctionRole::Intermediate: return "intermediate";
  }
  return "?";
}

int Calculation::find_grid_function(const std::string& name) const {
  for (std::size_t i = 0; i < grid_functions.size(); ++i)
    if (grid_functions[i].name == name) return static_cast<int>(i);
  return -1;
}

namespace {

// Flops one node costs per grid point once its operands are computed. Uniform parts (numeric
// coefficients, parameters, spacings) are hoisted out of the loop and cost nothing here.
void count_node(const Dag& dag, const Node& n, FlopCounts& f) {
  if (n.uniform) return;
  switch (n.op) {
  case Op::Add: {
    long varying = 0, products = 0;
    bool uniform_part = n.value != 0.0;
    for (std::size_t k = 0; k < n.kids.size(); ++k) {
      const Node& kid = dag.node(n.kids[k]);
      if (kid.uniform) {
        uniform_part = true;
        continue;
      }
      ++varying;
      if (std::fabs(n.weights[k]) != 1.0) {
        ++f.mul; // c * term
        ++products;
      } else if (kid.op == Op::Mul) {
        ++products;
      }
    }
    long adds = varying + (uniform_part ? 1 : 0) - 1;
    f.add += adds;
    f.fma += std::min(adds, products);
    break;
  }
  case Op::Mul: {
    long numerator = 0, denominator = 0;
    bool uniform_part = std::fabs(n.value) != 1.0;
    for (std::size_t k = 0; k < n.kids.size(); ++k) {
      if (dag.node(n.kids[k]).uniform) {
        uniform_part = true;
        continue;
      }
      long e = std::lround(n.weights[k]);
      (e > 0 ? numerator : denominator) += std::labs(e);
    }
    if (numerator > 0) f.mul += numerator - 1 + (uniform_part ? 1 : 0);
    if (denominator > 0) {
      f.mul += denominator - 1;
      f.div += 1;
    }
    break;
  }
  case Op::Pow: f.transcendental += 1; break;
  case Op::Call:
    switch (n.fn) {
    case Function::Sqrt: f.sqrt += 1; break;
    case Function::Abs:
    case Function::Min:
    case Function::Max:
    case Function::Sign:
    case Function::Fmod:
    case Function::IfThen: f.other += 1; break;
    default: f.transcendental += 1; break;
    }
    break;
  default: break;
  }
}

} // namespace

FlopCounts count_flops(const Dag& dag, const std::vector<NodeId>& nodes) {
  FlopCounts f;
  for (NodeId id : nodes) count_node(dag, dag.node(id), f);
  return f;
}

void analyse(Calculation& calc) {
  std::vector<NodeId> roots;
  for (const Stage& stage : calc.stages)
    for (const Store& store : stage.stores) roots.push_back(store.value);
  std::vector<NodeId> nodes = calc.dag.reachable(roots);

  calc.node_count = nodes.size();
  calc.flops = FlopCounts{};
  calc.radius = {0, 0, 0};
  std::map<int, std::set<Offset>> stencils;
  for (NodeId id : nodes) {
    const Node& n = calc.dag.node(id);
    count_node(calc.dag, n, calc.flops);
    if (n.op == Op::Load) {
      for (int a = 0; a < 3; ++a) calc.radius[a] = std::max(calc.radius[a], std::abs(n.offset[a]));
      if (calc.grid_functions[n.index].role != GridFunctionRole::Intermediate)
        stencils[n.index].insert(n.offset);
    }
  }
  calc.inputs.clear();
  for (auto& [gf, offsets] : stencils)
    calc.inputs.push_back(InputStencil{gf, std::vector<Offset>(offsets.begin(), offsets.end())});
  calc.outputs.clear();
  if (!calc.stages.empty())
    for (const Store& store : calc.stages.back().stores)
      calc.outputs.push_back(store.grid_function);
}

int Margin::max() const {
  int m = 0;
  for (int a = 0; a < 3; ++a) m = std::max({m, lo[a], hi[a]});
  return m;
}

Margin stage_reach(const Calculation& calc, const Stage& stage) {
  Margin reach;
  std::vector<NodeId> roots;
  for (const Store& st : stage.stores) roots.push_back(st.value);
  for (NodeId id : calc.dag.reachable(roots)) {
    const Node& n = calc.dag.node(id);
    if (n.op != Op::Load) continue;
    for (int a = 0; a < 3; ++a) {
      reach.lo[a] = std::max(reach.lo[a], -n.offset[a]);
      reach.hi[a] = std::max(reach.hi[a], n.offset[a]);
    }
  }
  return reach;
}

Margin required_margin(const Calculation& calc) {
  Margin margin;
  for (const Stage& stage : calc.stages) {
    const Margin reach = stage_reach(calc, stage);
    for (int a = 0; a < 3; ++a) {
      margin.lo[a] = std::max(margin.lo[a], stage.extent_lo[a] + reach.lo[a]);
      margin.hi[a] = std::max(margin.hi[a], stage.extent_hi[a] + reach.hi[a]);
    }
  }
  return margin;
}

double Region::points() const {
  double p = 1;
  for (int a = 0; a < 3; ++a) p *= double(std::max(0, hi[a] - lo[a]));
  return p;
}

RegionSplit split_region(const Region& region, const Margin& margin,
                         const std::array<std::array<bool, 2>, 3>& faces) {
  RegionSplit split;
  Region inner = region;
  for (int a = 0; a < 3; ++a) {
    if (faces[a][0]) inner.lo[a] += margin.lo[a];
    if (faces[a][1]) inner.hi[a] -= margin.hi[a];
  }
  if (inner.empty() || region.empty()) {
    split.interior = Region{region.lo, region.lo};
    if (!region.empty()) split.shell.push_back(region);
    return split;
  }
  split.interior = inner;
  // Peel the faces off slowest axis first: z slabs span the whole region in x and y, y slabs
  // the whole x within the interior's z, x slabs what is left.
  Region rest = region;
  for (int a = 2; a >= 0; --a) {
    Region lower = rest, upper = rest;
    lower.hi[a] = inner.lo[a];
    upper.lo[a] = inner.hi[a];
    if (!lower.empty()) split.shell.push_back(lower);
    if (!upper.empty()) split.shell.push_back(upper);
    rest.lo[a] = inner.lo[a];
    rest.hi[a] = inner.hi[a];
  }
  return split;
}

} // namespace saguaro::calc
