// CUDA code generation: one CUDA C++ translation unit (for NVRTC) per calc::Program and set
// of mappings, one `extern "C" __global__` kernel per KernelMapping.
//
// The calling convention of every generated kernel, in this order:
//   1. one pointer per entry of CudaKernel::fields (a Calculation::grid_functions index):
//      `const double* __restrict__` for inputs, `double*` for outputs, each pointing at
//      local index (0,0,0) of its patch array;
//   2. one `double*` per entry of CudaKernel::temporaries (scratch arrays of the same size);
//   3. `saguaro_cuda_geometry geometry`, by value (SAGUARO_CUDA_GEOMETRY_FIELDS below);
//   4. one `double` per entry of CudaKernel::parameters (calc::Program::parameters index).
// Launch: block (t_x, t_f, 1) threads, grid launch_grid(...) blocks, dynamic shared memory
// CudaKernel::shared_bytes.
#pragma once

#include "calc/calculation.hpp"
#include "calc/code_plan.hpp"
#include "calc/mapping.hpp"
#include "codegen/expression.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

// The geometry every kernel gets (the same struct is emitted into generated code):
//   alloc         allocated points per axis
//   pitch         points between consecutive rows (>= alloc[0]; the y stride)
//   lo, hi        the region of the calculation's outputs, local indices [lo, hi); a kernel
//                 of stage s covers [lo - extent_lo, hi + extent_hi) of that stage
//   origin, index_offset, spacing: coordinate of local index i = origin + (i + index_offset) *
//                 spacing
//   time          simulation time
//   boxes         > 1: one launch over several disjoint regions (a boundary shell, launch_grid
//                 over boxes): box b is [box_lo[b], box_hi[b]) and owns the blocks along
//                 blockIdx.z from box_first[b]; lo and hi are then unused. 0 or 1: lo, hi
#define SAGUARO_CUDA_GEOMETRY_FIELDS                                                               \
  int alloc[3];                                                                                    \
  int pitch;                                                                                       \
  int lo[3];                                                                                       \
  int hi[3];                                                                                       \
  int index_offset[3];                                                                             \
  double origin[3];                                                                                \
  double spacing[3];                                                                               \
  double time;                                                                                     \
  int boxes;                                                                                       \
  int box_first[6];                                                                                \
  int box_lo[6][3];                                                                                \
  int box_hi[6][3];

