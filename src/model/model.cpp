// The performance model (model.hpp). Formulas follow Hu, Koppelman & Brandt, Table IV, with
// the paper's names; each departure from the paper is marked "Beyond the paper" with why.
#include "model/model.hpp"

#include "calc/strategy.hpp"
#include "calc/sums_by_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace saguaro::model {

using calc::Buffering;

double estimated_registers(const KernelProfile& kernel) {
  long loads = 0;
  for (const KernelProfile::Input& in : kernel.inputs) loads += long(in.offsets.size());
  return kRegisterBase + kRegistersPerFlop * double(kernel.flops.total()) -
         kRegistersPerLoad * double(loads);
}

int register_cap(const Device& d, int threads, int min_blocks) {
  int cap = d.max_registers_per_thread > 0 ? int(d.max_registers_per_thread) : 255;
  if (min_blocks > 0 && threads > 0 && d.registers_per_sm > 0)
    cap =
        std::min(cap, 8 * int(std::floor(d.registers_per_sm / (double(threads) * min_blocks) / 8)));
  return cap;
}

int intermediate_registers(const KernelProfile& kernel) {
  // predict counts one element per unbuffered input itself (Table IVd): the rest is n_reg^inter.
  const long r = std::lround(estimated_registers(kernel) / 2) - long(kernel.inputs.size());
  return int(std::max(0L, r));
}

KernelProfile profile_kernel(const calc::Calculation& calc, const calc::KernelMapping& km,
                             const calc::KernelPlan& plan) {
  KernelProfile p;
  p.description = calc::to_string(calc, km);
  p.block = km.block;
  for (const calc::InputStencil& in : plan.inputs) {
    KernelProfile::Input input;
    input.grid_function = in.grid_function;
    input.name = calc.grid_functions[std::size_t(in.grid_function)].name;
    input.offsets = in.offsets;
    if (auto b = km.buffering.find(in.grid_function); b != km.buffering.end())
      input.strategy = b->second;
    input.written = std::binary_search(plan.outputs.begin(), plan.outputs.end(), in.grid_function);
    p.inputs.push_back(std::move(input));
  }
  for (calc::NodeId t : plan.temporaries_in) // read at the point only, unbuffered
    p.inputs.push_back(
        {-1, fmt::format("tmp{}", t), {calc::Offset{0, 0, 0}}, Buffering::Unbuffered, false});
  for (KernelProfile::Input& input : p.inputs) {
    for (int e : {1, 2}) input.shapes[std::size_t(e)] = stencil_shape(input.offsets, e);
    input.shaped = true;
  }
  p.stores = int(plan.outputs.size() + km.temporaries.size());
  p.flops = calc::count_flops(calc.dag, plan.nodes);
  p.intermediate_registers = intermediate_registers(p);
  const calc::Stage& stage = calc.stages[std::size_t(km.stage)];
  p.extent_lo = stage.extent_lo;
  p.extent_hi = stage.extent_hi;
  return p;
}

std::vector<KernelProfile> profile_mapping(const calc::Calculation& calc,
                                           const calc::Mapping& mapping) {
  const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, mapping);
  std::vector<KernelProfile> out;
  for (std::size_t k = 0; k < plans.size(); ++k)
    out.push_back(profile_kernel(calc, mapping.kernels[k], plans[k]));
  return out;
}

const char* to_string(Combination c) {
  return c == Combination::Hu ? "hu" : "chemora";
}

double Prediction::seconds(double points, Combination c) const {
  const double per_point = c == Combination::Hu ? T_hu : T_chemora;
  return T_launch + points * points_per_sm_scale * per_point * seconds_per_cycle;
}

double Prediction::seconds(const LaunchGeometry& g, Combination c) const {
  const double per_point = c == Combination::Hu ? T_hu : T_chemora;
  return T_launch + g.rounds * g.points_per_block * per_point * seconds_per_cycle;
}

double launch_seconds(const Device& d, const LaunchGeometry& g, double cycles_per_point) {
  const double seconds_per_cycle = d.clock_ghz > 0 ? 1e-9 / d.clock_ghz : 0;
  return d.launch_overhead * 1e-6 +
         g.rounds * g.points_per_block * cycles_per_point * seconds_per_cycle;
}

bool describes_interconnect(const Device& d) {
  return d.interconnect_latency > 0 && d.interconnect_bandwidth > 0;
}

