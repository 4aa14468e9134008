// The host memory space: arrays are plain host memory, the operations OpenMP loops.
//
// The method of lines' linear combination adds its terms in order, as the CUDA kernel does
// (support.cu), so both spaces give the same bits; the boundary conditions are the pointwise
// functions of boundary_point.hpp that the CUDA kernels use as well, looped over each outer face
// slab.
#include "runtime/array_space.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace saguaro::runtime {

std::size_t ArrayBox::volume() const {
  std::size_t v = 1;
  for (int a = 0; a < 3; ++a) v *= static_cast<std::size_t>(std::max(0, hi[a] - lo[a]));
  return v;
}

// The base class's exchange and timing defaults: one queue, everything synchronous.

void check_wrap_period(const std::array<int, 3>& alloc, int ghost,
                       const std::array<bool, 3>& wrap) {
  for (int a = 0; a < 3; ++a)
    if (wrap[a] && alloc[a] - 2 * ghost < ghost)
      throw std::invalid_argument("wrap_ghosts: fewer owned points than ghost layers");
}

std::vector<ArrayBox> wrapped_ghost_boxes(const std::array<int, 3>& alloc, int pitch, int ghost,
                                          const std::array<bool, 3>& wrap,
                                          const std::array<bool, 3>& arriving) {
  std::vector<ArrayBox> boxes;
  if (ghost <= 0) return boxes;
  check_wrap_period(alloc, ghost, wrap);
  for (int a = 0; a < 3; ++a) {
    if (!wrap[a]) continue;
    for (int s = 0; s < 2; ++s) {
      ArrayBox b;
      b.alloc = alloc;
      b.pitch = pitch;
      b.hi = alloc;
      for (int o = 0; o < 3; ++o)
        if (arriving[o] && o != a) {
          b.lo[o] = ghost;
          b.hi[o] = alloc[o] - ghost;
        }
      b.lo[a] = s == 0 ? 0 : alloc[a] - ghost;
      b.hi[a] = s == 0 ? ghost : alloc[a];
      boxes.push_back(b);
    }
  }
  return boxes;
}

double* ArraySpace::allocate_message(std::size_t n, bool on_device) {
  if (on_device) return allocate(n);
  return new double[std::max<std::size_t>(n, 1)]();
}

void ArraySpace::release_message(double* message, bool on_device) {
  if (on_device)
    release(message);
  else
    delete[] message;
}

void ArraySpace::pack_message(const std::vector<const double*>& fields, const ArrayBox& box,
                              double* message, bool on_device) {
  if (on_device && this->on_device())
    throw std::logic_error(std::string(name()) + " space: no device messages");
  pack(fields, box, message);
}

void ArraySpace::unpack_message(const std::vector<double*>& fields, const ArrayBox& box,
                                const double* message, bool on_device) {
  if (on_device && this->on_device())
    throw std::logic_error(std::string(name()) + " space: no device messages");
  unpack(fields, box, message);
}

std::string ArraySpace::export_message(double*) {
  throw std::logic_error(std::string(name()) + " space: no peer messages");
}

double* ArraySpace::import_message(const std::string&) {
  throw std::logic_error(std::string(name()) + " space: no peer messages");
}

std::string ArraySpace::export_array(double*) {
  throw std::logic_error(std::string(name()) + " space: no peer arrays");
}

double* ArraySpace::import_array(const std::string&) {
  throw std::logic_error(std::string(name()) + " space: no peer arrays");
}

void ArraySpace::copy_to_peer(const std::vector<const double*>&, const ArrayBox&,
                              const std::vector<double*>&, const ArrayBox&) {
  throw std::logic_error(std::string(name()) + " space: no peer arrays");
}

void ArraySpace::close_import(double*) {
  throw std::logic_error(std::string(name()) + " space: no peer messages");
}

void ArraySpace::signal_message(double*, std::size_t, std::uint64_t) {
  throw std::logic_error(std::string(name()) + " space: no peer signals");
}

void ArraySpace::await_message(const double*, std::size_t, std::uint64_t) {
  throw std::logic_error(std::string(name()) + " space: no peer signals");
}

