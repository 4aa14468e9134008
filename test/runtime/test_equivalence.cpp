// The "cpu" backend against the "interpreter" backend (the oracle): every calculation of every
// example thorn, at fd_order 4 and (where derivatives have orders) 8, with default and with
// perturbed parameters, on a patch that is a proper sub-box of its allocation. Results must
// agree to 1e-13 relative at every point each stage writes, and nothing else may change.
#include <chrono>
#include <ostream>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calc/lower.hpp"
#include "mapper/fission.hpp"
#include "runtime/backends.hpp"
#include "runtime_support.hpp"
// unit/support.hpp names the saguaro executable, which this suite does not build or run.
#ifndef SAGUARO_EXE
#define SAGUARO_EXE "saguaro"
#endif
#include "unit/support.hpp"

namespace saguaro::test {
namespace {

::testing::Environment* const kSuiteCache = ::testing::AddGlobalTestEnvironment(new SuiteCache);

constexpr double kTolerance = 1e-13;

struct Example {
  std::string file;
  int fd_order;
};

void PrintTo(const Example& e, std::ostream* os) {
  *os << e.file << " at fd_order " << e.fd_order;
}

std::string example_name(const ::testing::TestParamInfo<Example>& info) {
  std::string name = info.param.file;
  name = name.substr(name.rfind('/') + 1);
  name = name.substr(0, name.find('.'));
  return name + "_order" + std::to_string(info.param.fd_order);
}

class CpuMatchesInterpreter : public ::testing::TestWithParam<Example> {};

// Runs both backends on every calculation of `program` and checks that they agree; the cpu
// backend's kernels under `mappings` (one per calculation; none: the default).
void check_program(const calc::Program& program, const std::vector<calc::Mapping>& mappings = {}) {
  auto interpreter = runtime::make_backend("interpreter", {});
  runtime::BackendOptions options = suite_options();
  options.verbose = true;
  auto cpu = runtime::make_backend("cpu", options);
  auto reference = interpreter->compile(program);
  auto start = std::chrono::steady_clock::now();
  auto compiled = cpu->compile(program, mappings);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ info ] cpu compile of %s (fd_order %d, %zu calculations): %.2f s\n",
              program.thorn.c_str(), program.fd_order, program.calculations.size(), seconds);
  ASSERT_EQ(reference.size(), program.calculations.size());
  ASSERT_EQ(compiled.size(), program.calculations.size());

  for (std::size_t ci = 0; ci < program.calculations.size(); ++ci) {
    const calc::Calculation& c = program.calculations[ci];
    runtime::Margin margin = runtime::required_margin(c);
    for (bool perturbed : {false, true}) {
      SCOPED_TRACE(c.name + (perturbed ? " (perturbed parameters)" : " (default parameters)"));
      Patch initial = make_patch(c, margin);
      initial.args.parameters = parameter_values(program, perturbed);
      Patch a = clone(initial), b = clone(initial);
      reference[ci]->run(a.args);
      compiled[ci]->run(b.args);
      Agreement r = compare(c, initial, a, b, kTolerance);
      EXPECT_GT(r.written, 0);
      EXPECT_EQ(r.mismatches, 0) << r.first_problem;
      EXPECT_EQ(r.not_written, 0) << r.first_problem;
      EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
      std::printf("[ info ] %-22s %-9s margin %d: %ld points, max relative difference %.3g\n",
                  c.name.c_str(), perturbed ? "perturbed" : "defaults", margin.max(), r.written,
                  r.max_relative);
    }
  }
}

TEST_P(CpuMatchesInterpreter, EveryCalculation) {
  check_program(lower_file(GetParam().file, GetParam().fd_order));
}

INSTANTIATE_TEST_SUITE_P(
    Examples, CpuMatchesInterpreter,
    ::testing::Values(Example{"par/wave.edl", 4}, Example{"par/wave.edl", 8},
                      Example{"par/maxwell.edl", 4}, Example{"par/maxwell.edl", 8},
                      Example{"par/advect.edl", 4}, Example{"par/microbench.edl", 4},
                      Example{"par/bssn/bssn.edl", 4}, Example{"par/bssn/bssn.edl", 8}),
    example_name);

// BSSN under the register-fit fission (mapper/fission.hpp): the right-hand side and the
// constraints split into kernels with temporaries, the same numbers.
TEST(CpuMatchesInterpreterUnderFission, Bssn) {
  const calc::Program program = lower_file("par/bssn/bssn.edl", 4);
  std::vector<calc::Mapping> mappings;
  std::size_t kernels = 0;
  for (const calc::Calculation& c : program.calculations) {
    mappings.push_back(mapper::register_fit_mapping(c, mapper::live_value_budget(255)));
    kernels += mappings.back().kernels.size();
  }
  ASSERT_GT(kernels, program.calculations.size() + 4);
  check_program(program, mappings);
}

