// A mapping: how one Calculation becomes GPU kernels. The value every later stage shares:
// the model prices it, the mapper searches over it, the code generator emits exactly it, and
// the prediction log records it. Nothing about a kernel is decided anywhere else.
//
// The design space is Hu, Koppelman & Brandt's (Tables I-II, Sec. IV):
//  * per kernel, the DAG nodes it computes and stores: a subset of one stage's stores, plus
//    temporaries, i.e. DAG nodes it stores into scratch grid functions for later kernels of
//    the same stage (so a big calculation can be split);
//  * per kernel, the block configuration C_Block = (e, t_x, t_f, t_ee): threads iterate along
//    the axis e (y or z), a block has t_x threads along x and t_f along f (the other of y, z),
//    and every thread computes t_ee points along e;
//  * per input grid function of a kernel, its buffering strategy (u, r, b, p, c, q).
#pragma once

#include "calc/calculation.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::calc {

// A buffering strategy: its place in the list of strategies (calc/strategy.hpp; each is one
// file in calc/strategies/, registered in calc/strategies/list.cpp). The five built in have
// names here; letter, name, applicability, plan and model terms come from the list.
enum class Buffering : std::uint8_t {
  Unbuffered, // u: one global load per offset
  Register,   // r: values carried in registers along e (stencils along e only)
  Shared,     // b: the block's tile grown by the stencil, in shared memory
  Plus,       // p: registers along e plus a shared-memory plane for in-plane offsets (2.5D)
  ReadOnly,   // c: loads through the read-only data cache (__ldg)
  Queue,      // q: registers along e for the line through the point, global loads elsewhere
};
// The six built-in strategies (calc::strategies() lists every registered one).
inline constexpr Buffering kAllBufferings[] = {Buffering::Unbuffered, Buffering::Register,
                                               Buffering::Shared,     Buffering::Plus,
                                               Buffering::ReadOnly,   Buffering::Queue};
inline constexpr int kBuiltinBufferings = int(std::size(kAllBufferings));
char letter(Buffering b);                         // 'u' 'r' 'b' 'p' 'c'
bool buffering_from_letter(char c, Buffering& b); // false for other letters
const char* describe(Buffering b);                // "unbuffered", "register", ...

// The most blocks an SM holds at once on the GPUs Saguaro knows (sm_80, sm_90: 32).
inline constexpr int kMaxMinBlocks = 32;

struct BlockConfig {
  int iteration_axis = 2; // e: 1 (y) or 2 (z); f is the other one
  int tx = 32;            // threads per block along x
  int tf = 8;             // threads per block along f
  int tee = 8;            // points per thread along e
  // Blocks an SM must hold at once (CUDA's __launch_bounds__ minimum, "8/SM" in the short
  // form): ptxas then keeps the kernel within registers per SM / (threads x min_blocks)
  // registers, trading loads in flight per thread for threads in flight. 0: ptxas chooses.
  int min_blocks = 0;
  // The order a thread computes its t_ee points in: point after point (false), or all of them
  // together, one input at a time, each point's sum of that input's terms added to its running
  // sum ("by-input" in the short form; calc/sums_by_input.hpp says when it applies and why).
  bool sums_by_input = false;
  int f_axis() const { return 3 - iteration_axis; }
  int threads() const { return tx * tf; }
  // More than the 1024 threads a CUDA block may have; asked of sizes not yet checked (from a
  // mapping file), so t_x t_f is formed without overflow.
  bool too_many_threads() const { return static_cast<long long>(tx) * tf > 1024; }
  bool operator==(const BlockConfig&) const = default;
};

// One kernel of a mapping.
struct KernelMapping {
  int stage = 0;                   // the Calculation::stages entry whose stores it makes
  std::vector<int> stores;         // indices into stages[stage].stores
  std::vector<NodeId> temporaries; // nodes it stores into scratch arrays for later kernels
  BlockConfig block;
  // Per input grid function (Calculation::grid_functions index); absent means Unbuffered.
  // Temporaries are read at the point itself only and always unbuffered.
  std::map<int, Buffering> buffering;
  bool operator==(const KernelMapping&) const = default;
};

struct Mapping {
  std::vector<KernelMapping> kernels; // in launch order; stages in order
  // Equal mappings make the same kernels. (The short form, to_string, leaves out which stores
  // and temporaries each kernel makes, so it cannot tell partitions apart.)
  bool operator==(const Mapping&) const = default;
};

// Raised when a mapping does not fit its calculation; what() says which kernel, which grid
// function and why (a strategy that does not apply to that stencil, a store made twice, ...).
class MappingError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

// What one kernel of a mapping reads and computes, derived from the calculation's DAG.
struct KernelPlan {
  std::vector<NodeId> roots;          // values stored: grid-function stores, then temporaries
  std::vector<NodeId> nodes;          // nodes it evaluates (topological order), temporaries
                                      // made by earlier kernels excluded
  std::vector<NodeId> temporaries_in; // earlier kernels' temporaries it loads
  std::vector<InputStencil> inputs;   // grid functions loaded, with offsets (sorted by index)
  std::vector<int> outputs;           // grid functions stored
};

// Checks `mapping` against `calc` and returns one plan per kernel. Throws MappingError.
// Rules: every store of every stage is made by exactly one kernel; kernels appear in stage
// order; a temporary is a non-uniform node of its kernel's stage that a later kernel of that
// stage uses; block sizes are positive, e is y or z, t_x * t_f <= 1024; and per input, its
// strategy applies (buffering_applies: each strategy's rule, e.g. r: every offset on the e
// axis, more than one), and any buffered strategy only for grid functions the kernel reads.
std::vector<KernelPlan> plan_kernels(const Calculation& calc, const Mapping& mapping);

