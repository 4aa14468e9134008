// Hand-written reference kernels of the benchmark suite, as a CUDA programmer writes them
// first: one thread per grid point, plain global loads (no shared memory, no register
// pipelines), a 3D grid of 2D-in-plane blocks. bench_suite compiles this file with NVRTC
// (runtime::cuda::KernelModule) and checks every kernel against the CPU reference.
//
// Arrays are C order [k][j][i] (x fastest) with `ax` x `ay` points per plane; the interior is
// n^3 starting at (g, g, g). The whole-step kernels work on n^3 arrays without ghost zones and
// wrap indices (a periodic box), the way a hand-written code does when it has no driver.
typedef unsigned long long u64;

// The STREAM triad a = b + s c: the roofline's bandwidth. Two doubles per thread per
// iteration, grid-stride, so any launch shape covers the array.
extern "C" __global__ void triad(double2* __restrict__ a, const double2* __restrict__ b,
                                 const double2* __restrict__ c, double s, u64 n2) {
  for (u64 t = blockIdx.x * u64(blockDim.x) + threadIdx.x; t < n2;
       t += u64(gridDim.x) * blockDim.x) {
    const double2 x = b[t], y = c[t];
    a[t] = make_double2(x.x + s * y.x, x.y + s * y.y);
  }
}

// The interior point of this thread, or false past the interior.
__device__ __forceinline__ bool point(int n, int g, int ax, int ay, u64& p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z * blockDim.z + threadIdx.z;
  if (i >= n || j >= n || k >= n) return false;
  p = (u64(k + g) * ay + u64(j + g)) * ax + u64(i + g);
  return true;
}

// B1: D_t phi = pi, D_t pi = Laplacian(phi), 2nd order.
extern "C" __global__ void wave2(const double* phi, const double* pi, double* phirhs, double* pirhs,
                                 int n, int g, int ax, int ay, double idx2, double idy2,
                                 double idz2) {
  u64 p;
  if (!point(n, g, ax, ay, p)) return;
  const u64 sy = u64(ax), sz = u64(ax) * ay;
  const double c = phi[p];
  phirhs[p] = pi[p];
  pirhs[p] = (phi[p - 1] - 2.0 * c + phi[p + 1]) * idx2 +
             (phi[p - sy] - 2.0 * c + phi[p + sy]) * idy2 +
             (phi[p - sz] - 2.0 * c + phi[p + sz]) * idz2;
}

// B2: the same with the 8th-order second derivative.
__device__ __forceinline__ double d2_8(const double* u, u64 p, u64 s) {
  return -205.0 / 72.0 * u[p] + 8.0 / 5.0 * (u[p - s] + u[p + s]) -
         1.0 / 5.0 * (u[p - 2 * s] + u[p + 2 * s]) + 8.0 / 315.0 * (u[p - 3 * s] + u[p + 3 * s]) -
         1.0 / 560.0 * (u[p - 4 * s] + u[p + 4 * s]);
}
extern "C" __global__ void wave8(const double* phi, const double* pi, double* phirhs, double* pirhs,
                                 int n, int g, int ax, int ay, double idx2, double idy2,
                                 double idz2) {
  u64 p;
  if (!point(n, g, ax, ay, p)) return;
  phirhs[p] = pi[p];
  pirhs[p] =
      d2_8(phi, p, 1) * idx2 + d2_8(phi, p, u64(ax)) * idy2 + d2_8(phi, p, u64(ax) * ay) * idz2;
}

// B3: Hu et al.'s eq. 4, B += sum over ten inputs of nine weighted neighbours.
__device__ __forceinline__ double micro_term(const double* a, u64 p, u64 sy, u64 sz, int n) {
  const double c0 = 0.01 * (9 * n + 1);
  return c0 * a[p] + (c0 + 0.01) * a[p - 1] + (c0 + 0.02) * a[p + 1] + (c0 + 0.03) * a[p - sy] +
         (c0 + 0.04) * a[p + sy] + (c0 + 0.05) * a[p - sz] + (c0 + 0.06) * a[p + sz] +
         (c0 + 0.07) * a[p - 1 + sy] + (c0 + 0.08) * a[p - 1 + sz];
}
extern "C" __global__ void microbench(double* B, const double* A0, const double* A1,
                                      const double* A2, const double* A3, const double* A4,
                                      const double* A5, const double* A6, const double* A7,
                                      const double* A8, const double* A9, int n, int g, int ax,
                                      int ay) {
  u64 p;
  if (!point(n, g, ax, ay, p)) return;
  const u64 sy = u64(ax), sz = u64(ax) * ay;
  B[p] += micro_term(A0, p, sy, sz, 0) + micro_term(A1, p, sy, sz, 1) +
          micro_term(A2, p, sy, sz, 2) + micro_term(A3, p, sy, sz, 3) +
          micro_term(A4, p, sy, sz, 4) + micro_term(A5, p, sy, sz, 5) +
          micro_term(A6, p, sy, sz, 6) + micro_term(A7, p, sy, sz, 7) +
          micro_term(A8, p, sy, sz, 8) + micro_term(A9, p, sy, sz, 9);
}

