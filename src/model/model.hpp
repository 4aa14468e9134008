// The performance model: how long one kernel of a mapping takes on a device, and why, before
// any code runs. A pure function of (kernel, device, ptxas's report when there is one), kept
// apart from the mapper that searches with it (as Halide keeps its cost model apart from its
// autoscheduler).
//
// GPU: Hu, Koppelman & Brandt (Sec. V, Tables II and IV, eq. 1-2) with Chemora's issue term and
// its combination formula. Quantities are per grid point, per SM, in the paper's units:
// elements (8 bytes) and cycles; a launch over N points takes
//   T_launch + (N / N_SM) * T / clock.
// CPU: a roofline, max(compulsory bytes / DRAM bandwidth, flops / FP64 peak).
//
// Each buffering strategy's own terms (registers, shared memory, the traffic it moves itself,
// shared loads, barriers, load/store instructions) are in its file in calc/strategies/
// (calc::ModelTerms); predict adds them up and keeps the traffic paths' cache models.
//
// Where the model goes beyond the paper it says so next to the formula (docs/model.md lists
// every such choice).
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "calc/strategy.hpp"
#include "model/device.hpp"

#include <array>
#include <string>
#include <vector>

namespace saguaro::model {

// Table IIb for one input grid function of a kernel (calc/strategy.hpp: the strategies'
// model terms are written in it).
using calc::stencil_shape;
using calc::StencilShape;

// Table IIa plus the inputs: what the model knows about one kernel.
struct KernelProfile {
  struct Input {
    int grid_function = -1; // Calculation::grid_functions index; -1 for a temporary
    std::string name;
    std::vector<calc::Offset> offsets;
    calc::Buffering strategy = calc::Buffering::Unbuffered;
    bool written = false; // the kernel also stores it: the read-only path (c) does not apply
    // stencil_shape(offsets, e) for e = 1, 2 (y, z), which predict needs at every call (BSSN's
    // inputs have up to ~60 offsets each: computing them was 30% of the mapper's time);
    // profile_kernel fills them. Whoever builds or changes `offsets` otherwise leaves
    // `shaped` false (the default), and predict computes them.
    std::array<StencilShape, 3> shapes{};
    bool shaped = false;
  };
  std::string description; // the kernel's mapping in short form
  calc::BlockConfig block;
  std::vector<Input> inputs;      // grid functions then temporaries read
  int stores = 0;                 // n_gf^st: grid functions and temporaries written
  calc::FlopCounts flops;         // n_fp by class
  int intermediate_registers = 0; // n_reg^inter (elements), estimated from the DAG (below)
  std::array<int, 3> extent_lo{0, 0, 0}, extent_hi{0, 0, 0}; // its stage's extents
};

// n_reg^inter from the DAG, before ptxas has seen the kernel (whose count then replaces it:
// CompiledResources). ptxas's registers per thread for the kernel with every input unbuffered,
// fitted by least squares to the 164 of 235 generated kernels that neither spilled nor took
// the whole register file (BSSN's right-hand side split into 1 to 25 stores per kernel at
// finite-difference orders 2, 4 and 8, with and without upwinded advection, its constraints
// and initial data, the wave, Maxwell, advection and micro-benchmark examples; NVRTC 13.0,
// sm_90, compiled as the runtime does; bench/results/2026-11-22-register-estimate.md):
//   R = 40 + 0.23 flops - 0.32 loads
// (loads: the stencil offsets read, one load each; a load an FMA consumes at once needs no
// register of its own). On those 164 kernels the mean error is 17.6% (16 registers rms); on
// all 235, capped at 255, 14.3%. The former estimate (4 + min(arithmetic nodes, 96) / 2
// elements) was off by 38% and could not exceed 126 registers, so the model thought BSSN's
// 2400-node right-hand side fitted easily and no fission could ever pay. ptxas is noisy near
// the cap: kernels of 700-1000 flops got 128 to 255 registers, and 22 kernels estimated
// below 255 took 250-255.
// R may exceed the 255 a thread can have: predict caps it and estimates the spills.
inline constexpr double kRegisterBase = 40, kRegistersPerFlop = 0.23, kRegistersPerLoad = 0.32;
// Spill stores and loads [bytes per thread] per register the estimate needs beyond the
// device's max_registers_per_thread (least squares in log space over the 44 kernels above the
// cap that spill: 4.6; 4 puts the median of estimate / ptxas at 1.15). A rough figure: of the
// 34 kernels that spill 500 bytes or more it is within 2.5x for 23; it underestimates the
// largest (the whole BSSN right-hand side 3-4.5x) and eighth-order kernels (up to 6x: their
// many loads lower R); 5 kernels above the cap spilled nothing where it expects 0.25-0.9 KB
// (second-order stencils).
inline constexpr double kSpillBytesPerRegister = 4;
double estimated_registers(const KernelProfile& kernel); // R, uncapped
// The registers a thread of a `threads`-thread block may have: max_registers_per_thread (255
// where the description does not say), lowered where `min_blocks` blocks must share an SM's
// register file (calc::BlockConfig::min_blocks), in allocation units of 8 as ptxas lowers it.
int register_cap(const Device& d, int threads, int min_blocks);
// R / 2 elements less one per input (predict counts those), at least 0.
int intermediate_registers(const KernelProfile& kernel);

// The profile of one kernel from its plan (calc::plan_kernel or plan_kernels).
KernelProfile profile_kernel(const calc::Calculation& calc, const calc::KernelMapping& kernel,
                             const calc::KernelPlan& plan);

// Profiles of every kernel of `mapping` (checked by plan_kernels; throws calc::MappingError).
std::vector<KernelProfile> profile_mapping(const calc::Calculation& calc,
                                           const calc::Mapping& mapping);

// What ptxas reported for the compiled kernel.
struct CompiledResources {
  int registers = -1;       // per thread; -1: not compiled, the model estimates
  int spill_bytes = 0;      // spill stores + loads, per thread
  double shared_bytes = -1; // per block, static + dynamic; -1: the model's M_smem
};

enum class Combination {
  Hu,      // eq. 1: T_launch + beta max(T_data, T_lat) + (1 - beta)(T_data + T_lat)/2,
           // at least the issue time s_i
  Chemora, // T_launch + max(s_d, s_L, s_i) + 0.35 (s_d + s_L + s_i - max)
};
const char* to_string(Combination c);

// How a launch covers a region: blocks of t_x x t_f x t_ee points (a partial block costs a
// whole one), dealt out to the SMs in rounds (the last, partial round costs a whole one: the
// tail effect). Beyond the paper, which prices points only; it matters for small grids and for
// large t_ee, and keeps the mapper from choosing blocks that leave SMs idle.
struct LaunchGeometry {
  long blocks = 0;
  double points_per_block = 0;
  double rounds = 0; // ceil(blocks / N_SM)
};
// `extent`: points per axis (x, y, z) of the region the kernel computes (its stage's extents
// included).
LaunchGeometry launch_geometry(const calc::BlockConfig& block, const std::array<long, 3>& extent,
                               const Device& device);

// T_launch + rounds x points per block x `cycles_per_point` (per point per SM) in seconds.
double launch_seconds(const Device& device, const LaunchGeometry& g, double cycles_per_point);

// The price of one ghost message: one phase of an exchange between two ranks of the machine
// (both directions at once; pack, staging copies, MPI and unpack included) of `bytes` per
// message, interconnect_latency + bytes / interconnect_bandwidth [seconds]. 0 for no bytes
// (nothing is exchanged). Throws std::invalid_argument when there are bytes and the device does
// not describe its interconnect.
double message_seconds(const Device& device, double bytes);
// Whether the device describes its interconnect (both quantities positive).
bool describes_interconnect(const Device& device);
// The fill of one ghost exchange on the device (the periodic wrap and copies of every evolved
// variable, `bytes` read and written): ghost_fill_latency + bytes / ghost_fill_bandwidth
// [seconds]; 0 where the description has no ghost fill or there are no bytes.
double ghost_fill_seconds(const Device& device, double bytes);

// Blocks of `threads` threads, `registers_per_thread` registers each (allocated per warp in the
// device's units) and `shared_bytes` of shared memory resident on one SM: the smallest of the
// threads, blocks, registers and shared-memory limits, which one it is, and the occupancy.
struct Residency {
  int blocks = 0;
  std::string limit;    // "threads", "blocks", "registers", "shared memory"
  double occupancy = 0; // resident warps / the SM's maximum
};
Residency resident_blocks(const Device& device, double threads, int registers_per_thread,
                          double shared_bytes);

struct Prediction {
  bool valid = true;
  std::string invalid_reason; // "needs 70 KiB of shared memory per block, the device allows 48"

