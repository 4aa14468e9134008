// What one thread per point pays for values uniform over the grid (issue 20): the B1 right-hand
// side on an aligned 256^3 layout (rows of 264 doubles, the interior 8 doubles into a row), one
// thread per point, with 1/h^2 per axis passed as a kernel parameter (the naive kernel), computed
// in the kernel by division (what the generated code does), and computed with __drcp_rn. CUDA
// events, median of 21, against the triad in the same process. On the GPU machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o uniforms bench/profile/uniforms.cu && ./uniforms
#include "profile_common.cuh"

// MODE 0: c per axis as parameters; 1: 1.0 / (h * h) in the kernel; 2: __drcp_rn(h * h).
template <int MODE>
__global__ void wave(const double* __restrict__ phi, const double* __restrict__ pi,
                     double* __restrict__ phirhs, double* __restrict__ pirhs, int n, int ax, int ay,
                     int i0, double a0, double a1, double a2) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x + i0,
            j = blockIdx.y * blockDim.y + threadIdx.y + 1,
            k = blockIdx.z * blockDim.z + threadIdx.z + 1;
  if (i >= n + i0 || j > n || k > n) return;
  double c0 = a0, c1 = a1, c2 = a2;
  if (MODE == 1) {
    c0 = 1.0 / (a0 * a0);
    c1 = 1.0 / (a1 * a1);
    c2 = 1.0 / (a2 * a2);
  } else if (MODE == 2) {
    c0 = __drcp_rn(a0 * a0);
    c1 = __drcp_rn(a1 * a1);
    c2 = __drcp_rn(a2 * a2);
  }
  const long long sy = ax, sz = (long long)ax * ay, p = k * sz + j * sy + i;
  const double m = phi[p];
  phirhs[p] = pi[p];
  pirhs[p] = c0 * (phi[p - 1] - 2 * m + phi[p + 1]) + c1 * (phi[p - sy] - 2 * m + phi[p + sy]) +
             c2 * (phi[p - sz] - 2 * m + phi[p + sz]);
}

int main() {
  const int n = 256, ax = 264, ay = n + 2, i0 = 8;
  const u64 N = u64(ax) * ay * (n + 2);
  double *phi, *pi, *r1, *r2;
  for (double** p : {&phi, &pi, &r1, &r2}) CK(cudaMalloc(p, N * 8));
  std::vector<double> h(N);
  for (u64 t = 0; t < N; ++t) h[t] = (t * 2654435761ull % 1000) * 1e-3;
  CK(cudaMemcpy(phi, h.data(), N * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(pi, h.data(), N * 8, cudaMemcpyHostToDevice));
  const double rhs = 32.0 * n * n * n, hx = 1.0 / 256;
  time_launch("triad grid 4224", 24.0 * N, [&] {
    triad<<<4224, 256>>>((double2*)r1, (const double2*)phi, (const double2*)pi, 0.5, N / 2);
  });
  for (int rep = 0; rep < 2; ++rep)
    for (auto b : {dim3(32, 8, 1), dim3(64, 4, 1), dim3(128, 2, 1)}) {
      const dim3 g((n + b.x - 1) / b.x, (n + b.y - 1) / b.y, n);
      char s[80];
      snprintf(s, 80, "1/h^2 as parameters %dx%d", b.x, b.y);
      const double c = 1.0 / (hx * hx);
      time_launch(s, rhs, [&] { wave<0><<<g, b>>>(phi, pi, r1, r2, n, ax, ay, i0, c, c, c); });
      snprintf(s, 80, "1/h^2 divided in the kernel %dx%d", b.x, b.y);
      time_launch(s, rhs, [&] { wave<1><<<g, b>>>(phi, pi, r1, r2, n, ax, ay, i0, hx, hx, hx); });
      snprintf(s, 80, "1/h^2 by __drcp_rn %dx%d", b.x, b.y);
      time_launch(s, rhs, [&] { wave<2><<<g, b>>>(phi, pi, r1, r2, n, ax, ay, i0, hx, hx, hx); });
    }
  return 0;
}
