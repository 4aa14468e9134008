// The B1 right-hand side (wave, 2nd order, 256^3) hand-written in several launch shapes and
// array layouts, timed with CUDA events (median of 21) against the triad in the same process:
// what decides whether a stencil kernel reaches the bandwidth roof (issue 20). On the GPU
// machine: nvcc -O3 -arch=sm_90 -std=c++17 -o wave_layouts bench/profile/wave_layouts.cu &&
// ./wave_layouts. Results: bench/results/2026-11-24-row-pitch-H100.md.
// "aligned ax=P i0=O": rows P doubles apart, the first interior point O doubles into a row of a
// 256-byte aligned allocation.
#include "profile_common.cuh"

// naive: one thread per point
__global__ void naive(const double* __restrict__ phi, const double* __restrict__ pi,
                      double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax,
                      int ay, double c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1,
            j = blockIdx.y * blockDim.y + threadIdx.y + 1,
            k = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (i > n || j > n || k > n) return;
  const long long sy = ax, sz = (long long)ax * ay, p = k * sz + j * sy + i;
  const double m = phi[p];
  phirhs[p] = pi[p];
  pirhs[p] =
      c * (phi[p - 1] + phi[p + 1] + phi[p - sy] + phi[p + sy] + phi[p - sz] + phi[p + sz] - 6 * m);
}
// z-streaming with a register queue along z, x/y neighbours from global (L1), NZ points per thread
template <int NZ>
__global__ void zstream(const double* __restrict__ phi, const double* __restrict__ pi,
                        double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax,
                        int ay, double c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1,
            j = blockIdx.y * blockDim.y + threadIdx.y + 1;
  const int k0 = blockIdx.z * NZ + 1;
  if (i > n || j > n) return;
  const long long sy = ax, sz = (long long)ax * ay;
  long long p = k0 * sz + j * sy + i;
  double zm = phi[p - sz], z0 = phi[p];
#pragma unroll 4
  for (int k = 0; k < NZ; ++k, p += sz) {
    const double zp = phi[p + sz];
    phirhs[p] = pi[p];
    pirhs[p] = c * (phi[p - 1] + phi[p + 1] + phi[p - sy] + phi[p + sy] + zm + zp - 6 * z0);
    zm = z0;
    z0 = zp;
  }
}
// two points per thread along x (aligned pairs when ax is even and the pair starts at an even
// index)
__global__ void pairx(const double* __restrict__ phi, const double* __restrict__ pi,
                      double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax,
                      int ay, double c) {
  const int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x) + 1,
            j = blockIdx.y * blockDim.y + threadIdx.y + 1,
            k = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (i > n || j > n || k > n) return;
  const long long sy = ax, sz = (long long)ax * ay, p = k * sz + j * sy + i;
#pragma unroll
  for (int d = 0; d < 2; ++d) {
    const long long q = p + d;
    if (i + d > n) break;
    phirhs[q] = pi[q];
    pirhs[q] = c * (phi[q - 1] + phi[q + 1] + phi[q - sy] + phi[q + sy] + phi[q - sz] +
                    phi[q + sz] - 6 * phi[q]);
  }
}
// one thread per point, flattened 1D grid over the interior (torch-like)
__global__ void flat(const double* __restrict__ phi, const double* __restrict__ pi,
                     double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax, int ay,
                     double c) {
  const u64 t = blockIdx.x * u64(blockDim.x) + threadIdx.x;
  if (t >= u64(n) * n * n) return;
  const int i = int(t % n) + 1, j = int((t / n) % n) + 1, k = int(t / (u64(n) * n)) + 1;
  const long long sy = ax, sz = (long long)ax * ay, p = k * sz + j * sy + i;
  phirhs[p] = pi[p];
  pirhs[p] = c * (phi[p - 1] + phi[p + 1] + phi[p - sy] + phi[p + sy] + phi[p - sz] + phi[p + sz] -
                  6 * phi[p]);
}