double ghost_fill_seconds(const Device& d, double bytes) {
  if (bytes <= 0 || d.ghost_fill_bandwidth <= 0) return 0;
  return d.ghost_fill_latency * 1e-6 + bytes / (d.ghost_fill_bandwidth * 1e9);
}

double message_seconds(const Device& d, double bytes) {
  if (bytes <= 0) return 0;
  if (!describes_interconnect(d))
    throw std::invalid_argument(
        fmt::format("the device description '{}' does not describe its interconnect "
                    "(interconnect_latency {} us, interconnect_bandwidth {} GB/s): "
                    "`mpirun -n 2 saguaro calibrate --interconnect` measures them",
                    d.name, d.interconnect_latency, d.interconnect_bandwidth));
  return d.interconnect_latency * 1e-6 + bytes / (d.interconnect_bandwidth * 1e9);
}

LaunchGeometry launch_geometry(const calc::BlockConfig& block, const std::array<long, 3>& extent,
                               const Device& d) {
  const int e = block.iteration_axis, f = block.f_axis();
  auto blocks_along = [](long n, int t) { return (std::max(n, 1L) + t - 1) / t; };
  LaunchGeometry g;
  g.blocks = blocks_along(extent[0], block.tx) * blocks_along(extent[std::size_t(f)], block.tf) *
             blocks_along(extent[std::size_t(e)], block.tee);
  g.points_per_block = double(block.tx) * block.tf * block.tee;
  const double sms = d.sm_count > 0 ? d.sm_count : 1;
  g.rounds = std::ceil(double(g.blocks) / sms);
  return g;
}

Prediction::LaunchParts Prediction::parts(double points) const {
  // cycles per point per SM -> seconds of a launch over `points`, as in seconds()
  const double scale = points * points_per_sm_scale * seconds_per_cycle;
  return {T_launch, T_L2 * scale, T_GM * scale, T_data * scale, T_lat * scale, s_i * scale};
}

namespace {

using calc::round_line;
using calc::round_line_plus;

// sqrt of a supply-and-demand ratio for the capacity-miss terms (1 - sqrt(R)): the paper has
// capacity misses only when R < 1, so the ratio is capped at 1 (no negative misses).
double sqrt_supply(double r) {
  return std::sqrt(std::clamp(r, 0.0, 1.0));
}

} // namespace

