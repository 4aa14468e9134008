// B2 (wave, 8th order), B3 (the micro-benchmark) and B4 (vacuum Maxwell, 4th order) at 256^3
// with two neighbouring points along x per thread, loaded as 16-byte pairs (double2): does
// halving the load instructions take the L1-bound stencils to the triad's roof (issue 20)?
// The triad itself moves 16-byte pairs; the generated kernels and the naive ones load 8 bytes.
//   naive   one thread per point, every neighbour an 8-byte global load
//   x2      a thread computes points i0, i0 + 1 (i0 even): each row it reads is read as aligned
//           pairs, so B2 issues 21 loads for two points where naive issues 50
//   x2zq    (B2) x2 with the z line in a register queue of pairs, NZ points along z
// Arrays as Saguaro lays them out: rows padded to 264 doubles, the first interior point of
// every row 64-byte aligned. Every variant's result is compared with the naive kernel's.
// On the GPU machine: nvcc -O3 -arch=sm_90 -std=c++17 -o x_pairs bench/profile/x_pairs.cu &&
// ./x_pairs
#include "wave_maxwell.cuh"

#include <cmath>

namespace {
using namespace wave_maxwell;
using L1 = PaddedLayout<1>; // B3

__device__ __forceinline__ double2 ld2(const double* __restrict__ u, long long p) {
  return *reinterpret_cast<const double2*>(u + p);
}
__device__ __forceinline__ void st2(double* __restrict__ u, long long p, double a, double b) {
  *reinterpret_cast<double2*>(u + p) = make_double2(a, b);
}

// ------------------------------------------------------------------------------ B2
// The y or z stencil of a pair: 8 pair loads.
__device__ __forceinline__ double2 pair_axis8(const double* __restrict__ u, long long p,
                                              long long s) {
  const double cs[5] = {0, C1, C2, C3, C4};
  double a = 0, b = 0;
#pragma unroll
  for (int m = 1; m <= 4; ++m) {
    const double2 lo = ld2(u, p - m * s), hi = ld2(u, p + m * s);
    a += cs[m] * (lo.x + hi.x);
    b += cs[m] * (lo.y + hi.y);
  }
  return make_double2(a, b);
}
// The x stencil of the pair at p (p even in the row): elements p - 4 .. p + 5 in 5 pair loads.
__device__ __forceinline__ double2 pair_x8(const double* __restrict__ u, long long p,
                                           double2& centre) {
  double e[10];
#pragma unroll
  for (int m = 0; m < 5; ++m) {
    const double2 w = ld2(u, p - 4 + 2 * m);
    e[2 * m] = w.x;
    e[2 * m + 1] = w.y;
  }
  centre = make_double2(e[4], e[5]);
  const double cs[5] = {0, C1, C2, C3, C4};
  double a = 0, b = 0;
#pragma unroll
  for (int m = 1; m <= 4; ++m) {
    a += cs[m] * (e[4 - m] + e[4 + m]);
    b += cs[m] * (e[5 - m] + e[5 + m]);
  }
  return make_double2(a, b);
}

template <int BX, int BY, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB)
    wave_x2(const double* __restrict__ u, const double* __restrict__ v, double* __restrict__ urhs,
            double* __restrict__ vrhs, double c) {
  const int i = 2 * (blockIdx.x * BX + threadIdx.x), j = blockIdx.y * BY + threadIdx.y,
            k = blockIdx.z;
  const long long p = L4::at(i, j, k);
  const double2 vv = ld2(v, p);
  st2(urhs, p, vv.x, vv.y);
  double2 centre;
  const double2 x = pair_x8(u, p, centre), y = pair_axis8(u, p, L4::SY),
                z = pair_axis8(u, p, L4::SZ);
  st2(vrhs, p, c * (3 * C0 * centre.x + x.x + y.x + z.x),
      c * (3 * C0 * centre.y + x.y + y.y + z.y));
}

