// B2 (wave, 8th order: phirhs = pi, pirhs = c * Laplacian of phi, 25 points) and B4 (vacuum
// Maxwell, 4th order: D_t E = curl B, D_t B = -curl E) at 256^3, hand-written in several shapes
// and timed with CUDA events (median of 21) against the triad of the same process: which shape
// takes a radius-2..4 stencil to the bandwidth roof (issue 20; Saguaro's kernels and the naive
// one reach ~82% of the triad on B2 and ~77% on B4).
//   naive   one thread per point, every neighbour a global load (L1/L2 catch the reuse)
//   zq      a thread walks NZ points along z keeping the z neighbours in registers (a register
//           queue: one new load per point and field along z); x and y neighbours global loads
//   smem    (B2) as zq, with the current plane's x-y tile and its halo in shared memory: one
//           global load per point plus the halo, two barriers per plane
//   zqy     (B2) as zq, with NY consecutive rows per thread: the y stencil's rows loaded once
//           for the thread's rows (H200, 2026-11-29: 183-213 us against zq's 169.8, not kept)
// Arrays as Saguaro lays them out: rows padded to 264 doubles, the first interior point of every
// row 64-byte aligned. Every variant's result is compared with the naive kernel's.
// On the GPU machine: nvcc -O3 -arch=sm_90 -std=c++17 -o stencil_variants
// bench/profile/stencil_variants.cu && ./stencil_variants
#include "wave_maxwell.cuh"

#include <cmath>

namespace {
using namespace wave_maxwell;

// ------------------------------------------------------------------------------ B2
__device__ __forceinline__ double queue8(const double (&q)[9]) {
  return C1 * (q[3] + q[5]) + C2 * (q[2] + q[6]) + C3 * (q[1] + q[7]) + C4 * (q[0] + q[8]);
}

template <int BX, int BY, int NZ>
__global__ void __launch_bounds__(BX* BY)
    wave_zq(const double* __restrict__ u, const double* __restrict__ v, double* __restrict__ urhs,
            double* __restrict__ vrhs, double c) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
  long long p = L4::at(i, j, blockIdx.z * NZ);
  double q[9];
#pragma unroll
  for (int m = 0; m < 9; ++m) q[m] = u[p + (m - 4) * L4::SZ];
#pragma unroll 2
  for (int k = 0; k < NZ; ++k, p += L4::SZ) {
    urhs[p] = v[p];
    vrhs[p] = c * (3 * C0 * q[4] + axis8(u, p, 1) + axis8(u, p, L4::SY) + queue8(q));
#pragma unroll
    for (int m = 0; m < 8; ++m) q[m] = q[m + 1];
    if (k + 1 < NZ) q[8] = u[p + 5 * L4::SZ];
  }
}

// zqy: as zq, with NY consecutive rows (along y) per thread: the rows of the y stencil are
// loaded once for the thread's NY points (8 loads a z step, the centres from the queues), so a
// point issues 8 + 1 + 8 / NY loads instead of 17.
template <int BX, int BY, int NY, int NZ, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB)
    wave_zqy(const double* __restrict__ u, const double* __restrict__ v, double* __restrict__ urhs,
             double* __restrict__ vrhs, double c) {
  const int i = blockIdx.x * BX + threadIdx.x, j0 = (blockIdx.y * BY + threadIdx.y) * NY;
  long long p = L4::at(i, j0, blockIdx.z * NZ);
  double q[NY][9];
#pragma unroll
  for (int y = 0; y < NY; ++y)
#pragma unroll
    for (int m = 0; m < 9; ++m) q[y][m] = u[p + y * L4::SY + (m - 4) * L4::SZ];
#pragma unroll 1
  for (int k = 0; k < NZ; ++k, p += L4::SZ) {
    double rows[NY + 8]; // rows j0 - 4 .. j0 + NY + 3 of this plane
#pragma unroll
    for (int r = 0; r < NY + 8; ++r)
      rows[r] = (r >= 4 && r < NY + 4) ? q[r - 4][4] : u[p + (r - 4) * L4::SY];
#pragma unroll
    for (int y = 0; y < NY; ++y) {
      const long long py = p + y * L4::SY;
      urhs[py] = v[py];
      const double ys = C1 * (rows[y + 3] + rows[y + 5]) + C2 * (rows[y + 2] + rows[y + 6]) +
                        C3 * (rows[y + 1] + rows[y + 7]) + C4 * (rows[y] + rows[y + 8]);
      vrhs[py] = c * (3 * C0 * q[y][4] + axis8(u, py, 1) + ys + queue8(q[y]));
    }
#pragma unroll
    for (int y = 0; y < NY; ++y) {
#pragma unroll
      for (int m = 0; m < 8; ++m) q[y][m] = q[y][m + 1];
      if (k + 1 < NZ) q[y][8] = u[p + y * L4::SY + 5 * L4::SZ];
    }
  }
}

