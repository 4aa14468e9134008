// B2 (wave, 8th order: phirhs = pi, pirhs = c * Laplacian of phi) and B4 (vacuum Maxwell, 4th
// order: D_t E = curl B, D_t B = -curl E) as the hand-written profiling programs share them
// (stencil_variants.cu, x_pairs.cu): the layouts of their ghost widths, the stencils'
// coefficients, the naive kernels (one thread per point) every variant is compared with, and each
// benchmark's arrays with the timing of a variant against the naive kernel's result.
#pragma once

#include "profile_common.cuh"

#include <vector>

namespace wave_maxwell {
constexpr int N = 256;
using L4 = PaddedLayout<4>; // B2
using L2 = PaddedLayout<2>; // B4

// ------------------------------------------------------------------------------ B2
// Second derivative, 8th order: c0 u + sum_k ck (u[+k] + u[-k]).
constexpr double C0 = -205.0 / 72, C1 = 8.0 / 5, C2 = -1.0 / 5, C3 = 8.0 / 315, C4 = -1.0 / 560;

__device__ __forceinline__ double axis8(const double* __restrict__ u, long long p, long long s) {
  return C1 * (u[p - s] + u[p + s]) + C2 * (u[p - 2 * s] + u[p + 2 * s]) +
         C3 * (u[p - 3 * s] + u[p + 3 * s]) + C4 * (u[p - 4 * s] + u[p + 4 * s]);
}

// MINB 0: no minimum of blocks per SM (ptxas then keeps to fewer registers than with 1).
template <int BX, int BY, int MINB = 0>
__global__ void __launch_bounds__(BX* BY, MINB)
    wave_naive(const double* __restrict__ u, const double* __restrict__ v,
               double* __restrict__ urhs, double* __restrict__ vrhs, double c) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y, k = blockIdx.z;
  const long long p = L4::at(i, j, k);
  urhs[p] = v[p];
  vrhs[p] = c * (3 * C0 * u[p] + axis8(u, p, 1) + axis8(u, p, L4::SY) + axis8(u, p, L4::SZ));
}

// ------------------------------------------------------------------------------ B4
// First derivative, 4th order: (2/3)(u[+1] - u[-1]) - (1/12)(u[+2] - u[-2]).
constexpr double D1 = 2.0 / 3, D2 = -1.0 / 12;
__device__ __forceinline__ double d4(const double* __restrict__ u, long long p, long long s) {
  return D1 * (u[p + s] - u[p - s]) + D2 * (u[p + 2 * s] - u[p - 2 * s]);
}
struct Fields {
  const double *E1, *E2, *E3, *B1, *B2, *B3;
  double *rE1, *rE2, *rE3, *rB1, *rB2, *rB3;
};

template <int BX, int BY, int MINB = 0>
__global__ void __launch_bounds__(BX* BY, MINB) maxwell_naive(Fields f, double c) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y, k = blockIdx.z;
  const long long p = L2::at(i, j, k), y = L2::SY, z = L2::SZ;
  const double* __restrict__ E1 = f.E1, * __restrict__ E2 = f.E2, * __restrict__ E3 = f.E3, * __restrict__ B1 = f.B1, * __restrict__ B2 = f.B2, * __restrict__ B3 = f.B3;
  f.rE1[p] = c * (d4(B3, p, y) - d4(B2, p, z));
  f.rE2[p] = c * (d4(B1, p, z) - d4(B3, p, 1));
  f.rE3[p] = c * (d4(B2, p, 1) - d4(B1, p, y));
  f.rB1[p] = -c * (d4(E3, p, y) - d4(E2, p, z));
  f.rB2[p] = -c * (d4(E1, p, z) - d4(E3, p, 1));
  f.rB3[p] = -c * (d4(E2, p, 1) - d4(E1, p, y));
}

// ------------------------------------------------------------------------------ harness
// B2's arrays (phi = u, pi = v, their right-hand sides) and the naive kernel's pirhs. run(name,
// launch) times a variant (time_launch) and prints its distance from the naive result and that
// of its phirhs from pi.
struct WaveArrays {
  static constexpr double c = 0.37, bytes = 32.0 * N * N * N; // phi, pi read; 2 written
  const std::vector<double> pi = host_field<L4>(2e-3, 7e-5);
  double *u = device_array<L4>(host_field<L4>(1e-3, 3e-5)), *v = device_array<L4>(pi),
         *urhs = device_array<L4>({}), *vrhs = device_array<L4>({});
  std::vector<double> reference;

  WaveArrays() {
    wave_naive<32, 8><<<dim3(N / 32, N / 8, N), dim3(32, 8)>>>(u, v, urhs, vrhs, c);
    CK(cudaDeviceSynchronize());
    reference = fetch<L4>(vrhs);
  }
  ~WaveArrays() {
    for (double* d : {u, v, urhs, vrhs}) CK(cudaFree(d));
  }
  template <class Launch>
  void run(const char* name, Launch launch) {
    CK(cudaMemset(vrhs, 0, L4::TOTAL * sizeof(double)));
    CK(cudaMemset(urhs, 0, L4::TOTAL * sizeof(double)));
    time_launch(name, bytes, launch);
    printf("    difference from naive %.1e, phirhs - pi %.1e\n",
           difference<L4>(fetch<L4>(vrhs), reference), difference<L4>(fetch<L4>(urhs), pi));
  }
};

// B4's six fields and six right-hand sides, and the naive kernel's results; run as above.
struct MaxwellArrays {
  static constexpr double c = 0.37, bytes = 96.0 * N * N * N; // 6 read, 6 written
  std::vector<double*> in, out;
  Fields fields{};
  std::vector<std::vector<double>> reference;

  MaxwellArrays() {
    for (int f = 0; f < 6; ++f) {
      in.push_back(device_array<L2>(host_field<L2>(1e-3 * (f + 1), 3e-5 * (f + 2))));
      out.push_back(device_array<L2>({}));
    }
    fields = {in[0],  in[1],  in[2],  in[3],  in[4],  in[5],
              out[0], out[1], out[2], out[3], out[4], out[5]};
    maxwell_naive<32, 8><<<dim3(N / 32, N / 8, N), dim3(32, 8)>>>(fields, c);
    CK(cudaDeviceSynchronize());
    for (double* d : out) reference.push_back(fetch<L2>(d));
  }
  ~MaxwellArrays() {
    for (double* d : in) CK(cudaFree(d));
    for (double* d : out) CK(cudaFree(d));
  }
  template <class Launch>
  void run(const char* name, Launch launch) {
    for (double* d : out) CK(cudaMemset(d, 0, L2::TOTAL * sizeof(double)));
    time_launch(name, bytes, launch);
    double worst = 0;
    for (int f = 0; f < 6; ++f)
      worst = std::max(worst, difference<L2>(fetch<L2>(out[f]), reference[f]));
    printf("    difference from naive %.1e\n", worst);
  }
};
} // namespace wave_maxwell