template <int BX, int BY, int NZ, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB)
    wave_x2zq(const double* __restrict__ u, const double* __restrict__ v, double* __restrict__ urhs,
              double* __restrict__ vrhs, double c) {
  const int i = 2 * (blockIdx.x * BX + threadIdx.x), j = blockIdx.y * BY + threadIdx.y;
  long long p = L4::at(i, j, blockIdx.z * NZ);
  double2 q[9];
#pragma unroll
  for (int m = 0; m < 9; ++m)
    if (m != 4) q[m] = ld2(u, p + (m - 4) * L4::SZ);
  const double cs[5] = {0, C1, C2, C3, C4};
#pragma unroll 2
  for (int k = 0; k < NZ; ++k, p += L4::SZ) {
    const double2 vv = ld2(v, p);
    st2(urhs, p, vv.x, vv.y);
    const double2 x = pair_x8(u, p, q[4]), y = pair_axis8(u, p, L4::SY);
    double za = 0, zb = 0;
#pragma unroll
    for (int m = 1; m <= 4; ++m) {
      za += cs[m] * (q[4 - m].x + q[4 + m].x);
      zb += cs[m] * (q[4 - m].y + q[4 + m].y);
    }
    st2(vrhs, p, c * (3 * C0 * q[4].x + x.x + y.x + za), c * (3 * C0 * q[4].y + x.y + y.y + zb));
#pragma unroll
    for (int m = 0; m < 8; ++m) q[m] = q[m + 1];
    if (k + 1 < NZ) q[8] = ld2(u, p + 5 * L4::SZ);
  }
}

// ------------------------------------------------------------------------------ B4
// d/dy or d/dz of the pair at p: 4 pair loads.
__device__ __forceinline__ double2 pd4(const double* __restrict__ u, long long p, long long s) {
  const double2 m2 = ld2(u, p - 2 * s), m1 = ld2(u, p - s), p1 = ld2(u, p + s),
                p2 = ld2(u, p + 2 * s);
  return make_double2(D1 * (p1.x - m1.x) + D2 * (p2.x - m2.x),
                      D1 * (p1.y - m1.y) + D2 * (p2.y - m2.y));
}
// d/dx of the pair at p: elements p - 2 .. p + 3 in 3 pair loads.
__device__ __forceinline__ double2 pdx4(const double* __restrict__ u, long long p) {
  const double2 a = ld2(u, p - 2), b = ld2(u, p), d = ld2(u, p + 2);
  // a = (-2, -1), b = (0, 1), d = (2, 3)
  return make_double2(D1 * (b.y - a.y) + D2 * (d.x - a.x), D1 * (d.x - b.x) + D2 * (d.y - a.y));
}
template <int BX, int BY, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB) maxwell_x2(Fields f, double c) {
  const int i = 2 * (blockIdx.x * BX + threadIdx.x), j = blockIdx.y * BY + threadIdx.y,
            k = blockIdx.z;
  const long long p = L2::at(i, j, k), y = L2::SY, z = L2::SZ;
  const double* __restrict__ E1 = f.E1, * __restrict__ E2 = f.E2, * __restrict__ E3 = f.E3, * __restrict__ B1 = f.B1, * __restrict__ B2 = f.B2, * __restrict__ B3 = f.B3;
  auto store = [&](double* __restrict__ out, double s, double2 a, double2 b) {
    st2(out, p, s * (a.x - b.x), s * (a.y - b.y));
  };
  store(f.rE1, c, pd4(B3, p, y), pd4(B2, p, z));
  store(f.rE2, c, pd4(B1, p, z), pdx4(B3, p));
  store(f.rE3, c, pdx4(B2, p), pd4(B1, p, y));
  store(f.rB1, -c, pd4(E3, p, y), pd4(E2, p, z));
  store(f.rB2, -c, pd4(E1, p, z), pdx4(E3, p));
  store(f.rB3, -c, pdx4(E2, p), pd4(E1, p, y));
}

// ------------------------------------------------------------------------------ B3
__host__ __device__ constexpr double C(int n, int m) {
  return 0.01 * (9 * n + m + 1);
}
struct Inputs {
  const double* a[10];
  double* b;
};
template <int BX, int BY, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB) mb_naive(Inputs in) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y, k = blockIdx.z;
  const long long p = L1::at(i, j, k), SY = L1::SY, SZ = L1::SZ;
  double s = 0;
