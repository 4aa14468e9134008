// The periodic wrap of the ghost layers (ArraySpace::wrap_ghosts) on one GPU: where its time
// goes (bench/results/2026-11-27-wrap-ghosts-H100.md). Since 2026-11-29 the runtime writes the
// x slabs gap by gap instead (saguaro_wrap_x_gaps, 2026-11-29-wrap-gaps-H200.md); "today" below
// is the shell kernel as it was, which still does the y and z slabs. Variants:
//   today      saguaro_wrap_ghosts's index arithmetic: per point a 32-bit division by the shell's
//              volume (the field), a search of the six boxes and two divisions (i, j, k)
//   multiply   the same with each division by a launch constant done as a multiply-high and a
//              shift (Granlund and Montgomery 1994: m = ceil(2^(31+l) / d), l = ceil(log2 d))
//   per box    one launch per box, a 3D grid over it (no division at all): what the memory
//              alone costs, at six launches
//   one axis   "today" over one axis's two slabs only
//   x rows     the x slabs row by row: one thread per (field, row) does both ends
// The wave equation's ghosts at 256^3, fd order 4: 2 fields, arrays of 260^3 points with row
// pitch 264, ghost 2, every axis wrapped (811k points per field). L2 is flushed before every
// timed launch (the step's right-hand side has just streamed 270 MB through it). Each variant's
// arrays are checked against "today"'s.
// nvcc -O3 -arch=sm_90 -std=c++17 -o wrap_ghosts bench/profile/wrap_ghosts.cu && ./wrap_ghosts
#include "profile_common.cuh"

namespace {
// floor(n / d) for n < 2^31 as a multiply-high and a shift.
struct IndexDivisor {
  unsigned divisor = 1, multiplier = 0, shift = 0;
  IndexDivisor() = default;
  explicit IndexDivisor(unsigned d) : divisor(d) {
    if (d <= 1) return;
    unsigned l = 0;
    while ((1ull << l) < d) ++l;
    multiplier = unsigned(((1ull << (31 + l)) + d - 1) / d);
    shift = l - 1;
  }
  __device__ unsigned divide(unsigned n) const {
    return divisor == 1 ? n : __umulhi(n, multiplier) >> shift;
  }
};

constexpr int kAlloc = 260, kPitch = 264, kGhost = 2, kFields = 2, kN = kAlloc - 2 * kGhost;
constexpr long long kArray = (long long)kPitch * kAlloc * kAlloc;

struct Box {
  int lo[3], hi[3];
};
struct Shell {
  Box box[6];
  long long start[7];
  IndexDivisor nx[6], ny[6];
  IndexDivisor volume;
};
struct Fields {
  double* p[kFields];
};

__device__ inline int wrapped(int p) {
  return p < kGhost ? p + kN : p >= kGhost + kN ? p - kN : p;
}

template <bool kMultiply>
__global__ void wrap(Fields fields, Shell s) {
  const long long volume = s.start[6], total = volume * kFields;
  constexpr int kIlp = 4;
  double v[kIlp];
  double* to[kIlp];
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long t0 = (long long)blockIdx.x * blockDim.x + threadIdx.x; t0 < total;
       t0 += kIlp * stride) {
#pragma unroll
    for (int u = 0; u < kIlp; ++u) {
      const long long t = t0 + u * stride;
      if (t >= total) continue;
      unsigned f, r, i, j, k, q;
      if (kMultiply) {
        f = s.volume.divide(unsigned(t));
        r = unsigned(t) - f * unsigned(volume);
      } else {
        f = unsigned(t) / unsigned(volume);
        r = unsigned(t) - f * unsigned(volume);
      }
      int b = 0;
      while (b + 1 < 6 && r >= s.start[b + 1]) ++b;
      const Box& box = s.box[b];
      const unsigned nx = box.hi[0] - box.lo[0], ny = box.hi[1] - box.lo[1];
      r -= unsigned(s.start[b]);
      if (kMultiply) {
        q = s.nx[b].divide(r);
        k = s.ny[b].divide(q);
      } else {
        q = r / nx;
        k = q / ny;
      }
      i = r - q * nx;
      j = q - k * ny;
      const int p[3] = {int(i) + box.lo[0], int(j) + box.lo[1], int(k) + box.lo[2]};
      to[u] = fields.p[f] + ((long long)p[2] * kAlloc + p[1]) * kPitch + p[0];
      v[u] =
          fields.p[f][((long long)wrapped(p[2]) * kAlloc + wrapped(p[1])) * kPitch + wrapped(p[0])];
    }
#pragma unroll
    for (int u = 0; u < kIlp; ++u)
      if (t0 + u * stride < total) *to[u] = v[u];
  }
}

