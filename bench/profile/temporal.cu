// Temporal fusion of a whole RK4 step (issue 22), hand-written for B1 (wave, 2nd order,
// periodic n^3) before Saguaro generates it: one kernel evaluates all four stages of a tile
// kept on chip, streaming along z (2.5D), against the plain RK4 step (a right-hand-side
// kernel and a combination kernel per stage) in the same process. On the GPU machine:
// nvcc -O3 -arch=sm_90 -std=c++17 -o temporal bench/profile/temporal.cu && ./temporal. Results:
// bench/results/2026-11-25-time-tile-H100.md.
#include "profile_common.cuh"

#include <cmath>

// ---- the plain step -------------------------------------------------------------------------
__global__ void rhs(const double* __restrict__ phi, const double* __restrict__ pi,
                    double* __restrict__ kphi, double* __restrict__ kpi, int n, double c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y,
            k = blockIdx.z;
  const int m = n - 1;
  auto at = [&](int a, int b, int d) { return ((long long)(d & m) * n + (b & m)) * n + (a & m); };
  const long long p = at(i, j, k);
  kphi[p] = pi[p];
  kpi[p] = c * (phi[at(i - 1, j, k)] + phi[at(i + 1, j, k)] + phi[at(i, j - 1, k)] +
                phi[at(i, j + 1, k)] + phi[at(i, j, k - 1)] + phi[at(i, j, k + 1)] - 6 * phi[p]);
}
// y = y0 + a k; acc = acc + b k (first: acc = y0 + b k)
__global__ void combine(double* y, const double* y0, double* acc, const double* k, double a,
                        double b, int first, long long n3) {
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n3;
       t += (long long)gridDim.x * blockDim.x) {
    const double kk = k[t];
    acc[t] = (first ? y0[t] : acc[t]) + b * kk;
    if (y) y[t] = y0[t] + a * kk;
  }
}

// ---- the fused step -------------------------------------------------------------------------
// Block: TX x TY output columns, NZ output planes; the stage-s input U_s is kept in a ring of
// three xy planes (stage 1's is U0), over the tile grown by 4 - s + 1 points on each side; the
// accumulator in a ring of four planes over the tile.
constexpr int kH = 4; // stages x stencil radius