// The nodes evaluated for `roots`, stopping at `cut` (values loaded from temporaries), in
// increasing id order; the cut nodes met are returned in `loaded`.
std::vector<NodeId> evaluated_nodes(const Dag& dag, const std::vector<NodeId>& roots,
                                    const std::set<NodeId>& cut, std::vector<NodeId>& loaded);

// The order a kernel computes a point's values in, for the code plan (which prints it) and the
// register estimate (which counts what it keeps alive): depth first from each root in turn
// (KernelPlan::roots: stores, then temporaries), children in DAG order but those that are a
// loaded value (or a uniform times loaded values) after their siblings, each value once, so
// that a value lives from its first use to its last rather than from the start of the body.
// Uniform values are left out (hoisted out of the loop); an earlier kernel's temporary
// (KernelPlan::temporaries_in) appears where it is first used, where the kernel loads it.
std::vector<NodeId> evaluation_order(const Dag& dag, const KernelPlan& plan);

// The most point values alive at once when `order` (evaluation_order) is computed and each root
// stored right after its value (a value dies at its last use): loads and temporaries count like
// arithmetic (a loaded value stays in a register until its last use; the compiler does not load it
// again). Each value is a double, two 32-bit registers. Measured against ptxas (NVRTC 13.0, sm_90,
// BSSN's right-hand side split in several ways; bench/results/2026-11-25-bssn-fission-H100.md):
// kernels of at most ~110 live values took <= 255 registers without spilling, 125-132 spilled 8-360
// bytes, 177-316 spilled 0.7-3.3 KB.
int max_live_values(const Dag& dag, const std::vector<NodeId>& order);
int max_live_values(const Dag& dag, const KernelPlan& plan); // of its evaluation_order

// The plan of one kernel on its own: what `kernel` evaluates when the temporaries in
// `available` (stored by earlier kernels of its stage) are loaded instead of computed. Checks
// the kernel's own rules (stores and temporaries exist, no racing read of what it writes,
// strategies apply) but not its place among other kernels; `index` names it in errors. The
// mapper prices candidate kernels with it before any whole mapping exists.
KernelPlan plan_kernel(const Calculation& calc, const KernelMapping& kernel,
                       const std::set<NodeId>& available, int index = 0);

// Whether strategy `b` applies to a grid function read at `offsets` by a kernel iterating
// along `iteration_axis` (Strategy::applies); when not, `why` (if given) says why.
bool buffering_applies(Buffering b, const std::vector<Offset>& offsets, int iteration_axis,
                       bool written_by_kernel, std::string* why = nullptr);

// The scratch arrays a calculation needs under `mapping`: every kernel's temporaries, kernels in
// launch order. Backends number their scratch arrays in this order.
std::vector<NodeId> temporary_arrays(const Mapping& mapping);

// The mapping used without the model: one kernel per stage storing all of its outputs, the
// default block configuration, every input unbuffered.
Mapping default_mapping(const Calculation& calc);

// The hand-written kernel's shape: the default partition, every input unbuffered, one thread per
// point (block z 32x8x1: 32 x 8 threads in an x-y tile, one z plane per block). The empirical
// finish always times it, so a run never keeps a mapping slower than the naive kernel.
Mapping one_thread_per_point(const Calculation& calc);

// The default mapping with every kernel's block configuration set to `block` and every input
// given strategy `b` where it applies (unbuffered elsewhere); a block asking for sums by input
// gets them in the kernels they apply to (calc/sums_by_input.hpp). mixed_mapping gives the inputs
// of each kernel every strategy of the list (u, r, b, p, c, q) in turn instead (each falling back
// to u where it does not apply): one mapping that exercises every strategy at once.
Mapping buffered_mapping(const Calculation& calc, Buffering b, const BlockConfig& block);
// Clears `kernel`'s sums by input (BlockConfig::sums_by_input) where `calc`'s stores or the
// kernel's strategies do not admit them (plan_kernel's rule); leaves it as it is elsewhere. The
// kernel is planned alone: a kernel with sums by input loads no earlier kernel's temporaries.
void keep_sums_by_input_where_they_apply(const Calculation& calc, KernelMapping& kernel);
Mapping mixed_mapping(const Calculation& calc, const BlockConfig& block);

// "z 32x8x8": the iteration axis (y or z), then t_x x t_f x t_ee, then optionally the blocks an
// SM must hold ("z 32x8x1 8/SM": BlockConfig::min_blocks) and the order of a thread's points
// ("z 32x8x8 4/SM by-input": BlockConfig::sums_by_input). Throws MappingError.
BlockConfig parse_block_config(const std::string& text);

// "z 32x8x8", "z 32x8x1 8/SM", "z 32x8x8 by-input" (the inverse of parse_block_config).
std::string to_string(const BlockConfig& block);

// A mapping from a strategy word: a strategy's letter, "u" "r" "b" "p" "c" (buffered_mapping),
// or "mixed" (mixed_mapping). Throws MappingError for other words.
Mapping strategy_mapping(const Calculation& calc, const std::string& strategy,
                         const BlockConfig& block);

// Short form of one kernel for logs, e.g. "s0 z 32x8x8 A0:r A1:b".
std::string to_string(const Calculation& calc, const KernelMapping& kernel);

// Short form for logs and file names, e.g. "k0[s0 z 32x8x8 A0:r A1:b]".
std::string to_string(const Calculation& calc, const Mapping& mapping);

} // namespace saguaro::calc
