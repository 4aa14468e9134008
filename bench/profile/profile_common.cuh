// What the hand-written profiling programs of bench/profile/ share (wave_layouts.cu,
// uniforms.cu, stencil_variants.cu, b3_columns.cu, x_pairs.cu): the error check, the STREAM
// triad that gives the roofline (triad_roofline), the timing of a launch with CUDA events (3
// warm-ups, the median of 21) printed as time and bandwidth, and Saguaro's array layout at 256^3
// with the arrays' set-up and comparison (PaddedLayout, device_array, host_field, fetch,
// difference).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

typedef unsigned long long u64;

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      printf("%s: %s\n", #x, cudaGetErrorString(e));                                               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

__global__ void triad(double2* __restrict__ a, const double2* __restrict__ b,
                      const double2* __restrict__ c, double s, u64 n2) {
  for (u64 t = blockIdx.x * u64(blockDim.x) + threadIdx.x; t < n2;
       t += u64(gridDim.x) * blockDim.x) {
    const double2 x = b[t], y = c[t];
    a[t] = make_double2(x.x + s * y.x, x.y + s * y.y);
  }
}

// Times `launch` (queues one launch), prints "name  time us  TB/s" for `bytes` moved per launch.
template <class Launch>
void time_launch(const char* name, double bytes, Launch launch) {
  static cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (e0 == nullptr) {
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
  }
  for (int w = 0; w < 3; ++w) launch();
  std::vector<float> ms;
  for (int r = 0; r < 21; ++r) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  const float m = ms[ms.size() / 2];
  printf("%-36s %8.1f us  %6.3f TB/s\n", name, m * 1e3, bytes / (m * 1e-3) / 1e12);
}

// The triad over 3 arrays of 1 GiB, a grid-stride launch of 32 blocks per SM: the roofline the
// programs print their kernels against (before and after them: clocks, heat).
inline void triad_roofline() {
  const u64 n2 = u64(1) << 26;
  double2 *a, *b, *d;
  CK(cudaMalloc(&a, n2 * 16));
  CK(cudaMalloc(&b, n2 * 16));
  CK(cudaMalloc(&d, n2 * 16));
  CK(cudaMemset(b, 0, n2 * 16));
  CK(cudaMemset(d, 0, n2 * 16));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  time_launch("triad (roofline)", 48.0 * n2, [&] { triad<<<sms * 32, 256>>>(a, b, d, 1.5, n2); });
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(d));
}

// Saguaro's layout of a 256^3 patch with ghost width G: rows padded to 264 doubles, the first
// interior point of every row 64-byte aligned (8 doubles from an aligned start).
template <int G>
struct PaddedLayout {
  static constexpr int N = 256;
  static constexpr long long SY = 264, SZ = SY * (N + 2 * G), OFFSET = 8 - G;
  static constexpr long long TOTAL = OFFSET + SZ * (N + 2 * G);
  __host__ __device__ static long long at(int i, int j, int k) {
    return OFFSET + (k + G) * SZ + (j + G) * SY + (i + G);
  }
};

// An array of layout L on the device, from `host` (empty: zeros).
template <class L>
double* device_array(const std::vector<double>& host) {
  double* d = nullptr;
  CK(cudaMalloc(&d, L::TOTAL * sizeof(double))); // 256-byte aligned
  if (host.empty())
    CK(cudaMemset(d, 0, L::TOTAL * sizeof(double)));
  else
    CK(cudaMemcpy(d, host.data(), L::TOTAL * sizeof(double), cudaMemcpyHostToDevice));
  return d;
}
// A smooth, non-trivial field over every point of layout L.
template <class L>
std::vector<double> host_field(double a, double b) {
  std::vector<double> h(L::TOTAL);
  for (long long t = 0; t < L::TOTAL; ++t)
    h[t] = std::sin(a * double(t)) + 0.25 * std::cos(b * double(t));
  return h;
}
template <class L>
std::vector<double> fetch(const double* d) {
  std::vector<double> h(L::TOTAL);
  CK(cudaMemcpy(h.data(), d, L::TOTAL * sizeof(double), cudaMemcpyDeviceToHost));
  return h;
}
// max over the interior of |a - b|, relative to max |b|
template <class L>
double difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0, scale = 0;
  for (int k = 0; k < L::N; ++k)
    for (int j = 0; j < L::N; ++j)
      for (int i = 0; i < L::N; ++i) {
        const long long p = L::at(i, j, k);
        worst = std::max(worst, std::fabs(a[p] - b[p]));
        scale = std::max(scale, std::fabs(b[p]));
      }
  return scale > 0 ? worst / scale : worst;
}