template <int TX, int TY, int NZ>
__global__ void __launch_bounds__(TX* TY, 1)
    fused(const double* __restrict__ phi0, const double* __restrict__ pi0,
          double* __restrict__ phi1, double* __restrict__ pi1, int n, double c, double dt) {
  constexpr int W = TX + 2 * kH, HH = TY + 2 * kH, P = W * HH, NT = TX * TY;
  extern __shared__ double smem[];
  // ring[s][var][slot][P]
  double* ring = smem;
  double* acc = smem + 4 * 2 * 3 * P; // acc[var][slot][TX*TY]
  auto R = [&](int s, int v, int plane) -> double* {
    return ring + ((s * 2 + v) * 3 + ((plane % 3) + 3) % 3) * P;
  };
  auto A = [&](int v, int plane) -> double* { return acc + (v * 4 + (plane & 3)) * NT; };
  const int m = n - 1;
  const int x0 = blockIdx.x * TX - kH, y0 = blockIdx.y * TY - kH, z0 = blockIdx.z * NZ;
  const int tid = threadIdx.x;
  auto gidx = [&](int lx, int ly, int z) {
    return ((long long)(z & m) * n + ((y0 + ly) & m)) * n + ((x0 + lx) & m);
  };
  constexpr int LP = (P + NT - 1) / NT; // U0 points per thread
  double nphi[LP], npi[LP];
  auto prefetch = [&](int q) {
#pragma unroll
    for (int r = 0; r < LP; ++r) {
      const int p = tid + r * NT;
      if (p < P) {
        const long long g = gidx(p % W, p / W, q);
        nphi[r] = __ldg(phi0 + g);
        npi[r] = __ldg(pi0 + g);
      }
    }
  };
  const double a[4] = {0.5 * dt, 0.5 * dt, dt, 0};
  const double b[4] = {dt / 6, dt / 3, dt / 3, dt / 6};
  prefetch(z0 - kH);
  for (int q = z0 - kH; q < z0 + NZ + kH; ++q) {
    {
      double* dphi = R(0, 0, q);
      double* dpi = R(0, 1, q);
#pragma unroll
      for (int r = 0; r < LP; ++r) {
        const int p = tid + r * NT;
        if (p < P) {
          dphi[p] = nphi[r];
          dpi[p] = npi[r];
        }
      }
    }
    if (q + 1 < z0 + NZ + kH) prefetch(q + 1);
    __syncthreads();
#pragma unroll
    for (int s = 1; s <= 4; ++s) {
      const int cz = q - s; // the plane stage s computes
      if (cz - 1 >= z0 - kH + (s - 1) && cz + 1 < z0 + NZ + kH - (s - 1)) {
        const int g = kH - s; // growth of stage s's region around the tile
        const int w = TX + 2 * g, h = TY + 2 * g;
        const double* inm = R(s - 1, 0, cz - 1);
        const double* in0 = R(s - 1, 0, cz);
        const double* inp = R(s - 1, 0, cz + 1);
        const double* vin = R(s - 1, 1, cz);
        for (int p = tid; p < w * h; p += NT) {
          const int lx = p % w + (kH - g), ly = p / w + (kH - g);
          const int l = ly * W + lx;
          const double kphi = vin[l];
          const double kpi = c * (in0[l - 1] + in0[l + 1] + in0[l - W] + in0[l + W] + inm[l] +
                                  inp[l] - 6 * in0[l]);
          double u0phi, u0pi;
          if (s == 1) {
            u0phi = in0[l];
            u0pi = vin[l];
          } else if (s < 4) {
            const long long gi = gidx(lx, ly, cz);
            u0phi = __ldg(phi0 + gi);
            u0pi = __ldg(pi0 + gi);
          }
          if (s < 4) {
            R(s, 0, cz)[l] = u0phi + a[s - 1] * kphi;
            R(s, 1, cz)[l] = u0pi + a[s - 1] * kpi;
          }
          const bool tile = g == 0 || (lx >= kH && lx < kH + TX && ly >= kH && ly < kH + TY);
          if (tile) {
            const int t = (ly - kH) * TX + (lx - kH);
            if (s == 1) {
              A(0, cz)[t] = u0phi + b[0] * kphi;
              A(1, cz)[t] = u0pi + b[0] * kpi;
            } else if (s < 4) {
              A(0, cz)[t] += b[s - 1] * kphi;
              A(1, cz)[t] += b[s - 1] * kpi;
            } else {
              const long long gi = gidx(lx, ly, cz);
              phi1[gi] = A(0, cz)[t] + b[3] * kphi;
              pi1[gi] = A(1, cz)[t] + b[3] * kpi;
            }
          }
        }
      }
      __syncthreads();
    }
  }
}

