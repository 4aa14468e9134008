// A device description: the hardware (and a few software) quantities the performance model
// needs, one YAML file per GPU model in configs/devices/ (and one per host CPU for the CPU
// backend's roofline). Every quantity has one name here and in the YAML, a unit, the symbol of
// Hu, Koppelman & Brandt's Table III where it has one, and a source: a datasheet, or
// `calibrated <date> <gpu> <command>` for what `saguaro calibrate` measured.
//
// Units in the YAML are the ones people read on datasheets (GB/s, bytes, cycles, GHz); the
// model converts to the paper's units (elements of 8 bytes, per cycle, per SM) itself.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::model {

struct Device {
  std::string name;               // "NVIDIA H100 80GB HBM3"
  std::string kind = "gpu";       // "gpu" or "cpu"
  std::string arch;               // "sm_90" (GPUs); "" when not known
  std::vector<std::string> match; // substrings of driver device names this describes

  // --- GPU hardware (Table IIIa) -----------------------------------------------------------
  double sm_count = 0;                 // N_SM [count]
  double clock_ghz = 0;                // SM clock the cycle counts refer to [GHz]
  double dram_bandwidth = 0;           // W_GM, achievable DRAM bandwidth, read+write [GB/s]
  double l2_bandwidth = 0;             // W_L2, achievable L2 -> SM bandwidth [GB/s]
  double dram_latency = 0;             // L_g, global load missing L2 [cycles]
  double l2_latency = 0;               // L_L2, global load hitting L2 [cycles]
  double shared_latency = 0;           // L_s, shared-memory load [cycles]
  double barrier_latency = 0;          // L_b, __syncthreads of a full block [cycles]
  double readonly_latency = 0;         // L_c, load hitting the read-only / L1 cache [cycles]
  double fp_latency = 0;               // L_f, dependent FP64 add/mul/fma [cycles]
  double readonly_line = 0;            // LS_c, read-only / L1 cache line [bytes]
  double l2_line = 0;                  // LS_L2, L2 access granule (sector) [bytes]
  double registers_per_sm = 0;         // K_reg, 32-bit registers per SM [registers]
  double shared_memory_per_sm = 0;     // K_smem, shared memory per SM [bytes]
  double readonly_cache_per_sm = 0;    // K_roc, read-only / L1 data cache per SM [bytes];
                                       // with unified_l1_shared_per_sm, what is left of the unified
                                       // array once resident blocks' shared memory is carved out
  double unified_l1_shared_per_sm = 0; // one array for L1 and shared memory [bytes]; 0: separate
  double l2_size = 0;                  // K_L2 [bytes]
  double max_threads_per_block = 0;    // [threads]
  double max_threads_per_sm = 0;       // [threads]
  double max_blocks_per_sm = 0;        // [blocks]
  double max_registers_per_thread = 0; // [registers]
  double shared_memory_per_block = 0;  // the most one block may use (opt-in) [bytes]
  double register_allocation_unit = 0; // registers are given to warps in units of [registers]
  double warp_size = 0;                // [threads]
  double global_loads_cached_in_l1 = 0; // 1: plain global loads (strategy u) go through L1
                                        // like __ldg (compute capability >= 7.0); 0: L2 only
                                        // (Kepler, the paper's GPU) [flag]
  double launch_overhead = 0;           // T_launch, an empty kernel's launch to completion [us]

  // Instruction issue rates per SM (Chemora's theta_c) [instructions/cycle/SM].
  double fp64_rate = 0;         // add, mul, fma
  double fp64_div_rate = 0;     // a whole double division (a Newton sequence)
  double fp64_sqrt_rate = 0;    // a whole double square root
  double fp64_special_rate = 0; // a whole sin/cos/exp/log/pow
  double load_store_rate = 0;   // global/shared load and store instructions

