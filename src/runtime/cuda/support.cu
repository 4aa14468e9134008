// The CUDA support kernels of CudaArraySpace (array_space.cpp): the method of lines' update,
// ghost-exchange packing, reductions for norms and the outer boundary conditions.
//
// NVRTC compiles this file with the text of src/runtime/boundary_point.hpp prepended (it has
// no include path) and with --fmad=false: no multiply-add is contracted, so every point gets
// the same bits as the host loops (host_array_space.cpp), operation for operation.
// Every kernel is extern "C" (its name is its symbol) and loops grid-stride over its points; it
// begins with SAGUARO_AFTER_PREVIOUS_KERNEL() (codegen::kAfterPreviousKernel, prepended by
// support_source()).

typedef long long saguaro_index;

#define SAGUARO_GRID_STRIDE(i, n)                                                                  \
  for (saguaro_index i = saguaro_index(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);            \
       i += saguaro_index(gridDim.x) * blockDim.x)

// ---- the method of lines' linear combination (ArraySpace::linear_combination) -------------------

// Up to this many terms per combination (passed by value). Mirrors ArraySpace::max_terms.
#define SAGUARO_COMBINE_TERMS 8
struct SaguaroTerms {
  double a[SAGUARO_COMBINE_TERMS];
  const double* x[SAGUARO_COMBINE_TERMS];
};

// y = sum_m a[m] x[m], m < COUNT, added in order as the host loop does. One kernel per count:
// the unrolled loop indexes the terms with constants (a runtime index would copy them to local
// memory) and issues every load of a point at once. No __restrict__: y may be one of the x[m]
// (point i reads every x[m][i] before it writes y[i]).
template <int COUNT>
__device__ void saguaro_combine(double* y, const SaguaroTerms& t, saguaro_index n) {
  SAGUARO_GRID_STRIDE(i, n) {
    double x[COUNT];
#pragma unroll
    for (int m = 0; m < COUNT; ++m) x[m] = t.x[m][i];
    double s = t.a[0] * x[0];
#pragma unroll
    for (int m = 1; m < COUNT; ++m) s += t.a[m] * x[m];
    y[i] = s;
  }
}

#define SAGUARO_COMBINE_KERNEL(COUNT)                                                              \
  extern "C" __global__ void saguaro_linear_combination_##COUNT(double* y, SaguaroTerms t,         \
                                                                saguaro_index n) {                 \
    SAGUARO_AFTER_PREVIOUS_KERNEL();                                                               \
    saguaro_combine<COUNT>(y, t, n);                                                               \
  }
SAGUARO_COMBINE_KERNEL(1)
SAGUARO_COMBINE_KERNEL(2)
SAGUARO_COMBINE_KERNEL(3)
SAGUARO_COMBINE_KERNEL(4)
SAGUARO_COMBINE_KERNEL(5)
SAGUARO_COMBINE_KERNEL(6)
SAGUARO_COMBINE_KERNEL(7)
SAGUARO_COMBINE_KERNEL(8)

// ---- boxes: ghost-exchange staging and reductions ----------------------------------------------

// A box [lo, hi) of arrays of `alloc` points per axis (x fastest). Mirrors SupportBox in
// array_space.cpp.
struct SaguaroBox {
  int alloc[3];
  int lo[3];
  int hi[3];
  int pitch; // points between consecutive rows
};

// Up to this many fields per pack/unpack launch (passed by value). Mirrors kPackFields.
#define SAGUARO_PACK_FIELDS 32
struct SaguaroFieldTable {
  double* p[SAGUARO_PACK_FIELDS];
};

// a / b, and a % b in `rem`; in 32-bit unsigned arithmetic when `narrow` (a and b below 2^32):
// a 64-bit division is a software routine several times as long as a 32-bit one.
__device__ inline saguaro_index saguaro_divmod(saguaro_index a, saguaro_index b, bool narrow,
                                               saguaro_index& rem) {
  if (narrow) {
    const unsigned q = unsigned(a) / unsigned(b);
    rem = unsigned(a) - q * unsigned(b);
    return q;
  }
  const saguaro_index q = a / b;
  rem = a - q * b;
  return q;
}

// A point's field f and its coordinates (i, j, k) in a box.
struct SaguaroPoint {
  int f, i, j, k;
};

