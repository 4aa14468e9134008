// The reference interpreter: evaluates a Calculation by walking its DAG, point by point.
// Slow and obviously correct; every backend is tested against it.
#pragma once

#include "calc/calculation.hpp"

#include <array>
#include <functional>
#include <vector>

namespace saguaro::calc {

// What a point needs from the outside world.
struct PointInputs {
  std::function<double(int grid_function, const Offset& offset)> load; // relative to the point
  std::array<double, 3> coordinate{0, 0, 0};                           // of the point itself
  std::array<double, 3> spacing{1, 1, 1};
  double time = 0.0;
  std::vector<double> parameters; // in Program::parameters order
};

class Interpreter {
public:
  explicit Interpreter(const Calculation& calc);

  // The values of stage `stage`'s stores at one point, in Stage::stores order.
  std::vector<double> evaluate(int stage, const PointInputs& in) const;

  // The value of any DAG node at one point.
  double evaluate_node(NodeId id, const PointInputs& in) const;

private:
  double run(const std::vector<NodeId>& order, NodeId result, const PointInputs& in,
             std::vector<double>& values) const;
  const Calculation& calc_;
  std::vector<std::vector<NodeId>> stage_nodes_; // reachable nodes per stage, topological
};

// A uniform block of grid points with ghost zones and one array per grid function of a
// calculation; enough to run a calculation on a small grid in tests.
struct GridBlock {
  std::array<int, 3> size{0, 0, 0}; // interior points per axis
  int ghost = 0;
  std::array<double, 3> origin{0, 0, 0}; // coordinate of interior point (0,0,0)
  std::array<double, 3> spacing{1, 1, 1};
  double time = 0.0;
  std::vector<std::vector<double>> data; // per grid function, (size+2*ghost)^3 values

  GridBlock(std::array<int, 3> size, int ghost, std::size_t grid_functions);
  std::size_t linear(int i, int j, int k) const; // i, j, k in [-ghost, size+ghost)
  double& at(int gf, int i, int j, int k) { return data[gf][linear(i, j, k)]; }
  double at(int gf, int i, int j, int k) const { return data[gf][linear(i, j, k)]; }
  double coordinate(int axis, int index) const { return origin[axis] + index * spacing[axis]; }
};

// Runs every stage of `calc` on the block: intermediates over their extended regions, then
// the outputs on the interior. Throws std::invalid_argument if the ghost zones are too thin.
void run_calculation(const Calculation& calc, GridBlock& block,
                     const std::vector<double>& parameters);

} // namespace saguaro::calc
