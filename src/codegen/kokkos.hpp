// Kokkos C++ code generation for the Kokkos backend: one translation unit per calc::Program and
// set of mappings, one `extern "C"` function per calculation with the C++ backend's calling
// convention (codegen::CpuArgs, codegen/cpp.hpp), so that one loader serves both.
//
// The function runs the kernels of its calculation's calc::Mapping in launch order, each a
// Kokkos::parallel_for over an MDRangePolicy of its stage's region on the default execution
// space, i fastest (Iterate::Left), with tiles from the kernel's block configuration: t_x along
// x, t_f along the f axis, 1 along the iteration axis e (a Kokkos thread computes one point, so
// t_ee has no counterpart). Buffering strategies are not printed: every load reads the array
// (the kernel plan's DAG part, calc::plan_kernels, as the C++ printer walks it). Values uniform
// over the grid are computed on the host before the kernels and captured by value; grid
// functions and temporaries are raw pointers into the backend's memory space (Kokkos memory of
// the default execution space), captured by value. The function fences before it returns.
//
// Mathematical functions are Kokkos's (Kokkos:: from 3.7, Kokkos::Experimental:: before), so
// that the same text compiles for host and device execution spaces.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"

#include <string>
#include <vector>

namespace saguaro::codegen {

// The Kokkos C++ source of all calculations of `program` under `mappings` (one per calculation;
// empty: the default mapping everywhere). Functions are named as cpu_function_name says and
// take `const saguaro_cpu_args*`. Throws calc::MappingError for a mapping that does not fit.
std::string generate_kokkos(const calc::Program& program,
                            const std::vector<calc::Mapping>& mappings = {});

} // namespace saguaro::codegen