// Point r of an nx x ny x nz box (x fastest): its coordinates, field 0.
__device__ inline SaguaroPoint saguaro_box_point(saguaro_index r, int nx, int ny, bool narrow) {
  saguaro_index i, j;
  const saguaro_index k = saguaro_divmod(saguaro_divmod(r, nx, narrow, i), ny, narrow, j);
  return {0, int(i), int(j), int(k)};
}

// Point t of `count` fields' worth (`total` points) of a box of `volume` points, field slowest.
__device__ inline SaguaroPoint saguaro_point(saguaro_index t, saguaro_index volume, int nx, int ny,
                                             saguaro_index total) {
  const bool narrow = total <= 0xffffffffll;
  saguaro_index r;
  const saguaro_index f = saguaro_divmod(t, volume, narrow, r);
  SaguaroPoint p = saguaro_box_point(r, nx, ny, narrow);
  p.f = int(f);
  return p;
}

__device__ inline saguaro_index saguaro_box_volume(const SaguaroBox& b) {
  return saguaro_index(b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]);
}

// The offset in its arrays of point (i, j, k) of box b.
__device__ inline saguaro_index saguaro_box_offset(const SaguaroBox& b, const SaguaroPoint& p) {
  return (saguaro_index(p.k + b.lo[2]) * b.alloc[1] + (p.j + b.lo[1])) * saguaro_index(b.pitch) +
         p.i + b.lo[0];
}

// A grid-stride loop over [0, n) that handles SAGUARO_ILP points per thread at once: `load`
// for each of them first, then `store`, so that a thread has several loads in flight. Nsight
// Compute on the H100 found the wrap of the wave equation's ghosts at 256^3, one point at a
// time with 64-bit index arithmetic, latency-bound: 41 us at 1.0 TB/s, 34 cycles per issued
// instruction. With this and saguaro_point the exchange of par/wave.par took 52 instead of
// 55 us per stage (bench/results/2026-11-27-support-kernels-H100.md): better, still far from
// the bandwidth. Why (bench/profile/wrap_ghosts.cu): the x slabs take 36 of the wrap's 41 us.
// Their ghosts are 16 bytes at each end of every row, so every row costs two scattered DRAM
// sectors (0.28 TB/s); neither cheaper division (39 us) nor a thread per row (31 us for the x
// slabs) changes that, and neither does storing them from the kernels that write the state
// (their two extra stores per row cost the kernels as much: 2026-11-27-wrap-ghosts-H100.md).
#define SAGUARO_ILP 4
template <class Load, class Store>
__device__ inline void saguaro_grid_stride_ilp(saguaro_index n, Load load, Store store) {
  const saguaro_index stride = saguaro_index(gridDim.x) * blockDim.x;
  for (saguaro_index t0 = saguaro_index(blockIdx.x) * blockDim.x + threadIdx.x; t0 < n;
       t0 += SAGUARO_ILP * stride) {
#pragma unroll
    for (int u = 0; u < SAGUARO_ILP; ++u)
      if (t0 + u * stride < n) load(u, t0 + u * stride);
#pragma unroll
    for (int u = 0; u < SAGUARO_ILP; ++u)
      if (t0 + u * stride < n) store(u, t0 + u * stride);
  }
}

// buffer[f * volume + point] = fields[f][point of the box], f < count, x fastest.
extern "C" __global__ void saguaro_pack(SaguaroFieldTable fields, int count, SaguaroBox box,
                                        double* __restrict__ buffer) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  const saguaro_index volume = saguaro_box_volume(box), total = volume * count;
  const int nx = box.hi[0] - box.lo[0], ny = box.hi[1] - box.lo[1];
  double v[SAGUARO_ILP];
  saguaro_grid_stride_ilp(
      total,
      [&](int u, saguaro_index t) {
        const SaguaroPoint p = saguaro_point(t, volume, nx, ny, total);
        v[u] = fields.p[p.f][saguaro_box_offset(box, p)];
      },
      [&](int u, saguaro_index t) { buffer[t] = v[u]; });
}