__global__ void wrap_box(Fields fields, Box box) {
  const int i = box.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = box.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= box.hi[0] || j >= box.hi[1]) return;
  for (int k = box.lo[2] + blockIdx.z; k < box.hi[2]; k += gridDim.z)
    for (int f = 0; f < kFields; ++f)
      fields.p[f][((long long)k * kAlloc + j) * kPitch + i] =
          fields.p[f][((long long)wrapped(k) * kAlloc + wrapped(j)) * kPitch + wrapped(i)];
}

// The x slabs row by row: one thread per (field, row) copies the row's ghost points at both
// ends from the owned points at the other end (of the row wrapped along y and z), so that each
// end's 32-byte sector is read and written by one thread, back to back.
__global__ void wrap_x_rows(Fields fields) {
  const unsigned rows = unsigned(kAlloc) * kAlloc, total = rows * kFields;
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
    const unsigned f = t / rows, r = t - f * rows, k = r / kAlloc, j = r - k * kAlloc;
    double* to = fields.p[f] + ((long long)k * kAlloc + j) * kPitch;
    const double* from = fields.p[f] + ((long long)wrapped(k) * kAlloc + wrapped(j)) * kPitch;
    double lo[kGhost], hi[kGhost];
#pragma unroll
    for (int g = 0; g < kGhost; ++g) {
      lo[g] = from[kN + g];     // the lower ghosts' sources: the upper owned points
      hi[g] = from[kGhost + g]; // the upper ghosts' sources: the lower owned points
    }
#pragma unroll
    for (int g = 0; g < kGhost; ++g) {
      to[g] = lo[g];
      to[kGhost + kN + g] = hi[g];
    }
  }
}

__global__ void fill(double* a, long long n, double base) {
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n;
       t += (long long)gridDim.x * blockDim.x)
    a[t] = base + double(t % 1009) * 1e-3;
}

// Times `launch` with L2 flushed before each run: median of 21 after 3 warm-ups.
template <class Launch>
void time_flushed(const char* name, double bytes, double* flush, long long flush_n, Launch launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < 24; ++r) {
    fill<<<1056, 256>>>(flush, flush_n, double(r));
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t;
    CK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= 3) ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  const float m = ms[ms.size() / 2];
  printf("%-36s %8.1f us  %6.3f TB/s (useful bytes)\n", name, m * 1e3, bytes / (m * 1e-3) / 1e12);
}
} // namespace