#pragma unroll
  for (int n = 0; n < 10; ++n) {
    const double* __restrict__ u = in.a[n];
    s += C(n, 0) * u[p] + C(n, 1) * u[p - 1] + C(n, 2) * u[p + 1] + C(n, 3) * u[p - SY] +
         C(n, 4) * u[p + SY] + C(n, 5) * u[p - SZ] + C(n, 6) * u[p + SZ] + C(n, 7) * u[p - 1 + SY] +
         C(n, 8) * u[p - 1 + SZ];
  }
  in.b[p] = in.b[p] + s;
}
// Pairs: per input 9 pair loads for two points (the point's row: p-2, p, p+2; rows +y and +z:
// p-2 and p; rows -y and -z: p).
template <int BX, int BY, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB) mb_x2(Inputs in) {
  const int i = 2 * (blockIdx.x * BX + threadIdx.x), j = blockIdx.y * BY + threadIdx.y,
            k = blockIdx.z;
  const long long p = L1::at(i, j, k), SY = L1::SY, SZ = L1::SZ;
  double s0 = 0, s1 = 0;
#pragma unroll
  for (int n = 0; n < 10; ++n) {
    const double* __restrict__ u = in.a[n];
    const double2 xl = ld2(u, p - 2), xc = ld2(u, p), xr = ld2(u, p + 2);
    const double2 yl = ld2(u, p + SY - 2), yc = ld2(u, p + SY), ym = ld2(u, p - SY);
    const double2 zl = ld2(u, p + SZ - 2), zc = ld2(u, p + SZ), zm = ld2(u, p - SZ);
    s0 += C(n, 0) * xc.x + C(n, 1) * xl.y + C(n, 2) * xc.y + C(n, 3) * ym.x + C(n, 4) * yc.x +
          C(n, 5) * zm.x + C(n, 6) * zc.x + C(n, 7) * yl.y + C(n, 8) * zl.y;
    s1 += C(n, 0) * xc.y + C(n, 1) * xc.x + C(n, 2) * xr.x + C(n, 3) * ym.y + C(n, 4) * yc.y +
          C(n, 5) * zm.y + C(n, 6) * zc.y + C(n, 7) * yc.x + C(n, 8) * zc.x;
  }
  const double2 b = ld2(in.b, p);
  st2(in.b, p, b.x + s0, b.y + s1);
}

// ------------------------------------------------------------------------------ harness

void wave() {
  printf("B2 wave 8th order, 32 B/point compulsory\n");
  WaveArrays w;
  double *u = w.u, *v = w.v, *urhs = w.urhs, *vrhs = w.vrhs;
  const double c = w.c;
  auto run = [&](const char* name, auto launch) { w.run(name, launch); };
#define WAVE(KIND, BX, BY, MINB, PX)                                                               \
  run("wave " #KIND " " #BX "x" #BY " " #MINB "/SM", [&] {                                         \
    wave_##KIND<BX, BY, MINB>                                                                      \
        <<<dim3(N / (BX * PX), N / BY, N), dim3(BX, BY)>>>(u, v, urhs, vrhs, c);                   \
  })
#define WAVE_ZQ(BX, BY, NZ, MINB)                                                                  \
  run("wave x2zq " #BX "x" #BY " nz " #NZ " " #MINB "/SM", [&] {                                   \
    wave_x2zq<BX, BY, NZ, MINB>                                                                    \
        <<<dim3(N / (2 * BX), N / BY, N / NZ), dim3(BX, BY)>>>(u, v, urhs, vrhs, c);               \
  })
  WAVE(naive, 32, 8, 1, 1);
  WAVE(naive, 64, 4, 1, 1);
  WAVE(x2, 32, 8, 1, 2);
  WAVE(x2, 32, 8, 2, 2);
  WAVE(x2, 32, 8, 3, 2);
  WAVE(x2, 32, 8, 4, 2);
  WAVE(x2, 16, 16, 3, 2);
  WAVE(x2, 64, 4, 3, 2);
  WAVE(x2, 32, 4, 6, 2);
  WAVE(x2, 128, 2, 3, 2);
  WAVE_ZQ(32, 8, 4, 2);
  WAVE_ZQ(32, 8, 8, 2);
  WAVE_ZQ(32, 8, 8, 3);
  WAVE_ZQ(32, 8, 8, 4);
  WAVE_ZQ(16, 16, 8, 3);
  WAVE_ZQ(64, 4, 8, 3);
  WAVE_ZQ(32, 8, 16, 3);
  WAVE_ZQ(32, 4, 8, 6);
}