// The reverse of saguaro_pack.
extern "C" __global__ void saguaro_unpack(SaguaroFieldTable fields, int count, SaguaroBox box,
                                          const double* __restrict__ buffer) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  const saguaro_index volume = saguaro_box_volume(box), total = volume * count;
  const int nx = box.hi[0] - box.lo[0], ny = box.hi[1] - box.lo[1];
  double v[SAGUARO_ILP];
  saguaro_grid_stride_ilp(
      total, [&](int u, saguaro_index t) { v[u] = buffer[t]; },
      [&](int u, saguaro_index t) {
        const SaguaroPoint p = saguaro_point(t, volume, nx, ny, total);
        fields.p[p.f][saguaro_box_offset(box, p)] = v[u];
      });
}

// to[f][point of dst] = from[f][point of src], f < count: boxes of one shape in arrays of
// different layouts (CudaArraySpace::copy_to_peer: `to` another process's arrays, through
// CUDA IPC).
extern "C" __global__ void saguaro_copy_box(SaguaroFieldTable from, SaguaroFieldTable to, int count,
                                            SaguaroBox src, SaguaroBox dst) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  const saguaro_index volume = saguaro_box_volume(src), total = volume * count;
  const int nx = src.hi[0] - src.lo[0], ny = src.hi[1] - src.lo[1];
  double v[SAGUARO_ILP];
  saguaro_index at[SAGUARO_ILP];
  int field[SAGUARO_ILP];
  saguaro_grid_stride_ilp(
      total,
      [&](int u, saguaro_index t) {
        const SaguaroPoint p = saguaro_point(t, volume, nx, ny, total);
        v[u] = from.p[p.f][saguaro_box_offset(src, p)];
        at[u] = saguaro_box_offset(dst, p);
        field[u] = p.f;
      },
      [&](int u, saguaro_index) { to.p[field[u]][at[u]] = v[u]; });
}

// The ghost points of the wrapped axes (runtime::wrapped_ghost_boxes: up to six boxes, box b
// holding points start[b] .. start[b+1]) and how coordinates wrap.
struct SaguaroShell {
  SaguaroBox box[6];
  saguaro_index start[7];
  int boxes;
  int ghost;
  int wrap[3];
};

// fields[f][p] = fields[f][p wrapped along the wrapped axes] for every point p of the shell,
// f < count (ArraySpace::wrap_ghosts). Sources lie inside the owned range along every wrapped
// axis, so no thread reads what another writes.
extern "C" __global__ void saguaro_wrap_ghosts(SaguaroFieldTable fields, int count,
                                               SaguaroShell s) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  const saguaro_index volume = s.start[s.boxes], total = volume * count;
  double v[SAGUARO_ILP];
  double* to[SAGUARO_ILP];
  saguaro_grid_stride_ilp(
      total,
      [&](int u, saguaro_index t) {
        const bool narrow = total <= 0xffffffffll;
        saguaro_index r;
        const saguaro_index f = saguaro_divmod(t, volume, narrow, r);
        int b = 0;
        while (b + 1 < s.boxes && r >= s.start[b + 1]) ++b;
        const SaguaroBox& box = s.box[b];
        const SaguaroPoint q =
            saguaro_box_point(r - s.start[b], box.hi[0] - box.lo[0], box.hi[1] - box.lo[1], narrow);
        const int p[3] = {q.i + box.lo[0], q.j + box.lo[1], q.k + box.lo[2]};
        // The source is one period in (wrapped_ghost_boxes: at least as many owned points as
        // ghost layers).
        int w[3];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          const int n = box.alloc[a] - 2 * s.ghost;
          w[a] = !s.wrap[a]            ? p[a]
                 : p[a] < s.ghost      ? p[a] + n
                 : p[a] >= s.ghost + n ? p[a] - n
                                       : p[a];
        }
        const saguaro_index nxa = box.pitch, nya = box.alloc[1];
        to[u] = fields.p[f] + (saguaro_index(p[2]) * nya + p[1]) * nxa + p[0];
        v[u] = fields.p[f][(saguaro_index(w[2]) * nya + w[1]) * nxa + w[0]];
      },
      [&](int u, saguaro_index) { *to[u] = v[u]; });
}

