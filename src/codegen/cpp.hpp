// C++ code generation for the CPU backend: one translation unit per calc::Program and set of
// mappings, one `extern "C"` function per calculation, taking a pointer to the C struct below.
//
// The generated function runs the kernels of its calculation's calc::Mapping (the kernel
// partition only: block configurations and buffering strategies are GPU matters) as
// consecutive loop nests inside one OpenMP parallel region, in launch order, each over its
// stage's region: `omp for collapse(2)` over k and j, whose implicit barrier separates the
// kernels, `omp simd` over i. A kernel's temporaries go to scratch arrays at the point itself,
// where later kernels of the stage load them. Values that do not vary in space (parameters,
// spacings, time, and everything computed only from them) are computed once per thread before
// the loops; every other DAG node is a `const double` local of the inner loop, in topological
// order; a point's stores are made after all of its values are computed. Integer powers become
// multiplications, uniform factors of a product (divisions by spacings included) are folded
// into one hoisted factor.
//
// Codegen depends only on calc/: the runtime compiles and loads the text (runtime/).
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

// The fields of the argument struct, written once here so that the declaration compiled into
// the runtime (saguaro::codegen::CpuArgs) and the one emitted into generated code
// (`struct saguaro_cpu_args`) cannot drift apart.
//   fields      per Calculation::grid_functions index, the array's first allocated point
//   alloc       allocated points per axis; arrays are C order [z][y][x], x fastest
//   pitch       points between consecutive rows (>= alloc[0]; the y stride)
//   lo, hi      the region of the calculation's outputs (last stage), local indices, [lo, hi);
//               stage s covers [lo - extent_lo, hi + extent_hi)
//   origin      the grid's origin; the coordinate of local index i is
//               origin + (i + index_offset) * spacing (global index: the same bits on every
//               rank whatever the decomposition)
//   index_offset  global index of local index 0
//   spacing     grid spacing per axis
//   time        simulation time
//   parameters  calc::Program::parameters order, every one as a double
//   temporaries per calc::temporary_arrays(mapping) entry, a scratch array of
//               pitch * alloc[1] * alloc[2] doubles laid out as the fields (none under the
//               default mapping)
#define SAGUARO_CPU_ARGS_FIELDS                                                                    \
  double* const* fields;                                                                           \
  int alloc[3];                                                                                    \
  int pitch;                                                                                       \
  int lo[3];                                                                                       \
  int hi[3];                                                                                       \
  double origin[3];                                                                                \
  int index_offset[3];                                                                             \
  double spacing[3];                                                                               \
  double time;                                                                                     \
  const double* parameters;                                                                        \
  double* const* temporaries;

namespace saguaro::codegen {

struct CpuArgs {
  SAGUARO_CPU_ARGS_FIELDS
};
static_assert(std::is_standard_layout_v<CpuArgs> && std::is_trivial_v<CpuArgs>);

// Bumped whenever the calling convention of generated code changes. Generated code exports
// `extern "C" int saguaro_cpu_abi(void)` returning it and `extern "C" unsigned long
// saguaro_cpu_args_size(void)` returning sizeof(saguaro_cpu_args).
inline constexpr int kCpuAbiVersion = 3;

// Signature of a generated calculation: void saguaro_calc_<i>_<name>(const saguaro_cpu_args*).
using CpuKernel = void (*)(const CpuArgs*);

// The C++ source of all calculations of `program` under `mappings` (one per calculation; an
// empty vector means the default mapping everywhere). Throws calc::MappingError for a mapping
// that does not fit its calculation.
// `streamed` (per calculation; missing entries false): print its stores as non-temporal
// (streaming) stores, for arrays that outrun the host's cache (runtime::streams_stores).
std::string generate_cpp(const calc::Program& program,
                         const std::vector<calc::Mapping>& mappings = {},
                         const std::vector<bool>& streamed = {});

// The exported name of calculation `index` of `program`: saguaro_calc_<index>_<name>, the name
// reduced to [A-Za-z0-9_].
std::string cpu_function_name(const calc::Program& program, std::size_t index);

// The argument struct and the exported ABI functions above, as generated code declares them
// (shared with the Kokkos printer, codegen/kokkos.hpp, whose functions take the same struct).
std::string cpu_args_preamble();

// A literal that reads back as exactly `value` (shortest of %.15g, %.16g, %.17g that round-trips,
// always with a '.' or an exponent so that it is a double). `value` must be finite.
std::string cpp_literal(double value);

} // namespace saguaro::codegen