// The same step, each thread owning one column of the grown tile for all four stages: the
// stages' inputs along z (and U0, the accumulator) in register queues, only the centre planes
// of the values read at x/y neighbours in shared memory (double-buffered), one barrier per
// plane and no global reads but the next plane's.
template <int TX, int TY, int NZ>
__global__ void __launch_bounds__((TX + 2 * kH) * (TY + 2 * kH), 1)
    fusedq(const double* __restrict__ phi0, const double* __restrict__ pi0,
           double* __restrict__ phi1, double* __restrict__ pi1, int n, double c, double dt) {
  constexpr int W = TX + 2 * kH, HH = TY + 2 * kH, P = W * HH;
  extern __shared__ double smem[]; // [buf][stage][P]
  const int m = n - 1;
  const int tid = threadIdx.x, lx = tid % W, ly = tid / W;
  const int gx = (blockIdx.x * TX - kH + lx) & m, gy = (blockIdx.y * TY - kH + ly) & m;
  const int z0 = blockIdx.z * NZ;
  const long long col = (long long)gy * n + gx, sz = (long long)n * n;
  bool act[5];
#pragma unroll
  for (int s = 1; s <= 4; ++s) act[s] = lx >= s && lx < W - s && ly >= s && ly < HH - s;
  const double a1 = 0.5 * dt, a2 = 0.5 * dt, a3 = dt;
  const double b1 = dt / 6, b2 = dt / 3, b3 = dt / 3, b4 = dt / 6;
  double u0p[4] = {0, 0, 0, 0}, u0v[4] = {0, 0, 0, 0}; // planes q, q-1, q-2, q-3
  double s2p[3] = {0, 0, 0}, s2v[2] = {0, 0};          // U2: q-1, q-2, q-3
  double s3p[3] = {0, 0, 0}, s3v[2] = {0, 0};          // U3: q-2, q-3, q-4
  double s4p[3] = {0, 0, 0}, s4v[2] = {0, 0};          // U4: q-3, q-4, q-5
  double ap[4] = {0, 0, 0, 0}, av[4] = {0, 0, 0, 0};   // acc: q-1 .. q-4
  double np = __ldg(phi0 + ((z0 - kH) & m) * sz + col),
         nv = __ldg(pi0 + ((z0 - kH) & m) * sz + col);
  for (int q = z0 - kH; q < z0 + NZ + kH; ++q) {
#pragma unroll
    for (int t = 3; t > 0; --t) {
      u0p[t] = u0p[t - 1];
      u0v[t] = u0v[t - 1];
      ap[t] = ap[t - 1];
      av[t] = av[t - 1];
    }
    u0p[0] = np;
    u0v[0] = nv;
#pragma unroll
    for (int t = 2; t > 0; --t) {
      s2p[t] = s2p[t - 1];
      s3p[t] = s3p[t - 1];
      s4p[t] = s4p[t - 1];
    }
    s2v[1] = s2v[0];
    s3v[1] = s3v[0];
    s4v[1] = s4v[0];
    // the centre planes: stage 1 at q-1 (U0), 2 at q-2 (U2), 3 at q-3, 4 at q-4
    double* sh = smem + (q & 1) * 4 * P;
    sh[0 * P + tid] = u0p[1];
    sh[1 * P + tid] = s2p[1];
    sh[2 * P + tid] = s3p[1];
    sh[3 * P + tid] = s4p[1];
    if (q + 1 < z0 + NZ + kH) {
      const long long g = ((q + 1) & m) * sz + col;
      np = __ldg(phi0 + g);
      nv = __ldg(pi0 + g);
    }
    __syncthreads();
    auto lap = [&](const double* S, double zm, double z0v, double zp) {
      return c * (S[tid - 1] + S[tid + 1] + S[tid - W] + S[tid + W] + zm + zp - 6 * z0v);
    };
    if (act[1]) { // stage 1 at q-1
      const double kp = u0v[1], kv = lap(sh, u0p[2], u0p[1], u0p[0]);
      s2p[0] = u0p[1] + a1 * kp;
      s2v[0] = u0v[1] + a1 * kv;
      ap[0] = u0p[1] + b1 * kp;
      av[0] = u0v[1] + b1 * kv;
    }
    if (act[2]) { // stage 2 at q-2
      const double kp = s2v[1], kv = lap(sh + P, s2p[2], s2p[1], s2p[0]);
      s3p[0] = u0p[2] + a2 * kp;
      s3v[0] = u0v[2] + a2 * kv;
      ap[1] += b2 * kp;
      av[1] += b2 * kv;
    }
    if (act[3]) { // stage 3 at q-3
      const double kp = s3v[1], kv = lap(sh + 2 * P, s3p[2], s3p[1], s3p[0]);
      s4p[0] = u0p[3] + a3 * kp;
      s4v[0] = u0v[3] + a3 * kv;
      ap[2] += b3 * kp;
      av[2] += b3 * kv;
    }
    if (act[4] && q - 4 >= z0) { // stage 4 at q-4: the new state
      const double kp = s4v[1], kv = lap(sh + 3 * P, s4p[2], s4p[1], s4p[0]);
      const long long g = (long long)(q - 4) * sz + col;
      phi1[g] = ap[3] + b4 * kp;
      pi1[g] = av[3] + b4 * kv;
    }
  }
}