void maxwell() {
  printf("B4 Maxwell 4th order, 96 B/point compulsory\n");
  MaxwellArrays m;
  const Fields fields = m.fields;
  const double c = m.c;
  auto run = [&](const char* name, auto launch) { m.run(name, launch); };
#define MAXWELL(KIND, BX, BY, MINB, PX)                                                            \
  run("maxwell " #KIND " " #BX "x" #BY " " #MINB "/SM", [&] {                                      \
    maxwell_##KIND<BX, BY, MINB><<<dim3(N / (BX * PX), N / BY, N), dim3(BX, BY)>>>(fields, c);     \
  })
  MAXWELL(naive, 32, 8, 1, 1);
  MAXWELL(naive, 32, 8, 8, 1);
  MAXWELL(x2, 32, 8, 1, 2);
  MAXWELL(x2, 32, 8, 2, 2);
  MAXWELL(x2, 32, 8, 3, 2);
  MAXWELL(x2, 32, 8, 4, 2);
  MAXWELL(x2, 32, 8, 6, 2);
  MAXWELL(x2, 32, 8, 8, 2);
  MAXWELL(x2, 16, 16, 4, 2);
  MAXWELL(x2, 64, 4, 4, 2);
  MAXWELL(x2, 32, 4, 8, 2);
}

void microbench() {
  printf("B3 micro-benchmark, 16 B/point compulsory + 10 inputs: 96 B/point\n");
  Inputs inputs{};
  for (int n = 0; n < 10; ++n)
    inputs.a[n] = device_array<L1>(host_field<L1>(1e-3 * (n + 1), 3e-5 * (n + 2)));
  const std::vector<double> b0 = host_field<L1>(5e-4, 1e-5);
  inputs.b = device_array<L1>(b0);
  const double bytes = 96.0 * N * N * N;
  // one launch from b0 is the reference; every timed variant then restarts from b0
  mb_naive<32, 8, 1><<<dim3(N / 32, N / 8, N), dim3(32, 8)>>>(inputs);
  const std::vector<double> reference = fetch<L1>(inputs.b);
  auto run = [&](const char* name, auto launch) {
    time_launch(name, bytes, launch);
    CK(cudaMemcpy(inputs.b, b0.data(), L1::TOTAL * sizeof(double), cudaMemcpyHostToDevice));
    launch();
    printf("    difference from naive %.1e\n", difference<L1>(fetch<L1>(inputs.b), reference));
    CK(cudaMemcpy(inputs.b, b0.data(), L1::TOTAL * sizeof(double), cudaMemcpyHostToDevice));
  };
  CK(cudaMemcpy(inputs.b, b0.data(), L1::TOTAL * sizeof(double), cudaMemcpyHostToDevice));
#define MB(KIND, BX, BY, MINB, PX)                                                                 \
  run("microbench " #KIND " " #BX "x" #BY " " #MINB "/SM",                                         \
      [&] { mb_##KIND<BX, BY, MINB><<<dim3(N / (BX * PX), N / BY, N), dim3(BX, BY)>>>(inputs); })
  MB(naive, 32, 8, 1, 1);
  MB(naive, 32, 8, 8, 1);
  MB(x2, 32, 8, 1, 2);
  MB(x2, 32, 8, 2, 2);
  MB(x2, 32, 8, 3, 2);
  MB(x2, 32, 8, 4, 2);
  MB(x2, 32, 8, 6, 2);
  MB(x2, 32, 8, 8, 2);
  MB(x2, 64, 4, 4, 2);
  MB(x2, 16, 16, 4, 2);
  for (const double* d : inputs.a) CK(cudaFree(const_cast<double*>(d)));
  CK(cudaFree(inputs.b));
}

} // namespace

int main() {
  triad_roofline();
  wave();
  maxwell();
  microbench();
  triad_roofline();
  return 0;
}