namespace saguaro::codegen {

struct CudaGeometry {
  SAGUARO_CUDA_GEOMETRY_FIELDS
};
// The most boxes one launch covers (CudaGeometry::box_first's size): a patch's boundary shell
// has at most two per axis.
inline constexpr int kMaxLaunchBoxes = 6;
static_assert(sizeof(CudaGeometry::box_first) == kMaxLaunchBoxes * sizeof(int));
static_assert(std::is_standard_layout_v<CudaGeometry> && std::is_trivial_v<CudaGeometry>);

// The CUDA dialect of expressions (function names; parameters p<i>, spacings and time from the
// geometry argument g), shared by the kernel printers.
class CudaExpressionEmitter : public ExpressionEmitter {
public:
  using ExpressionEmitter::ExpressionEmitter;

protected:
  std::string function_name(calc::Function fn) const override;
  std::string uniform_leaf(const calc::Node& n) const override;
};

// The macro SAGUARO_AFTER_PREVIOUS_KERNEL(), which every generated kernel (and every support
// kernel of runtime/cuda/support.cu) calls first: a kernel launched with Hopper's programmatic
// dependent launch (runtime::cuda::Driver::launch) may begin while the kernel before it on the
// stream finishes; it waits there for that kernel's memory, then lets the next kernel launch.
// Elsewhere (older GPUs, the CUDA emulator of the tests) it is empty.
extern const char* const kAfterPreviousKernel;

// A translation unit's head: the geometry struct, kAfterPreviousKernel and the helper functions
// named in `helpers` (ExpressionEmitter::helpers()).
std::string cuda_prelude(const std::set<std::string>& helpers);

struct CudaKernel {
  std::string name;    // the extern "C" symbol
  int calculation = 0; // calc::Program::calculations index
  int kernel = 0;      // index in that calculation's Mapping::kernels
  int stage = 0;
  calc::BlockConfig block;
  std::vector<int> fields;               // pointer arguments, in order
  std::vector<bool> field_written;       // per fields entry
  std::vector<calc::NodeId> temporaries; // scratch arguments, in order (read or written)
  std::vector<bool> temporary_written;   // per temporaries entry
  std::vector<int> parameters;           // double arguments, in order
  std::size_t shared_bytes = 0;          // dynamic shared memory per block
  std::array<int, 3> extent_lo{0, 0, 0}, extent_hi{0, 0, 0}; // the stage's
  std::string mapping;                                       // short form of the kernel's mapping
  bool whole_register_file = false; // emitted with __launch_bounds__(threads, 1)
  bool grouped_tiles = false;       // its blocks walk (f, e) tiles in groups (KernelForms)
};

struct CudaModule {
  std::string source;              // the whole translation unit
  std::vector<CudaKernel> kernels; // all calculations' kernels, in launch order per calc
  // Per calculation: scratch arrays its kernels need (calc::temporary_arrays of its mapping).
  std::vector<std::vector<calc::NodeId>> temporaries;
  // The array layout the kernels were printed for (their strides are constants): every launch
  // must be over arrays of it. None: the strides come from the geometry argument.
  std::optional<calc::ArrayLayout> layout;
};

// How some kernels are printed, by name (decided by the runtime, runtime::cuda::compile_generated).
// `whole_register_file`: __launch_bounds__(threads, 1) instead of (threads), so ptxas may use
// every register a thread can have rather than spill for occupancy. `grouped_tiles`: the
// blocks after the x tiles walk the (f, e) tiles in groups of kTileGroup x kTileGroup where
// the grid divides, so that a wave of one block per SM covers neighbours along e as well as
// along f and the planes they share stay in L2 (the launch grid and every block's points are
// unchanged, only their order); elsewhere x fastest, then f, then e.
struct KernelForms {
  KernelForms(std::set<std::string> whole = {}, std::set<std::string> grouped = {})
      : whole_register_file(std::move(whole)), grouped_tiles(std::move(grouped)) {}
  std::set<std::string> whole_register_file;
  std::set<std::string> grouped_tiles;
};
// BSSN at 256^3 on the H200 (bench/results/2026-11-29-grouped-tiles-H200.md), one cold run
// each: fd 8's step 189.1 ms in groups of 2 x 2, 189.1 of 4 x 4, 177.5 of 8 x 8 (204 in the
// launch order); fd 4's 88.6 of 4 x 4, 83.1 of 8 x 8. 16 x 16 was not measured.
inline constexpr int kTileGroup = 8;

// Generates the kernels of every calculation of `program` under `mappings` (one per
// calculation; an empty vector means the default mapping everywhere). Throws
// calc::MappingError for a mapping that does not fit its calculation. `forms` says which
// kernels are printed how (KernelForms). With `only` >= 0
// the module holds that calculation's kernels alone (named and numbered as in the whole
// program; the other calculations' `temporaries` entries are empty): the CUDA backend
// compiles one module per calculation, in parallel, each cached on its own. With a `layout`
// the kernels take the strides of arrays of that layout as constants (CudaModule::layout):
// BSSN's right-hand side held its stencil offsets in 64-bit registers otherwise, spilled, and
// ran 1.2-1.5x slower on the H100 (docs/gpu.md).
CudaModule generate_cuda(const calc::Program& program,
                         const std::vector<calc::Mapping>& mappings = {},
                         const KernelForms& forms = {}, int only = -1,
                         const std::optional<calc::ArrayLayout>& layout = std::nullopt);

// The blocks to launch for a kernel over the region [lo - extent_lo, hi + extent_hi):
// ceil(n_x / t_x), ceil(n_f / t_f), ceil(n_e / t_ee) (zeros for an empty region).
std::array<unsigned, 3> launch_grid(const CudaKernel& kernel, const std::array<int, 3>& lo,
                                    const std::array<int, 3>& hi);

// One launch of a kernel over several disjoint regions (each as lo, hi would be): fills the
// geometry's box table with the boxes this kernel has points in, each owning ceil(n_e / t_ee)
// blocks along blockIdx.z, and returns the grid (x and f: as many blocks as the widest box
// needs; threads outside their box leave). Zeros when no box has points. Throws
// std::invalid_argument beyond kMaxLaunchBoxes boxes or 65535 blocks along z (the caller
// launches them one by one then: launch_boxes_fit).
std::array<unsigned, 3> launch_grid(const CudaKernel& kernel,
                                    const std::vector<calc::Region>& boxes, CudaGeometry& geometry);
// Whether launch_grid over `boxes` makes one launch of `kernel`.
bool launch_boxes_fit(const CudaKernel& kernel, const std::vector<calc::Region>& boxes);

} // namespace saguaro::codegen