// max |fused - plain| over both variables.
double max_difference(int n, const double* phi1, const double* pi1, const double* ref_phi,
                      const double* ref_pi) {
  const long long n3 = (long long)n * n * n;
  std::vector<double> a(n3), b(n3);
  double err = 0;
  for (int v = 0; v < 2; ++v) {
    CK(cudaMemcpy(a.data(), v ? pi1 : phi1, n3 * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), v ? ref_pi : ref_phi, n3 * 8, cudaMemcpyDeviceToHost));
    for (long long t = 0; t < n3; ++t) err = std::max(err, std::fabs(a[t] - b[t]));
  }
  return err;
}

template <int TX, int TY, int NZ>
void run_fusedq(const char* name, int n, double c, double dt, const double* phi, const double* pi,
                double* phi1, double* pi1, double bytes, const double* ref_phi,
                const double* ref_pi) {
  constexpr int P = (TX + 2 * kH) * (TY + 2 * kH);
  const size_t shm = 2 * 4 * P * sizeof(double);
  CK(cudaFuncSetAttribute(fusedq<TX, TY, NZ>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          int(shm)));
  const dim3 grid(n / TX, n / TY, n / NZ);
  CK(cudaMemset(phi1, 0, 8ll * n * n * n));
  auto launch = [&] { fusedq<TX, TY, NZ><<<grid, P, shm>>>(phi, pi, phi1, pi1, n, c, dt); };
  launch();
  CK(cudaDeviceSynchronize());
  const double err = max_difference(n, phi1, pi1, ref_phi, ref_pi);
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, fusedq<TX, TY, NZ>));
  printf("%s: max |fused - plain| = %.3g (smem %zu B, %d regs)\n", name, err, shm, fa.numRegs);
  time_launch(name, bytes, launch);
}

