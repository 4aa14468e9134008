// Every operation of a device ArraySpace (the cuda backend's, the kokkos backend's) against
// host_space() on random data. Skipped where the space cannot be used (no GPU; a build without
// Kokkos), saying why; the Kokkos space is tested wherever the build has Kokkos (in CI: Kokkos
// Serial, whose "device" is host memory, through the same kernels a GPU's Kokkos runs).
//
// Exactness: copies, packing and boundaries are compared bit for bit. The method of lines'
// updates too: the CUDA support module is compiled with --fmad=false, the Kokkos support
// library multiplies and adds with rounded operations on a GPU, so the device evaluates the very
// expressions of the host loops without contracting them into fused multiply-adds. Reductions
// sum in another order (per-block partials), so their sums agree to 1e-14 relative; min, max
// and max |u| exactly.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/array_space.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kokkos.hpp"
#include "runtime_support.hpp"

namespace saguaro::test {
namespace {

namespace cuda = runtime::cuda;
using runtime::ArrayBox;
using runtime::ArraySpace;
using runtime::BoxSums;
using runtime::OuterFaces;

using Alloc = std::array<int, 3>;

std::size_t points(const Alloc& n) {
  return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]);
}

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  if (n > 3) v[n / 3] = 0.0; // exact zeros and ties for the reductions
  return v;
}

// Bitwise equality (so that -0.0 vs 0.0 and NaN payloads would count), with the first
// difference explained.
::testing::AssertionResult same_bits(const std::vector<double>& expected,
                                     const std::vector<double>& actual) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << expected.size() << " vs " << actual.size();
  std::size_t differ = 0, first = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (std::memcmp(&expected[i], &actual[i], sizeof(double)) != 0) {
      if (differ++ == 0) first = i;
    }
  if (differ == 0) return ::testing::AssertionSuccess();
  char text[200];
  std::snprintf(text, sizeof text, "%zu of %zu values differ; first at %zu: host %.17g, GPU %.17g",
                differ, expected.size(), first, expected[first], actual[first]);
  return ::testing::AssertionFailure() << text;
}

// The space a backend named by the test's parameter keeps its arrays in, when it can be used.
class DeviceSpace : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    std::string why;
    if (GetParam() == "cuda") {
      if (!cuda::available(&why)) GTEST_SKIP() << "no GPU can be used here: " << why;
      gpu_ = &cuda::device_space();
    } else {
      if (!runtime::kokkos::available(&why)) GTEST_SKIP() << why;
      gpu_ = &runtime::kokkos::space();
    }
  }
  ArraySpace& gpu() { return *gpu_; }
  ArraySpace& host() { return runtime::host_space(); }

private:
  ArraySpace* gpu_ = nullptr;
};

TEST_P(DeviceSpace, AllocatesZeroedArraysAndCopiesBothWays) {
  EXPECT_EQ(gpu().name(), GetParam());
  if (GetParam() == "cuda") EXPECT_TRUE(gpu().on_device()); // Kokkos's: as its memory space is
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(1) << 20}) {
    SCOPED_TRACE(n);
    DeviceArray a(gpu(), n);
    EXPECT_TRUE(same_bits(std::vector<double>(n, 0.0), a.host())) << "allocate() zeroes";
    const std::vector<double> v = random_values(n, 7);
    gpu().from_host(a.get(), v.data(), n);
    EXPECT_TRUE(same_bits(v, a.host()));
  }
  gpu().release(nullptr);
  gpu().synchronize();
}