int ArraySpace::mark(Queue) {
  marks_.push_back(std::chrono::steady_clock::now());
  return first_mark_ + int(marks_.size()) - 1;
}

double ArraySpace::seconds(int from, int to) {
  return std::chrono::duration<double>(marks_.at(std::size_t(to - first_mark_)) -
                                       marks_.at(std::size_t(from - first_mark_)))
      .count();
}

void ArraySpace::clear_marks() {
  first_mark_ += int(marks_.size());
  marks_.clear();
}

void ArraySpace::release_marks_before(int id) {
  const auto n = std::min(marks_.size(), std::size_t(std::max(0, id - first_mark_)));
  marks_.erase(marks_.begin(), marks_.begin() + std::ptrdiff_t(n));
  first_mark_ += int(n);
}

namespace {

using Index = std::ptrdiff_t;

// ---------------------------------------------------------------------------------------------
// The method of lines' linear combination (see ArraySpace::linear_combination)

// y = sum_m a_m x_m over [from, to), m < M, added in order. No __restrict: y may be one of
// the x_m, which is safe here (and under `simd`) because point i reads every x_m[i] before
// it writes y[i]. The coefficients and pointers come by value, so that they stay in registers.
template <std::size_t M>
void combine_range(double* y, std::array<double, M> a, std::array<const double*, M> x, Index from,
                   Index to) {
  if constexpr (M == 0) {
    std::fill(y + from, y + to, 0.0);
  } else {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (Index i = from; i < to; ++i) {
      double s = a[0] * x[0][i];
      for (std::size_t m = 1; m < M; ++m) s += a[m] * x[m][i];
      y[i] = s;
    }
  }
}

// The whole array in chunks, shared among threads when it is large enough to pay for it.
template <std::size_t M>
void combine_loop(double* y, const ArraySpace::Term* terms, Index n) {
  std::array<double, M> a{};
  std::array<const double*, M> x{};
  for (std::size_t m = 0; m < M; ++m) {
    a[m] = terms[m].a;
    x[m] = terms[m].x;
  }
  constexpr Index chunk = 8192;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (n > 32768)
#endif
  for (Index from = 0; from < n; from += chunk)
    combine_range<M>(y, a, x, from, std::min(n, from + chunk));
}

// The loop for each number of terms, so that the loop over terms unrolls.
template <std::size_t... M>
constexpr std::array<void (*)(double*, const ArraySpace::Term*, Index), sizeof...(M)>
combine_loops(std::index_sequence<M...>) {
  return {&combine_loop<M>...};
}
constexpr auto kCombineLoops = combine_loops(std::make_index_sequence<ArraySpace::max_terms + 1>());

// ---------------------------------------------------------------------------------------------
// Boxes and outer face slabs

std::size_t offset(const ArrayBox& box, int i, int j, int k) {
  return (static_cast<std::size_t>(k) * static_cast<std::size_t>(box.alloc[1]) +
          static_cast<std::size_t>(j)) *
             static_cast<std::size_t>(box.row_pitch()) +
         static_cast<std::size_t>(i);
}

// Calls fn(i, j, k) (local indices) for every point of every outer face slab of `f`: the
// ghost layers of that face over the whole allocated extent of the other axes, axis by
// axis. A point in several outer slabs (an edge or a corner) is visited once, in the pass
// of the first axis it belongs to.
template <class Fn>
void for_outer_points(const OuterFaces& f, Fn&& fn) {
  if (f.ghost <= 0) return;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      if (!f.outer[a][s]) continue;
      int lo[3] = {0, 0, 0}, hi[3] = {f.alloc[0], f.alloc[1], f.alloc[2]};
      lo[a] = s == 0 ? 0 : f.alloc[a] - f.ghost;
      hi[a] = s == 0 ? f.ghost : f.alloc[a];
      // The axes before a: points in their outer layers belong to their passes.
      auto earlier = [&](const int q[3]) {
        for (int b = 0; b < a; ++b)
          if (boundary::outer_side(f, b, q[b]) >= 0) return true;
        return false;
      };
      const long long points =
          static_cast<long long>(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
      (void)points; // without OpenMP
#if defined(_OPENMP)
#pragma omp parallel for collapse(2) schedule(static) if (points > 32768)
#endif
      for (int k = lo[2]; k < hi[2]; ++k)
        for (int j = lo[1]; j < hi[1]; ++j)
          for (int i = lo[0]; i < hi[0]; ++i) {
            const int q[3] = {i, j, k};
            if (a > 0 && earlier(q)) continue;
            fn(i, j, k);
          }
    }
}

// ---------------------------------------------------------------------------------------------

class HostArraySpace final : public ArraySpace {
public:
  const char* name() const override { return "host"; }
  bool on_device() const override { return false; }

