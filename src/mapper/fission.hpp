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

#include <iterator>
#include <string>
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

// The budgets the mapper makes fissions at, as fractions of live_value_budget: temporaries are
// extracted until every store fits `extract`, then kernels merged while they fit `merge`. The
// greedy's partitions are not better the tighter or the looser the budget, so the empirical
// finish times several and keeps the fastest. BSSN's right-hand side at 256^3 on the H100,
// unbuffered at z 32x8x8, bench_mapper over 25 pairs (bench/results/2026-11-28-model-refit-H100.md;
// without the run's array-layout constants; with them, 2026-11-28-mapper-layout-H100.md, 80 merged
// to 150 22.3 ms, 130 24.4, 171 25.8, 110 28.7, 70 to 110 26.2, 110 to 130 29.9):
//   fd order 4: extract 80 live values (0.73), merged to 110: 26.4 ms (7 kernels), 150: 28.0,
//   130: 28.7, 171: 30.5, 80: 35.1; extract 70 merged to 130: 29.0; extract 95 or 110: 33-45;
//   the one kernel 60.5 ms;
//   fd order 8 (only extract 110 stores fewer temporaries than outputs): merged to 171: 81.3 ms,
//   130: 84.2, 150: 90.4, 110: 93.9; the one kernel 178 ms.
// Merging past the fit spills a few hundred bytes per thread, but stores and reloads fewer
// temporaries: that pays, as long as the extracted temporaries are the right ones. What a run
// keeps is the fastest folded stage form (the finish times those), whose order differs: in
// runs of bench/bssn/bssn.par at 256^3 (2026-11-28) the stages-2-3 forms of fd 4 took 28.6 ms
// (80 merged to 140), 30.1 (80 to 150), 36.5 (80 to 110), 38.4 (110 to 130), 41.9 (110 to 171),
// 45.0 (80 to 80); of fd 8 67.4 ms (110 to 171) and 85.6 (110 to 130). So the pairs are 80 merged
// to 140 and 150, and 110 merged to 171 and 130; 110 to 171 took fd 8's step from 336 to 257 ms.
// The first and third are the GPU test's (GpuMatchesCpuBssn takes them by position).
// `share` > 0: after the merge, each value that several kernels compute is stored once by an
// earlier kernel instead, when that saves at least `share` arithmetic operations per point
// (recomputation against storing; largest saving first, at most 32 values).
struct FissionBudget {
  double extract, merge;
  int share = 0;
};
inline constexpr FissionBudget kFissionBudgets[] = {
    {0.73, 1.27}, {0.73, 1.36}, {1.0, 1.55}, {1.0, 1.18}};

// The register-fit partition of stage `stage` of `calc` for kernels of at most `budget` live
// values. Deterministic; a stage that fits in one kernel gives one kernel.
// Kernels are merged (steps 2 and 3) while they stay within `merge_budget` (<= 0: `budget`).
Fission register_fit_fission(const calc::Calculation& calc, int stage, int budget,
                             int merge_budget = 0);

} // namespace saguaro::mapper

namespace saguaro::mapper {

// Every stage's register-fit partition as a mapping, with the default block configuration and
// every input unbuffered (the mapper chooses those for the run; tests and `saguaro inspect`
// take this).
calc::Mapping register_fit_mapping(const calc::Calculation& calc, int budget, int merge_budget = 0,
                                   int share = 0);

// Whether `mapping` stores more temporaries than `calc`'s stages store grid functions. Such a
// fission moves more bytes through memory than the calculation writes, and each form of the
// calculation a run compiles keeps scratch arrays for them: BSSN at fd order 8 (whose
// derivatives the fission extracts) made 200-217 temporaries, 31 GB at 256^3, and ran the H100
// out of memory. The mapper does not offer those.
bool too_many_temporaries(const calc::Calculation& calc, const calc::Mapping& mapping);

// The fissions the mapper offers the empirical finish on a GPU of `max_registers_per_thread`:
// register_fit_mapping at each pair of `budgets` (fractions of live_value_budget; the mapper's
// are kFissionBudgets, bench_mapper measures a wider grid), in that order, leaving out those
// that split no stage, repeat an earlier one or store too many temporaries.
// The block the empirical finish also times every register-fit fission at, beside the default
// (unbuffered kernels: only the block changes). The fastest block of the same fission differs
// between GPUs by a few percent: BSSN fd 4 at 256^3, 80 live values merged to 150, on the H200
// (2026-11-29, bench/results/2026-11-29-fission-blocks-H200.md) 18.21 ms at z 64x4x4 against
// 18.81 at z 32x8x8 and 19.88 at z 32x4x8; on the H100 (2026-11-28, before tile groups,
// 2026-11-28-mapper-bssn-sectors-H100.md) 80 merged to 110 ran 25.39 ms at z 32x4x8, 26.37 at
// z 32x8x8, 27.13 at z 64x4x4.
inline constexpr const char* kFissionTwinBlock = "z 64x4x4";

struct FissionCandidate {
  calc::Mapping mapping;
  std::string origin; // "register-fit fission (80 live values, merged to 140)"
};
std::vector<FissionCandidate>
register_fit_candidates(const calc::Calculation& calc, double max_registers_per_thread,
                        const std::vector<FissionBudget>& budgets = {std::begin(kFissionBudgets),
                                                                     std::end(kFissionBudgets)});

} // namespace saguaro::mapper
