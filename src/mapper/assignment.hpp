// Buffering assignment: which strategy (u, r, b, p, c, q) each input grid function of one kernel
// gets, at one block configuration. Hu, Koppelman & Brandt, Sec. VI: Algorithm 1 with the
// efficiency function eq. 3, in (b-1)N(N+1)/2 model evaluations at most; the exhaustive b^N
// search validates it on small kernels; "by performance" (eq. 3 without the storage factor)
// is the paper's Figure 3 baseline.
//
// Times are seconds of one launch over the kernel's region (model::LaunchGeometry), so that
// the assignment and the block-configuration search compare the same quantity.
#pragma once

#include "calc/mapping.hpp"
#include "model/model.hpp"

#include <limits>
#include <string>
#include <vector>

namespace saguaro::mapper {

// A set of buffering strategies (bit 1 << int(Buffering)). kAllStrategies: every strategy of
// the list (calc/strategies/list.cpp), however many it has.
using StrategySet = unsigned;
inline constexpr StrategySet kAllStrategies = ~StrategySet{0};
inline constexpr StrategySet strategy_bit(calc::Buffering b) {
  return 1u << unsigned(b);
}

// What an assignment prices against.
struct PricingContext {
  const model::Device* device = nullptr;
  model::LaunchGeometry geometry;
  model::Combination combination = model::Combination::Hu;
  StrategySet strategies = kAllStrategies; // the moves the search may make
};

// The strategies that reuse values (every one of the list but u) and apply to `input` of a
// kernel iterating along `axis`, in the list's order (r, b, p, c). Empty when the input has no
// reuse (a single offset): Algorithm 1 buffers only grid functions with r_i > 0.
std::vector<calc::Buffering> buffering_moves(const model::KernelProfile::Input& input, int axis,
                                             StrategySet allowed = kAllStrategies);

// One accepted move (a column of Hu et al.'s Figure 3).
struct AssignmentStep {
  int input = -1; // KernelProfile::inputs index
  std::string grid_function;
  calc::Buffering to = calc::Buffering::Unbuffered;
  double seconds_before = 0, seconds_after = 0;
  double efficiency = 0;                                               // eq. 3 of the accepted move
  int moves_priced = 0;                                                // model calls of this step
  bool reg_limited = false, smem_limited = false, roc_limited = false; // eq. 3's indicators
  int blocks_per_sm = 0;                                               // after the move
  double occupancy = 0;                                                // after the move
  double M_reg = 0, M_smem = 0, M_roc = 0; // after the move [elements per block]
  bool descent = false; // a change of the descent after Algorithm 1 (efficiency: the drop)
};

struct Assignment {
  std::vector<calc::Buffering> strategies; // per KernelProfile::inputs
  model::Prediction prediction;
  double seconds = std::numeric_limits<double>::infinity(); // inf: no valid assignment
  long model_calls = 0;
  long descent_calls = 0;            // of model_calls, those of the descent after Algorithm 1
  std::vector<AssignmentStep> trace; // accepted moves, in order (efficiency / performance)
  bool valid() const { return seconds < std::numeric_limits<double>::infinity(); }
};

enum class AssignmentMethod {
  Efficiency,  // Algorithm 1 with eq. 3, then a descent over single changes (the default)
  Performance, // the same choosing by -dT alone (Figure 3's "ByPerf"), then the descent
  Exhaustive,  // every combination: prod_i (1 + |moves_i|) model calls
  Unbuffered,  // every input unbuffered: one model call (the mapper's screen of partitions)
};
const char* to_string(AssignmentMethod m);

// The kernel's strategies are ignored (every input starts unbuffered); its block is used.
Assignment assign_buffering(const model::KernelProfile& kernel, const PricingContext& context,
                            AssignmentMethod method = AssignmentMethod::Efficiency);

// The number of assignments the exhaustive search prices for `kernel`.
double exhaustive_size(const model::KernelProfile& kernel, StrategySet allowed = kAllStrategies);

// The seconds of one launch of `kernel` with its strategies as given (one model call), with
// ptxas's resources where `compiled` has them; +inf when the model finds the mapping invalid.
double launch_seconds(const model::KernelProfile& kernel, const PricingContext& context,
                      model::Prediction* prediction = nullptr,
                      const model::CompiledResources& compiled = {});

} // namespace saguaro::mapper