__global__ void naive_al(const double* __restrict__ phi, const double* __restrict__ pi,
                         double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax,
                         int ay, int i0, double c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + i0,
            j = blockIdx.y * blockDim.y + threadIdx.y + 1,
            k = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (i >= n + i0 || j > n || k > n) return;
  const long long sy = ax, sz = (long long)ax * ay, p = k * sz + j * sy + i;
  const double m = phi[p];
  phirhs[p] = pi[p];
  pirhs[p] =
      c * (phi[p - 1] + phi[p + 1] + phi[p - sy] + phi[p + sy] + phi[p - sz] + phi[p + sz] - 6 * m);
}
// two rows (y) per thread
__global__ void rows2(const double* __restrict__ phi, const double* __restrict__ pi,
                      double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax,
                      int ay, double c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + 1,
            j = 2 * (blockIdx.y * blockDim.y + threadIdx.y) + 1,
            k = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (i > n || j > n || k > n) return;
  const long long sy = ax, sz = (long long)ax * ay, p = k * sz + j * sy + i;
  const double a0 = phi[p], a1 = phi[p + sy];
  const double l0 = phi[p - 1] + phi[p + 1] + phi[p - sy] + a1 + phi[p - sz] + phi[p + sz] - 6 * a0;
  const double l1 = phi[p + sy - 1] + phi[p + sy + 1] + a0 + phi[p + 2 * sy] + phi[p + sy - sz] +
                    phi[p + sy + sz] - 6 * a1;
  const double q0 = pi[p], q1 = pi[p + sy];
  phirhs[p] = q0;
  phirhs[p + sy] = q1;
  pirhs[p] = c * l0;
  pirhs[p + sy] = c * l1;
}
// 8th order second derivatives (B2), radius 4, ghost 4
__device__ __forceinline__ double d8(const double* u, long long p, long long s) {
  return -205.0 / 72.0 * u[p] + 8.0 / 5.0 * (u[p - s] + u[p + s]) -
         1.0 / 5.0 * (u[p - 2 * s] + u[p + 2 * s]) + 8.0 / 315.0 * (u[p - 3 * s] + u[p + 3 * s]) -
         1.0 / 560.0 * (u[p - 4 * s] + u[p + 4 * s]);
}
__global__ void naive8(const double* __restrict__ phi, const double* __restrict__ pi,
                       double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax,
                       int ay, int g) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + g,
            j = blockIdx.y * blockDim.y + threadIdx.y + g,
            k = blockIdx.z * blockDim.z + threadIdx.z + g;
  if (i >= n + g || j >= n + g || k >= n + g) return;
  const long long sy = ax, sz = (long long)ax * ay, p = k * sz + j * sy + i;
  phirhs[p] = pi[p];
  pirhs[p] = d8(phi, p, 1) + d8(phi, p, sy) + d8(phi, p, sz);
}
int main() {
  const int n = 256, ax = n + 2, ay = n + 2;
  const u64 N = u64(ax) * ay * (n + 2);
  double *phi, *pi, *r1, *r2;
  CK(cudaMalloc(&phi, N * 8));
  CK(cudaMalloc(&pi, N * 8));
  CK(cudaMalloc(&r1, N * 8));
  CK(cudaMalloc(&r2, N * 8));
  std::vector<double> h(N);
  for (u64 t = 0; t < N; ++t) h[t] = (t * 2654435761ull % 1000) * 1e-3;
  CK(cudaMemcpy(phi, h.data(), N * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(pi, h.data(), N * 8, cudaMemcpyHostToDevice));
  const double pts = double(n) * n * n, rhs = 32 * pts;
  const double c = 1.0;
  const u64 n2 = N / 2;
  for (int g : {528, 1056, 4224}) {
    char s[64];
    snprintf(s, 64, "triad grid %d", g);
    time_launch(s, 24.0 * N, [&] {
      triad<<<g, 256>>>((double2*)r1, (const double2*)phi, (const double2*)pi, 0.5, n2);
    });
  }
  // reference result
  naive<<<dim3(8, 32, 256), dim3(32, 8, 1)>>>(phi, pi, r1, r2, n, ax, ay, c);
  std::vector<double> ref(N), got(N);
  CK(cudaMemcpy(ref.data(), r2, N * 8, cudaMemcpyDeviceToHost));
  auto check = [&](const char* name) {
    CK(cudaMemcpy(got.data(), r2, N * 8, cudaMemcpyDeviceToHost));
    double e = 0;
    for (int k = 1; k <= n; ++k)
      for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i) {
          u64 p = (u64(k) * ay + j) * ax + i;
          e = std::max(e, std::abs(got[p] - ref[p]));
        }
    if (e > 1e-12) printf("  %s WRONG %g\n", name, e);
    CK(cudaMemset(r2, 0, N * 8));
  };
  for (auto b : {dim3(32, 8, 1), dim3(64, 4, 1), dim3(128, 2, 1), dim3(256, 1, 1), dim3(32, 4, 1),
                 dim3(64, 2, 1), dim3(128, 1, 1), dim3(32, 16, 1), dim3(32, 4, 2)}) {
    char s[64];
    snprintf(s, 64, "naive %dx%dx%d", b.x, b.y, b.z);
    dim3 gr((n + b.x - 1) / b.x, (n + b.y - 1) / b.y, (n + b.z - 1) / b.z);
    time_launch(s, rhs, [&] { naive<<<gr, b>>>(phi, pi, r1, r2, n, ax, ay, c); });
    check(s);
  }
  for (auto b : {dim3(32, 8, 1), dim3(64, 4, 1), dim3(128, 2, 1), dim3(32, 4, 1), dim3(64, 2, 1),
                 dim3(128, 1, 1)}) {
    char s[64];
#define ZS(NZ)                                                                                     \
  {                                                                                                \
    snprintf(s, 64, "zstream%d %dx%d", NZ, b.x, b.y);                                              \
    dim3 gr((n + b.x - 1) / b.x, (n + b.y - 1) / b.y, n / NZ);                                     \
    time_launch(s, rhs, [&] { zstream<NZ><<<gr, b>>>(phi, pi, r1, r2, n, ax, ay, c); });           \
    check(s);                                                                                      \
  }
    ZS(2) ZS(4) ZS(8) ZS(16) ZS(32)
  }
  for (auto b : {dim3(32, 8, 1), dim3(64, 4, 1), dim3(128, 2, 1), dim3(16, 8, 1)}) {
    char s[64];
    snprintf(s, 64, "pairx %dx%dx%d", b.x, b.y, b.z);
    dim3 gr((n / 2 + b.x - 1) / b.x, (n + b.y - 1) / b.y, n);
    time_launch(s, rhs, [&] { pairx<<<gr, b>>>(phi, pi, r1, r2, n, ax, ay, c); });
    check(s);
  }
  for (int t : {128, 256, 512}) {
    char s[64];
    snprintf(s, 64, "flat %d", t);
    time_launch(s, rhs,
                [&] { flat<<<unsigned((pts + t - 1) / t), t>>>(phi, pi, r1, r2, n, ax, ay, c); });
    check(s);
  }
  for (auto b :
       {dim3(32, 8, 1), dim3(64, 4, 1), dim3(128, 1, 1), dim3(128, 2, 1), dim3(256, 1, 1)}) {
    char s[64];
    snprintf(s, 64, "rows2 %dx%dx%d", b.x, b.y, b.z);
    dim3 gr((n + b.x - 1) / b.x, (n / 2 + b.y - 1) / b.y, n);
    time_launch(s, rhs, [&] { rows2<<<gr, b>>>(phi, pi, r1, r2, n, ax, ay, c); });
    check(s);
  }
  {
    // aligned layouts: rows of 272 / 288 doubles, interior from i0
    const int axs[] = {272, 288, 264, 258, 264, 260, 264};
    const int i0s[] = {8, 16, 4, 1, 1, 2, 8};
    for (int v = 0; v < 7; ++v) {
      const int ax2 = axs[v], i0 = i0s[v];
      const u64 N2 = u64(ax2) * ay * (n + 2);
      double *a, *b2, *c1, *c2;
      CK(cudaMalloc(&a, N2 * 8));
      CK(cudaMalloc(&b2, N2 * 8));
      CK(cudaMalloc(&c1, N2 * 8));
      CK(cudaMalloc(&c2, N2 * 8));
      CK(cudaMemset(a, 0, N2 * 8));
      CK(cudaMemset(b2, 0, N2 * 8));
      for (auto b : {dim3(32, 8, 1), dim3(64, 4, 1), dim3(128, 2, 1), dim3(256, 1, 1)}) {
        char s[64];
        snprintf(s, 64, "aligned ax=%d i0=%d %dx%d", ax2, i0, b.x, b.y);
        dim3 gr((n + b.x - 1) / b.x, (n + b.y - 1) / b.y, n);
        time_launch(s, rhs, [&] { naive_al<<<gr, b>>>(a, b2, c1, c2, n, ax2, ay, i0, c); });
      }
      cudaFree(a);
      cudaFree(b2);
      cudaFree(c1);
      cudaFree(c2);
    }
  }
  {
    const int g = 4, ax8 = n + 2 * g, ay8 = ax8;
    const u64 N8 = u64(ax8) * ay8 * ax8;
    double *a, *b2, *c1, *c2;
    CK(cudaMalloc(&a, N8 * 8));
    CK(cudaMalloc(&b2, N8 * 8));
    CK(cudaMalloc(&c1, N8 * 8));
    CK(cudaMalloc(&c2, N8 * 8));
    CK(cudaMemset(a, 0, N8 * 8));
    CK(cudaMemset(b2, 0, N8 * 8));
    for (auto b :
         {dim3(32, 8, 1), dim3(64, 4, 1), dim3(128, 2, 1), dim3(256, 1, 1), dim3(128, 1, 1)}) {
      char s[64];
      snprintf(s, 64, "naive8 %dx%d", b.x, b.y);
      dim3 gr((n + b.x - 1) / b.x, (n + b.y - 1) / b.y, n);
      time_launch(s, rhs, [&] { naive8<<<gr, b>>>(a, b2, c1, c2, n, ax8, ay8, g); });
    }
  }
  return 0;
}