template <int BX, int BY, int NZ>
__global__ void __launch_bounds__(BX* BY)
    wave_smem(const double* __restrict__ u, const double* __restrict__ v, double* __restrict__ urhs,
              double* __restrict__ vrhs, double c) {
  __shared__ double tile[BY + 8][BX + 8];
  const int tx = threadIdx.x, ty = threadIdx.y;
  long long p = L4::at(blockIdx.x * BX + tx, blockIdx.y * BY + ty, blockIdx.z * NZ);
  double q[9];
#pragma unroll
  for (int m = 0; m < 9; ++m) q[m] = u[p + (m - 4) * L4::SZ];
  for (int k = 0; k < NZ; ++k, p += L4::SZ) {
    __syncthreads(); // the previous plane's reads are done
    tile[ty + 4][tx + 4] = q[4];
    if (tx < 4) {
      tile[ty + 4][tx] = u[p - 4];
      tile[ty + 4][tx + BX + 4] = u[p + BX];
    }
    if (ty < 4) {
      tile[ty][tx + 4] = u[p - 4 * L4::SY];
      tile[ty + BY + 4][tx + 4] = u[p + BY * L4::SY];
    }
    __syncthreads();
    urhs[p] = v[p];
    const double cs[5] = {0, C1, C2, C3, C4};
    double x = 0, y = 0;
#pragma unroll
    for (int s = 1; s <= 4; ++s) {
      x += cs[s] * (tile[ty + 4][tx + 4 - s] + tile[ty + 4][tx + 4 + s]);
      y += cs[s] * (tile[ty + 4 - s][tx + 4] + tile[ty + 4 + s][tx + 4]);
    }
    vrhs[p] = c * (3 * C0 * q[4] + x + y + queue8(q));
#pragma unroll
    for (int m = 0; m < 8; ++m) q[m] = q[m + 1];
    if (k + 1 < NZ) q[8] = u[p + 5 * L4::SZ];
  }
}

// ------------------------------------------------------------------------------ B4
__device__ __forceinline__ double dq(const double (&q)[5]) {
  return D1 * (q[3] - q[1]) + D2 * (q[4] - q[0]);
}
// Queues along z for the four fields differentiated along z (E1, E2, B1, B2).
template <int BX, int BY, int NZ>
__global__ void __launch_bounds__(BX* BY) maxwell_zq(Fields f, double c) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
  long long p = L2::at(i, j, blockIdx.z * NZ);
  constexpr long long y = L2::SY, z = L2::SZ;
  const double* __restrict__ E1 = f.E1, * __restrict__ E2 = f.E2, * __restrict__ E3 = f.E3, * __restrict__ B1 = f.B1, * __restrict__ B2 = f.B2, * __restrict__ B3 = f.B3;
  double e1[5], e2[5], b1[5], b2[5];
#pragma unroll
  for (int m = 0; m < 5; ++m) {
    const long long o = p + (m - 2) * z;
    e1[m] = E1[o], e2[m] = E2[o], b1[m] = B1[o], b2[m] = B2[o];
  }
#pragma unroll 1 // unrolled twice, ptxas takes 102 registers
  for (int k = 0; k < NZ; ++k, p += z) {
    f.rE1[p] = c * (d4(B3, p, y) - dq(b2));
    f.rE2[p] = c * (dq(b1) - d4(B3, p, 1));
    f.rE3[p] = c * (d4(B2, p, 1) - d4(B1, p, y));
    f.rB1[p] = -c * (d4(E3, p, y) - dq(e2));
    f.rB2[p] = -c * (dq(e1) - d4(E3, p, 1));
    f.rB3[p] = -c * (d4(E2, p, 1) - d4(E1, p, y));
#pragma unroll
    for (int m = 0; m < 4; ++m)
      e1[m] = e1[m + 1], e2[m] = e2[m + 1], b1[m] = b1[m + 1], b2[m] = b2[m + 1];
    if (k + 1 < NZ) {
      const long long o = p + 3 * z;
      e1[4] = E1[o], e2[4] = E2[o], b1[4] = B1[o], b2[4] = B2[o];
    }
  }
}

