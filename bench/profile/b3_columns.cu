// B3 (the micro-benchmark of Hu, Koppelman & Brandt: B += sum over ten inputs of a 9-point
// stencil) at 256^3, hand-written in several shapes and timed with CUDA events (median of 21)
// against the triad of the same process. B3 is bound by L1's wavefronts, not DRAM (90 loads a
// point, 4 of each input's 9 shifted along x, so off the 128-byte lines); the question is
// whether carrying values along z in registers column by column -- every (x, y) column of a
// stencil with more than one z offset, not only the column through the point -- takes enough
// loads off L1 to matter.
//   naive   one thread per point, every neighbour a global load
//   col     a thread walks NZ points along z, the columns (0,0) (z offsets -1 0 1) and (-1,0)
//           (offsets 0 1) in registers: 6 loads a point and input instead of 9
//   col0    the same with only the column through the point in registers: 7 loads
// Arrays as Saguaro lays them out: rows padded to 264 doubles, the first interior point of every
// row 64-byte aligned, ghost width 1. Every variant's result is compared with the naive kernel's.
// On the GPU machine: nvcc -O3 -arch=sm_90 -std=c++17 -o b3_columns bench/profile/b3_columns.cu
// && ./b3_columns
#include "profile_common.cuh"

#include <cmath>

namespace {
constexpr int N = 256;
constexpr long long SY = 264, SZ = SY * (N + 2), OFFSET = 7, TOTAL = OFFSET + SZ * (N + 2);
__host__ __device__ inline long long at(int i, int j, int k) {
  return OFFSET + (k + 1) * SZ + (j + 1) * SY + (i + 1);
}
// c_n[m] = 0.01 (9n + m + 1), as par/microbench.edl.
__host__ __device__ constexpr double C(int n, int m) {
  return 0.01 * (9 * n + m + 1);
}

#define MB_PARAMS                                                                                  \
  const double* __restrict__ a0, const double* __restrict__ a1, const double* __restrict__ a2,     \
      const double* __restrict__ a3, const double* __restrict__ a4, const double* __restrict__ a5, \
      const double* __restrict__ a6, const double* __restrict__ a7, const double* __restrict__ a8, \
      const double* __restrict__ a9, double* __restrict__ b
#define MB_ARGS a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], b

__device__ __forceinline__ double naive_term(const double* __restrict__ u, long long p, int n) {
  return C(n, 0) * u[p] + C(n, 1) * u[p - 1] + C(n, 2) * u[p + 1] + C(n, 3) * u[p - SY] +
         C(n, 4) * u[p + SY] + C(n, 5) * u[p - SZ] + C(n, 6) * u[p + SZ] + C(n, 7) * u[p - 1 + SY] +
         C(n, 8) * u[p - 1 + SZ];
}

template <int BX, int BY, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB) mb_naive(MB_PARAMS) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y, k = blockIdx.z;
  const long long p = at(i, j, k);
  const double* const in[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
  double s = 0;
#pragma unroll
  for (int n = 0; n < 10; ++n) s += naive_term(in[n], p, n);
  b[p] = b[p] + s;
}

// COLS = 2: columns (0,0) and (-1,0) in registers; COLS = 1: (0,0) only.
template <int BX, int BY, int NZ, int MINB, int COLS>
__global__ void __launch_bounds__(BX* BY, MINB) mb_col(MB_PARAMS) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
  const int k0 = blockIdx.z * NZ;
  const double* const in[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
  double c[10][3], w[10][2];
  const long long p0 = at(i, j, k0);
#pragma unroll
  for (int n = 0; n < 10; ++n) {
    c[n][0] = in[n][p0 - SZ];
    c[n][1] = in[n][p0];
    if (COLS == 2) w[n][0] = in[n][p0 - 1];
  }
#pragma unroll 1
  for (int k = 0; k < NZ; ++k) {
    const long long p = p0 + k * SZ;
    double s = 0;
#pragma unroll
    for (int n = 0; n < 10; ++n) {
      const double* __restrict__ u = in[n];
      c[n][2] = u[p + SZ];
      if (COLS == 2) w[n][1] = u[p - 1 + SZ];
      const double xm = COLS == 2 ? w[n][0] : u[p - 1];
      const double zx = COLS == 2 ? w[n][1] : u[p - 1 + SZ];
      s += C(n, 0) * c[n][1] + C(n, 1) * xm + C(n, 2) * u[p + 1] + C(n, 3) * u[p - SY] +
           C(n, 4) * u[p + SY] + C(n, 5) * c[n][0] + C(n, 6) * c[n][2] + C(n, 7) * u[p - 1 + SY] +
           C(n, 8) * zx;
      c[n][0] = c[n][1];
      c[n][1] = c[n][2];
      if (COLS == 2) w[n][0] = w[n][1];
    }
    b[p] = b[p] + s;
  }
}