  // --- software parameters (Table IIIb): estimates, not measurements ---------------------------
  double parallel_global = 0;    // lambda_g: global accesses in flight per thread [count]
  double parallel_l2 = 0;        // lambda_L2 (used in Table IVc, not listed in IIIb) [count]
  double parallel_shared = 0;    // lambda_s [count]
  double parallel_barrier = 0;   // lambda_b [count]
  double parallel_readonly = 0;  // lambda_c [count]
  double parallel_fp = 0;        // lambda_f [count]
  double iteration_overhead = 0; // L_m, per iteration per thread block [cycles]
  double beta = 0;               // beta of eq. 1, non-interference of data and latency [1]
  double chemora_overlap = 0;    // Chemora's 0.35: the share of the non-maximal parts added [1]
  // Beyond the paper: lambda_g and lambda_L2 scale as (ptxas's registers per thread / 64)^this
  // (0: the paper's constants; docs/model.md) [1]
  double parallel_register_exponent = 0;
  // Beyond the paper: a kernel whose thread sums its points by input keeps their loads in
  // flight together; lambda_g and lambda_L2 scale as (points in lockstep)^this (0: off) [1]
  double lockstep_exponent = 0;
  // Beyond the paper: the share of L2 that keeps the resident blocks' tiles for reuse along e
  // (the front of the launch; 0: the paper's demand of one plane per SM; docs/model.md) [1]
  double l2_front_share = 0;

  // --- CPU (kind "cpu": the CPU backend's roofline) ----------------------------------------
  double cores = 0;     // [count]
  double fp64_peak = 0; // achievable FP64 rate of all cores [GFLOP/s]
  // dram_bandwidth above is the achievable host memory bandwidth (triad) [GB/s]

  // --- interconnect (either kind; optional: 0 = not described) -----------------------------
  // One phase of a ghost exchange (grid::Decomposition::sync) between two ranks of this
  // machine, both directions at once, everything included: pack, staging copies, MPI, unpack.
  // Measured by `mpirun -n 2 saguaro calibrate --interconnect`; model::message_seconds.
  double interconnect_latency = 0;   // an exchange of an almost empty message [us]
  double interconnect_bandwidth = 0; // bytes of one message per second of the exchange [GB/s]
  // The ghost fill of one exchange on one GPU (the periodic wrap and the boundary copies of
  // every evolved variable): ghost_fill_latency + bytes read and written / ghost_fill_bandwidth;
  // model::ghost_fill_seconds (optional: 0 = not priced) [us], [GB/s]
  double ghost_fill_latency = 0;
  double ghost_fill_bandwidth = 0;

  // Where each value came from, by YAML name.
  std::map<std::string, std::string> sources;

  // Derived in the paper's units.
  double elements_per_cycle_per_sm(double gb_per_s) const; // GB/s -> elts/cycle/SM
  double W_GM() const { return elements_per_cycle_per_sm(dram_bandwidth); }
  double W_L2() const { return elements_per_cycle_per_sm(l2_bandwidth); }
  double K_reg() const { return registers_per_sm / 2; }      // elements (doubles)
  double K_smem() const { return shared_memory_per_sm / 8; } // elements
  double K_L2() const { return l2_size / 8; }                // elements
  double LS_c() const { return readonly_line / 8; }          // elements
  double LS_L2() const { return l2_line / 8; }               // elements
};

// One quantity of the description: its YAML name, unit, paper symbol and meaning.
struct Quantity {
  const char* name;
  const char* unit;
  const char* symbol; // "" when the paper has none
  const char* meaning;
  double Device::*member;
  bool gpu; // required for kind "gpu" (else for kind "cpu")
  // Required for neither kind (then gpu is false): a description without it still reads, 0
  // meaning "not described", and the model refuses only where it needs it.
  bool optional = false;
};
const std::vector<Quantity>& quantities();

// A device description that does not read: what() is "FILE:LINE:COL: message" where the
// YAML has a position.
class DeviceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Reads a description. Every quantity its kind needs must be present with its unit and a
// source; unknown names are refused with the nearest known one suggested.
Device load_device(const std::string& path);
Device parse_device(const std::string& yaml_text, const std::string& file_name = "<yaml>");

// A description as YAML text that parse_device reads back (every quantity with its unit,
// source and, as a comment, its paper symbol). To write a file, hand it to
// support::write_atomically.
std::string format_device(const Device& device);

// The description in configs/devices/ (or $SAGUARO_DEVICES) for a device name as the driver
// reports it ("NVIDIA H100 80GB HBM3"): the file whose `name` equals it, else one of whose
// `match` substrings it contains. "" when none does.
std::string find_device_description(const std::string& device_name);

} // namespace saguaro::model