// The loops interchanged (as b3_columns.cu's colx): field by field, the thread walks its NZ
// points along z, the fields differentiated along z through a queue of 5, each derivative
// added at once to the NZ sums of the two right-hand sides it enters; the sums are stored at
// the end.
template <int BX, int BY, int NZ, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB) maxwell_x(Fields f, double c) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
  const long long p0 = L2::at(i, j, blockIdx.z * NZ);
  constexpr long long y = L2::SY, z = L2::SZ;
  double e1[NZ], e2[NZ], e3[NZ], b1[NZ], b2[NZ], b3[NZ];
  // d/dz of u at the NZ points through a queue: add w * d to acc[k].
  auto along_z = [&](const double* __restrict__ u, double(&acc)[NZ], double w) {
    double q[5];
#pragma unroll
    for (int m = 0; m < 4; ++m) q[m] = u[p0 + (m - 2) * z];
#pragma unroll
    for (int k = 0; k < NZ; ++k) {
      q[4] = u[p0 + (k + 2) * z];
      acc[k] += w * dq(q);
#pragma unroll
      for (int m = 0; m < 4; ++m) q[m] = q[m + 1];
    }
  };
#pragma unroll
  for (int k = 0; k < NZ; ++k) {
    const long long p = p0 + k * z;
    e1[k] = d4(f.B3, p, y);
    e2[k] = -d4(f.B3, p, 1);
    e3[k] = d4(f.B2, p, 1);
    b1[k] = d4(f.E3, p, y);
    b2[k] = -d4(f.E3, p, 1);
    b3[k] = d4(f.E2, p, 1);
  }
  along_z(f.B2, e1, -1);
  along_z(f.B1, e2, 1);
#pragma unroll
  for (int k = 0; k < NZ; ++k) e3[k] -= d4(f.B1, p0 + k * z, y);
  along_z(f.E2, b1, -1);
  along_z(f.E1, b2, 1);
#pragma unroll
  for (int k = 0; k < NZ; ++k) b3[k] -= d4(f.E1, p0 + k * z, y);
#pragma unroll
  for (int k = 0; k < NZ; ++k) {
    const long long p = p0 + k * z;
    f.rE1[p] = c * e1[k];
    f.rE2[p] = c * e2[k];
    f.rE3[p] = c * e3[k];
    f.rB1[p] = -c * b1[k];
    f.rB2[p] = -c * b2[k];
    f.rB3[p] = -c * b3[k];
  }
}

// ------------------------------------------------------------------------------ harness

void wave() {
  printf("B2 wave 8th order, 32 B/point compulsory\n");
  WaveArrays w;
  double *u = w.u, *v = w.v, *urhs = w.urhs, *vrhs = w.vrhs;
  const double c = w.c;
  auto run = [&](const char* name, auto launch) { w.run(name, launch); };
#define WAVE_NAIVE(BX, BY)                                                                         \
  run("wave naive " #BX "x" #BY,                                                                   \
      [&] { wave_naive<BX, BY><<<dim3(N / BX, N / BY, N), dim3(BX, BY)>>>(u, v, urhs, vrhs, c); })
#define WAVE(KIND, BX, BY, NZ)                                                                     \
  run("wave " #KIND " " #BX "x" #BY " nz " #NZ, [&] {                                              \
    wave_##KIND<BX, BY, NZ><<<dim3(N / BX, N / BY, N / NZ), dim3(BX, BY)>>>(u, v, urhs, vrhs, c);  \
  })
  WAVE_NAIVE(32, 8);
  WAVE_NAIVE(32, 4);
  WAVE_NAIVE(64, 4);
  WAVE_NAIVE(128, 2);
  WAVE_NAIVE(256, 1);
  WAVE(zq, 32, 8, 8);
  WAVE(zq, 32, 8, 16);
  WAVE(zq, 32, 8, 32);
  WAVE(zq, 32, 8, 64);
  WAVE(zq, 64, 4, 16);
  WAVE(zq, 64, 4, 32);
  WAVE(zq, 128, 2, 32);
  WAVE(zq, 32, 16, 32);