// The method of lines' linear combination, on the same random data on both spaces: no terms,
// one (a copy), every count up to max_terms, the target among the terms, and a whole RK4
// step's combinations; sizes that are not multiples of a block and one larger than one
// grid-stride sweep.
TEST_P(DeviceSpace, LinearCombinationsMatchTheHostBitForBit) {
  using Term = ArraySpace::Term;
  for (std::size_t n : {std::size_t(1), std::size_t(1031), std::size_t(3) << 20}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // Arrays 0..3 play y, y0, r, acc; 4..7 further terms.
    std::vector<std::vector<double>> x;
    for (unsigned m = 0; m < ArraySpace::max_terms; ++m) x.push_back(random_values(n, 1 + m));
    const double dt = 0.0123456789;
    const std::vector<double> a = {1.0 / 3.0, 2.0 / 3.0, dt, 0.1 / 6.0, 2.0, -0.75, 0.5, 7.25};

    // `on(space, arrays)` runs combinations; every array must then agree bit for bit.
    auto check = [&](const char* what, auto&& on) {
      SCOPED_TRACE(what);
      std::vector<std::vector<double>> h = x;
      std::vector<double*> hp;
      for (auto& v : h) hp.push_back(v.data());
      on(host(), hp);
      std::vector<std::unique_ptr<DeviceArray>> d;
      std::vector<double*> dp;
      for (const auto& v : x) {
        d.push_back(std::make_unique<DeviceArray>(gpu(), v));
        dp.push_back(d.back()->get());
      }
      on(gpu(), dp);
      for (std::size_t m = 0; m < x.size(); ++m)
        EXPECT_TRUE(same_bits(h[m], d[m]->host())) << "array " << m;
    };
    for (std::size_t count = 0; count <= ArraySpace::max_terms; ++count)
      check(("terms: " + std::to_string(count)).c_str(),
            [&](ArraySpace& s, const std::vector<double*>& p) {
              std::vector<Term> terms;
              for (std::size_t m = 0; m < count; ++m) terms.push_back({a[m], p[m]});
              s.linear_combination(p[ArraySpace::max_terms - 1], terms, n);
            });
    check("in place", [&](ArraySpace& s, const std::vector<double*>& p) {
      s.linear_combination(p[0], std::vector<Term>{{0.75, p[1]}, {0.25, p[0]}, {0.25 * dt, p[2]}},
                           n);
    });
    check("a whole RK4 step's combinations", [&](ArraySpace& s, const std::vector<double*>& p) {
      double *y = p[0], *y0 = p[1], *r = p[2], *acc = p[3];
      s.copy(y0, y, n);
      s.linear_combination(acc, std::vector<Term>{{1.0, r}}, n);
      s.linear_combination(y, std::vector<Term>{{1.0, y0}, {0.5 * dt, r}}, n);
      s.linear_combination(acc, std::vector<Term>{{1.0, acc}, {2.0, r}}, n);
      s.linear_combination(y, std::vector<Term>{{1.0, y0}, {dt, r}}, n);
      s.linear_combination(y, std::vector<Term>{{1.0, y0}, {dt / 6.0, acc}, {dt / 6.0, r}}, n);
    });
  }
}