// B4: D_t E = curl B, D_t B = -curl E with 4th-order first derivatives.
__device__ __forceinline__ double d1_4(const double* u, u64 p, u64 s, double ih) {
  return (1.0 / 12.0 * (u[p - 2 * s] - u[p + 2 * s]) + 2.0 / 3.0 * (u[p + s] - u[p - s])) * ih;
}
extern "C" __global__ void maxwell(const double* E1, const double* E2, const double* E3,
                                   const double* B1, const double* B2, const double* B3,
                                   double* E1rhs, double* E2rhs, double* E3rhs, double* B1rhs,
                                   double* B2rhs, double* B3rhs, int n, int g, int ax, int ay,
                                   double idx, double idy, double idz) {
  u64 p;
  if (!point(n, g, ax, ay, p)) return;
  const u64 sx = 1, sy = u64(ax), sz = u64(ax) * ay;
  E1rhs[p] = d1_4(B3, p, sy, idy) - d1_4(B2, p, sz, idz);
  E2rhs[p] = d1_4(B1, p, sz, idz) - d1_4(B3, p, sx, idx);
  E3rhs[p] = d1_4(B2, p, sx, idx) - d1_4(B1, p, sy, idy);
  B1rhs[p] = d1_4(E2, p, sz, idz) - d1_4(E3, p, sy, idy);
  B2rhs[p] = d1_4(E3, p, sx, idx) - d1_4(E1, p, sz, idz);
  B3rhs[p] = d1_4(E1, p, sy, idy) - d1_4(E2, p, sx, idx);
}

// The whole RK4 step of B1 on a periodic n^3 box: the right-hand side with wrapped indices,
// then the classical update, stage by stage.
extern "C" __global__ void wave2_periodic(const double* phi, const double* pi, double* kphi,
                                          double* kpi, int n, double idx2, double idy2,
                                          double idz2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z * blockDim.z + threadIdx.z;
  if (i >= n || j >= n || k >= n) return;
  const u64 nn = u64(n);
  const u64 p = (u64(k) * nn + u64(j)) * nn + u64(i);
  const int im = i == 0 ? n - 1 : i - 1, ip = i == n - 1 ? 0 : i + 1;
  const int jm = j == 0 ? n - 1 : j - 1, jp = j == n - 1 ? 0 : j + 1;
  const int km = k == 0 ? n - 1 : k - 1, kp = k == n - 1 ? 0 : k + 1;
  const double c = phi[p];
  kphi[p] = pi[p];
  kpi[p] =
      (phi[p - i + im] - 2.0 * c + phi[p - i + ip]) * idx2 +
      (phi[p + (u64(jm) - u64(j)) * nn] - 2.0 * c + phi[p + (u64(jp) - u64(j)) * nn]) * idy2 +
      (phi[p + (u64(km) - u64(k)) * nn * nn] - 2.0 * c + phi[p + (u64(kp) - u64(k)) * nn * nn]) *
          idz2;
}

// Stage s of RK4 with k = f(stage state): acc collects k1 + 2 k2 + 2 k3; the next stage state
// is y0 + c k (c = dt/2, dt/2, dt); the last stage writes y0 + dt/6 (acc + k4) into y0.
extern "C" __global__ void rk4_stage(double* y0, double* ys, double* acc, const double* k,
                                     int stage, double dt, u64 count) {
  for (u64 t = blockIdx.x * u64(blockDim.x) + threadIdx.x; t < count;
       t += u64(gridDim.x) * blockDim.x) {
    const double kv = k[t];
    if (stage == 1) {
      acc[t] = kv;
      ys[t] = y0[t] + 0.5 * dt * kv;
    } else if (stage == 2) {
      acc[t] += 2.0 * kv;
      ys[t] = y0[t] + 0.5 * dt * kv;
    } else if (stage == 3) {
      acc[t] += 2.0 * kv;
      ys[t] = y0[t] + dt * kv;
    } else {
      y0[t] += dt / 6.0 * (acc[t] + kv);
    }
  }
}