#define WAVE_ZQY(BX, BY, NY, NZ, MINB)                                                             \
  run("wave zqy " #BX "x" #BY " ny " #NY " nz " #NZ " " #MINB "/SM", [&] {                         \
    wave_zqy<BX, BY, NY, NZ, MINB>                                                                 \
        <<<dim3(N / BX, N / (BY * NY), N / NZ), dim3(BX, BY)>>>(u, v, urhs, vrhs, c);              \
  })
  WAVE_ZQY(32, 8, 2, 8, 1);
  WAVE_ZQY(32, 8, 2, 8, 4);
  WAVE_ZQY(32, 8, 2, 8, 5);
  WAVE_ZQY(32, 4, 2, 8, 6);
  WAVE_ZQY(32, 8, 2, 16, 4);
  WAVE_ZQY(32, 8, 4, 8, 1);
  WAVE_ZQY(32, 8, 4, 8, 3);
  WAVE_ZQY(32, 4, 4, 8, 4);
  WAVE_ZQY(32, 4, 4, 8, 6);
  WAVE_ZQY(64, 4, 2, 8, 4);
  WAVE(smem, 32, 8, 16);
  WAVE(smem, 32, 8, 32);
  WAVE(smem, 32, 8, 64);
  WAVE(smem, 32, 16, 32);
  WAVE(smem, 32, 16, 64);
  WAVE(smem, 64, 8, 32);
  WAVE(smem, 64, 8, 64);
  WAVE(smem, 64, 4, 32);
}

void maxwell() {
  printf("B4 Maxwell 4th order, 96 B/point compulsory\n");
  MaxwellArrays m;
  const Fields fields = m.fields;
  const double c = m.c;
  auto run = [&](const char* name, auto launch) { m.run(name, launch); };
#define MAXWELL_NAIVE(BX, BY)                                                                      \
  run("maxwell naive " #BX "x" #BY,                                                                \
      [&] { maxwell_naive<BX, BY><<<dim3(N / BX, N / BY, N), dim3(BX, BY)>>>(fields, c); })
#define MAXWELL_ZQ(BX, BY, NZ)                                                                     \
  run("maxwell zq " #BX "x" #BY " nz " #NZ,                                                        \
      [&] { maxwell_zq<BX, BY, NZ><<<dim3(N / BX, N / BY, N / NZ), dim3(BX, BY)>>>(fields, c); })
  MAXWELL_NAIVE(32, 8);
  MAXWELL_NAIVE(32, 4);
  MAXWELL_NAIVE(64, 4);
  MAXWELL_NAIVE(128, 2);
  MAXWELL_NAIVE(256, 1);
  MAXWELL_ZQ(32, 8, 8);
  MAXWELL_ZQ(32, 8, 16);
  MAXWELL_ZQ(32, 8, 32);
  MAXWELL_ZQ(32, 8, 64);
  MAXWELL_ZQ(64, 4, 16);
  MAXWELL_ZQ(64, 4, 32);
  MAXWELL_ZQ(128, 2, 32);
  MAXWELL_ZQ(32, 16, 32);
#define MAXWELL_X(BX, BY, NZ, MINB)                                                                \
  run("maxwell interchanged " #BX "x" #BY " nz " #NZ " " #MINB "/SM", [&] {                        \
    maxwell_x<BX, BY, NZ, MINB><<<dim3(N / BX, N / BY, N / NZ), dim3(BX, BY)>>>(fields, c);        \
  })
  MAXWELL_X(32, 8, 2, 4);
  MAXWELL_X(32, 8, 4, 4);
  MAXWELL_X(32, 8, 4, 3);
  MAXWELL_X(32, 8, 8, 3);
  MAXWELL_X(32, 8, 8, 2);
  MAXWELL_X(64, 4, 4, 4);
  MAXWELL_X(32, 8, 2, 6);
}

} // namespace

int main() {
  triad_roofline();
  wave();
  maxwell();
  triad_roofline(); // the roofline again after the kernels (clocks, heat)
  return 0;
}
