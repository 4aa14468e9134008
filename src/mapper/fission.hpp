// Register-fit fission: a partition of one stage into kernels that each keep their point values
// in registers, for calculations too large for one kernel (BSSN's right-hand side keeps up to
// 316 values alive at once and spilled 3.3 KB per thread in one kernel).
//
// The partition search's moves (mapper.hpp) change a kernel at a time and are judged by the
// model's price, so they never reach the splits that matter: every kernel a move makes from
// BSSN's one kernel still needs all of the Ricci tensor and spills. This builds the split from
// the structure instead, with calc::max_live_values (the values alive at once in the order the
// kernel is printed) as the measure of fit:
//   1. a store that does not fit alone gets the largest subexpression of its cone that does
//      fit stored as a temporary by a kernel of its own, again and again until it fits (BSSN:
//      the six components of the trace-free source Ats_ij of the At_ij equations, each the
//      Ricci tensor's component and more; the At_ij stores then load them);
//   2. stores are merged, those sharing the most arithmetic first, while the merged kernel fits
//      (GRTeclyn and CarpetX's Z4c split their right-hand sides by groups of outputs so);
//   3. the temporaries' kernels are merged the same way.
// The mapper hands the results to the empirical finish (MapResult::register_fits), unbuffered at
// the default block configuration, the shape whose live values were counted: the model's
// register estimate (model.hpp) does not yet see what fission saves, so its ranking alone
// would never choose it.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"

#include <vector>

namespace saguaro::mapper {

struct FissionKernel {
  std::vector<int> stores;               // indices into the stage's stores, ascending
  std::vector<calc::NodeId> temporaries; // values stored for later kernels, ascending
  int live_values = 0;                   // calc::max_live_values of the kernel
};

struct Fission {
  std::vector<FissionKernel> kernels; // launch order: temporaries' kernels first
  bool fits = true; // false when a kernel exceeds the budget (a store or temporary alone does)
};

// Live values a kernel of a GPU with `max_registers_per_thread` can hold without spilling: two
// registers per double, less what the index and address arithmetic takes. Measured with ptxas
// (NVRTC 13.0, sm_90) on BSSN's right-hand side split in several ways: kernels of <= 110 live
// values compiled into <= 255 registers without spills, 124-132 spilled 8-360 bytes.
inline constexpr int kAddressRegisters = 35;
int live_value_budget(double max_registers_per_thread);

// The budgets the mapper makes fissions at, as fractions of live_value_budget. The greedy's
// partitions are not better the tighter or the looser the budget (BSSN's RK4 step at 256^3 on
// the H100, fd order 4, one fission each: 195.6 ms at 110 live values, 211.4 at 100, 248.3 at
// 90, 169.8 at 80, 209.4 at 70, 217.8 at 60; one kernel 256.5), so the empirical finish times
// several and keeps the fastest.
inline constexpr double kFissionBudgets[] = {1.0, 0.9, 0.73, 0.64};

// The register-fit partition of stage `stage` of `calc` for kernels of at most `budget` live
// values. Deterministic; a stage that fits in one kernel gives one kernel.
Fission register_fit_fission(const calc::Calculation& calc, int stage, int budget);

} // namespace saguaro::mapper

namespace saguaro::mapper {

// Every stage's register-fit partition as a mapping, with the default block configuration and
// every input unbuffered (the mapper chooses those for the run; tests and `saguaro inspect`
// take this).
calc::Mapping register_fit_mapping(const calc::Calculation& calc, int budget);

} // namespace saguaro::mapper