  // Table IVa: traffic between L2 and the SMs [elements per grid point].
  double alpha = 1;
  double D_L2_u = 0, D_L2_r = 0, D_L2_b = 0, D_L2_p = 0, D_L2_c = 0, D_L2_store = 0;
  double D_L2_total = 0;
  double M_roc = 0, R_SND_RO = 0; // read-only cache demand [elements per block], supply ratio
  // Table IVb: traffic at DRAM [elements per grid point].
  double D_GM_u = 0, D_GM_c = 0, D_GM_total = 0;
  double M_L2_u = 0, M_L2_r = 0, M_L2_bp = 0, M_L2_c = 0; // [elements per block]
  double R_SND_L2 = 0;
  // Table IVc: latency.
  double N_g = 0, N_L2 = 0, N_s = 0, N_b = 0, N_c = 0, N_f = 0;
  double latency_per_block = 0; // (sum N L + L_m) / (t_x t_f): the paper's T_lat [cycles/pt]
  // Table IVd: resources, and the occupancy they allow.
  double M_reg = 0;        // registers of one block [elements]
  double M_smem = 0;       // shared memory of one block [elements], Table IVd (rolling b tiles)
  double shared_bytes = 0; // what the block really allocates: the generated code's tiles, or
                           // ptxas's figure; it decides fit and occupancy
  int registers_per_thread = 0;
  bool registers_from_ptxas = false;
  int spill_bytes = 0; // ptxas's, or the estimate's beyond the register cap
  int blocks_per_sm = 0;
  double occupancy = 0;        // resident warps / the SM's maximum
  std::string occupancy_limit; // "registers", "shared memory", "threads", "blocks"
  double K_roc = 0;            // read-only / L1 capacity left [elements]

