// The Kokkos support library: the array space's operations (runtime/array_space.hpp) as Kokkos
// kernels on the default execution space, so that a run on the Kokkos backend never leaves it,
// and Kokkos's initialisation. Built against the configured Kokkos (cmake/SaguaroKokkos.cmake),
// loaded by the host with dlopen (kokkos/array_space.cpp); its face is support_api.hpp.
//
// Every kernel works on raw pointers wrapped where needed in unmanaged views; arrays are
// allocated with kokkos_malloc in the default memory space. Kernels go through the boundary
// formulas of boundary_point.hpp, as the host loops and the CUDA kernels do.
#include "runtime/kokkos/support_api.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace saguaro::runtime::kokkos {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Range3 =
    Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                          Kokkos::IndexType<int>>;
using Range1 = Kokkos::RangePolicy<Exec, Kokkos::IndexType<long>>;
template <class T>
using Unmanaged = Kokkos::View<T*, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostUnmanaged =
    Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

constexpr int kMaxTerms = 8; // ArraySpace::max_terms

// Kokkos's mathematical functions: Kokkos:: since 3.7, Kokkos::Experimental:: before.
#if KOKKOS_VERSION >= 30700
namespace math = Kokkos;
#else
namespace math = Kokkos::Experimental;
#endif

bool empty(const Box& b) {
  return b.hi[0] <= b.lo[0] || b.hi[1] <= b.lo[1] || b.hi[2] <= b.lo[2];
}
long volume(const Box& b) {
  return empty(b) ? 0 : long(b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]);
}

void finalize_at_exit() {
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

const char* initialize() {
  static std::string text;
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize();
    std::atexit(finalize_at_exit);
  }
  if (text.empty()) {
    text = "Kokkos " + std::to_string(KOKKOS_VERSION / 10000) + "." +
           std::to_string(KOKKOS_VERSION / 100 % 100) + "." + std::to_string(KOKKOS_VERSION % 100) +
           ", " + Exec::name();
    // A host space says how many threads it runs (OpenMP: OMP_NUM_THREADS or
    // KOKKOS_NUM_THREADS), so a run's banner and the tests show whether threads were used.
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible) {
      const int threads = Exec().concurrency();
      text += " (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
    }
  }
  return text.c_str();
}

int host_accessible() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible ? 1 : 0;
}

double* allocate(std::size_t n) {
  if (n == 0) n = 1; // a distinct, releasable pointer also for an empty patch
  auto* p =
      static_cast<double*>(Kokkos::kokkos_malloc<Memory>("saguaro array", n * sizeof(double)));
  Unmanaged<double> v(p, n);
  Kokkos::deep_copy(v, 0.0);
  return p;
}

void release(double* array) {
  // After Kokkos::finalize (arrays of objects destroyed at exit) the memory goes with the process.
  if (array != nullptr && Kokkos::is_initialized()) Kokkos::kokkos_free<Memory>(array);
}

void to_host(double* host, const double* array, std::size_t n) {
  if (n == 0 || host == array) return;
  Kokkos::deep_copy(HostUnmanaged(host, n), Unmanaged<const double>(array, n));
}

void from_host(double* array, const double* host, std::size_t n) {
  if (n == 0 || host == array) return;
  Kokkos::deep_copy(
      Unmanaged<double>(array, n),
      Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host,
                                                                                              n));
}

void fence() {
  Kokkos::fence();
}