int main() {
  Fields fields;
  for (int f = 0; f < kFields; ++f) CK(cudaMalloc(&fields.p[f], kArray * sizeof(double)));
  const long long flush_n = 32ll << 20; // 256 MB
  double* flush = nullptr;
  CK(cudaMalloc(&flush, flush_n * sizeof(double)));
  Shell s{};
  long long volume = 0;
  int nb = 0;
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      Box b{{0, 0, 0}, {kAlloc, kAlloc, kAlloc}};
      b.lo[a] = side == 0 ? 0 : kAlloc - kGhost;
      b.hi[a] = side == 0 ? kGhost : kAlloc;
      s.box[nb] = b;
      s.start[nb] = volume;
      s.nx[nb] = IndexDivisor(unsigned(b.hi[0] - b.lo[0]));
      s.ny[nb] = IndexDivisor(unsigned(b.hi[1] - b.lo[1]));
      volume += (long long)(b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]);
      ++nb;
    }
  s.start[6] = volume;
  s.volume = IndexDivisor(unsigned(volume));
  const double bytes = 16.0 * volume * kFields; // a read and a write per ghost point
  printf("wrap of %d fields, %lld ghost points each (%.1f MB read + written)\n", kFields, volume,
         bytes / 1e6);
  const int blocks = 132 * 16, threads = 256;
  auto reset = [&] {
    for (int f = 0; f < kFields; ++f) fill<<<1056, 256>>>(fields.p[f], kArray, 1.0 + f);
    CK(cudaDeviceSynchronize());
  };
  auto snapshot = [&] {
    std::vector<double> h(std::size_t(kArray) * kFields);
    for (int f = 0; f < kFields; ++f)
      CK(cudaMemcpy(h.data() + f * kArray, fields.p[f], kArray * sizeof(double),
                    cudaMemcpyDeviceToHost));
    return h;
  };
  reset();
  time_flushed("today (divisions)", bytes, flush, flush_n,
               [&] { wrap<false><<<blocks, threads>>>(fields, s); });
  const std::vector<double> expect = snapshot();
  reset();
  time_flushed("multiply-high divisions", bytes, flush, flush_n,
               [&] { wrap<true><<<blocks, threads>>>(fields, s); });
  printf("  equal to today: %s\n", snapshot() == expect ? "yes" : "NO");
  reset();
  time_flushed("one launch per box, no division", bytes, flush, flush_n, [&] {
    for (int b = 0; b < 6; ++b) {
      const Box& x = s.box[b];
      const dim3 th(x.hi[0] - x.lo[0] < 32 ? 2 : 32, x.hi[0] - x.lo[0] < 32 ? 128 : 8);
      const dim3 gr((x.hi[0] - x.lo[0] + th.x - 1) / th.x, (x.hi[1] - x.lo[1] + th.y - 1) / th.y,
                    std::min(x.hi[2] - x.lo[2], 64));
      wrap_box<<<gr, th>>>(fields, x);
    }
  });
  printf("  equal to today: %s\n", snapshot() == expect ? "yes" : "NO");
  // "today" over one axis's two slabs at a time (the other boxes empty)
  const char* axis_names[3] = {"today, x slabs only", "today, y slabs only", "today, z slabs only"};
  for (int a = 0; a < 3; ++a) {
    Shell one = s;
    long long v = 0;
    for (int b = 0; b < 6; ++b) {
      one.start[b] = v;
      if (b / 2 == a)
        v += (long long)(s.box[b].hi[0] - s.box[b].lo[0]) * (s.box[b].hi[1] - s.box[b].lo[1]) *
             (s.box[b].hi[2] - s.box[b].lo[2]);
      else
        one.box[b].hi[0] = one.box[b].lo[0]; // empty
    }
    one.start[6] = v;
    reset();
    time_flushed(axis_names[a], 16.0 * v * kFields, flush, flush_n,
                 [&] { wrap<false><<<blocks, threads>>>(fields, one); });
  }
  reset();
  time_flushed("x slabs row by row", 16.0 * 2 * kGhost * kAlloc * kAlloc * kFields, flush, flush_n,
               [&] { wrap_x_rows<<<blocks, threads>>>(fields); });
  // the whole wrap: y and z slabs as today, then the x slabs row by row
  Shell yz = s;
  {
    long long v = 0;
    for (int b = 0; b < 6; ++b) {
      yz.start[b] = v;
      if (b >= 2)
        v += (long long)(s.box[b].hi[0] - s.box[b].lo[0]) * (s.box[b].hi[1] - s.box[b].lo[1]) *
             (s.box[b].hi[2] - s.box[b].lo[2]);
      else
        yz.box[b].hi[0] = yz.box[b].lo[0];
    }
    yz.start[6] = v;
  }
  reset();
  time_flushed("y, z slabs today + x row by row", bytes, flush, flush_n, [&] {
    wrap<false><<<blocks, threads>>>(fields, yz);
    wrap_x_rows<<<blocks, threads>>>(fields);
  });
  printf("  equal to today: %s\n", snapshot() == expect ? "yes" : "NO");
  return 0;
}
