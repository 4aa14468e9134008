// The Kokkos support library's face (src/runtime/kokkos/support.cpp, built against Kokkos into
// libsaguaro_kokkos_support.so and loaded with dlopen): one exported function returning a table
// of plain functions, so that the host, which includes no Kokkos header, reaches the array
// space's kernels and Kokkos's initialisation through it. Arrays are Kokkos memory of the
// default execution space's memory space (on a GPU: device addresses).
#pragma once

#include "runtime/boundary_point.hpp"

#include <cstddef>

namespace saguaro::runtime::kokkos {

// Bumped whenever the table or a signature changes.
inline constexpr int kSupportAbi = 2; // 2: boxes and wrap_ghosts carry the row pitch

// A box of a patch's arrays, local indices [lo, hi), `alloc` points per axis, rows `pitch`
// points apart (runtime::ArrayBox).
struct Box {
  int alloc[3];
  int lo[3], hi[3];
  int pitch;
};

struct SupportTable {
  int abi;
  // Kokkos::initialize once per process (finalized at exit); returns "Kokkos 4.3.1, Cuda"-style
  // text: the version and the default execution space.
  const char* (*initialize)();
  // Whether the default memory space is host-addressable (Serial, OpenMP, Threads).
  int (*host_accessible)();
  double* (*allocate)(std::size_t n); // zeroed
  void (*release)(double* array);
  void (*to_host)(double* host, const double* array, std::size_t n);
  void (*from_host)(double* array, const double* host, std::size_t n);
  void (*fence)();
  // y = sum_m a[m] x[m] over n points, m < terms (at most 8), added in order.
  void (*linear_combination)(double* y, const double* a, const double* const* x, int terms,
                             std::size_t n);
  // The box of each field, one after the other, x fastest, to or from host memory.
  void (*pack)(const double* const* fields, int count, const Box* box, double* host);
  void (*unpack)(double* const* fields, int count, const Box* box, const double* host);
  // ArraySpace::wrap_ghosts over one field.
  void (*wrap_ghosts)(double* field, const int* alloc, int pitch, int ghost, const int* wrap);
  // out: min, max, max |u|; sums: sum |u|, sum u^2 (in long double where the memory is the
  // host's, as the host space sums; in double on a device).
  void (*reduce)(const double* field, const Box* box, double* out, long double* sums);
  void (*apply_flat)(const OuterFaces* faces, double* field);
  void (*apply_static_rhs)(const OuterFaces* faces, double* rhs);
  void (*apply_radiative_rhs)(const OuterFaces* faces, const double* u, double* rhs, double u0,
                              double v0);
};

} // namespace saguaro::runtime::kokkos

// The one exported symbol: extern "C" const SupportTable* saguaro_kokkos_support(void).
#define SAGUARO_KOKKOS_SUPPORT_SYMBOL "saguaro_kokkos_support"