Residency resident_blocks(const Device& d, double threads, int registers_per_thread,
                          double shared_bytes) {
  // The smallest of the limits, and which one it is.
  const double warp = d.warp_size > 0 ? d.warp_size : 32;
  const double warps = std::ceil(threads / warp);
  const double unit = d.register_allocation_unit > 0 ? d.register_allocation_unit : 1;
  const double regs_per_warp = std::ceil(registers_per_thread * warp / unit) * unit;
  struct Limit {
    double blocks;
    const char* name;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Limit limits[] = {
      {std::floor(d.max_threads_per_sm / (warps * warp)), "threads"},
      {d.max_blocks_per_sm, "blocks"},
      {std::floor(d.registers_per_sm / (regs_per_warp * warps)), "registers"},
      {shared_bytes > 0 ? std::floor(d.shared_memory_per_sm / shared_bytes) : inf, "shared memory"},
  };
  const Limit* tight = &limits[0];
  for (const Limit& l : limits)
    if (l.blocks < tight->blocks) tight = &l;
  Residency r;
  r.blocks = int(std::max(0.0, tight->blocks));
  r.limit = tight->name;
  r.occupancy = r.blocks * warps / (d.max_threads_per_sm / warp);
  return r;
}

// One function of ~270 lines on purpose: it follows Hu et al.'s Tables IVa-d and eq. 1-2 in the
// paper's order (resources, L2 traffic, DRAM traffic, latency, issue, combination), each step
// reading the ones before it, so that it can be checked against the paper line by line (and the
// "beyond the paper" changes stand out where they apply); the mapper calls it ~10^5 times per
// calculation, on scratch kept between calls.
Prediction predict(const KernelProfile& kernel, const Device& d,
                   const CompiledResources& compiled) {
  Prediction p;
  const calc::BlockConfig& blk = kernel.block;
  const double tx = blk.tx, tf = blk.tf, tee = blk.tee, plane = tx * tf;
  const int threads = blk.threads();
  const double LS_L2 = d.LS_L2(), LS_c = d.LS_c();

  // Each input's terms from its strategy (calc/strategies/), and the path its loads take:
  // U the global path, C the read-only cache's, `direct` the strategy's own traffic terms.
  // Beyond the paper: where plain global loads are cached in L1 (compute capability >= 7.0),
  // the global path takes the read-only path's formulas too.
  const std::vector<const calc::Strategy*>& strategies = calc::strategies();
  const double alpha = round_line(tx, LS_L2) / tx;
  const calc::ModelBlock terms_block{tx, tf, tee, plane, LS_L2, alpha};
  struct In {
    StencilShape s;
    std::size_t strategy;
    calc::ModelTerms t;
  };
  // Scratch reused between calls: the mapper calls predict ~10^5 times per calculation.
  static thread_local std::vector<In> U, C, direct;
  for (auto* set : {&U, &C, &direct}) set->clear();
  const std::size_t e = std::size_t(blk.iteration_axis);
  for (const KernelProfile::Input& input : kernel.inputs) {
    const bool cached = input.shaped && (e == 1 || e == 2);
    const calc::Strategy& strategy = calc::strategy(input.strategy);
    In in{cached ? input.shapes[e] : stencil_shape(input.offsets, blk.iteration_axis),
          std::size_t(input.strategy),
          {}};
    in.t = strategy.model(in.s, terms_block);
    switch (strategy.path) {
    case calc::TrafficPath::Global: (d.global_loads_cached_in_l1 != 0 ? C : U).push_back(in); break;
    case calc::TrafficPath::ReadOnly: C.push_back(in); break;
    case calc::TrafficPath::Direct: direct.push_back(in); break;
    }
  }

  // --- Table IVd: resources and the occupancy they allow ----------------------------------
  // (Registers and shared memory are whole numbers of elements: adding them is exact in any
  // order, so every path's inputs are added in turn.)
  double reg_elements = kernel.intermediate_registers;
  double code_smem = 0; // what the generated code allocates (calc::ModelTerms::smem_code)
  for (const auto* set : {&U, &C, &direct})
    for (const In& in : *set) {
      reg_elements += in.t.registers;
      p.M_smem += in.t.smem_paper;
      code_smem += in.t.smem_code;
    }
  p.M_reg = plane * reg_elements;
  p.registers_from_ptxas = compiled.registers > 0;
  if (p.registers_from_ptxas) {
    p.registers_per_thread = compiled.registers;
    p.M_reg = double(compiled.registers) * threads / 2;
    p.spill_bytes = compiled.spill_bytes;
  } else {
    // Beyond the paper: a thread has at most max_registers_per_thread (255); what the
    // estimate needs beyond that spills, kSpillBytesPerRegister of spill stores and loads per
    // register missing (fitted with the estimate: model.hpp). The spills are L2 traffic below,
    // as ptxas's are once the kernel has been compiled.
    const double cap = register_cap(d, threads, blk.min_blocks);
    const double needed = std::ceil(2 * reg_elements);
    p.registers_per_thread = int(std::min(needed, cap));
    p.M_reg = plane * std::min(reg_elements, cap / 2);
    p.spill_bytes = needed > cap ? int(kSpillBytesPerRegister * (needed - cap)) : 0;
  }
  const double smem_bytes = compiled.shared_bytes >= 0 ? compiled.shared_bytes : 8 * code_smem;
  p.shared_bytes = smem_bytes;

  auto invalid = [&](std::string why) {
    p.valid = false;
    p.invalid_reason = std::move(why);
  };
  if (threads > d.max_threads_per_block)
    invalid(fmt::format("{} threads per block; the device allows {}", threads,
                        d.max_threads_per_block));
  else if (smem_bytes > d.shared_memory_per_block)
    invalid(fmt::format("needs {:.1f} KiB of shared memory per block; the device allows {:.0f} KiB",
                        smem_bytes / 1024, d.shared_memory_per_block / 1024));
  else if (p.M_reg > d.K_reg())
    invalid(fmt::format("needs {:.0f} registers per block; the register file holds {:.0f}",
                        2 * p.M_reg, d.registers_per_sm));

  const Residency residency = resident_blocks(d, threads, p.registers_per_thread, smem_bytes);
  p.blocks_per_sm = residency.blocks;
  p.occupancy_limit = residency.limit;
  p.occupancy = residency.occupancy;
  if (p.valid && p.blocks_per_sm == 0)
    invalid(fmt::format("no block fits on an SM ({} per thread, {:.1f} KiB shared per block)",
                        p.registers_per_thread, smem_bytes / 1024));
  const double resident = std::max(1, p.blocks_per_sm);
  const double inf = std::numeric_limits<double>::infinity();

  // K_roc. Beyond the paper: on GPUs where L1 and shared memory are one array (Volta on),
  // the read-only cache is what the resident blocks' shared memory leaves of it.
  p.K_roc = d.readonly_cache_per_sm / 8;
  if (d.unified_l1_shared_per_sm > 0)
    p.K_roc = std::clamp((d.unified_l1_shared_per_sm - resident * smem_bytes) / 8, 0.0, p.K_roc);

  // --- Table IVa: L2 <-> SM traffic [elements per grid point] -------------------------------
  p.alpha = alpha;
  for (const In& in : U) p.D_L2_u += in.s.offsets * alpha; // (1 + r_i) alpha: one per offset
  // The direct path: each strategy's traffic and L2 lines (Table IVb), summed per strategy
  // in the list's order (r, b, p: the paper's columns).
  static thread_local std::vector<double> direct_l2, direct_lines;
  direct_l2.assign(strategies.size(), 0);
  direct_lines.assign(strategies.size(), 0);
  for (const In& in : direct) {
    direct_l2[in.strategy] += in.t.traffic;
    direct_lines[in.strategy] += in.t.l2_footprint;
  }
  auto column = [&](Buffering b, const std::vector<double>& by_strategy) {
    return by_strategy[std::size_t(b)];
  };
  p.D_L2_r = column(Buffering::Register, direct_l2);
  p.D_L2_b = column(Buffering::Shared, direct_l2);
  p.D_L2_p = column(Buffering::Plus, direct_l2);
  for (const In& in : C) p.M_roc += round_line_plus(in.s.s_x + tx, LS_c) * (1 + in.s.s_f) * tf;
  // Beyond the paper: every resident block keeps its own lines in the SM's cache.
  p.R_SND_RO = p.M_roc > 0 ? p.K_roc / (resident * p.M_roc) : inf;
  double c_misses = 0;
  for (const In& in : C) c_misses += (in.s.r_e + in.s.r_o) * (1 - sqrt_supply(p.R_SND_RO)) * plane;
  // Beyond the paper: on GPUs whose L1 and shared memory are one array (Volta on) the cache
  // holds 128-byte lines (M_roc, its capacity) but a miss fills 32-byte sectors (L2's line), so
  // the rows' traffic from L2 is counted in sectors. In whole lines a 32-wide row of doubles
  // with its halo cost 1.5 rows and a 64-wide one 1.25, and the model preferred 64-wide blocks
  // that ran no faster (BSSN's fissions on the H100;
  // bench/results/2026-11-28-model-sectors-H100.md). Such an L1 (256 KB on Hopper) also keeps
  // the rows one row of the block loads for the rows beside it: the block fills its t_f rows
  // and their s_f halo rows once, as DRAM's cold misses count them (Table IVb), not (1 + s_f)
  // rows for each of its t_f rows as the paper's small read-only cache did. Counted the paper's
  // way, the 8th-order wave's kernels (s_f = 8) had 2-3 times their L2 traffic and latency
  // rounds, and the model over-priced them by 36% (median; 14% counted so:
  // bench/results/2026-11-29-model-l1-rows-H200.md).
  double filled = p.M_roc;
  if (d.unified_l1_shared_per_sm > 0) {
    filled = 0;
    for (const In& in : C) filled += round_line_plus(in.s.s_x + tx, LS_L2) * (tf + in.s.s_f);
  }
  p.D_L2_c = C.empty() ? 0 : (filled + c_misses) / plane;
  p.D_L2_store = alpha * kernel.stores;
  // Spilled values go to local memory through L1 and L2 (ptxas's bytes per thread, or the
  // estimate's; a thread computes one point per iteration).
  const double spill = p.spill_bytes / 8.0;
  p.D_L2_total = p.D_L2_u;
  for (double d_l2 : direct_l2) p.D_L2_total += d_l2;
  p.D_L2_total += p.D_L2_c;
  p.D_L2_total += p.D_L2_store;
  p.D_L2_total += spill;

  // --- Table IVb: DRAM traffic [elements per grid point] ----------------------------------
  for (const In& in : U) p.M_L2_u += round_line_plus(in.s.s_x + tx, LS_L2) * (1 + in.s.s_f) * tf;
  p.M_L2_r = column(Buffering::Register, direct_lines);
  p.M_L2_bp = column(Buffering::Shared, direct_lines) + column(Buffering::Plus, direct_lines);
  double M_L2_direct = 0; // whole lines: exact in any order
  for (double lines : direct_lines) M_L2_direct += lines;
  for (const In& in : C)
    // Beyond the paper: below R_SND^RO = 1 its rows (1 + s_f) t_f (1 - sqrt(R)) fall under
    // the cold-miss rows t_f + s_f as R nears 1, so a grid function that crowds the cache
    // would cut everyone's DRAM traffic; capacity misses can only add rows, never remove
    // them. (Without this, a search exploits the step: many inputs in c look best.)
    p.M_L2_c += round_line_plus(in.s.s_x + tx, LS_c) *
                (p.R_SND_RO > 1 ? tf + in.s.s_f
                                : std::max(tf + in.s.s_f,
                                           (1 + in.s.s_f) * tf * (1 - sqrt_supply(p.R_SND_RO))));
  double u_misses = 0, cm = 0;
  if (d.l2_front_share <= 0) {
    const double l2_demand = d.sm_count * (p.M_L2_u + M_L2_direct + p.M_L2_c);
    p.R_SND_L2 = l2_demand > 0 ? d.K_L2() / l2_demand : inf;
    const double l2_miss = 1 - sqrt_supply(p.R_SND_L2);
    for (const In& in : U) u_misses += (in.s.r_e + in.s.r_o) * l2_miss * plane;
    for (const In& in : C) cm += (in.s.r_e + in.s.r_o) * l2_miss * plane;
  } else {
    // Beyond the paper: the planes an input is read at along e come from DRAM again when
    // neither L1 nor L2 still holds them. L1 holds a thread's walk along e when the resident
    // threads' s_e + 1 planes of the inputs read through it fit; a block of one point per
    // thread (t_ee = 1) walks nothing, its e-neighbours are other blocks'. L2 holds them when
    // the front of the launch fits in its share phi_L2: every resident block's whole tile of
    // every input read. Nsight Compute on the H200 (B3 at t_ee 1-8: DRAM reads 1.55 -> 2.88
    // GB, L2 hit rate 61% -> 36%; B4 at 32 registers and t_ee 8: 2.8x the compulsory reads,
    // at 64 registers 1.2x; bench/results/2026-11-28-l2-front-H200.md).
    double walk = 0;
    for (const auto* set : {&U, &C})
      for (const In& in : *set) walk += in.s.s_e > 0 ? in.s.s_e + 1 : 0;
    // Measured, the L1 lets most of the walk go well before its demand reaches the capacity
    // (it also holds the rows' x and f halos): a share (demand / supply)^2 misses
    // (0.27-0.31 at supply 1.6-1.9 times the demand, all of it at 0.8-0.85).
    const double l1_supply = walk > 0 ? p.K_roc / (resident * threads * walk) : inf;
    const double l1_miss = tee > 1 ? std::min(1.0, 1 / (l1_supply * l1_supply)) : 1.0;
    const double front = d.sm_count * resident * plane * tee *
                         double(U.size() + C.size() + direct.size()); // elements
    p.R_SND_L2 = front > 0 ? d.l2_front_share * d.K_L2() / front : inf;
    const double miss = l1_miss * (1 - sqrt_supply(p.R_SND_L2));
    for (const In& in : U) u_misses += in.s.s_e * miss * plane;
    for (const In& in : C) cm += in.s.s_e * miss * plane;
  }
  p.D_GM_u = U.empty() ? 0 : (p.M_L2_u + u_misses) / plane;
  p.D_GM_c = C.empty() ? 0 : (p.M_L2_c + cm) / plane;
  // Beyond the paper: every element read comes from DRAM at least once, however well the
  // caches reuse it. Without this floor M_c^L2 vanishes as R_SND^RO approaches 1 from below.
  p.D_GM_u = std::max(p.D_GM_u, alpha * double(U.size()));
  p.D_GM_c = std::max(p.D_GM_c, alpha * double(C.size()));
  p.D_GM_total = p.D_GM_u;
  for (double d_l2 : direct_l2) p.D_GM_total += d_l2; // the direct path's reads come from DRAM
  p.D_GM_total += p.D_GM_c;
  p.D_GM_total += p.D_L2_store;

  // --- Table IVc: exposed latency [cycles per grid point per SM] ---------------------------
  double shared_loads = 0, barriers = 0;
  for (const In& in : direct) {
    shared_loads += in.t.shared_loads;
    barriers += in.t.barriers;
  }
  const long n_fp = kernel.flops.total();
  // Beyond the paper: a thread keeps more global and L2 loads in flight the more registers it
  // has (the compiler issues its loads earlier and holds them), so lambda_g and lambda_L2 are
  // those of a 64-register thread scaled by (registers / 64)^gamma_R. With constant lambdas the
  // model priced 255-register kernels as too latency-bound and 32-register ones as too little
  // (bench/results/2026-11-28-model-registers-H100-H200.md). Only with ptxas's count: on the
  // search's estimate the term chose kernels of many estimated registers that ptxas then gave
  // fewer (B3 on the H200: 1,286 against 771 us).
  const double register_in_flight =
      d.parallel_register_exponent == 0 || !p.registers_from_ptxas
          ? 1.0
          : std::pow(std::max(p.registers_per_thread, 16) / 64.0, d.parallel_register_exponent);
  // Beyond the paper: a thread that sums its points by input issues one input's loads for all
  // of them together, where point after point each point's loads wait on its own, so lambda_g
  // and lambda_L2 grow with the points in lockstep, (points)^gamma_P; the points count only
  // up to kMaxRunningSums running sums, beyond which the sums crowd out the loads they were to
  // overlap (Maxwell: six sums a point, no gain at 4 points). Fitted to 322 lockstep kernels
  // of B1-B4 on the H200 (bench/results/2026-11-29-lockstep-model-H200.md).
  const double in_flight =
      register_in_flight *
      (d.lockstep_exponent == 0
           ? 1.0
           : std::pow(calc::points_in_lockstep(blk, kernel.stores), d.lockstep_exponent));
  p.N_g = std::ceil(p.D_GM_total / (d.parallel_global * in_flight));
  p.N_L2 = std::ceil(p.D_L2_total / (d.parallel_l2 * in_flight));
  p.N_s = std::ceil(shared_loads / d.parallel_shared);
  p.N_b = std::ceil(barriers / d.parallel_barrier);
  p.N_c = std::ceil(p.D_L2_c / d.parallel_readonly);
  // The published T_lat line is garbled; n_fp L_f enters as N_f = ceil(n_fp / lambda_f),
  // like every other term (lambda_f is listed in Table IIIb for this).
  p.N_f = std::ceil(double(n_fp) / d.parallel_fp);
  p.latency_per_block = (p.N_g * d.dram_latency + p.N_L2 * d.l2_latency + p.N_s * d.shared_latency +
                         p.N_b * d.barrier_latency + p.N_c * d.readonly_latency +
                         p.N_f * d.fp_latency + d.iteration_overhead) /
                        plane;
  // Beyond the paper: resident blocks hide each other's latency; with one block per SM this
  // is the paper's T_lat.
  p.T_lat = p.latency_per_block / resident;

  // --- Chemora's issue term s_i = sum_c n_c / theta_c -----------------------------------
  const calc::FlopCounts& fl = kernel.flops;
  // Load and store instructions: the paths in turn, the direct one strategy by strategy in
  // the list's order.
  double load_store = kernel.stores;
  for (const In& in : U) load_store += in.t.issue;
  for (const In& in : C) load_store += in.t.issue;
  for (std::size_t st = 0; st < strategies.size(); ++st)
    for (const In& in : direct)
      if (in.strategy == st) load_store += in.t.issue;
  // A fused multiply-add is one instruction for an add and a mul.
  const double fp = double(fl.add + fl.mul - fl.fma + fl.other);
  p.s_i = fp / d.fp64_rate + fl.div / d.fp64_div_rate + fl.sqrt / d.fp64_sqrt_rate +
          fl.transcendental / d.fp64_special_rate + load_store / d.load_store_rate;

  // --- eq. 2 and the combinations ---------------------------------------------------------
  p.T_L2 = p.D_L2_total / d.W_L2();
  p.T_GM = p.D_GM_total / d.W_GM();
  p.T_data = std::max(p.T_L2, p.T_GM);
  // Beyond the paper: eq. 1 has no issue term, but no kernel runs faster than its
  // instructions issue (Chemora's s_i), so s_i bounds it from below.
  p.T_hu = std::max(p.s_i,
                    d.beta * std::max(p.T_data, p.T_lat) + (1 - d.beta) * (p.T_data + p.T_lat) / 2);
  const double parts[] = {p.T_data, p.T_lat, p.s_i};
  const double biggest = *std::max_element(std::begin(parts), std::end(parts));
  p.T_chemora = biggest + d.chemora_overlap * (p.T_data + p.T_lat + p.s_i - biggest);
  p.T_launch = d.launch_overhead * 1e-6;
  p.seconds_per_cycle = d.clock_ghz > 0 ? 1e-9 / d.clock_ghz : 0;
  p.points_per_sm_scale = d.sm_count > 0 ? 1 / d.sm_count : 0;

  const std::pair<double, const char*> named[] = {
      {p.T_GM, "DRAM"}, {p.T_L2, "L2"}, {p.T_lat, "latency"}, {p.s_i, "issue"}};
  p.limiter =
      std::max_element(std::begin(named), std::end(named), [](const auto& a, const auto& b) {
        return a.first < b.first;
      })->second;
  return p;
}

double lower_bound(const KernelProfile& kernel, const Device& d) {
  KernelProfile plain = kernel;
  for (KernelProfile::Input& in : plain.inputs) in.strategy = Buffering::Unbuffered;
  const Prediction u = predict(plain, d);
  if (!u.valid) return std::numeric_limits<double>::infinity();
  const double n = double(kernel.inputs.size()), stores = kernel.stores;
  const double plane = double(kernel.block.tx) * kernel.block.tf;
  const double moved = u.alpha * (n + stores); // elements per point, L2 and DRAM alike
  const double T_data = std::max(moved / d.W_L2(), moved / d.W_GM());
  const double latency = std::ceil(moved / d.parallel_global) * d.dram_latency +
                         std::ceil(moved / d.parallel_l2) * d.l2_latency + u.N_f * d.fp_latency +
                         d.iteration_overhead;
  const double T_lat = latency / plane / std::max(1, u.blocks_per_sm);
  const calc::FlopCounts& fl = kernel.flops;
  const double fp = double(fl.add + fl.mul - fl.fma + fl.other);
  const double s_i = fp / d.fp64_rate + fl.div / d.fp64_div_rate + fl.sqrt / d.fp64_sqrt_rate +
                     fl.transcendental / d.fp64_special_rate + (n + stores) / d.load_store_rate;
  return std::max(s_i, d.beta * std::max(T_data, T_lat) + (1 - d.beta) * (T_data + T_lat) / 2);
}

double CpuPrediction::seconds(double points) const {
  return points * std::max(T_memory, T_compute);
}

CpuPrediction predict_cpu(const calc::Calculation& calc, const Device& host) {
  CpuPrediction p;
  // Compulsory traffic: inputs read once, outputs written once; an intermediate grid function
  // of a multi-stage calculation is written once and read once more.
  std::set<int> intermediates;
  for (const calc::Stage& stage : calc.stages)
    for (const calc::Store& s : stage.stores)
      if (calc.grid_functions[std::size_t(s.grid_function)].role ==
          calc::GridFunctionRole::Intermediate)
        intermediates.insert(s.grid_function);
  p.bytes_per_point =
      8.0 * double(calc.inputs.size() + calc.outputs.size() + 2 * intermediates.size());
  p.flops_per_point = double(calc.flops.total());
  p.T_memory = host.dram_bandwidth > 0 ? p.bytes_per_point / (host.dram_bandwidth * 1e9) : 0;
  p.T_compute = host.fp64_peak > 0 ? p.flops_per_point / (host.fp64_peak * 1e9) : 0;
  p.limiter = p.T_memory >= p.T_compute ? "DRAM" : "FP64";
  return p;
}

} // namespace saguaro::model
