// Sums by input: a kernel whose thread computes its t_ee points together, one input grid
// function at a time (BlockConfig::sums_by_input), instead of point after point.
//
// A stored value that is a long sum of terms, each reading one input (the micro-benchmark B3:
// B += 90 terms over ten inputs), is evaluated point by point as 90 loads and one sum: the
// loads of ten arrays are in flight at once and each point's values leave the registers before
// its neighbours along e could reuse them. With the loops interchanged, a thread walks its
// t_ee points once per input, that input's values along e in a register queue, and adds each
// point's terms of that input to the point's running sum; only the t_ee sums live across the
// inputs. A hand-written B3 in that order took 545-551 us against 679 us for one thread per
// point (H200, 2026-11-29, bench/results/2026-11-29-register-queues-H200.md); the same order did
// not pay for Maxwell (six sums, every input in three of them).
//
// The rule: every stored value, taken as the sum of its terms (a value that is not a sum is one
// term), has terms that each read at most one grid function; the kernel stores no temporaries
// and loads none; it has more than one point per thread. Additions are regrouped (each input's
// terms are added to the running sum in turn), so results differ from the point-by-point order
// in rounding only.
#pragma once

#include "calc/dag.hpp"
#include "calc/mapping.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace saguaro::calc {

// The terms of one stored value that read one grid function, with their weights.
struct PartialSum {
  NodeId value = 0;                             // the stored value (a root)
  std::vector<std::pair<NodeId, double>> terms; // its terms of this group
  bool operator==(const PartialSum&) const = default;
};

// One input's part of every stored value, added in one pass over the thread's points.
struct InputGroup {
  int grid_function = -1;       // -1: terms that read no grid function (coordinates, uniforms)
  std::vector<PartialSum> sums; // per stored value with terms here, in root order
  bool operator==(const InputGroup&) const = default;
};

// The most running sums (stored values times points) a thread keeps: the finish offers t_ee up
// to this over the stored values, and the model counts the points in lockstep up to it.
inline constexpr int kMaxRunningSums = 16;

// The points whose loads a thread issues together under `block`: with sums by input its t_ee
// points, as many as kMaxRunningSums running sums of `stored_values` allow; else 1.
double points_in_lockstep(const BlockConfig& block, int stored_values);

struct SumsByInput {
  // The stored values (KernelPlan::roots, each once) and the constant each sum starts from.
  std::vector<std::pair<NodeId, double>> values;
  std::vector<InputGroup> groups; // the no-input group first, then by grid function
};

// The kernel's stored values split by input; nullopt when the rule above does not hold, with
// `why` (if given) saying which value reads two inputs in one term.
std::optional<SumsByInput> sums_by_input(const Calculation& calc, const KernelPlan& plan,
                                         std::string* why = nullptr);

} // namespace saguaro::calc