  double* allocate(std::size_t n) override {
    if (n == 0) n = 1; // a distinct, releasable pointer also for an empty patch
    // 64-byte aligned for the vector loops; value-initialised: zeroed.
    return new (std::align_val_t(64)) double[n]();
  }
  void release(double* array) override {
    if (array != nullptr) ::operator delete[](array, std::align_val_t(64));
  }

  void to_host(double* host, const double* array, std::size_t n) override {
    if (n > 0 && host != array) std::memcpy(host, array, sizeof(double) * n);
  }
  void from_host(double* array, const double* host, std::size_t n) override {
    if (n > 0 && host != array) std::memcpy(array, host, sizeof(double) * n);
  }
  void synchronize() override {}

  void linear_combination(double* y, std::span<const Term> terms, std::size_t n) override {
    if (terms.size() > max_terms)
      throw std::invalid_argument("host space: a linear combination of " +
                                  std::to_string(terms.size()) + " terms (at most " +
                                  std::to_string(max_terms) + ")");
    kCombineLoops[terms.size()](y, terms.data(), static_cast<Index>(n));
  }

  void pack(const std::vector<const double*>& fields, const ArrayBox& box,
            double* host_buffer) override {
    if (box.volume() == 0) return;
    const std::size_t row = static_cast<std::size_t>(box.hi[0] - box.lo[0]);
    double* buf = host_buffer;
    for (const double* f : fields)
      for (int k = box.lo[2]; k < box.hi[2]; ++k)
        for (int j = box.lo[1]; j < box.hi[1]; ++j) {
          std::memcpy(buf, f + offset(box, box.lo[0], j, k), sizeof(double) * row);
          buf += row;
        }
  }
  void unpack(const std::vector<double*>& fields, const ArrayBox& box,
              const double* host_buffer) override {
    if (box.volume() == 0) return;
    const std::size_t row = static_cast<std::size_t>(box.hi[0] - box.lo[0]);
    const double* buf = host_buffer;
    for (double* f : fields)
      for (int k = box.lo[2]; k < box.hi[2]; ++k)
        for (int j = box.lo[1]; j < box.hi[1]; ++j) {
          std::memcpy(f + offset(box, box.lo[0], j, k), buf, sizeof(double) * row);
          buf += row;
        }
  }

