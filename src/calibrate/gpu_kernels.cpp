// The calibration's microbenchmark kernels, as CUDA source for NVRTC (see gpu.cpp).
#include "calibrate/gpu_bench.hpp"

namespace saguaro::calibrate::gpu {

// The microbenchmarks. Their operations per loop iteration are repeated on the host side
// (kFmaPerIteration and the others below): keep them in step.
extern const char* const kKernels = R"CUDA(
// Saguaro's calibration microbenchmarks (calibrate/gpu_kernels.cpp).
typedef unsigned long long u64;

// Loads the compiler may neither drop, merge nor move across clock64(): asm volatile, and a
// memory clobber for the pointer chases.
__device__ __forceinline__ u64 load_cg(u64 address) { // L2 only: bypasses L1
  u64 v;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(address) : "memory");
  return v;
}
__device__ __forceinline__ u64 load_nc(u64 address) { // the read-only / L1 path of __ldg
  u64 v;
  asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(address) : "memory");
  return v;
}
__device__ __forceinline__ unsigned load_shared(unsigned address) {
  unsigned v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
  return v;
}
__device__ __forceinline__ double2 load_cg_v2(const double2* p) {
  double2 v;
  asm volatile("ld.global.cg.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
  return v;
}

// The most cycles any block ran (*cycles zeroed before the launch). The blocks of one wave
// start together, so this is the kernel's time in SM cycles, and with the event time the SM
// clock during the run. (Not any one block's: the warp schedulers favour the oldest warps, so
// under a saturated pipe the first blocks finish long before the last.)
__device__ __forceinline__ void record_cycles(long long start, long long* cycles) {
  __syncthreads();
  if (threadIdx.x == 0) atomicMax((u64*)cycles, (u64)(clock64() - start));
}

// ---- the SM clock: spin for a known number of cycles (event-timed on the host) ------------
extern "C" __global__ void spin(long long cycles, long long* elapsed) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (blockIdx.x == 0) elapsed[0] = now - start;
}

// ---- launch overhead ---------------------------------------------------------------------
extern "C" __global__ void empty() {}

extern "C" __global__ void fill(double* a, u64 n, double value) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    a[i] = value;
}

// ---- DRAM bandwidth: STREAM's copy and triad over arrays far larger than L2 ----------------
// Grid-stride over 16-byte elements, four loads in flight per thread before their stores:
// with a full wave of threads, enough bytes in flight per SM to cover DRAM latency. Launched
// also with one thread per element, where the loops run once.
extern "C" __global__ void __launch_bounds__(256)
stream_copy(const double2* __restrict__ a, double2* __restrict__ b, u64 n2) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n2; i += 4 * stride) {
    const double2 x0 = a[i], x1 = a[i + stride], x2 = a[i + 2 * stride], x3 = a[i + 3 * stride];
    b[i] = x0;
    b[i + stride] = x1;
    b[i + 2 * stride] = x2;
    b[i + 3 * stride] = x3;
  }
  for (; i < n2; i += stride) b[i] = a[i];
}

__device__ __forceinline__ double2 triad(double2 b, double2 c, double q) {
  return make_double2(b.x + q * c.x, b.y + q * c.y);
}
extern "C" __global__ void __launch_bounds__(256)
stream_triad(double2* __restrict__ a, const double2* __restrict__ b,
             const double2* __restrict__ c, double q, u64 n2) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n2; i += 4 * stride) {
    const double2 b0 = b[i], b1 = b[i + stride], b2 = b[i + 2 * stride], b3 = b[i + 3 * stride];
    const double2 c0 = c[i], c1 = c[i + stride], c2 = c[i + 2 * stride], c3 = c[i + 3 * stride];
    a[i] = triad(b0, c0, q);
    a[i + stride] = triad(b1, c1, q);
    a[i + 2 * stride] = triad(b2, c2, q);
    a[i + 3 * stride] = triad(b3, c3, q);
  }
  for (; i < n2; i += stride) a[i] = triad(b[i], c[i], q);
}

// ---- L2 bandwidth: `total` 16-byte .cg loads (L1 bypassed) cycling over a buffer of mask + 1
// elements (a power of two well inside L2), element j & mask for j = this thread, + stride, ...
// Summed in registers; the sum is written only if impossible (the buffer holds positive numbers).
extern "C" __global__ void __launch_bounds__(256)
l2_read(const double2* a, u64 mask, u64 total, double* out) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  u64 j = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; j + 3 * stride < total; j += 4 * stride) {
    const double2 x0 = load_cg_v2(a + (j & mask));
    const double2 x1 = load_cg_v2(a + ((j + stride) & mask));
    const double2 x2 = load_cg_v2(a + ((j + 2 * stride) & mask));
    const double2 x3 = load_cg_v2(a + ((j + 3 * stride) & mask));
    s0 += x0.x + x0.y;
    s1 += x1.x + x1.y;
    s2 += x2.x + x2.y;
    s3 += x3.x + x3.y;
  }
  for (; j < total; j += stride) {
    const double2 x = load_cg_v2(a + (j & mask));
    s0 += x.x + x.y;
  }
  const double s = s0 + s1 + s2 + s3;
  if (s < 0) out[0] = s;
}

// ---- latencies: one thread chasing pointers, cycles per load ------------------------------
// The chain: at base + offsets[k] the address base + offsets[k + 1] (cyclically).
extern "C" __global__ void link_chain(unsigned char* base, const u64* offsets, int n) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
    *(u64*)(base + offsets[k]) = (u64)(base + offsets[(k + 1) % n]);
}

