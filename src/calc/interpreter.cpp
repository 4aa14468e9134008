#include "calc/interpreter.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace saguaro::calc {

Interpreter::Interpreter(const Calculation& calc) : calc_(calc) {
  for (const Stage& stage : calc.stages) {
    std::vector<NodeId> roots;
    for (const Store& s : stage.stores) roots.push_back(s.value);
    stage_nodes_.push_back(calc.dag.reachable(roots));
  }
}

double Interpreter::run(const std::vector<NodeId>& order, NodeId result, const PointInputs& in,
                        std::vector<double>& values) const {
  const Dag& dag = calc_.dag;
  for (NodeId id : order) {
    const Node& n = dag.node(id);
    double v = 0.0;
    switch (n.op) {
    case Op::Constant: v = n.value; break;
    case Op::Parameter: v = in.parameters.at(n.index); break;
    case Op::Spacing: v = in.spacing[n.index]; break;
    case Op::Time: v = in.time; break;
    case Op::Coordinate:
      v = in.coordinate[n.index] + n.offset[n.index] * in.spacing[n.index];
      break;
    case Op::Load: v = in.load(n.index, n.offset); break;
    case Op::Add:
      v = n.value;
      for (std::size_t k = 0; k < n.kids.size(); ++k) v += n.weights[k] * values[n.kids[k]];
      break;
    case Op::Mul:
      v = n.value;
      for (std::size_t k = 0; k < n.kids.size(); ++k) {
        double base = values[n.kids[k]];
        long e = std::lround(n.weights[k]);
        double p = 1.0;
        for (long r = 0; r < std::labs(e); ++r) p *= base;
        v *= e >= 0 ? p : 1.0 / p;
      }
      break;
    case Op::Pow: v = std::pow(values[n.kids[0]], values[n.kids[1]]); break;
    case Op::Call: {
      double args[3] = {0.0, 0.0, 0.0};
      for (std::size_t k = 0; k < n.kids.size() && k < 3; ++k) args[k] = values[n.kids[k]];
      v = apply_function(n.fn, args);
      break;
    }
    }
    values[id] = v;
  }
  return values[result];
}

std::vector<double> Interpreter::evaluate(int stage, const PointInputs& in) const {
  std::vector<double> values(calc_.dag.size(), 0.0);
  const auto& order = stage_nodes_.at(stage);
  std::vector<double> out;
  if (!order.empty()) run(order, order.back(), in, values);
  for (const Store& s : calc_.stages[stage].stores) out.push_back(values[s.value]);
  return out;
}

double Interpreter::evaluate_node(NodeId id, const PointInputs& in) const {
  std::vector<double> values(calc_.dag.size(), 0.0);
  return run(calc_.dag.reachable({id}), id, in, values);
}

GridBlock::GridBlock(std::array<int, 3> size_, int ghost_, std::size_t grid_functions)
    : size(size_), ghost(ghost_) {
  std::size_t points = 1;
  for (int a = 0; a < 3; ++a) points *= std::size_t(size[a] + 2 * ghost);
  data.assign(grid_functions, std::vector<double>(points, 0.0));
}

std::size_t GridBlock::linear(int i, int j, int k) const {
  int nx = size[0] + 2 * ghost, ny = size[1] + 2 * ghost;
  return (std::size_t(k + ghost) * ny + std::size_t(j + ghost)) * nx + std::size_t(i + ghost);
}

void run_calculation(const Calculation& calc, GridBlock& block,
                     const std::vector<double>& parameters) {
  Interpreter interp(calc);
  PointInputs in;
  in.spacing = block.spacing;
  in.time = block.time;
  in.parameters = parameters;
  int pi = 0, pj = 0, pk = 0;
  in.load = [&](int gf, const Offset& o) { return block.at(gf, pi + o[0], pj + o[1], pk + o[2]); };
  for (std::size_t s = 0; s < calc.stages.size(); ++s) {
    const Stage& stage = calc.stages[s];
    // The stage reads its inputs up to `reach` points beyond the region it covers.
    const Margin reach = stage_reach(calc, stage);
    const std::array<int, 3>& reach_lo = reach.lo;
    const std::array<int, 3>& reach_hi = reach.hi;
    std::array<int, 3> lo, hi;
    for (int a = 0; a < 3; ++a) {
      lo[a] = -stage.extent_lo[a];
      hi[a] = block.size[a] + stage.extent_hi[a];
      if (stage.extent_lo[a] + reach_lo[a] > block.ghost ||
          stage.extent_hi[a] + reach_hi[a] > block.ghost)
        throw std::invalid_argument("run_calculation: " + std::to_string(block.ghost) +
                                    " ghost points are too few for calculation '" + calc.name +
                                    "'");
    }
    // Results are written after the sweep so a stage never sees its own new values.
    std::vector<std::vector<double>> results;
    for (pk = lo[2]; pk < hi[2]; ++pk)
      for (pj = lo[1]; pj < hi[1]; ++pj)
        for (pi = lo[0]; pi < hi[0]; ++pi) {
          in.coordinate = {block.coordinate(0, pi), block.coordinate(1, pj),
                           block.coordinate(2, pk)};
          results.push_back(interp.evaluate(int(s), in));
        }
    std::size_t r = 0;
    for (int k = lo[2]; k < hi[2]; ++k)
      for (int j = lo[1]; j < hi[1]; ++j)
        for (int i = lo[0]; i < hi[0]; ++i, ++r)
          for (std::size_t st = 0; st < stage.stores.size(); ++st)
            block.at(stage.stores[st].grid_function, i, j, k) = results[r][st];
  }
}

} // namespace saguaro::calc