// The same with the values several kernels compute stored once instead (FissionBudget::share).
TEST(CpuMatchesInterpreterUnderFission, BssnWithSharedValuesStored) {
  const calc::Program program = lower_file("par/bssn/bssn.edl", 4);
  std::vector<calc::Mapping> mappings;
  for (const calc::Calculation& c : program.calculations)
    mappings.push_back(mapper::register_fit_mapping(c, 80, 140, 200));
  check_program(program, mappings);
}

// Every function and operator form the DAG has, on values that include zeros, negatives and
// ties (sign, abs, min, max, %), large and negative integer powers (repeated squaring),
// non-integer powers, coordinates at offsets, and a two-stage calculation with an
// intermediate (the derivative of an expression).
TEST(CpuMatchesInterpreterOn, EveryFunction) {
  calc::Program program = lower_text(R"(
begin thorn Funcs
  begin parameters
    p : real "p", default: 3
    q : real "q", default: 0.5
  end parameters
  begin variables
    a b c r1 r2 r3 r4 r5 r6 r7 r8 r9 r10
  end variables
  begin derivatives
    Dsp u_i = u_(i+1)
    Dsm u_i = u_(i-1)
  end derivatives
  begin calculation values
    r1 = p*x + q*t**2 + dx*y - 3*sin(z) + dy*dz + cos(x y) + tan(0.3 z)
    r2 = a / (b + p) + sqrt(a) + min(a, b) * max(a, b) + abs(b) + sign(b - a)
    r3 = pow(a, p) + a**0.5 + a**-2 + atan2(a, b) + a % p + exp(q) * log(a)
    r4 = (x + 2)**2.5 + cosh(q) - tanh(b) + E**q + sinh(b) + asin(b/2) + acos(b/3) + atan(a)
    r5 = Dsp_1 x + 10 Dsp_2 x + 100 Dsm_3 z + 1000 Dsp_2 y
    r6 = a**7 - a**-3 + a**20 / (1 + b**2) + pow(a, q) + p**q + (p + q)**-2 * a
    r7 = sign(c) + 2 abs(c) + 3 min(c, 0) + 5 max(c, 0) + min(c, c) + b % 0.3 + c % 2
    r8 = -a**2 / (2*b + 3) + (1/2) (a + b) - 1/(dx dy dz) + t / dx
    r9 = D_1 (a b) + D_2 (a**2) + D_3 (sin(a) c)
    r10 = D_11 a + D_23 b + (a b c)**3 / (p q)
  end calculation
end thorn
)");
  ASSERT_EQ(program.calculations.size(), 1u);
  const calc::Calculation& c = program.calculations[0];
  ASSERT_GE(c.stages.size(), 2u) << "the derivative of an expression makes an intermediate";
  // c: small integers (exact zeros, ties); a: positive; b: mixed signs.
  runtime::Margin margin = runtime::required_margin(c);
  Patch initial = make_patch(c, margin);
  const int ia = c.find_grid_function("a"), ic = c.find_grid_function("c");
  for (std::size_t n = 0; n < initial.points(); ++n) {
    initial.data[ia][n] = 1.0 + 0.5 * initial.data[ia][n];
    initial.data[ic][n] = double(long(n % 5) - 2);
  }
  auto interpreter = runtime::make_backend("interpreter", {});
  auto cpu = runtime::make_backend("cpu", suite_options());
  auto reference = interpreter->compile(program);
  auto compiled = cpu->compile(program);
  for (bool perturbed : {false, true}) {
    initial.args.parameters = parameter_values(program, perturbed);
    Patch a = clone(initial), b = clone(initial);
    reference[0]->run(a.args);
    compiled[0]->run(b.args);
    Agreement r = compare(c, initial, a, b, kTolerance);
    EXPECT_GT(r.written, 0);
    EXPECT_EQ(r.mismatches, 0) << r.first_problem;
    EXPECT_EQ(r.not_written, 0) << r.first_problem;
    EXPECT_EQ(r.outside_changed, 0) << r.first_problem;
    std::printf("[ info ] functions %s: max relative difference %.3g\n",
                perturbed ? "perturbed" : "defaults", r.max_relative);
  }
}

} // namespace
} // namespace saguaro::test