  static constexpr int kWrapAhead = 8; // rows a wrap prefetches ahead
  void wrap_ghosts(const std::vector<double*>& fields, const std::array<int, 3>& alloc, int pitch,
                   int ghost, const std::array<bool, 3>& wrap) override {
    const std::array<int, 3> n{alloc[0] - 2 * ghost, alloc[1] - 2 * ghost, alloc[2] - 2 * ghost};
    // ghost <= n (wrapped_ghost_boxes checks): one shift by n wraps (no division in the inner
    // loop).
    auto wrapped = [&](int a, int i) {
      return !wrap[a] ? i : i < ghost ? i + n[a] : i >= ghost + n[a] ? i - n[a] : i;
    };
    const std::vector<ArrayBox> boxes = wrapped_ghost_boxes(alloc, pitch, ghost, wrap);
    std::size_t first = 0;
    if (wrap[0] && !fields.empty()) {
      // x first, as the boxes come: both ends of a row in one visit, every field in one loop
      // over planes. A row's x ghosts are a few points at each end of it; two sweeps (one per
      // box), a division per row and no prefetch took 30% of a CPU step of the wave equation
      // at 128^3: rows ~1 KB apart defeat the hardware prefetchers, so both ends of the row
      // kWrapAhead rows on in the plane are asked for.
      const ArrayBox& box = boxes[0];
      const long planes_per_field = box.hi[2] - box.lo[2];
      const long planes = planes_per_field * long(fields.size());
      const std::ptrdiff_t ahead = kWrapAhead * std::ptrdiff_t(box.row_pitch());
#pragma omp parallel for schedule(static) if (planes * (box.hi[1] - box.lo[1]) * ghost > 16384)
      for (long p = 0; p < planes; ++p) {
        double* const field = fields[std::size_t(p / planes_per_field)];
        const int k = box.lo[2] + int(p % planes_per_field);
        for (int j = box.lo[1]; j < box.hi[1]; ++j) {
          double* const row = field + offset(box, 0, j, k);
          if (j + kWrapAhead < box.hi[1]) {
            __builtin_prefetch(row + ahead, 1);
            __builtin_prefetch(row + ahead + n[0], 1);
          }
          for (int i = 0; i < ghost; ++i) {
            row[i] = row[i + n[0]];
            row[ghost + n[0] + i] = row[ghost + i];
          }
        }
      }
      first = 2;
    }
    for (std::size_t b = first; b < boxes.size(); ++b)
      for (double* f : fields) {
        const ArrayBox& box = boxes[b];
        const long rows = long(box.hi[2] - box.lo[2]) * (box.hi[1] - box.lo[1]);
        const std::size_t width = std::size_t(box.hi[0] - box.lo[0]);
#pragma omp parallel for schedule(static) if (rows * long(width) > 32768)
        for (long r = 0; r < rows; ++r) {
          const int j = box.lo[1] + int(r % (box.hi[1] - box.lo[1]));
          const int k = box.lo[2] + int(r / (box.hi[1] - box.lo[1]));
          // y and z boxes: whole rows, already wrapped along x.
          std::memcpy(f + offset(box, box.lo[0], j, k),
                      f + offset(box, box.lo[0], wrapped(1, j), wrapped(2, k)),
                      sizeof(double) * width);
        }
      }
  }

  BoxSums reduce(const double* field, const ArrayBox& box) override {
    double mn = std::numeric_limits<double>::infinity();
    double mx = -std::numeric_limits<double>::infinity();
    double linf = 0;
    // Long double sums per rank keep the result (nearly) independent of the decomposition.
    long double sum_abs = 0.0L, sum_sq = 0.0L;
    const Index n = box.hi[0] - box.lo[0];
    if (box.volume() > 0)
      for (int k = box.lo[2]; k < box.hi[2]; ++k)
        for (int j = box.lo[1]; j < box.hi[1]; ++j) {
          const double* row = field + offset(box, box.lo[0], j, k);
          for (Index i = 0; i < n; ++i) {
            const double v = row[i];
            mn = std::min(mn, v);
            mx = std::max(mx, v);
            linf = std::max(linf, std::fabs(v));
            sum_abs += std::fabs(static_cast<long double>(v));
            sum_sq += static_cast<long double>(v) * static_cast<long double>(v);
          }
        }
    BoxSums s;
    s.min = mn;
    s.max = mx;
    s.max_abs = linf;
    s.sum_abs = sum_abs;
    s.sum_sq = sum_sq;
    s.count = static_cast<long long>(box.volume());
    return s;
  }

  void apply_flat(const OuterFaces& faces, double* field) override {
    // The source of an outer point is never itself in an outer layer, so the order of the
    // points does not matter.
    for_outer_points(faces, [&](int i, int j, int k) {
      field[boundary::linear(faces, i, j, k)] = field[boundary::flat_source(faces, i, j, k)];
    });
  }
  void apply_static_rhs(const OuterFaces& faces, double* rhs) override {
    for_outer_points(faces,
                     [&](int i, int j, int k) { rhs[boundary::linear(faces, i, j, k)] = 0.0; });
  }
  void apply_radiative_rhs(const OuterFaces& faces, const double* u, double* rhs, double u0,
                           double v0) override {
    for_outer_points(faces, [&](int i, int j, int k) {
      rhs[boundary::linear(faces, i, j, k)] = boundary::radiative_rhs(faces, u, i, j, k, u0, v0);
    });
  }
};

} // namespace

ArraySpace& host_space() {
  static HostArraySpace space;
  return space;
}

} // namespace saguaro::runtime
