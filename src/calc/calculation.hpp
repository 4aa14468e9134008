// The lowered form of an EDL thorn: parameters, grid functions, and one Calculation per
// `begin calculation` block. A Calculation is the value every later stage (model, mapper,
// codegen, runtime) consumes: a DAG of loads at integer offsets, parameters, coordinates and
// arithmetic, with the stores it makes, split into stages where a derivative of an
// expression needs an intermediate grid function.
#pragma once

#include "calc/dag.hpp"
#include "edl/ast.hpp"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace saguaro::calc {

struct Parameter {
  std::string name;
  edl::ParameterType type = edl::ParameterType::Real;
  std::string description;
  double default_value = 0.0;     // real, int, boolean (0/1)
  std::string default_keyword;    // keyword
  std::optional<double> min, max; // nullopt: open end
  std::vector<std::string> keyword_values;
  // Set when the parameter is an inherited thorn's (its param.ccl, `inherit THORN`): that
  // thorn's name as `inherit` writes it. Empty: the script's own.
  std::string inherited_from;
};

enum class GridFunctionRole {
  Variable,      // declared in `begin variables`
  RightHandSide, // the time derivative of an evolved variable (`D_t phi` stores `phirhs`)
  Intermediate,  // introduced by the lowering for a derivative of an expression
};
const char* to_string(GridFunctionRole role);

struct GridFunctionRef {
  std::string name;
  GridFunctionRole role = GridFunctionRole::Variable;
  std::string evolves; // RightHandSide: the evolved variable
};

struct Store {
  int grid_function = 0; // index into Calculation::grid_functions
  NodeId value = 0;
};

// A stage is computed after all earlier ones; it must cover the interior extended by
// `extent_lo/hi` points per axis because later stages read its results at those offsets.
struct Stage {
  std::vector<Store> stores;
  std::array<int, 3> extent_lo{0, 0, 0}, extent_hi{0, 0, 0};
};

struct FlopCounts {
  long add = 0; // additions and subtractions
  long mul = 0; // multiplications
  long div = 0; // divisions
  long sqrt = 0;
  long transcendental = 0; // sin, cos, exp, log, pow, ...
  long other = 0;          // abs, min, max, sign, fmod
  long fma = 0;            // multiply-add pairs the compiler can fuse (not added to total)
  long total() const { return add + mul + div + sqrt + transcendental + other; }
};

struct InputStencil {
  int grid_function = 0;
  std::vector<Offset> offsets; // sorted
};

struct Calculation {
  std::string name;
  std::string schedule_bin;
  std::string schedule_word; // "at" or "in"
  bool on_boundary = false;
  edl::SourceLoc loc;

  std::vector<GridFunctionRef> grid_functions; // everything this calculation loads or stores
  Dag dag;
  std::vector<Stage> stages; // at least one; the last holds the calculation's outputs

  // Derived by analyse(): ---------------------------------------------------------------
  std::vector<InputStencil> inputs;   // grid functions read, with their offset sets
  std::vector<int> outputs;           // grid functions stored by the last stage
  FlopCounts flops;                   // per grid point, all stages, shared nodes counted once
  std::size_t node_count = 0;         // DAG nodes reachable from the stores
  std::array<int, 3> radius{0, 0, 0}; // the largest |offset| of any load, per axis

  int find_grid_function(const std::string& name) const;
};

// The flops per grid point of evaluating `nodes` (each once; uniform ones are hoisted and
// free). analyse() counts a whole calculation with it; the model counts one kernel's nodes.
FlopCounts count_flops(const Dag& dag, const std::vector<NodeId>& nodes);

// Fills the derived fields of `calc` from its DAG and stages.
void analyse(Calculation& calc);

// How far (per axis, below and above) a calculation reads beyond the region it computes:
// the maximum over stages of extent + stencil reach. The ghost width must be at least this.
struct Margin {
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
  int max() const;
};
Margin required_margin(const Calculation& calc);
// How far one stage's stores read around the point they are stored at (its loads' offsets).
Margin stage_reach(const Calculation& calc, const Stage& stage);

// A region of local indices, [lo, hi) per axis.
struct Region {
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
  bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
  double points() const;
  bool operator==(const Region&) const = default;
};

// A calculation's region split around a ghost exchange: the interior, which reads no point
// of the ghost zones at `faces` ([axis][lower=0/upper=1]), being `margin` away from them, and
// the boundary shell, the rest: at most six boxes, the z faces' whole x-y planes first, then
// the y faces' (within the interior's z), then the x faces'. When the region is too thin to
// have an interior, the interior is empty and the shell is the whole region.
struct RegionSplit {
  Region interior;
  std::vector<Region> shell;
};
RegionSplit split_region(const Region& region, const Margin& margin,
                         const std::array<std::array<bool, 2>, 3>& faces);

// A calculation made from another of the program by folding combinations into its stores
// (calc/fold.hpp; the host's step folding adds them): the one it folds, and per store of that
// one's last stage the stores of this one's last stage that take its place (the same store, or
// the fold's targets).
struct FoldedForm {
  std::size_t plain = 0;
  std::vector<std::vector<int>> stores;
};

struct Program {
  std::string thorn;
  std::string implements;
  std::vector<std::string> inherits;
  std::map<std::string, bool> features;
  std::vector<Parameter> parameters;
  std::vector<std::string> variables; // grid function components, declaration order
  std::vector<std::string> evolved;   // variables with a D_t equation
  std::map<std::string, std::vector<std::string>> groups;  // group -> components
  std::map<std::string, std::vector<std::string>> tensors; // tensor variable -> components
  std::vector<Calculation> calculations;
  std::map<std::size_t, FoldedForm> folded_forms; // calculations index -> how it was made
  int fd_order = 4;
};

} // namespace saguaro::calc
