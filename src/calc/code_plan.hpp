// The kernel plan: everything decided about one kernel of a mapping before any text is
// written, so that a backend's printer only prints. Made from a Mapping by plan_code (one
// pass, tested alone); printed by codegen/cuda.cpp and by `saguaro inspect --plan`.
//
// Per kernel: its iteration space (stage, extents, e and f, block configuration); the buffers
// its buffering strategies asked for (register pipelines along e, shared tiles, shared
// planes) with their geometry; every input's loads resolved to one buffer each (a closed set
// of kinds, BufferKind, which is all a printer knows of strategies); the evaluation order
// (depth first from each stored value, each store right after its value); the stores; the
// arguments; the shared memory and the barriers.
//
// (calc::KernelPlan, in mapping.hpp, is the DAG part of a kernel: what it reads and
// evaluates. CodePlan builds on it.)
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "calc/sums_by_input.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace saguaro::calc {

// Where a load reads from. The printers know these kinds and nothing of strategies.
enum class BufferKind : std::uint8_t {
  Global,      // the grid function's array: the point plus a constant offset
  ReadOnly,    // the same through the read-only data cache (__ldg)
  Register,    // a slot of a register pipeline along e
  SharedTile,  // an element of a shared tile
  SharedPlane, // an element of a shared plane
};
const char* to_string(BufferKind k); // "global" "read-only" "register" "shared tile" ...

// One load of a grid function at an offset, resolved to its buffer.
struct Load {
  Offset offset{0, 0, 0};
  BufferKind kind = BufferKind::Global;
  int buffer = -1;  // Register: CodePlan::pipelines index; SharedTile: tiles; SharedPlane: planes
  long element = 0; // Register: the e offset (the slot); SharedTile, SharedPlane: the element
                    // relative to the thread's own point; Global, ReadOnly: 0
  bool operator==(const Load&) const = default;
};

// Values of one grid function carried in registers along e: slot d holds the value at e
// offset d of the current point, for d in [lo, hi]. Before the loop slots lo .. hi-1 of the
// first point are loaded; each step loads slot hi and shifts the others down by one.
struct RegisterPipeline {
  int grid_function = -1;
  int lo = 0, hi = 0;
  bool operator==(const RegisterPipeline&) const = default;
};

// A block of shared memory holding one grid function around the block's points. Element
// (a, b, c) (along x, f, e, from lo) lies at base + a + b * nx + c * nx * nf.
struct SharedBuffer {
  int grid_function = -1;
  std::size_t base = 0;       // offset in the dynamic shared memory [doubles]
  Offset lo{0, 0, 0};         // the stencil's lower extent per axis (x, y, z), 0 included
  Offset hi{0, 0, 0};         // its upper extent
  int nx = 0, nf = 0, ne = 1; // points along x, f and e
  // Planes: the register pipeline whose slot 0 fills the thread's own point, and the halo's
  // slots per thread (entries of the plane that are no thread's own, loaded one plane ahead).
  int fill_pipeline = -1;
  int halo_slots = 0;
  std::size_t elements() const { return std::size_t(nx) * std::size_t(nf) * std::size_t(ne); }
  bool operator==(const SharedBuffer&) const = default;
};

struct PlannedInput {
  int grid_function = -1;
  Buffering strategy = Buffering::Unbuffered;
  bool written = false;    // the kernel also stores it
  std::vector<Load> loads; // one per offset of its stencil, in the stencil's order
};

// One step of the kernel body, in order.
struct Step {
  enum class Kind : std::uint8_t {
    LoadTemporary,  // node = the value an earlier kernel stored in temporary slot `target`
    Evaluate,       // node: a load (`load` says from where), a coordinate or arithmetic
    StoreField,     // grid function `target` = node
    StoreTemporary, // temporary slot `target` = node
  };
  Kind kind = Kind::Evaluate;
  NodeId node = 0;
  int target = -1;
  Load load; // Evaluate of a Load node
};

// Sums by input (BlockConfig::sums_by_input, calc/sums_by_input.hpp): one phase per input, run
// over all of a thread's points before the next; each point's partial sums of the phase are
// added to its running sums.
struct InputPhase {
  int grid_function = -1;       // -1: the terms that read no grid function
  std::vector<Step> steps;      // Evaluate steps of its terms, in the body's order
  std::vector<PartialSum> sums; // per stored value, the terms this phase adds
};

struct FieldArgument {
  int grid_function = -1;
  bool written = false;
};
struct TemporaryArgument {
  NodeId node = 0;
  int slot = 0; // index in temporary_arrays(mapping)
  bool written = false;
};

struct CodePlan {
  // Iteration space.
  int kernel = 0; // index in the mapping
  int stage = 0;
  BlockConfig block;
  int e = 2, f = 1;                                          // iteration axis and the other
  std::array<int, 3> extent_lo{0, 0, 0}, extent_hi{0, 0, 0}; // the stage's
  std::vector<int> stores;                                   // the mapping's stage store indices
  int temporaries_out = 0;                                   // temporaries it stores

  // Loads and buffers.
  std::vector<PlannedInput> inputs; // by grid function
  std::vector<RegisterPipeline> pipelines;
  std::vector<SharedBuffer> tiles;  // loaded once per block, one barrier after
  std::vector<SharedBuffer> planes; // refilled per e step between two barriers
  std::size_t shared_bytes = 0;     // dynamic shared memory per block
  // Threads outside the region stay for the barriers (and load nothing) when there are
  // shared buffers; without, they leave at once.
  bool barriers = false;
  std::vector<Offset> global_offsets; // offsets of Global and ReadOnly loads, sorted
  std::array<bool, 3> coordinates{false, false, false}; // axes whose coordinate is used

  // Evaluation.
  std::vector<Step> steps;      // the body in order; stores last when the kernel reads a
                                // grid function it writes (no load may see them)
  std::vector<NodeId> uniforms; // computed once per thread, increasing id
  std::vector<int> parameters;  // Program::parameters indices, increasing
  // Sums by input: the stored values with their sums' start, and the phases (both empty
  // otherwise). `steps` stays the body for a thread whose points the region's end cuts short.
  std::vector<std::pair<NodeId, double>> sums;
  std::vector<InputPhase> phases;

  // Arguments, in the calling convention's order (codegen/cuda.hpp).
  std::vector<FieldArgument> fields;          // increasing grid function
  std::vector<TemporaryArgument> temporaries; // read ones, then written ones
};

// How the arrays a kernel runs over are laid out, when all of them are one patch's
// (grid::Patch): `pitch` points between rows, `rows` rows per plane (the allocated y extent).
// A kernel printed for a layout takes its strides as constants, so each stencil offset is an
// immediate of its load instead of a 64-bit value held in registers (codegen/cuda.hpp).
struct ArrayLayout {
  int pitch = 0;
  int rows = 0;
  bool operator==(const ArrayLayout&) const = default;
};

struct CalculationPlan {
  std::vector<CodePlan> kernels;   // in launch order
  std::vector<NodeId> temporaries; // scratch arrays: temporary_arrays(mapping)
};

// The kernel plans of `mapping` (checked by plan_kernels; throws MappingError).
CalculationPlan plan_code(const Calculation& calc, const Mapping& mapping);

// Text and JSON-like forms for `saguaro inspect --plan` (one kernel per paragraph).
std::string to_string(const Calculation& calc, const CodePlan& plan);

} // namespace saguaro::calc