template <int TX, int TY, int NZ>
void run_fused(const char* name, int n, double c, double dt, const double* phi, const double* pi,
               double* phi1, double* pi1, double bytes, const double* ref_phi,
               const double* ref_pi) {
  constexpr int P = (TX + 2 * kH) * (TY + 2 * kH);
  const size_t shm = (4 * 2 * 3 * P + 2 * 4 * TX * TY) * sizeof(double);
  CK(cudaFuncSetAttribute(fused<TX, TY, NZ>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          int(shm)));
  const dim3 grid(n / TX, n / TY, n / NZ);
  auto launch = [&] { fused<TX, TY, NZ><<<grid, TX * TY, shm>>>(phi, pi, phi1, pi1, n, c, dt); };
  launch();
  CK(cudaDeviceSynchronize());
  const double err = max_difference(n, phi1, pi1, ref_phi, ref_pi);
  printf("%s: max |fused - plain| = %.3g (smem %zu B)\n", name, err, shm);
  time_launch(name, bytes, launch);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 256;
  const long long n3 = (long long)n * n * n;
  const double h = 1.0 / n, dt = 0.25 * h, c = 1.0 / (h * h);
  double *phi, *pi, *phi1, *pi1, *ap, *aq, *kp, *kq, *rp, *rq, *t1, *t2;
  for (double** a : {&phi, &pi, &phi1, &pi1, &ap, &aq, &kp, &kq, &rp, &rq, &t1, &t2})
    CK(cudaMalloc(a, n3 * sizeof(double)));
  std::vector<double> host(n3);
  for (int v = 0; v < 2; ++v) {
    for (long long t = 0; t < n3; ++t) {
      const int i = t % n, j = (t / n) % n, k = int(t / ((long long)n * n));
      host[t] = v == 0 ? sin(2 * M_PI * i * h) * sin(2 * M_PI * j * h) * sin(4 * M_PI * k * h) +
                             0.01 * ((i * 7 + j * 13 + k * 29) % 17)
                       : cos(2 * M_PI * (i + 2 * j) * h) * 0.5 + 0.001 * ((i + k) % 5);
    }
    CK(cudaMemcpy(v ? pi : phi, host.data(), n3 * 8, cudaMemcpyHostToDevice));
  }
  const dim3 rb(64, 4, 1), rg(n / 64, n / 4, n);
  const int cb = 256, cg = 132 * 8;
  auto plain = [&] {
    rhs<<<rg, rb>>>(phi, pi, kp, kq, n, c);
    combine<<<cg, cb>>>(rp, phi, ap, kp, 0.5 * dt, dt / 6, 1, n3);
    combine<<<cg, cb>>>(rq, pi, aq, kq, 0.5 * dt, dt / 6, 1, n3);
    rhs<<<rg, rb>>>(rp, rq, kp, kq, n, c);
    combine<<<cg, cb>>>(rp, phi, ap, kp, 0.5 * dt, dt / 3, 0, n3);
    combine<<<cg, cb>>>(rq, pi, aq, kq, 0.5 * dt, dt / 3, 0, n3);
    rhs<<<rg, rb>>>(rp, rq, kp, kq, n, c);
    combine<<<cg, cb>>>(rp, phi, ap, kp, dt, dt / 3, 0, n3);
    combine<<<cg, cb>>>(rq, pi, aq, kq, dt, dt / 3, 0, n3);
    rhs<<<rg, rb>>>(rp, rq, kp, kq, n, c);
    combine<<<cg, cb>>>(nullptr, phi, ap, kp, 0, dt / 6, 0, n3);
    combine<<<cg, cb>>>(nullptr, pi, aq, kq, 0, dt / 6, 0, n3);
  };
  const double arr = double(n3) * 8;
  time_launch("triad (3 arrays)", 3 * arr, [&] {
    triad<<<132 * 8, 256>>>((double2*)t1, (const double2*)t2, (const double2*)kp, 1.5, n3 / 2);
  });
  // the plain step moves 4 x (4 + 2 x 5) arrays per stage pair... count: rhs 4 arrays,
  // combine 4 or 5 per variable
  time_launch("plain RK4 step (unfused)", arr * (4 * 4 + 2 * (4 + 5 + 5 + 3)), plain);
  plain();
  CK(cudaDeviceSynchronize());
  // compulsory of the fused step: read phi, pi; write phi1, pi1
  run_fusedq<32, 8, 64>("fusedq 32x8 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fusedq<32, 8, 128>("fusedq 32x8 nz128", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fusedq<32, 8, 32>("fusedq 32x8 nz32", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fusedq<24, 8, 64>("fusedq 24x8 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fusedq<16, 16, 64>("fusedq 16x16 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fusedq<32, 4, 64>("fusedq 32x4 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fusedq<56, 8, 64>("fusedq 56x8 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fusedq<32, 16, 64>("fusedq 32x16 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fused<32, 16, 64>("fused 32x16 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fused<32, 16, 128>("fused 32x16 nz128", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fused<32, 8, 64>("fused 32x8 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fused<32, 8, 32>("fused 32x8 nz32", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fused<16, 16, 64>("fused 16x16 nz64", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  run_fused<16, 8, 32>("fused 16x8 nz32", n, c, dt, phi, pi, phi1, pi1, 4 * arr, ap, aq);
  return 0;
}