// Boxes of ghost exchange: faces, edges, a whole array, a single point; 1, 3 and 35 fields
// (more than one launch's worth of field pointers).
TEST_P(DeviceSpace, PackAndUnpackMatchTheHostBitForBit) {
  const Alloc alloc = {13, 11, 9};
  const int pitch = 16; // rows padded as grid::Patch pads them
  const std::size_t n = std::size_t(pitch) * alloc[1] * alloc[2];
  const std::vector<std::pair<Alloc, Alloc>> boxes = {
      {{0, 0, 0}, {13, 11, 9}}, {{0, 0, 0}, {3, 11, 9}}, {{10, 0, 0}, {13, 11, 9}},
      {{3, 8, 0}, {10, 11, 9}}, {{3, 3, 6}, {10, 8, 9}}, {{5, 4, 3}, {6, 5, 4}},
      {{2, 2, 2}, {2, 8, 8}} /* empty */};
  for (int nf : {1, 3, 35}) {
    std::vector<std::vector<double>> data;
    for (int f = 0; f < nf; ++f) data.push_back(random_values(n, 100 + unsigned(f)));
    std::vector<std::unique_ptr<DeviceArray>> dev;
    std::vector<const double*> hin, din;
    for (int f = 0; f < nf; ++f) {
      dev.push_back(std::make_unique<DeviceArray>(gpu(), data[f]));
      hin.push_back(data[f].data());
      din.push_back(dev.back()->get());
    }
    for (const auto& [lo, hi] : boxes) {
      ArrayBox box;
      box.alloc = alloc;
      box.pitch = pitch;
      box.lo = lo;
      box.hi = hi;
      SCOPED_TRACE(std::to_string(nf) + " fields, box [" + std::to_string(lo[0]) + "," +
                   std::to_string(lo[1]) + "," + std::to_string(lo[2]) + ") - [" +
                   std::to_string(hi[0]) + "," + std::to_string(hi[1]) + "," +
                   std::to_string(hi[2]) + ")");
      const std::size_t total = box.volume() * std::size_t(nf);
      std::vector<double> hbuf(total + 1, -1.0), dbuf(total + 1, -1.0); // +1: no overrun
      host().pack(hin, box, hbuf.data());
      gpu().pack(din, box, dbuf.data());
      EXPECT_TRUE(same_bits(hbuf, dbuf)) << "pack";

      // Unpack other values into the box of every field.
      const std::vector<double> incoming = random_values(total, 999);
      std::vector<std::vector<double>> hout = data;
      std::vector<double*> hptr, dptr;
      std::vector<std::unique_ptr<DeviceArray>> dout;
      for (int f = 0; f < nf; ++f) {
        hptr.push_back(hout[f].data());
        dout.push_back(std::make_unique<DeviceArray>(gpu(), data[f]));
        dptr.push_back(dout.back()->get());
      }
      host().unpack(hptr, box, incoming.data());
      gpu().unpack(dptr, box, incoming.data());
      for (int f = 0; f < nf; ++f)
        EXPECT_TRUE(same_bits(hout[f], dout[f]->host())) << "unpack field " << f;
    }
  }
}

// `v` with every row's padding (points alloc_x .. pitch - 1) set to 0: the CUDA space's wrap
// writes the x gaps between rows whole (saguaro_wrap_x_gaps), their padding as 0.
std::vector<double> padding_zeroed(std::vector<double> v, int alloc_x, int pitch) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (int(i % std::size_t(pitch)) >= alloc_x) v[i] = 0.0;
  return v;
}