  // Times [cycles per grid point per SM].
  double T_L2 = 0, T_GM = 0, T_data = 0; // eq. 2
  double T_lat = 0;     // latency_per_block / blocks_per_sm: resident blocks overlap
  double s_i = 0;       // Chemora's issue time
  double T_hu = 0;      // eq. 1 without T_launch (at least s_i)
  double T_chemora = 0; // Chemora's formula without T_launch
  double T_launch = 0;  // [seconds]
  std::string limiter;  // "DRAM", "L2", "latency", "issue"
  double seconds_per_cycle = 0;
  double points_per_sm_scale = 0; // 1 / N_SM

  // The predicted seconds of one launch over `points` grid points.
  double seconds(double points, Combination c = Combination::Hu) const;
  // The same for a launch of this geometry: T_launch + rounds x points per block x T.
  double seconds(const LaunchGeometry& g, Combination c = Combination::Hu) const;

  // The parts of that launch in seconds: T_launch and each per-point term scaled as the total.
  struct LaunchParts {
    double launch = 0, l2 = 0, dram = 0, data = 0, latency = 0, issue = 0;
  };
  LaunchParts parts(double points) const;
};

Prediction predict(const KernelProfile& kernel, const Device& device,
                   const CompiledResources& compiled = {});

// A lower bound on T_hu [cycles per grid point per SM] over every assignment of strategies to
// the kernel's inputs at its block configuration (the strategies in `kernel` are ignored):
// each input and store moves at least alpha elements per point through L2 and DRAM and issues
// one load, no assignment has more resident blocks than all-unbuffered (buffering only adds
// registers and shared memory), and latency is at least that of the compulsory loads and the
// arithmetic. +inf when not even all-unbuffered fits. The mapper prunes block configurations
// with it; tests check it never exceeds a prediction.
double lower_bound(const KernelProfile& kernel, const Device& device);

// The CPU backend's roofline for one calculation (all its stages as one loop nest).
struct CpuPrediction {
  double bytes_per_point = 0; // compulsory: each input read once, each output written once
  double flops_per_point = 0;
  double T_memory = 0, T_compute = 0; // [seconds per point]
  std::string limiter;                // "DRAM" or "FP64"
  double seconds(double points) const;
};
CpuPrediction predict_cpu(const calc::Calculation& calc, const Device& host);

} // namespace saguaro::model