// One thread following the chain with `load`: cycles for `steps` loads after `warm_steps`.
template <u64 (*load)(u64)>
__device__ void chase(u64 start, int warm_steps, int steps, long long* cycles, u64* sink) {
  u64 p = start;
  for (int k = 0; k < warm_steps; ++k) p = load(p);
  const long long t0 = clock64();
#pragma unroll 16
  for (int k = 0; k < steps; ++k) p = load(p);
  const long long t1 = clock64();
  cycles[0] = t1 - t0;
  sink[0] = p;
}

// Global loads that miss L1 (.cg): DRAM latency on a cold chain, L2 latency on a warm one.
extern "C" __global__ void chase_cg(u64 start, int warm_steps, int steps, long long* cycles,
                                    u64* sink) {
  chase<load_cg>(start, warm_steps, steps, cycles, sink);
}

// Read-only loads (ld.global.nc, as __ldg) on a chain that a warm pass has put in L1.
extern "C" __global__ void chase_nc(u64 start, int warm_steps, int steps, long long* cycles,
                                    u64* sink) {
  chase<load_nc>(start, warm_steps, steps, cycles, sink);
}

// Shared memory: the chain of 32-bit shared addresses in the order `order` (n <= 1024).
extern "C" __global__ void chase_shared(const unsigned* order, int n, int steps,
                                        long long* cycles, unsigned* sink) {
  __shared__ unsigned chain[1024];
  const unsigned base = (unsigned)__cvta_generic_to_shared(chain);
  for (int k = 0; k < n; ++k) chain[order[k]] = base + 4u * order[(k + 1) % n];
  __syncthreads();
  unsigned p = base + 4u * order[0];
  for (int k = 0; k < n; ++k) p = load_shared(p);
  const long long t0 = clock64();
#pragma unroll 16
  for (int k = 0; k < steps; ++k) p = load_shared(p);
  const long long t1 = clock64();
  cycles[0] = t1 - t0;
  sink[0] = p;
}

// ---- barrier latency: a full block passing `count` __syncthreads() --------------------------
extern "C" __global__ void barriers(int count, long long* cycles) {
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 16
  for (int k = 0; k < count; ++k) __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

// ---- FP64 latency: one dependent chain of fused multiply-adds -----------------------------
extern "C" __global__ void fma_chain(double a, double b, int count, long long* cycles,
                                     double* out) {
  double x = 1.0 + threadIdx.x;
  const long long t0 = clock64();
#pragma unroll 32
  for (int k = 0; k < count; ++k) x = fma(x, a, b);
  const long long t1 = clock64();
  cycles[0] = t1 - t0;
  out[0] = x;
}

// ---- issue rates: a full wave of threads, independent chains per thread --------------------
// fp64_fma_rate: 8 chains x 4 = 32 fma per iteration (a < 1: the chains converge, no overflow).
extern "C" __global__ void __launch_bounds__(256)
fp64_fma_rate(double a, double b, int iterations, double* out, long long* cycles) {
  const long long start = clock64();
  double x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = 1e-6 * threadIdx.x + c;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
      for (int c = 0; c < 8; ++c) x[c] = fma(x[c], a, b);
    }
  }
  double s = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s += x[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  record_cycles(start, cycles);
}

// Whole double divisions, square roots, exp and sin: 4 chains x 2 = 8 per iteration. The
// chains stay in the normal range: a / x alternates, sqrt converges to 1, exp(-x) to 0.567,
// sin(x) decays slowly towards 0.
#define SAGUARO_RATE_KERNEL(NAME, INIT, STEP)                                                  \
  extern "C" __global__ void __launch_bounds__(256)                                           \
  NAME(double a, int iterations, double* out, long long* cycles) {                             \
    const long long start = clock64();                                                         \
    double x[4];                                                                               \
    _Pragma("unroll") for (int c = 0; c < 4; ++c) x[c] = (INIT) + 1e-7 * threadIdx.x + 0.125 * c; \
    for (int i = 0; i < iterations; ++i) {                                                     \
      _Pragma("unroll") for (int r = 0; r < 2; ++r) {                                          \
        _Pragma("unroll") for (int c = 0; c < 4; ++c) x[c] = (STEP);                           \
      }                                                                                        \
    }                                                                                          \
    out[blockIdx.x * blockDim.x + threadIdx.x] = x[0] + x[1] + x[2] + x[3];                    \
    record_cycles(start, cycles);                                                              \
  }
SAGUARO_RATE_KERNEL(fp64_div_rate, 1.5, a / x[c])
SAGUARO_RATE_KERNEL(fp64_sqrt_rate, 2.0, sqrt(x[c]))
SAGUARO_RATE_KERNEL(fp64_exp_rate, 0.5, exp(-x[c]))
SAGUARO_RATE_KERNEL(fp64_sin_rate, 1.0, sin(x[c]))

// Shared-memory loads of doubles: 8 per iteration, conflict free (a warp reads 32 consecutive
// doubles), into 8 sums; blocks of 256 threads.
extern "C" __global__ void __launch_bounds__(256)
shared_load_rate(int iterations, double* out, long long* cycles) {
  __shared__ double s[2048];
  const long long start = clock64();
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) s[i] = 1.0 + i;
  __syncthreads();
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  unsigned k = threadIdx.x & 255u;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < 8; ++c) v[c] += s[k + 256u * c];
    k = (k + 32u) & 255u;
  }
  double sum = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) sum += v[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  record_cycles(start, cycles);
}
)CUDA";

} // namespace saguaro::calibrate::gpu