// The x wrap of a rank that is its own x neighbour, gap by gap. The gap between row r's last
// owned point and row r + 1's first (r's upper x ghosts, r's padding, r + 1's lower x ghosts:
// pitch - n points for n owned) is contiguous, so consecutive threads write whole sectors (the
// padding gets 0) and each thread's index arithmetic serves every field. Written as the x
// slabs of saguaro_wrap_ghosts, point by point, the two ends of a row were two partial
// sectors written far apart in time: for BSSN's 25 variables at 256^3 on an H200, 0.31 ms of
// the wrap's 0.48 ms, now 0.13 (bench/results/2026-11-29-wrap-gaps-H200.md).
struct SaguaroRowGaps {
  int alloc[3];
  int pitch;
  int ghost;
  int wrap[3]; // along y and z a source in the ghost layers wraps where wrap[a] (the corners)
  int row_lo[2], row_hi[2]; // the rows wrapped: y, z in [row_lo, row_hi) (arriving axes: owned)
};

// The gaps' elements t = first, first + stride, ... (the x ghosts of rows y, z in [row_lo,
// row_hi), the padding of those rows as 0).
__device__ inline void saguaro_x_gaps(const SaguaroFieldTable& fields, int count,
                                      const SaguaroRowGaps& s, saguaro_index first,
                                      saguaro_index stride) {
  const int n = s.alloc[0] - 2 * s.ghost, gap = s.pitch - n;
  const saguaro_index rows = saguaro_index(s.alloc[1]) * s.alloc[2], end = rows * s.pitch;
  const bool narrow = end <= 0xffffffffll;
  // Gap r (r = -1 .. rows - 1) starts at row r's point n + ghost; its element e, at pos.
  for (saguaro_index t = first; t < (rows + 1) * gap; t += stride) {
    saguaro_index e;
    const saguaro_index r = saguaro_divmod(t, gap, narrow, e) - 1;
    const saguaro_index pos = r * s.pitch + n + s.ghost + e;
    if (pos < 0 || pos >= end) continue;
    saguaro_index x, y;
    const saguaro_index z =
        saguaro_divmod(saguaro_divmod(pos, s.pitch, narrow, x), s.alloc[1], narrow, y);
    if (y < s.row_lo[0] || y >= s.row_hi[0] || z < s.row_lo[1] || z >= s.row_hi[1]) continue;
    const bool ghost = x < s.ghost || (x >= n + s.ghost && x < s.alloc[0]);
    saguaro_index from = 0;
    if (ghost) {
      const saguaro_index ny = s.alloc[1] - 2 * s.ghost, nz = s.alloc[2] - 2 * s.ghost;
      const saguaro_index sx = x < s.ghost ? x + n : x - n;
      const saguaro_index sy = !s.wrap[1]          ? y
                               : y < s.ghost       ? y + ny
                               : y >= s.ghost + ny ? y - ny
                                                   : y;
      const saguaro_index sz = !s.wrap[2]          ? z
                               : z < s.ghost       ? z + nz
                               : z >= s.ghost + nz ? z - nz
                                                   : z;
      from = (sz * s.alloc[1] + sy) * s.pitch + sx;
    }
    for (int f0 = 0; f0 < count; f0 += SAGUARO_ILP) {
      double v[SAGUARO_ILP];
#pragma unroll
      for (int u = 0; u < SAGUARO_ILP; ++u)
        v[u] = ghost && f0 + u < count ? fields.p[f0 + u][from] : 0.0;
#pragma unroll
      for (int u = 0; u < SAGUARO_ILP; ++u)
        if (f0 + u < count) fields.p[f0 + u][pos] = v[u];
    }
  }
}

extern "C" __global__ void saguaro_wrap_x_gaps(SaguaroFieldTable fields, int count,
                                               SaguaroRowGaps s) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  saguaro_x_gaps(fields, count, s, saguaro_index(blockIdx.x) * blockDim.x + threadIdx.x,
                 saguaro_index(gridDim.x) * blockDim.x);
}