// Wrapped ghosts (the exchange of a rank that is its own periodic neighbour): one kernel
// over the ghost shell gives the host's values bit for bit, every axis combination, 35 fields
// (two launches of the field table); also with as few owned points as ghost layers. The CUDA
// space writes the padding of the rows it wraps along x as 0.
TEST_P(DeviceSpace, WrappedGhostsMatchTheHostBitForBit) {
  for (const Alloc alloc : {Alloc{13, 11, 9}, Alloc{13, 6, 7}})
    for (int mask = 1; mask < 8; ++mask) {
      const int pitch = 16; // rows padded as grid::Patch pads them
      const std::size_t n = std::size_t(pitch) * alloc[1] * alloc[2];
      const std::array<bool, 3> wrap{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
      SCOPED_TRACE("alloc " + std::to_string(alloc[1]) + ", wrap mask " + std::to_string(mask));
      std::vector<std::vector<double>> h;
      std::vector<std::unique_ptr<DeviceArray>> d;
      std::vector<double*> hp, dp;
      for (int f = 0; f < 35; ++f) {
        h.push_back(random_values(n, 500 + unsigned(f)));
        d.push_back(std::make_unique<DeviceArray>(gpu(), h.back()));
      }
      for (int f = 0; f < 35; ++f) {
        hp.push_back(h[std::size_t(f)].data());
        dp.push_back(d[std::size_t(f)]->get());
      }
      host().wrap_ghosts(hp, alloc, pitch, 2, wrap);
      gpu().wrap_ghosts(dp, alloc, pitch, 2, wrap);
      for (int f = 0; f < 35; ++f) {
        const std::vector<double> got = d[std::size_t(f)]->host();
        EXPECT_TRUE(same_bits(padding_zeroed(h[std::size_t(f)], alloc[0], pitch),
                              padding_zeroed(got, alloc[0], pitch)));
        if (GetParam() == "cuda" && wrap[0]) {
          EXPECT_TRUE(same_bits(padding_zeroed(got, alloc[0], pitch), got)) << "padding";
        }
      }
    }
}

// The wrap that leaves the ghost layers of an axis whose ghosts arrive by message alone (they
// may be copied in while it runs): inside z's owned range the host's wrap bit for bit, z's
// ghost layers untouched (outside the rows' padding).
TEST_P(DeviceSpace, WrapExceptLeavesArrivingGhostsAlone) {
  if (GetParam() != "cuda") GTEST_SKIP() << "the kokkos space wraps every ghost (its default)";
  const Alloc alloc{13, 11, 9};
  const int pitch = 16, ghost = 2;
  const std::size_t n = std::size_t(pitch) * alloc[1] * alloc[2];
  const std::vector<double> before = random_values(n, 77);
  std::vector<double> h = before;
  DeviceArray d(gpu(), before);
  std::vector<double*> hp{h.data()}, dp{d.get()};
  host().wrap_ghosts(hp, alloc, pitch, ghost, {true, true, false});
  gpu().wrap_ghosts_except(dp, alloc, pitch, ghost, {true, true, false}, {false, false, true});
  const std::vector<double> after = padding_zeroed(d.host(), alloc[0], pitch);
  h = padding_zeroed(h, alloc[0], pitch);
  const std::vector<double> untouched = padding_zeroed(before, alloc[0], pitch);
  const std::size_t plane = std::size_t(pitch) * alloc[1];
  for (int k = 0; k < alloc[2]; ++k) {
    const bool arriving = k < ghost || k >= alloc[2] - ghost;
    const auto from = std::ptrdiff_t(plane * std::size_t(k)), to = from + std::ptrdiff_t(plane);
    const std::vector<double> expected(arriving ? untouched.begin() + from : h.begin() + from,
                                       arriving ? untouched.begin() + to : h.begin() + to);
    EXPECT_TRUE(same_bits(expected, std::vector<double>(after.begin() + from, after.begin() + to)))
        << "plane " << k;
  }
}

// copy_to_peer (a face copied into a neighbour's ghost layers, there through CUDA IPC) between
// two arrays of this process with different layouts: every point of the destination box takes
// its source point's bits, nothing else changes; 35 fields (two launches).
TEST_P(DeviceSpace, CopyToPeerCopiesABoxBetweenLayouts) {
  if (!gpu().peer_arrays()) GTEST_SKIP() << "no peer arrays in this space";
  const Alloc from_alloc{12, 7, 6}, to_alloc{12, 7, 9};
  const int from_pitch = 16, to_pitch = 12;
  ArrayBox src, dst;
  src.alloc = from_alloc;
  src.pitch = from_pitch;
  src.lo = {0, 0, 2};
  src.hi = {12, 7, 4};
  dst.alloc = to_alloc;
  dst.pitch = to_pitch;
  dst.lo = {0, 0, 7};
  dst.hi = {12, 7, 9};
  const std::size_t nf = std::size_t(from_pitch) * 7 * 6, nt = std::size_t(to_pitch) * 7 * 9;
  std::vector<std::vector<double>> from_values, to_values;
  std::vector<std::unique_ptr<DeviceArray>> from, to;
  std::vector<const double*> from_p;
  std::vector<double*> to_p;
  for (int f = 0; f < 35; ++f) {
    from_values.push_back(random_values(nf, 900 + unsigned(f)));
    to_values.push_back(random_values(nt, 1900 + unsigned(f)));
    from.push_back(std::make_unique<DeviceArray>(gpu(), from_values.back()));
    to.push_back(std::make_unique<DeviceArray>(gpu(), to_values.back()));
    from_p.push_back(from.back()->get());
    to_p.push_back(to.back()->get());
  }
  gpu().fork_exchange();
  gpu().copy_to_peer(from_p, src, to_p, dst);
  gpu().join_exchange();
  for (int f = 0; f < 35; ++f) {
    std::vector<double>& expected = to_values[std::size_t(f)];
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 7; ++j)
        for (int i = 0; i < 12; ++i)
          expected[(std::size_t(7 + k) * 7 + std::size_t(j)) * to_pitch + std::size_t(i)] =
              from_values[std::size_t(f)]
                         [(std::size_t(2 + k) * 7 + std::size_t(j)) * from_pitch + std::size_t(i)];
    EXPECT_TRUE(same_bits(expected, to[std::size_t(f)]->host())) << "field " << f;
  }
}

