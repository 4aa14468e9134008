// What the hand-written profiling programs of bench/profile/ share (wave_layouts.cu,
// uniforms.cu, stencil_variants.cu, b3_columns.cu): the error check, the STREAM triad that gives
// the roofline (triad_roofline), and the timing of a launch with CUDA events (3 warm-ups, the
// median of 21) printed as time and bandwidth.
#pragma once

#include <algorithm>
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
