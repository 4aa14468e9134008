// The grid through an ArraySpace: GridFunctions' storage and host mirrors, the ghost
// exchange, the boundaries and the norms with a space that calls itself a device (host memory
// underneath, so the test can run anywhere) give what the host space gives.
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

using namespace saguaro::grid;
using namespace saguaro::grid::test;
using saguaro::runtime::ArrayBox;
using saguaro::runtime::ArraySpace;
using saguaro::runtime::BoxSums;
using saguaro::runtime::OuterFaces;

namespace {

// The host space's operations behind on_device() = true, counting the calls and keeping
// track of the arrays it handed out.
class FakeDeviceSpace final : public ArraySpace {
public:
  ~FakeDeviceSpace() override { EXPECT_TRUE(live.empty()) << live.size() << " arrays leaked"; }
  const char* name() const override { return "fake-device"; }
  bool on_device() const override { return true; }
  double* allocate(std::size_t n) override {
    ++calls["allocate"];
    double* p = host().allocate(n);
    live[p] = n;
    return p;
  }
  void release(double* array) override {
    if (array == nullptr) return;
    ++calls["release"];
    EXPECT_EQ(live.erase(array), 1u) << "released an array this space did not allocate";
    host().release(array);
  }
  void to_host(double* h, const double* a, std::size_t n) override {
    ++calls["to_host"];
    owned(a);
    host().to_host(h, a, n);
  }
  void from_host(double* a, const double* h, std::size_t n) override {
    ++calls["from_host"];
    owned(a);
    host().from_host(a, h, n);
  }
  void synchronize() override { ++calls["synchronize"]; }
  void linear_combination(double* y, std::span<const Term> terms, std::size_t n) override {
    host().linear_combination(y, terms, n);
  }
  void pack(const std::vector<const double*>& fields, const ArrayBox& box,
            double* buffer) override {
    ++calls["pack"];
    for (const double* f : fields) owned(f);
    host().pack(fields, box, buffer);
  }
  void unpack(const std::vector<double*>& fields, const ArrayBox& box,
              const double* buffer) override {
    ++calls["unpack"];
    for (const double* f : fields) owned(f);
    host().unpack(fields, box, buffer);
  }
  void wrap_ghosts(const std::vector<double*>& fields, const std::array<int, 3>& alloc, int pitch,
                   int ghost, const std::array<bool, 3>& wrap) override {
    ++calls["wrap_ghosts"];
    for (const double* f : fields) owned(f);
    host().wrap_ghosts(fields, alloc, pitch, ghost, wrap);
  }
  BoxSums reduce(const double* field, const ArrayBox& box) override {
    ++calls["reduce"];
    owned(field);
    return host().reduce(field, box);
  }
  void apply_flat(const OuterFaces& faces, double* field) override {
    ++calls["flat"];
    owned(field);
    host().apply_flat(faces, field);
  }
  void apply_static_rhs(const OuterFaces& faces, double* rhs) override {
    ++calls["static"];
    owned(rhs);
    host().apply_static_rhs(faces, rhs);
  }
  void apply_radiative_rhs(const OuterFaces& faces, const double* u, double* rhs, double u0,
                           double v0) override {
    ++calls["radiative"];
    owned(u);
    owned(rhs);
    host().apply_radiative_rhs(faces, u, rhs, u0, v0);
  }

  std::map<std::string, int> calls;
  std::map<const double*, std::size_t> live; // allocated arrays and their lengths

private:
  static ArraySpace& host() { return saguaro::runtime::host_space(); }
  // p lies in one of this space's arrays (grid functions start row_offset() points in).
  void owned(const double* p) const {
    auto it = live.upper_bound(p);
    const bool inside = it != live.begin() && (--it, p >= it->first && p < it->first + it->second);
    EXPECT_TRUE(inside) << "an array of another space";
  }
};

} // namespace

TEST(GridFunctionsSpace, HostSpaceHostIsData) {
  Decomposition d(make_spec({9, 7, 5}, {false, false, false}, 2), MPI_COMM_WORLD);
  GridFunctions gf(d.patch());
  EXPECT_EQ(&gf.space(), &saguaro::runtime::host_space());
  const int u = gf.add("u");
  EXPECT_EQ(gf.host(u), gf.data(u));
  EXPECT_EQ(gf.host_mirror(u), gf.data(u));
  gf.host_mirror(u)[5] = 2.5;
  gf.upload(u); // nothing to do
  EXPECT_EQ(gf.data(u)[5], 2.5);
}

