// Helpers of the runtime tests: one compile cache for the whole test process, a patch of
// arrays filled with smooth data plus noise, and the comparison of two backends' results.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "calc/calculation.hpp"
#include "runtime/array_space.hpp"
#include "runtime/backends.hpp"
#include "runtime/kernel.hpp"

namespace saguaro::test {

// <temp>/saguaro-test-cache-<pid>, made on first use, removed when the test process ends.
class SuiteCache : public ::testing::Environment {
public:
  static std::string dir() {
    static std::string path = [] {
      std::filesystem::path p = std::filesystem::temp_directory_path() /
                                ("saguaro-test-cache-" + std::to_string(getpid()));
      std::filesystem::create_directories(p);
      return p.string();
    }();
    made() = true;
    return path;
  }
  void TearDown() override {
    if (!made()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir(), ec);
  }

private:
  static bool& made() {
    static bool value = false;
    return value;
  }
};

inline runtime::BackendOptions suite_options() {
  runtime::BackendOptions options;
  options.cache_dir = SuiteCache::dir();
  return options;
}

// Parameter values: the defaults, or (`perturbed`) nonzero values different from them, in
// range, so that terms a default switches off are exercised too.
inline std::vector<double> parameter_values(const calc::Program& p, bool perturbed) {
  std::vector<double> values;
  for (const calc::Parameter& par : p.parameters) {
    double v = par.default_value;
    if (perturbed) {
      switch (par.type) {
      case edl::ParameterType::Real: v = v != 0.0 ? 1.1 * v + 0.05 : 0.3; break;
      case edl::ParameterType::Int: v = v + 1; break;
      case edl::ParameterType::Boolean: v = 1.0 - v; break;
      default: break;
      }
      if (par.max && v > *par.max) v = par.min ? 0.5 * (*par.min + *par.max) : *par.max;
      if (par.min && v < *par.min) v = *par.min;
    }
    values.push_back(v);
  }
  return values;
}

// A patch: `interior` points computed, at lo = margin.lo + 1 (+1 more on odd axes), with
// 2 more allocated points than the margin needs above.
struct Patch {
  runtime::KernelArgs args;
  std::vector<std::vector<double>> data; // per grid function
  std::size_t points() const { return std::size_t(args.alloc[0]) * args.alloc[1] * args.alloc[2]; }
  std::size_t linear(int i, int j, int k) const {
    return (std::size_t(k) * args.alloc[1] + j) * args.alloc[0] + i;
  }
};

constexpr double kSentinel = -7.25e+77;

// Deterministic noise in [-1, 1].
inline double noise(std::uint64_t a, std::uint64_t b) {
  std::uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return double(h >> 11) / double(1ull << 52) - 1.0;
}

// Smooth, nonconstant values per grid function plus a little noise; near-identity metric,
// lapse near 1 and small phi for BSSN's names. Grid functions stored (and never loaded) by
// the calculation start as kSentinel.
inline Patch make_patch(const calc::Calculation& c, const runtime::Margin& m,
                        std::array<int, 3> interior = {12, 10, 9}) {
  Patch p;
  for (int a = 0; a < 3; ++a) {
    p.args.lo[a] = m.lo[a] + 1 + (a % 2);
    p.args.hi[a] = p.args.lo[a] + interior[a];
    p.args.alloc[a] = p.args.hi[a] + m.hi[a] + 2;
  }
  p.args.origin = {-1.3, 0.4, 2.1};
  p.args.index_offset = {-3, 7, 2}; // as on a rank whose box starts away from the origin
  p.args.spacing = {0.31, 0.27, 0.23};
  p.args.time = 0.7;
  std::set<int> loaded, stored;
  for (const auto& in : c.inputs) loaded.insert(in.grid_function);
  for (const auto& st : c.stages)
    for (const auto& s : st.stores) stored.insert(s.grid_function);
  p.data.assign(c.grid_functions.size(), std::vector<double>(p.points(), kSentinel));
  for (std::size_t g = 0; g < c.grid_functions.size(); ++g) {
    if (stored.count(int(g)) && !loaded.count(int(g))) continue;
    const std::string& name = c.grid_functions[g].name;
    double scale = 0.5, base = 0.0;
    if (name == "gt11" || name == "gt22" || name == "gt33" || name == "alpha") {
      scale = 0.1;
      base = 1.0;
    } else if (name == "phi" && c.find_grid_function("gt11") >= 0) {
      scale = 0.05;
    } else if (name == "gt12" || name == "gt13" || name == "gt23") {
      scale = 0.05;
    }
    for (int k = 0; k < p.args.alloc[2]; ++k)
      for (int j = 0; j < p.args.alloc[1]; ++j)
        for (int i = 0; i < p.args.alloc[0]; ++i) {
          double X = p.args.origin[0] + (i + p.args.index_offset[0]) * p.args.spacing[0];
          double Y = p.args.origin[1] + (j + p.args.index_offset[1]) * p.args.spacing[1];
          double Z = p.args.origin[2] + (k + p.args.index_offset[2]) * p.args.spacing[2];
          double s =
              0.6 * std::sin(0.9 * X + 0.37 * double(g)) * std::cos(0.7 * Y - 0.23 * double(g)) +
              0.3 * std::cos(1.1 * Z + 0.11 * double(g)) + 0.1 * X * Y - 0.05 * Z +
              1e-3 * noise(g, p.linear(i, j, k));
          p.data[g][p.linear(i, j, k)] = base + scale * s;
        }
  }
  for (auto& d : p.data) p.args.fields.push_back(d.data());
  return p;
}

// A copy whose fields point to its own arrays.
inline Patch clone(const Patch& p) {
  Patch q;
  q.args = p.args;
  q.data = p.data;
  q.args.fields.clear();
  for (auto& d : q.data) q.args.fields.push_back(d.data());
  return q;
}

// Where each grid function is written: the union of the regions of the stages that store it.
inline std::vector<std::vector<char>> written_masks(const calc::Calculation& c, const Patch& p) {
  std::vector<std::vector<char>> mask(c.grid_functions.size(), std::vector<char>(p.points(), 0));
  for (const calc::Stage& st : c.stages)
    for (const calc::Store& s : st.stores)
      for (int k = p.args.lo[2] - st.extent_lo[2]; k < p.args.hi[2] + st.extent_hi[2]; ++k)
        for (int j = p.args.lo[1] - st.extent_lo[1]; j < p.args.hi[1] + st.extent_hi[1]; ++j)
          for (int i = p.args.lo[0] - st.extent_lo[0]; i < p.args.hi[0] + st.extent_hi[0]; ++i)
            mask[s.grid_function][p.linear(i, j, k)] = 1;
  return mask;
}

struct Agreement {
  double max_relative = 0.0; // max |a-b| / max(1, |a|, |b|) over written points
  long written = 0;          // points compared
  long mismatches = 0;       // beyond the tolerance
  long outside_changed = 0;  // points outside the written region that changed
  long not_written = 0;      // points inside it still holding the sentinel
  std::string first_problem;
};

// Compares the results of two runs that started from `initial`.
inline Agreement compare(const calc::Calculation& c, const Patch& initial, const Patch& a,
                         const Patch& b, double tolerance) {
  Agreement r;
  auto masks = written_masks(c, initial);
  for (std::size_t g = 0; g < c.grid_functions.size(); ++g)
    for (int k = 0; k < initial.args.alloc[2]; ++k)
      for (int j = 0; j < initial.args.alloc[1]; ++j)
        for (int i = 0; i < initial.args.alloc[0]; ++i) {
          std::size_t at = initial.linear(i, j, k);
          double x = a.data[g][at], y = b.data[g][at], x0 = initial.data[g][at];
          auto note = [&](const std::string& what) {
            if (!r.first_problem.empty()) return;
            std::ostringstream s;
            s.precision(17);
            s << what << " in " << c.grid_functions[g].name << " at (" << i << "," << j << "," << k
              << "): " << x << " vs " << y << " (initially " << x0 << ")";
            r.first_problem = s.str();
          };
          if (masks[g][at]) {
            ++r.written;
            double rel = std::isnan(x) && std::isnan(y) // the same operation's NaN
                             ? 0.0
                             : std::fabs(x - y) / std::max({1.0, std::fabs(x), std::fabs(y)});
            if (!(rel <= tolerance)) {
              ++r.mismatches;
              note("mismatch");
            }
            if (std::isfinite(rel)) r.max_relative = std::max(r.max_relative, rel);
            if (x == kSentinel || y == kSentinel) {
              ++r.not_written;
              note("not written");
            }
          } else if (!(x == x0 && y == x0)) {
            ++r.outside_changed;
            note("changed outside the region");
          }
        }
  return r;
}

// An array of a backend's space (on a GPU: device memory), released with the object.
class DeviceArray {
public:
  DeviceArray(runtime::ArraySpace& space, const std::vector<double>& values)
      : space_(space), n_(values.size()), p_(space.allocate(n_)) {
    space_.from_host(p_, values.data(), n_);
  }
  explicit DeviceArray(runtime::ArraySpace& space, std::size_t n)
      : space_(space), n_(n), p_(space.allocate(n)) {}
  ~DeviceArray() { space_.release(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  double* get() const { return p_; }
  std::vector<double> host() const {
    std::vector<double> v(n_);
    space_.to_host(v.data(), p_, n_);
    return v;
  }

private:
  runtime::ArraySpace& space_;
  std::size_t n_;
  double* p_;
};

// The interpreter on host arrays against `backend`'s compiled calculations on arrays of its
// space, every calculation of `program` under `mappings` (empty: the defaults), with perturbed
// parameters: equal to `tolerance` relative where written, unchanged elsewhere.
// Runs `calculation` over copies of `patch`'s arrays in `space` (the patch's own arguments
// otherwise), then copies them back into the patch.
inline void run_on_device(const runtime::CompiledCalculation& calculation, Patch& patch,
                          runtime::ArraySpace& space) {
  std::vector<std::unique_ptr<DeviceArray>> dev;
  runtime::KernelArgs args = patch.args;
  for (std::size_t g = 0; g < patch.data.size(); ++g) {
    dev.push_back(std::make_unique<DeviceArray>(space, patch.data[g]));
    args.fields[g] = dev.back()->get();
  }
  calculation.run(args);
  for (std::size_t g = 0; g < patch.data.size(); ++g) patch.data[g] = dev[g]->host();
}

inline void check_backend_against_interpreter(const calc::Program& program,
                                              const std::vector<calc::Mapping>& mappings,
                                              runtime::Backend& backend, double tolerance) {
  auto interpreter = runtime::make_backend("interpreter", {});
  auto reference = interpreter->compile(program);
  auto compiled = backend.compile(program, mappings);
  ASSERT_EQ(compiled.size(), program.calculations.size());
  std::printf("[ info ] %s: %s\n", program.thorn.c_str(), backend.compile_summary().c_str());
  runtime::ArraySpace& space = backend.space();
  for (std::size_t ci = 0; ci < program.calculations.size(); ++ci) {
    const calc::Calculation& c = program.calculations[ci];
    SCOPED_TRACE(c.name);
    Patch initial = make_patch(c, runtime::required_margin(c), {19, 14, 11});
    initial.args.parameters = parameter_values(program, true);
    Patch a = clone(initial), b = clone(initial);
    reference[ci]->run(a.args);

    run_on_device(*compiled[ci], b, space);
    Agreement r = compare(c, initial, a, b, tolerance);
    EXPECT_GT(r.written, 0);
    EXPECT_EQ(r.mismatches, 0) << r.first_problem;
    EXPECT_EQ(r.not_written, 0) << r.first_problem;
    EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
    std::printf("[ info ] %-22s %ld points, max relative difference to the interpreter %.3g\n",
                c.name.c_str(), r.written, r.max_relative);
  }
}

} // namespace saguaro::test