// The loops interchanged: input by input, the thread walks its NZ points along z with one
// input's two columns in registers and the NZ sums in registers, so the carried values are NZ
// sums and 3 values, not 50 (the inputs' columns); B is updated once at the end.
template <int BX, int BY, int NZ, int MINB>
__global__ void __launch_bounds__(BX* BY, MINB) mb_colx(MB_PARAMS) {
  const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
  const long long p0 = at(i, j, blockIdx.z * NZ);
  const double* const in[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
  double acc[NZ];
#pragma unroll
  for (int k = 0; k < NZ; ++k) acc[k] = 0;
#pragma unroll
  for (int n = 0; n < 10; ++n) {
    const double* __restrict__ u = in[n];
    double c0 = u[p0 - SZ], c1 = u[p0], w0 = u[p0 - 1];
#pragma unroll
    for (int k = 0; k < NZ; ++k) {
      const long long p = p0 + k * SZ;
      const double c2 = u[p + SZ], w1 = u[p - 1 + SZ];
      acc[k] += C(n, 0) * c1 + C(n, 1) * w0 + C(n, 2) * u[p + 1] + C(n, 3) * u[p - SY] +
                C(n, 4) * u[p + SY] + C(n, 5) * c0 + C(n, 6) * c2 + C(n, 7) * u[p - 1 + SY] +
                C(n, 8) * w1;
      c0 = c1;
      c1 = c2;
      w0 = w1;
    }
  }
#pragma unroll
  for (int k = 0; k < NZ; ++k) b[p0 + k * SZ] = b[p0 + k * SZ] + acc[k];
}

std::vector<double> host_field(double a, double f) {
  std::vector<double> h(TOTAL, 0.0);
  for (int k = -1; k <= N; ++k)
    for (int j = -1; j <= N; ++j)
      for (int i = -1; i <= N; ++i) h[at(i, j, k)] = std::sin(a * i + f * j) + 1e-3 * k;
  return h;
}
double* device_array(const std::vector<double>& h) {
  double* d;
  CK(cudaMalloc(&d, TOTAL * sizeof(double)));
  if (h.empty())
    CK(cudaMemset(d, 0, TOTAL * sizeof(double)));
  else
    CK(cudaMemcpy(d, h.data(), TOTAL * sizeof(double), cudaMemcpyHostToDevice));
  return d;
}
std::vector<double> fetch(const double* d) {
  std::vector<double> h(TOTAL);
  CK(cudaMemcpy(h.data(), d, TOTAL * sizeof(double), cudaMemcpyDeviceToHost));
  return h;
}
double difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0, scale = 0;
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) {
        const long long p = at(i, j, k);
        worst = std::max(worst, std::fabs(a[p] - b[p]));
        scale = std::max(scale, std::fabs(b[p]));
      }
  return scale > 0 ? worst / scale : worst;
}

void microbench() {
  printf("B3 micro-benchmark, 96 B/point compulsory\n");
  double* a[10];
  for (int n = 0; n < 10; ++n) a[n] = device_array(host_field(1e-3 * (n + 1), 3e-5 * (n + 2)));
  double* b = device_array({});
  const double bytes = 96.0 * N * N * N;
  mb_naive<32, 8, 1><<<dim3(N / 32, N / 8, N), dim3(32, 8)>>>(MB_ARGS);
  CK(cudaDeviceSynchronize());
  const std::vector<double> reference = fetch(b);
  auto run = [&](const char* name, auto launch) {
    CK(cudaMemset(b, 0, TOTAL * sizeof(double)));
    launch();
    CK(cudaDeviceSynchronize());
    const double diff = difference(fetch(b), reference);
    time_launch(name, bytes, launch);
    printf("    difference from naive %.1e\n", diff);
  };
#define NAIVE(BX, BY, MINB)                                                                        \
  run("naive " #BX "x" #BY " " #MINB "/SM",                                                        \
      [&] { mb_naive<BX, BY, MINB><<<dim3(N / BX, N / BY, N), dim3(BX, BY)>>>(MB_ARGS); })
#define COL(BX, BY, NZ, MINB, COLS)                                                                \
  run("col" #COLS " " #BX "x" #BY " nz " #NZ " " #MINB "/SM", [&] {                                \
    mb_col<BX, BY, NZ, MINB, COLS><<<dim3(N / BX, N / BY, N / NZ), dim3(BX, BY)>>>(MB_ARGS);       \
  })
  NAIVE(32, 8, 1);
  NAIVE(32, 8, 8);
  NAIVE(64, 4, 8);
  COL(32, 8, 4, 4, 2);
  COL(32, 8, 8, 4, 2);
  COL(32, 8, 16, 4, 2);
  COL(32, 8, 32, 4, 2);
  COL(64, 4, 8, 4, 2);
  COL(64, 4, 16, 4, 2);
  COL(32, 8, 8, 3, 2);
  COL(32, 8, 16, 3, 2);
  COL(32, 8, 8, 2, 2);
  COL(32, 8, 8, 4, 1);
  COL(32, 8, 16, 4, 1);
  COL(64, 4, 16, 4, 1);
  COL(32, 8, 16, 6, 1);
  COL(32, 4, 16, 8, 1);
  COL(128, 2, 16, 4, 2);
#define COLX(BX, BY, NZ, MINB)                                                                     \
  run("colx " #BX "x" #BY " nz " #NZ " " #MINB "/SM",                                              \
      [&] { mb_colx<BX, BY, NZ, MINB><<<dim3(N / BX, N / BY, N / NZ), dim3(BX, BY)>>>(MB_ARGS); })
  COLX(32, 8, 4, 8);
  COLX(32, 8, 8, 8);
  COLX(32, 8, 4, 4);
  COLX(32, 8, 8, 4);
  COLX(32, 8, 16, 4);
  COLX(64, 4, 8, 4);
  COLX(64, 4, 8, 8);
  COLX(32, 8, 8, 6);
  for (double* d : a) CK(cudaFree(d));
  CK(cudaFree(b));
}
} // namespace

int main() {
  triad_roofline();
  microbench();
  triad_roofline();
  return 0;
}