// A device message is written outside the compute queue (a neighbour's pack through CUDA
// IPC, or a CUDA-aware MPI library): allocate_message must not leave its zero fill queued
// behind the compute queue's work, where it would land after their data. Here the outside
// writer is this space's own pack on the exchange queue, with no fork from the compute queue,
// while the compute queue is busy with ~100 ms of copies.
TEST_P(DeviceSpace, ADeviceMessageIsReadyForOutsideWritersWhenAllocated) {
  if (GetParam() != "cuda") GTEST_SKIP() << "only the cuda space has device messages";
  const Alloc alloc = {16, 8, 4};
  ArrayBox box;
  box.alloc = alloc;
  box.hi = alloc;
  const std::vector<double> values = random_values(points(alloc), 5);
  DeviceArray field(gpu(), values);
  const std::size_t big = std::size_t(1) << 26; // 512 MiB per array
  DeviceArray a(gpu(), big), b(gpu(), big);
  for (int i = 0; i < 100; ++i)
    gpu().copy(i % 2 ? a.get() : b.get(), i % 2 ? b.get() : a.get(), big);
  double* message = gpu().allocate_message(values.size(), true);
  gpu().pack_message({field.get()}, box, message, true);
  gpu().wait_exchange();
  gpu().synchronize();
  std::vector<double> back(values.size(), -1.0);
  gpu().to_host(back.data(), message, back.size());
  EXPECT_TRUE(same_bits(values, back)) << "the packed message was overwritten by the zero fill";
  gpu().release_message(message, true);
}

TEST_P(DeviceSpace, ReductionsMatchTheHost) {
  const Alloc alloc = {40, 33, 27};
  std::vector<double> values = random_values(points(alloc), 5);
  DeviceArray d(gpu(), values);
  const std::vector<std::pair<Alloc, Alloc>> boxes = {{{0, 0, 0}, {40, 33, 27}},
                                                      {{3, 3, 3}, {37, 30, 24}},
                                                      {{7, 2, 20}, {8, 3, 21}},
                                                      {{0, 0, 0}, {40, 1, 1}},
                                                      {{5, 5, 5}, {5, 9, 9}} /* empty */};
  for (const auto& [lo, hi] : boxes) {
    ArrayBox box;
    box.alloc = alloc;
    box.lo = lo;
    box.hi = hi;
    SCOPED_TRACE("box of " + std::to_string(box.volume()) + " points");
    const BoxSums h = host().reduce(values.data(), box);
    const BoxSums g = gpu().reduce(d.get(), box);
    EXPECT_EQ(g.count, h.count);
    EXPECT_EQ(g.min, h.min);
    EXPECT_EQ(g.max, h.max);
    EXPECT_EQ(g.max_abs, h.max_abs);
    auto relative = [](long double a, long double b) {
      const long double scale = std::max({1.0L, std::fabs(a), std::fabs(b)});
      return double(std::fabs(a - b) / scale);
    };
    EXPECT_LE(relative(g.sum_abs, h.sum_abs), 1e-14)
        << double(g.sum_abs) << " vs " << double(h.sum_abs);
    EXPECT_LE(relative(g.sum_sq, h.sum_sq), 1e-14)
        << double(g.sum_sq) << " vs " << double(h.sum_sq);
  }
  // A large array: many blocks, grid-stride.
  const Alloc big = {256, 256, 130};
  std::vector<double> many = random_values(points(big), 6);
  DeviceArray dm(gpu(), many);
  ArrayBox box;
  box.alloc = big;
  box.lo = {2, 2, 2};
  box.hi = {254, 254, 128};
  const BoxSums h = host().reduce(many.data(), box), g = gpu().reduce(dm.get(), box);
  EXPECT_EQ(g.count, h.count);
  EXPECT_EQ(g.min, h.min);
  EXPECT_EQ(g.max, h.max);
  EXPECT_NEAR(double(g.sum_abs / h.sum_abs), 1.0, 1e-14);
  EXPECT_NEAR(double(g.sum_sq / h.sum_sq), 1.0, 1e-14);
}