// a * x and s + a * x rounded apart: a device compiler would contract them into one fused
// multiply-add, whose bits differ from the host space's.
KOKKOS_INLINE_FUNCTION double mul(double a, double b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
KOKKOS_INLINE_FUNCTION double add(double a, double b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

struct Terms {
  double a[kMaxTerms];
  const double* x[kMaxTerms];
};

void linear_combination(double* y, const double* a, const double* const* x, int terms,
                        std::size_t n) {
  Terms t{};
  for (int m = 0; m < terms; ++m) {
    t.a[m] = a[m];
    t.x[m] = x[m];
  }
  if (terms == 0) {
    Kokkos::deep_copy(Unmanaged<double>(y, n), 0.0);
    return;
  }
  Kokkos::parallel_for(
      "saguaro_linear_combination", Range1(0, long(n)), KOKKOS_LAMBDA(const long i) {
        double s = mul(t.a[0], t.x[0][i]);
        for (int m = 1; m < terms; ++m) s = add(s, mul(t.a[m], t.x[m][i]));
        y[i] = s;
      });
}

// The box of `field` to or from `staged` (x fastest), a buffer of the execution space's memory.
void box_copy(const double* from_field, double* to_field, double* staged, const Box& b,
              bool to_staged) {
  const long nx = b.hi[0] - b.lo[0], ny = b.hi[1] - b.lo[1];
  const long sj = b.pitch, sk = long(b.pitch) * b.alloc[1];
  const int lo0 = b.lo[0], lo1 = b.lo[1], lo2 = b.lo[2];
  Kokkos::parallel_for(
      "saguaro_pack", Range3({b.lo[0], b.lo[1], b.lo[2]}, {b.hi[0], b.hi[1], b.hi[2]}),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        const long at = k * sk + j * sj + i;
        const long s = ((k - lo2) * ny + (j - lo1)) * nx + (i - lo0);
        if (to_staged)
          staged[s] = from_field[at];
        else
          to_field[at] = staged[s];
      });
}

void pack(const double* const* fields, int count, const Box* box, double* host) {
  const long v = volume(*box);
  if (v == 0 || count == 0) return;
  Kokkos::View<double*, Memory> staged(Kokkos::view_alloc(Kokkos::WithoutInitializing, "pack"),
                                       std::size_t(v) * count);
  for (int f = 0; f < count; ++f) box_copy(fields[f], nullptr, staged.data() + f * v, *box, true);
  Kokkos::deep_copy(HostUnmanaged(host, std::size_t(v) * count), staged);
}

void unpack(double* const* fields, int count, const Box* box, const double* host) {
  const long v = volume(*box);
  if (v == 0 || count == 0) return;
  Kokkos::View<double*, Memory> staged(Kokkos::view_alloc(Kokkos::WithoutInitializing, "unpack"),
                                       std::size_t(v) * count);
  Kokkos::deep_copy(
      staged,
      Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          host, std::size_t(v) * count));
  for (int f = 0; f < count; ++f) box_copy(nullptr, fields[f], staged.data() + f * v, *box, false);
  Kokkos::fence();
}

// Every ghost point within `ghost` layers of a wrapped axis's ends takes the value of the point
// wrapped into the owned range along every wrapped axis (runtime::ArraySpace::wrap_ghosts).
void wrap_ghosts(double* field, const int* alloc, int pitch, int ghost, const int* wrap) {
  if (ghost <= 0) return;
  const int n0 = alloc[0] - 2 * ghost, n1 = alloc[1] - 2 * ghost, n2 = alloc[2] - 2 * ghost;
  const bool w0 = wrap[0] != 0, w1 = wrap[1] != 0, w2 = wrap[2] != 0;
  const long sj = pitch, sk = long(pitch) * alloc[1];
  for (int a = 0; a < 3; ++a) {
    if (!wrap[a]) continue;
    for (int s = 0; s < 2; ++s) {
      int lo[3] = {0, 0, 0}, hi[3] = {alloc[0], alloc[1], alloc[2]};
      lo[a] = s == 0 ? 0 : alloc[a] - ghost;
      hi[a] = s == 0 ? ghost : alloc[a];
      // Slabs of different axes overlap at edges; both write the same value there, and every
      // source point lies in the owned range of the wrapped axes, which no slab writes.
      Kokkos::parallel_for(
          "saguaro_wrap_ghosts", Range3({lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}),
          KOKKOS_LAMBDA(const int i, const int j, const int k) {
            auto wrapped = [&](bool w, int n, int l) {
              return !w ? l : l < ghost ? l + n : l >= ghost + n ? l - n : l;
            };
            const long from =
                wrapped(w2, n2, k) * sk + wrapped(w1, n1, j) * sj + wrapped(w0, n0, i);
            field[k * sk + j * sj + i] = field[from];
          });
    }
  }
}

// The sums' type: long double where the memory is the host's (as the host space sums, so that
// norms hardly depend on the backend), double on a device.
using Sum = std::conditional_t<Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible,
                               long double, double>;