// The whole periodic wrap of a rank that is its own neighbour along every axis that has ghosts
// to wrap, in one launch. Blocks [0, row_blocks) copy the ghost rows along y and z, whole along
// x (padding included), each from the row one period away along the wrapped axes, its points
// wrapped along x as they are read: a row with y or z in the ghost layers is the owned row's
// values, x ghosts included. The blocks after them write the x gaps of every other row
// (s.row_lo, s.row_hi: the owned range along y and z where they wrap). No element is read that
// this launch writes. One block per row, one thread per point of the row (blockDim.x >= pitch
// where the pitch allows). Point by point through saguaro_wrap_ghosts' boxes, the same rows
// spent their time on index arithmetic (the 8th-order wave at 256^3 on an H200: 26.6 us of a
// 40 us exchange at 14% of DRAM's throughput); as a second kernel after saguaro_wrap_x_gaps,
// 29 us an exchange; in this one launch, 27 (bench/results/2026-11-29-wrap-rows-H200.md).
// Ghost rows: first the 2 g ghost planes along z (where z wraps), every row of each; then, in
// every plane not among those, the 2 g ghost rows along y (where y wraps).
extern "C" __global__ void saguaro_wrap_periodic(SaguaroFieldTable fields, int count,
                                                 SaguaroRowGaps s, int row_blocks) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  if (int(blockIdx.x) >= row_blocks) {
    saguaro_x_gaps(fields, count, s,
                   saguaro_index(blockIdx.x - row_blocks) * blockDim.x + threadIdx.x,
                   saguaro_index(gridDim.x - row_blocks) * blockDim.x);
    return;
  }
  const int g = s.ghost, nx = s.alloc[0] - 2 * g, ny = s.alloc[1] - 2 * g, nz = s.alloc[2] - 2 * g;
  const saguaro_index z_rows = s.wrap[2] ? saguaro_index(2 * g) * s.alloc[1] : 0;
  const saguaro_index planes = s.wrap[2] ? nz : s.alloc[2];
  const saguaro_index rows = z_rows + (s.wrap[1] ? saguaro_index(2 * g) * planes : 0);
  for (saguaro_index q = blockIdx.x; q < rows; q += row_blocks) {
    int y, z;
    if (q < z_rows) {
      const int zi = int(q / s.alloc[1]);
      y = int(q % s.alloc[1]);
      z = zi < g ? zi : nz + zi;
    } else {
      const saguaro_index r = q - z_rows;
      const int yi = int(r % (2 * g));
      z = int(r / (2 * g)) + (s.wrap[2] ? g : 0);
      y = yi < g ? yi : ny + yi;
    }
    const int sy = !s.wrap[1] ? y : y < g ? y + ny : y >= g + ny ? y - ny : y;
    const int sz = !s.wrap[2] ? z : z < g ? z + nz : z >= g + nz ? z - nz : z;
    const saguaro_index to = (saguaro_index(z) * s.alloc[1] + y) * s.pitch,
                        from = (saguaro_index(sz) * s.alloc[1] + sy) * s.pitch;
    for (int x = threadIdx.x; x < s.pitch; x += blockDim.x) {
      const bool padding = x >= s.alloc[0];
      const int sx = x < g ? x + nx : x >= g + nx ? x - nx : x;
      for (int f0 = 0; f0 < count; f0 += SAGUARO_ILP) {
        double v[SAGUARO_ILP];
#pragma unroll
        for (int u = 0; u < SAGUARO_ILP; ++u)
          v[u] = !padding && f0 + u < count ? fields.p[f0 + u][from + sx] : 0.0;
#pragma unroll
        for (int u = 0; u < SAGUARO_ILP; ++u)
          if (f0 + u < count) fields.p[f0 + u][to + x] = v[u];
      }
    }
  }
}