// Patches with every combination of outer faces that matters: all six, none, one lower face,
// the upper faces only, and a patch whose grid contains the origin (the radiative condition's
// singular point); ghost widths 1 to 3.
std::vector<OuterFaces> boundary_cases() {
  std::vector<OuterFaces> cases;
  for (int ghost : {1, 2, 3}) {
    for (int pattern = 0; pattern < 5; ++pattern) {
      OuterFaces f{};
      f.alloc[0] = 10 + ghost;
      f.alloc[1] = 9 + 2 * ghost;
      f.alloc[2] = 8 + ghost;
      f.ghost = ghost;
      for (int a = 0; a < 3; ++a) {
        f.outer[a][0] = pattern == 0 || (pattern == 2 && a == 1) || (pattern == 4);
        f.outer[a][1] = pattern == 0 || pattern == 3 || (pattern == 4 && a != 2);
        f.spacing[a] = 0.1 * (a + 1) + 0.013;
        f.origin[a] = -0.5 - 0.2 * a;
        f.index_offset[a] = pattern == 4 ? 0 : 3 * a - 2;
      }
      if (pattern == 4) // the origin on a grid point: index (5, 2, 5) along x, y, z
        for (int a = 0; a < 3; ++a) f.origin[a] = -f.spacing[a] * (a == 1 ? 2 : 5);
      cases.push_back(f);
    }
  }
  return cases;
}

TEST_P(DeviceSpace, BoundaryConditionsMatchTheHostBitForBit) {
  for (const OuterFaces& f : boundary_cases()) {
    SCOPED_TRACE("ghost " + std::to_string(f.ghost) + ", outer faces " +
                 std::to_string(f.outer[0][0]) + std::to_string(f.outer[0][1]) +
                 std::to_string(f.outer[1][0]) + std::to_string(f.outer[1][1]) +
                 std::to_string(f.outer[2][0]) + std::to_string(f.outer[2][1]));
    const Alloc alloc = {f.alloc[0], f.alloc[1], f.alloc[2]};
    const std::size_t n = points(alloc);
    const std::vector<double> u = random_values(n, 11), rhs = random_values(n, 12);
    {
      std::vector<double> h = u;
      host().apply_flat(f, h.data());
      DeviceArray d(gpu(), u);
      gpu().apply_flat(f, d.get());
      EXPECT_TRUE(same_bits(h, d.host())) << "flat";
    }
    {
      std::vector<double> h = rhs;
      host().apply_static_rhs(f, h.data());
      DeviceArray d(gpu(), rhs);
      gpu().apply_static_rhs(f, d.get());
      EXPECT_TRUE(same_bits(h, d.host())) << "static";
    }
    {
      std::vector<double> h = rhs;
      host().apply_radiative_rhs(f, u.data(), h.data(), 0.25, 1.5);
      DeviceArray du(gpu(), u), d(gpu(), rhs);
      gpu().apply_radiative_rhs(f, du.get(), d.get(), 0.25, 1.5);
      EXPECT_TRUE(same_bits(h, d.host())) << "radiative";
      EXPECT_TRUE(same_bits(u, du.host())) << "u is only read";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Spaces, DeviceSpace, ::testing::Values("cuda", "kokkos"),
                         [](const auto& info) { return info.param; });

} // namespace
} // namespace saguaro::test
