// The outer boundary conditions, point by point, written once for the host loops and for the
// CUDA kernels (this file is compiled by the host compiler and embedded verbatim in the CUDA
// support module that NVRTC compiles) and the Kokkos support library's kernels (compiled by
// Kokkos's compiler: nvcc, hipcc or the host's). Plain C++: no standard headers, no exceptions.
//
// Geometry (docs/host.md): local index l along axis a is in the lower outer layer when the
// face is an outer boundary and l < ghost, in the upper one when l >= alloc - ghost. The
// coordinate of local index l is origin + (l + index_offset) * spacing, the same bits as the
// generated kernels compute.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC__)
#define SAGUARO_HOST_DEVICE __host__ __device__
#define SAGUARO_DEVICE_MATH 1
#else
#include <cmath>
#define SAGUARO_HOST_DEVICE
#endif

namespace saguaro::runtime {

// The points between consecutive rows of arrays `nx` points wide stored with row pitch `pitch`
// (grid::Patch::pitch); 0 stands for unpadded rows, as in ArrayBox, KernelArgs and OuterFaces.
SAGUARO_HOST_DEVICE inline int row_pitch(int pitch, int nx) {
  return pitch > 0 ? pitch : nx;
}

// A patch's outer faces as the boundary conditions see them (trivially copyable: it is passed
// to CUDA kernels by value).
struct OuterFaces {
  int alloc[3];        // allocated points per axis
  int pitch;           // points between consecutive rows (>= alloc[0]); 0: alloc[0]
  int ghost;           // ghost width
  bool outer[3][2];    // [axis][lower=0/upper=1]: is this face an outer boundary?
  double origin[3];    // the grid's origin
  int index_offset[3]; // global index of local index 0
  double spacing[3];
};

namespace boundary {

// 0 or 1 when local index l along axis a lies in the lower or upper outer layer, else -1.
SAGUARO_HOST_DEVICE inline int outer_side(const OuterFaces& f, int a, int l) {
  if (f.outer[a][0] && l < f.ghost) return 0;
  if (f.outer[a][1] && l >= f.alloc[a] - f.ghost) return 1;
  return -1;
}

SAGUARO_HOST_DEVICE inline bool in_outer_layer(const OuterFaces& f, int i, int j, int k) {
  return outer_side(f, 0, i) >= 0 || outer_side(f, 1, j) >= 0 || outer_side(f, 2, k) >= 0;
}

SAGUARO_HOST_DEVICE inline long long linear(const OuterFaces& f, int i, int j, int k) {
  return (static_cast<long long>(k) * f.alloc[1] + j) * row_pitch(f.pitch, f.alloc[0]) + i;
}

// Flat: the point whose value an outer point takes: every outer coordinate moved to the
// nearest valid index (ghost or alloc - ghost - 1). Copying axis by axis gives the same
// values at edges and corners, since the source is never itself in an outer layer.
SAGUARO_HOST_DEVICE inline long long flat_source(const OuterFaces& f, int i, int j, int k) {
  int q[3] = {i, j, k};
  for (int a = 0; a < 3; ++a) {
    const int side = outer_side(f, a, q[a]);
    if (side == 0) q[a] = f.ghost;
    if (side == 1) q[a] = f.alloc[a] - f.ghost - 1;
  }
  return linear(f, q[0], q[1], q[2]);
}

// d_b u at local point q: one-sided second order pointing inward along an axis where q is in
// an outer layer; centred elsewhere when both neighbours are allocated, else one-sided.
SAGUARO_HOST_DEVICE inline double radiative_derivative(const OuterFaces& f, const double* u,
                                                       const int q[3], int b) {
  const double h = f.spacing[b];
  int dir = 0; // 0: centred, +1: forward one-sided, -1: backward one-sided
  const int side = outer_side(f, b, q[b]);
  if (side == 0)
    dir = +1;
  else if (side == 1)
    dir = -1;
  else if (q[b] - 1 < 0)
    dir = +1;
  else if (q[b] + 1 >= f.alloc[b])
    dir = -1;
  int q1[3] = {q[0], q[1], q[2]}, q2[3] = {q[0], q[1], q[2]};
  if (dir == 0) {
    q1[b] -= 1;
    q2[b] += 1;
    return (u[linear(f, q2[0], q2[1], q2[2])] - u[linear(f, q1[0], q1[1], q1[2])]) / (2 * h);
  }
  q1[b] += dir;
  q2[b] += 2 * dir;
  // forward: (-3u0 + 4u1 - u2)/(2h); backward: (3u0 - 4u1 + u2)/(2h)
  return -dir *
         (3 * u[linear(f, q[0], q[1], q[2])] - 4 * u[linear(f, q1[0], q1[1], q1[2])] +
          u[linear(f, q2[0], q2[1], q2[2])]) /
         (2 * h);
}

// Radiative (Sommerfeld, as Cactus NewRad) right-hand side at an outer point:
//   rhs = -v0 (x^i / r) d_i u - v0 (u - u0) / r,   0 at the origin (singular there).
SAGUARO_HOST_DEVICE inline double radiative_rhs(const OuterFaces& f, const double* u, int i, int j,
                                                int k, double u0, double v0) {
  const int q[3] = {i, j, k};
  double x[3];
  double r2 = 0;
  for (int b = 0; b < 3; ++b) {
    x[b] = f.origin[b] + double(q[b] + f.index_offset[b]) * f.spacing[b];
    r2 += x[b] * x[b];
  }
#if defined(SAGUARO_DEVICE_MATH)
  const double r = sqrt(r2);
#else
  const double r = std::sqrt(r2);
#endif
  if (!(r > 0)) return 0.0;
  double radial = 0;
  for (int b = 0; b < 3; ++b) radial += x[b] * radiative_derivative(f, u, q, b);
  radial /= r;
  return -v0 * radial - v0 * (u[linear(f, i, j, k)] - u0) / r;
}

} // namespace boundary
} // namespace saguaro::runtime