// Launched with SAGUARO_REDUCE_THREADS threads per block (mirrors kReduceThreads); block b
// writes partials[5 b + 0..4] = min, max, max |u|, sum |u|, sum u^2 over its points (a block
// without points writes +inf, -inf, 0, 0, 0). The host combines the blocks.
#define SAGUARO_REDUCE_THREADS 256
extern "C" __global__ void __launch_bounds__(SAGUARO_REDUCE_THREADS)
    saguaro_reduce(const double* __restrict__ u, SaguaroBox box, double* __restrict__ partials) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  const saguaro_index volume =
      saguaro_index(box.hi[0] - box.lo[0]) * (box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]);
  double mn = __longlong_as_double(0x7ff0000000000000ll);  // +inf
  double mx = __longlong_as_double(0xfff0000000000000ull); // -inf
  double mabs = 0, sabs = 0, ssq = 0;
  const int nx = box.hi[0] - box.lo[0], ny = box.hi[1] - box.lo[1];
  const bool narrow = volume <= 0xffffffffll;
  SAGUARO_GRID_STRIDE(t, volume) {
    const double v = u[saguaro_box_offset(box, saguaro_box_point(t, nx, ny, narrow))];
    const double a = fabs(v);
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    mabs = a > mabs ? a : mabs;
    sabs += a;
    ssq += v * v;
  }
  __shared__ double s[5][SAGUARO_REDUCE_THREADS];
  const unsigned t = threadIdx.x;
  s[0][t] = mn;
  s[1][t] = mx;
  s[2][t] = mabs;
  s[3][t] = sabs;
  s[4][t] = ssq;
  __syncthreads();
  for (unsigned half = SAGUARO_REDUCE_THREADS / 2; half > 0; half /= 2) {
    if (t < half) {
      const unsigned o = t + half;
      s[0][t] = s[0][o] < s[0][t] ? s[0][o] : s[0][t];
      s[1][t] = s[1][o] > s[1][t] ? s[1][o] : s[1][t];
      s[2][t] = s[2][o] > s[2][t] ? s[2][o] : s[2][t];
      s[3][t] += s[3][o];
      s[4][t] += s[4][o];
    }
    __syncthreads();
  }
  if (t < 5) partials[5 * saguaro_index(blockIdx.x) + t] = s[t][0];
}

// ---- outer boundaries (boundary_point.hpp) -----------------------------------------------------

// One launch per outer face (axis, side): the face's ghost layers over the whole allocated
// extent of the other axes. A point of several outer layers is set by the first axis it
// belongs to (and by the lower side where the two sides of one axis overlap), so no point is
// written twice. kind: 0 flat (field[p] = field[flat_source(p)]; the source is never in an
// outer layer), 1 static (rhs = 0), 2 radiative (rhs = radiative_rhs(u)).
extern "C" __global__ void saguaro_boundary(saguaro::runtime::OuterFaces f, int axis, int side,
                                            int kind, const double* u, double* out, double u0,
                                            double v0) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  namespace bp = saguaro::runtime::boundary;
  int extent[3] = {f.alloc[0], f.alloc[1], f.alloc[2]};
  int base[3] = {0, 0, 0};
  const int g = f.ghost < f.alloc[axis] ? f.ghost : f.alloc[axis];
  extent[axis] = g;
  base[axis] = side == 0 ? 0 : f.alloc[axis] - g;
  const saguaro_index volume = saguaro_index(extent[0]) * extent[1] * extent[2];
  SAGUARO_GRID_STRIDE(t, volume) {
    int q[3];
    q[0] = int(t % extent[0]) + base[0];
    q[1] = int((t / extent[0]) % extent[1]) + base[1];
    q[2] = int(t / (saguaro_index(extent[0]) * extent[1])) + base[2];
    if (bp::outer_side(f, axis, q[axis]) != side) continue;
    bool earlier = false;
    for (int b = 0; b < axis; ++b) earlier = earlier || bp::outer_side(f, b, q[b]) >= 0;
    if (earlier) continue;
    const long long at = bp::linear(f, q[0], q[1], q[2]);
    if (kind == 0)
      out[at] = out[bp::flat_source(f, q[0], q[1], q[2])];
    else if (kind == 1)
      out[at] = 0.0;
    else
      out[at] = bp::radiative_rhs(f, u, q[0], q[1], q[2], u0, v0);
  }
}

// The layout of OuterFaces as this compiler sees it, checked once against the host's.
extern "C" __global__ void saguaro_outer_faces_layout(int* out) {
  SAGUARO_AFTER_PREVIOUS_KERNEL();
  saguaro::runtime::OuterFaces f;
  const char* base = reinterpret_cast<const char*>(&f);
  out[0] = int(sizeof(f));
  out[1] = int(reinterpret_cast<const char*>(&f.outer) - base);
  out[5] = int(reinterpret_cast<const char*>(&f.pitch) - base);
  out[2] = int(reinterpret_cast<const char*>(&f.origin) - base);
  out[3] = int(reinterpret_cast<const char*>(&f.index_offset) - base);
  out[4] = int(reinterpret_cast<const char*>(&f.spacing) - base);
}