TEST(GridFunctionsSpace, DeviceSpaceMirrorsAndReleases) {
  FakeDeviceSpace space;
  {
    Decomposition d(make_spec({9, 7, 5}, {false, true, false}, 2), MPI_COMM_WORLD);
    const Patch& p = d.patch();
    GridFunctions gf(p, space);
    EXPECT_EQ(&gf.space(), &space);
    const int u = gf.add("u"), v = gf.add("v");
    EXPECT_EQ(gf.add("u"), u);
    EXPECT_EQ(space.calls["allocate"], 2);

    // host(): a copy, zero like the array, not the array itself.
    const double* hu = gf.host(u);
    EXPECT_NE(hu, gf.data(u));
    EXPECT_TRUE(std::all_of(hu, hu + p.points(), [](double x) { return x == 0.0; }));
    EXPECT_EQ(space.calls["to_host"], 1);

    // host_mirror() + upload(): the values reach the array; host() reads them back.
    double* m = gf.host_mirror(v);
    EXPECT_EQ(space.calls["to_host"], 1); // no copy for a mirror to write into
    for (std::size_t i = 0; i < p.points(); ++i) m[i] = double(i);
    EXPECT_EQ(gf.data(v)[7], 0.0); // not yet uploaded (the fake's memory is the host's)
    gf.upload(v);
    EXPECT_EQ(space.calls["from_host"], 1);
    EXPECT_EQ(gf.data(v)[7], 7.0);
    m[7] = -1.0; // the mirror is the host's: host() overwrites it from the array
    const double* hv = gf.host(v);
    EXPECT_EQ(hv, m);
    EXPECT_EQ(hv[7], 7.0);
  }
  EXPECT_EQ(space.calls["release"], 2);
  EXPECT_TRUE(space.live.empty());
}

// The exchange, the boundaries and the norms in the fake device space equal the host space's
// bit for bit.
TEST(GridFunctionsSpace, SyncBoundariesNormsThroughTheSpace) {
  for (const auto& periodic : all_periodicities()) {
    SCOPED_TRACE(testing::Message() << "periodic " << periodic[0] << periodic[1] << periodic[2]);
    const GridSpec spec = make_spec({10, 9, 7}, periodic, 2);
    FakeDeviceSpace space; // outlives d, which keeps message buffers from it
    Decomposition d(spec, MPI_COMM_WORLD);
    const Patch& p = d.patch();
    GridFunctions host_fields(p), device_fields(p, space);
    for (GridFunctions* gf : {&host_fields, &device_fields}) {
      const int u = gf->add("u"), r = gf->add("rhs");
      double* mu = gf->host_mirror(u);
      double* mr = gf->host_mirror(r);
      for_box(p.allocated(), [&](int i, int j, int k) {
        const bool own = contains(p.owned, i, j, k);
        mu[p.linear(i, j, k)] = own ? value(0, i, j, k) * 1e-6 : kNaN;
        mr[p.linear(i, j, k)] = 3.0;
      });
      gf->upload(u);
      gf->upload(r);
      d.sync({gf->data(u), gf->data(r)}, gf->space());
      apply_radiative_rhs(p, gf->data(u), gf->data(r), 0.5, 1.25, gf->space());
      apply_flat(p, gf->data(u), gf->space());
    }
    GridFunctions statics(p, space);
    const int s = statics.add("s");
    std::fill(statics.host_mirror(s), statics.host_mirror(s) + p.points(), 7.0);
    statics.upload(s);
    apply_static_rhs(p, statics.data(s), space);

    long long bad = 0;
    for (int f = 0; f < 2; ++f) {
      const double* a = host_fields.host(f);
      const double* b = device_fields.host(f);
      for (std::size_t i = 0; i < p.points(); ++i)
        if (!same(a[i], b[i])) ++bad;
    }
    const double* st = statics.host(s);
    for_box(p.allocated(), [&](int i, int j, int k) {
      if (st[p.linear(i, j, k)] != (in_any_outer_layer(p, i, j, k) ? 0.0 : 7.0)) ++bad;
    });
    EXPECT_EQ(global_sum(bad), 0);

    for (int f = 0; f < 2; ++f) {
      const Norms a = reduce_norms(d, host_fields.data(f));
      const Norms b = reduce_norms(d, device_fields.data(f), space);
      EXPECT_TRUE(same(a.min, b.min));
      EXPECT_TRUE(same(a.max, b.max));
      EXPECT_TRUE(same(a.l1, b.l1));
      EXPECT_TRUE(same(a.l2, b.l2));
      EXPECT_TRUE(same(a.linf, b.linf));
      EXPECT_EQ(a.count, b.count);
    }
    EXPECT_EQ(space.calls["reduce"], 2);
    EXPECT_EQ(space.calls["radiative"], 1);
    EXPECT_EQ(space.calls["flat"], 1);
    EXPECT_EQ(space.calls["static"], 1);
    // Every exchanging axis goes through the space, none elsewhere: packs (and unpacks) for
    // other ranks, wrapped ghosts where a rank is its own periodic neighbour, never host memory.
    EXPECT_EQ(space.calls["pack"] + space.calls["wrap_ghosts"] > 0,
              world_size() > 1 || periodic[0] || periodic[1] || periodic[2]);
    if (world_size() == 1) {
      EXPECT_EQ(space.calls["pack"], 0);
    }
  }
}