void reduce(const double* field, const Box* box, double* out, long double* sums) {
  const Box b = *box;
  double mn = INFINITY, mx = -INFINITY, linf = 0;
  Sum sum_abs = 0, sum_sq = 0;
  if (!empty(b)) {
    const long sj = b.pitch, sk = long(b.pitch) * b.alloc[1];
    const Range3 range({b.lo[0], b.lo[1], b.lo[2]}, {b.hi[0], b.hi[1], b.hi[2]});
    Kokkos::parallel_reduce(
        "saguaro_reduce_min", range,
        KOKKOS_LAMBDA(int i, int j, int k, double& r) {
          r = math::fmin(r, field[k * sk + j * sj + i]);
        },
        Kokkos::Min<double>(mn));
    Kokkos::parallel_reduce(
        "saguaro_reduce_max", range,
        KOKKOS_LAMBDA(int i, int j, int k, double& r) {
          r = math::fmax(r, field[k * sk + j * sj + i]);
        },
        Kokkos::Max<double>(mx));
    Kokkos::parallel_reduce(
        "saguaro_reduce_max_abs", range,
        KOKKOS_LAMBDA(int i, int j, int k, double& r) {
          r = math::fmax(r, math::fabs(field[k * sk + j * sj + i]));
        },
        Kokkos::Max<double>(linf));
    Kokkos::parallel_reduce(
        "saguaro_reduce_sum_abs", range,
        KOKKOS_LAMBDA(int i, int j, int k, Sum& r) {
          r += Sum(math::fabs(field[k * sk + j * sj + i]));
        },
        sum_abs);
    Kokkos::parallel_reduce(
        "saguaro_reduce_sum_sq", range,
        KOKKOS_LAMBDA(int i, int j, int k, Sum& r) {
          const Sum v = field[k * sk + j * sj + i];
          r += v * v;
        },
        sum_sq);
  }
  out[0] = mn;
  out[1] = mx;
  out[2] = linf;
  sums[0] = sum_abs;
  sums[1] = sum_sq;
}

// Calls fn(i, j, k) on the execution space for every point of every outer face slab of `f`,
// each point once: in the pass of the first axis whose outer layer holds it (as the host's
// for_outer_points).
template <class Fn>
void for_outer_points(const char* label, const OuterFaces& f, const Fn& fn) {
  if (f.ghost <= 0) return;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      if (!f.outer[a][s]) continue;
      int lo[3] = {0, 0, 0}, hi[3] = {f.alloc[0], f.alloc[1], f.alloc[2]};
      lo[a] = s == 0 ? 0 : f.alloc[a] - f.ghost;
      hi[a] = s == 0 ? f.ghost : f.alloc[a];
      if (hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]) continue;
      Kokkos::parallel_for(
          label, Range3({lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}),
          KOKKOS_LAMBDA(const int i, const int j, const int k) {
            const int q[3] = {i, j, k};
            for (int b = 0; b < a; ++b)
              if (boundary::outer_side(f, b, q[b]) >= 0) return;
            fn(i, j, k);
          });
    }
}

void apply_flat(const OuterFaces* faces, double* field) {
  const OuterFaces f = *faces;
  // The source of an outer point is never itself in an outer layer: the order does not matter.
  for_outer_points(
      "saguaro_flat", f, KOKKOS_LAMBDA(int i, int j, int k) {
        field[boundary::linear(f, i, j, k)] = field[boundary::flat_source(f, i, j, k)];
      });
}

void apply_static_rhs(const OuterFaces* faces, double* rhs) {
  const OuterFaces f = *faces;
  for_outer_points(
      "saguaro_static_rhs", f,
      KOKKOS_LAMBDA(int i, int j, int k) { rhs[boundary::linear(f, i, j, k)] = 0.0; });
}

void apply_radiative_rhs(const OuterFaces* faces, const double* u, double* rhs, double u0,
                         double v0) {
  const OuterFaces f = *faces;
  for_outer_points(
      "saguaro_radiative_rhs", f, KOKKOS_LAMBDA(int i, int j, int k) {
        rhs[boundary::linear(f, i, j, k)] = boundary::radiative_rhs(f, u, i, j, k, u0, v0);
      });
}

const SupportTable kTable = {
    kSupportAbi,
    initialize,
    host_accessible,
    allocate,
    release,
    to_host,
    from_host,
    fence,
    linear_combination,
    pack,
    unpack,
    wrap_ghosts,
    reduce,
    apply_flat,
    apply_static_rhs,
    apply_radiative_rhs,
};

} // namespace
} // namespace saguaro::runtime::kokkos

extern "C" __attribute__((visibility("default"))) const saguaro::runtime::kokkos::SupportTable*
saguaro_kokkos_support(void) {
  return &saguaro::runtime::kokkos::kTable;
}
