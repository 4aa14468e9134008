// Kranc's script language as Kranc accepts it (docs/edl.md, "Kranc scripts"): Kranc's own
// example scripts (test/edl/kranc/examples, origin in the README there) and this project's
// scripts of every construct (test/edl/kranc/*.kranc): each lowers through `saguaro inspect`,
// and what each describes is checked: evolutions against their exact solutions, stencils
// against exact derivatives of polynomials, names and declarations against the ET's.
#include "support.hpp"

#include "calc/interpreter.hpp"
#include "edl/inherited.hpp"
#include "support/diagnostics.hpp"
#include "support/text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>

namespace saguaro {
namespace {

namespace fs = std::filesystem;
using namespace saguaro::test;

std::string kranc_dir() {
  return source_dir() + "/test/edl/kranc";
}

std::vector<fs::path> scripts(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".kranc") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

int count_calculations(const std::string& text) {
  int n = 0;
  for (std::size_t at = text.find("begin calculation"); at != std::string::npos;
       at = text.find("begin calculation", at + 1))
    ++n;
  return n;
}

// `saguaro inspect FILE` exits 0 and prints every calculation of the file.
void expect_lowers(const fs::path& file) {
  CliRun run = run_saguaro("inspect \"" + file.string() + "\"");
  EXPECT_EQ(run.status, 0) << file << "\n" << run.err;
  int printed = 0;
  for (std::size_t at = run.out.find("\ncalculation "); at != std::string::npos;
       at = run.out.find("\ncalculation ", at + 1))
    ++printed;
  EXPECT_EQ(printed, count_calculations(read_file(file))) << file << "\n" << run.out;
  EXPECT_GT(printed, 0) << file;
}

calc::Program lower_kranc(const std::string& name, int fd_order = 4) {
  return lower_file("test/edl/kranc/" + name, fd_order);
}

// ---- Kranc's examples -------------------------------------------------------------------

TEST(KrancExamples, EveryExampleLowers) {
  // Funwave.kranc declares none of the names it reads: its grid functions come from the fixture
  // Funwave/interface.ccl, its parameters from the fixture Funwave/param.ccl (README beside).
  const auto files = scripts(kranc_dir() + "/examples");
  ASSERT_EQ(files.size(), 5u);
  for (const fs::path& file : files) expect_lowers(file);
}

TEST(KrancExamples, FunwaveReadsItsInheritedThornsParameters) {
  const calc::Program p = lower_kranc("examples/Funwave.kranc");
  ASSERT_EQ(p.calculations.size(), 1u);
  EXPECT_EQ(p.calculations[0].name, "sourceterms");
  EXPECT_EQ(output_names(p.calculations[0]), (std::vector<std::string>{"sourcex"}));
  // The restricted parameters of Funwave/param.ccl with its defaults, in its order; its
  // private `mindepth` is not the script's to see.
  std::vector<std::string> names;
  for (const calc::Parameter& q : p.parameters) {
    names.push_back(q.name);
    EXPECT_EQ(q.type, edl::ParameterType::Real) << q.name;
    EXPECT_EQ(q.inherited_from, "Funwave") << q.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"gamma1", "gamma2", "mindepthfrc", "cd"}));
  EXPECT_EQ(p.parameters[0].default_value, 1.0);
  EXPECT_EQ(p.parameters[0].description,
            "switch of the dispersive terms (0: nonlinear shallow water)");
  EXPECT_EQ(p.parameters[2].default_value, 0.1);
  EXPECT_EQ(p.parameters[3].default_value, 0.0);
  // The calculation reads them as parameters, not grid functions.
  const calc::Calculation& c = p.calculations[0];
  for (const auto& in : c.inputs) {
    const std::string& input = c.grid_functions[in.grid_function].name;
    EXPECT_EQ(std::count(names.begin(), names.end(), input), 0) << input;
  }
  EXPECT_EQ(c.inputs.size(), 12u);
}

TEST(KrancExamples, EmScriptWritesComponentsByName) {
  const calc::Program p = lower_kranc("examples/EMScript.kranc");
  EXPECT_EQ(p.evolved, (std::vector<std::string>{"El1", "El2", "El3", "B1", "B2", "B3"}));
  EXPECT_EQ(output_names(calc_named(p, "EM_initial")),
            (std::vector<std::string>{"El1", "El2", "El3", "B1", "B2", "B3"}));
}

TEST(KrancExamples, CaKernelScriptsHaveBoundaryRightHandSides) {
  for (const char* name :
       {"examples/SimpleWaveScriptCaKernel.kranc", "examples/WaveCaKernelScript.kranc"}) {
    const calc::Program p = lower_kranc(name);
    EXPECT_EQ(p.evolved, (std::vector<std::string>{"phi", "pi"})) << name;
    const calc::Calculation& b = calc_named(p, "calc_bound_rhs");
    EXPECT_TRUE(b.on_boundary) << name;
    EXPECT_EQ(output_names(b), (std::vector<std::string>{"phirhs", "pirhs"})) << name;
    EXPECT_FALSE(calc_named(p, "calc_rhs").on_boundary) << name;
  }
  const calc::Program p = lower_kranc("examples/SimpleWaveScriptCaKernel.kranc");
  ASSERT_EQ(p.parameters.size(), 2u);
  EXPECT_EQ(p.parameters[0].name, "amp");
  EXPECT_EQ(p.parameters[0].description, "The amplitude of the wave");
  EXPECT_DOUBLE_EQ(p.parameters[1].default_value, 2 * M_PI);
  EXPECT_DOUBLE_EQ(*p.parameters[1].max, 10 * M_PI);
}

// ---- this project's scripts ---------------------------------------------------------------

TEST(KrancScripts, EveryScriptLowers) {
  const auto files = scripts(kranc_dir());
  ASSERT_GE(files.size(), 15u);
  for (const fs::path& file : files) expect_lowers(file);
}

// A periodic unit box of n points per axis holding grid functions by name, with the
// calculations run on it by the reference interpreter and RK4 for the evolved variables.
struct World {
  const calc::Program& program;
  std::array<int, 3> n;
  std::map<std::string, std::vector<double>> fields;
  double time = 0;
  static constexpr int kGhost = 4;

  World(const calc::Program& p, std::array<int, 3> points) : program(p), n(points) {}
  double h(int a) const { return 1.0 / n[a]; }
  std::size_t index(int i, int j, int k) const {
    auto wrap = [](int v, int m) { return ((v % m) + m) % m; };
    return (std::size_t(wrap(k, n[2])) * n[1] + wrap(j, n[1])) * n[0] + wrap(i, n[0]);
  }
  std::vector<double>& field(const std::string& name) {
    auto& f = fields[name];
    f.resize(std::size_t(n[0]) * n[1] * n[2], 0.0);
    return f;
  }
  void run(const calc::Calculation& c) {
    calc::GridBlock block(n, kGhost, c.grid_functions.size());
    block.spacing = {h(0), h(1), h(2)};
    block.time = time;
    for (std::size_t g = 0; g < c.grid_functions.size(); ++g) {
      const std::vector<double>& f = field(c.grid_functions[g].name);
      for (int k = -kGhost; k < n[2] + kGhost; ++k)
        for (int j = -kGhost; j < n[1] + kGhost; ++j)
          for (int i = -kGhost; i < n[0] + kGhost; ++i)
            block.at(int(g), i, j, k) = f[index(i, j, k)];
    }
    calc::run_calculation(c, block, default_parameters(program));
    for (const std::string& out : output_names(c)) {
      const int g = c.find_grid_function(out);
      std::vector<double>& f = field(out);
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) f[index(i, j, k)] = block.at(g, i, j, k);
    }
  }
  void run_bin(const std::string& bin) {
    for (const calc::Calculation& c : program.calculations)
      if (support::lower(c.schedule_bin) == bin && !c.on_boundary) run(c);
  }
  // One RK4 step of the evolved variables with the MoL_CalcRHS calculations.
  void step(double dt) {
    std::map<std::string, std::vector<double>> y0, acc;
    for (const auto& v : program.evolved) y0[v] = acc[v] = field(v);
    const double stage_time[4] = {0, dt / 2, dt / 2, dt};
    const double weight[4] = {1, 2, 2, 1};
    const double t0 = time;
    for (int s = 0; s < 4; ++s) {
      time = t0 + stage_time[s];
      run_bin("mol_calcrhs");
      for (const auto& v : program.evolved) {
        const std::vector<double>& rhs = field(v + "rhs");
        for (std::size_t p = 0; p < rhs.size(); ++p) {
          acc[v][p] += dt / 6 * weight[s] * rhs[p];
          if (s < 3) field(v)[p] = y0[v][p] + (s == 2 ? dt : dt / 2) * rhs[p];
        }
      }
    }
    for (const auto& v : program.evolved) field(v) = acc[v];
    time = t0 + dt;
  }
  double max_error(const std::string& name,
                   const std::function<double(double, double, double)>& f) {
    double worst = 0;
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i)
          worst = std::max(worst,
                           std::abs(field(name)[index(i, j, k)] - f(i * h(0), j * h(1), k * h(2))));
    return worst;
  }
};

TEST(KrancScripts, FlatComponentsEvolveAnElectromagneticWave) {
  const calc::Program p = lower_kranc("flat_components.kranc");
  EXPECT_EQ(p.evolved, (std::vector<std::string>{"El1", "El2", "El3", "B1", "B2", "B3"}));
  World w(p, {32, 1, 1});
  w.run_bin("initial");
  const double dt = 0.25 / 32;
  for (int s = 0; s < 16; ++s) w.step(dt);
  // E_y = B_z = sin(2 pi (x - t)): a wave moving towards +x.
  auto exact = [&](double x, double, double) { return std::sin(2 * M_PI * (x - w.time)); };
  EXPECT_LT(w.max_error("El2", exact), 2e-4);
  EXPECT_LT(w.max_error("B3", exact), 2e-4);
  EXPECT_GT(w.max_error("El2", [](double x, double, double) { return std::sin(2 * M_PI * x); }),
            0.1); // it moved
  w.run_bin("analysis");
  EXPECT_LT(w.max_error("divE", [](double, double, double) { return 0.0; }), 1e-12);
}

// phi = amp sin(k x) cos(k t) with the defaults amp = 1.5 (`1.5d0`), k = 2 PI.
double standing_wave_error(const std::string& script) {
  const calc::Program p = lower_kranc(script);
  World w(p, {32, 1, 1});
  w.run_bin("initial");
  for (int s = 0; s < 16; ++s) w.step(0.25 / 32);
  const double amp = p.parameters.empty() ? 1.0 : p.parameters[0].default_value;
  return w.max_error("phi", [&](double x, double, double) {
    return amp * std::sin(2 * M_PI * x) * std::cos(2 * M_PI * w.time);
  });
}

TEST(KrancScripts, KrancParametersDriveAStandingWave) {
  const calc::Program p = lower_kranc("kranc_parameters.kranc");
  ASSERT_EQ(p.parameters.size(), 3u);
  EXPECT_EQ(p.parameters[0].name, "amp");
  EXPECT_NE(p.parameters[0].description.find("commas, \"quotes\" & 100%."), std::string::npos)
      << p.parameters[0].description;
  EXPECT_DOUBLE_EQ(p.parameters[0].default_value, 1.5);
  EXPECT_FALSE(p.parameters[0].min.has_value());
  EXPECT_DOUBLE_EQ(*p.parameters[1].max, 10 * M_PI);
  EXPECT_DOUBLE_EQ(p.parameters[2].default_value, 250);
  EXPECT_EQ(calc_named(p, "wave_rhs").schedule_bin, "mol_calcrhs");
  EXPECT_LT(standing_wave_error("kranc_parameters.kranc"), 1e-3);
}

TEST(KrancScripts, OperatorFormDerivativesEvolveAStandingWave) {
  EXPECT_LT(standing_wave_error("operator_algebra.kranc"), 5e-3);
  const calc::Program p = lower_kranc("operator_algebra.kranc");
  // PDstandard2nd_11 is DPlus DMinus: three points; PDstandard2nd_12 is DZero DZero.
  EXPECT_EQ(offsets_of(calc_named(p, "wave_rhs"), "phi"),
            (std::set<calc::Offset>{
                {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}}));
}

TEST(KrancScripts, StencilFormAdvectsASine) {
  const calc::Program p = lower_kranc("stencil_derivatives.kranc");
  World w(p, {32, 1, 1});
  w.run_bin("initial");
  for (int s = 0; s < 16; ++s) w.step(0.25 / 32);
  // d_t u = -c d_x u with c = 1: u = sin(2 pi (x - t)); second-order phase error only.
  EXPECT_LT(
      w.max_error("u", [&](double x, double, double) { return std::sin(2 * M_PI * (x - w.time)); }),
      1e-2);
  EXPECT_EQ(offsets_of(calc_named(p, "mixed"), "u"),
            (std::set<calc::Offset>{
                {1, 1, 0}, {1, -1, 0}, {-1, 1, 0}, {-1, -1, 0}, {1, 0, 0}, {0, 0, 0}}));
}

// The interpreter's value of `gf` at one interior point of a calculation whose input `f` is
// given by a function of the coordinates.
double value_at(const calc::Program& p, const std::string& calc_name, const std::string& gf,
                const std::function<double(double, double, double)>& f, double h = 0.1) {
  const calc::Calculation& c = calc_named(p, calc_name);
  calc::GridBlock block({1, 1, 1}, 4, c.grid_functions.size());
  block.origin = {0.3, 0.2, 0.1};
  block.spacing = {h, h, h};
  for (std::size_t g = 0; g < c.grid_functions.size(); ++g)
    for (int k = -4; k < 5; ++k)
      for (int j = -4; j < 5; ++j)
        for (int i = -4; i < 5; ++i)
          block.at(int(g), i, j, k) =
              f(block.coordinate(0, i), block.coordinate(1, j), block.coordinate(2, k));
  calc::run_calculation(c, block, default_parameters(p));
  return block.at(c.find_grid_function(gf), 0, 0, 0);
}

TEST(KrancScripts, StandardOperatorsAreExactOnPolynomials) {
  const calc::Program p = lower_kranc("standard_operators.kranc");
  auto f = [](double x, double y, double) {
    return std::pow(x, 4) + 3 * std::pow(x, 3) - 2 * x * x + x * y - 7;
  };
  const double x = 0.3, y = 0.2, h = 0.1;
  // Five-point stencils: exact for degree 4 (the first derivative's error is h^4 f^(5)/30 = 0).
  EXPECT_NEAR(value_at(p, "differences", "d1", f), 4 * x * x * x + 9 * x * x - 4 * x + y, 1e-9);
  EXPECT_NEAR(value_at(p, "differences", "d2", f),
              12 * x * x + 18 * x - 4 + 24 * h * h * 0 + (-h * h / 12.0) * 0, 1e-8);
  EXPECT_NEAR(value_at(p, "differences", "d4", f), 24, 1e-6);
  // The upwind stencil on -1..2 is exact for degree 3; f's quartic term leaves -h^3 f''''/12.
  EXPECT_NEAR(value_at(p, "differences", "dup", f),
              4 * x * x * x + 9 * x * x - 4 * x + y - 24 * h * h * h / 12, 1e-9);
}

TEST(KrancScripts, ShiftProductsGiveMixedDerivatives) {
  const calc::Program p = lower_kranc("shift_products.kranc");
  auto f = [](double x, double y, double z) { return x * y + 2 * x * z + y * z * z + x * x; };
  EXPECT_NEAR(value_at(p, "use", "mixed", f), 1.0, 1e-10);                    // d_x d_y f
  EXPECT_NEAR(value_at(p, "use", "mixed2", f), 2.0, 1e-10);                   // d_x d_z f
  EXPECT_NEAR(value_at(p, "use", "quad", f), 0.2 + 2 * 0.1 + 2 * 0.3, 1e-10); // d_x f
  EXPECT_EQ(offsets_of(calc_named(p, "use"), "f").count({2, 0, 0}), 1u);
}

TEST(KrancScripts, GroupsDeclareTheirVariables) {
  const calc::Program p = lower_kranc("groups.kranc");
  EXPECT_EQ(p.evolved, (std::vector<std::string>{"u", "v", "w1", "w2", "w3"}));
  EXPECT_EQ(p.groups.at("evolved_group"), (std::vector<std::string>{"u", "v", "w1", "w2", "w3"}));
  EXPECT_EQ(p.groups.at("output_group"), (std::vector<std::string>{"rho", "w1"}));
  World w(p, {1, 1, 1});
  w.run_bin("initial");
  for (int s = 0; s < 100; ++s) w.step(0.01);
  EXPECT_NEAR(w.field("u")[0], std::cos(1.0), 1e-9);
  EXPECT_NEAR(w.field("v")[0], -std::sin(1.0), 1e-9);
}

TEST(KrancScripts, AdmBaseVariablesAreInherited) {
  const calc::Program p = lower_kranc("inherit_admbase.kranc");
  for (const char* v : {"alp", "betax", "betay", "betaz",   "gxx",     "gxy",     "gxz",
                        "gyy", "gyz",   "gzz",   "kxx",     "kxy",     "kxz",     "kyy",
                        "kyz", "kzz",   "dtalp", "dtbetax", "dtbetay", "dtbetaz", "trK"})
    EXPECT_NE(std::find(p.variables.begin(), p.variables.end(), v), p.variables.end()) << v;
  EXPECT_EQ(p.inherits, (std::vector<std::string>{"ADMBase", "Grid"}));
  EXPECT_EQ(p.evolved, (std::vector<std::string>{"alp"}));
  World w(p, {8, 1, 1});
  w.run_bin("initial");
  w.run_bin("analysis");
  EXPECT_LT(w.max_error("trK", [](double, double, double) { return 0.6; }), 1e-14);
}

TEST(KrancScripts, HydroAndTmunuVariablesKeepTheirNames) {
  const calc::Program p = lower_kranc("inherit_hydro.kranc");
  for (const char* v : {"rho", "press", "eps", "vel1", "vel2", "vel3", "w_lorentz", "Y_e", "eTtt",
                        "eTxx", "eTzz", "Bvec1", "Avec3", "Aphi"})
    EXPECT_NE(std::find(p.variables.begin(), p.variables.end(), v), p.variables.end()) << v;
  World w(p, {1, 1, 1});
  w.run_bin("initial");
  w.run_bin("analysis");
  const double W2 = 1 / (1 - 0.01);
  EXPECT_NEAR(w.field("w_lorentz")[0], std::sqrt(W2), 1e-14);
  EXPECT_NEAR(w.field("eTtt")[0], W2, 1e-14);
  EXPECT_NEAR(w.field("eTxx")[0], W2 * 0.01, 1e-14);
  EXPECT_NEAR(w.field("Y_e")[0], 0.5, 0);
}

TEST(KrancScripts, ConditionalsSelect) {
  const calc::Program p = lower_kranc("conditionals.kranc");
  World w(p, {4, 1, 1}); // x = 0, 0.25, 0.5, 0.75: f = -0.5, -0.25, 0, 0.25
  w.run_bin("initial");
  w.run_bin("analysis");
  const std::vector<double> g = w.field("g"), h = w.field("h");
  EXPECT_EQ(g, (std::vector<double>{-1, -0.5, 0, 0.5}));
  EXPECT_EQ(h, (std::vector<double>{10, 10, 20, 11}));
}

TEST(KrancScripts, OptionsLayoutAndExpressions) {
  const calc::Program p = lower_kranc("options_layout.kranc");
  EXPECT_EQ(p.implements, "KrancOptionsImpl");
  EXPECT_TRUE(p.features.at("cse"));
  EXPECT_FALSE(p.features.at("vectors"));
  EXPECT_TRUE(p.features.at("jacobian"));
  World w(p, {4, 4, 4});
  w.run_bin("initial");
  w.run_bin("analysis");
  EXPECT_LT(w.max_error("c", [](double, double, double) { return 0.0; }), 1e-14);

  const calc::Program e = lower_kranc("expressions.kranc");
  World v(e, {1, 1, 1});
  v.run_bin("initial");
  EXPECT_DOUBLE_EQ(v.field("r")[0], 1.5 + 250 - 1e-3 + 1 + 0.25);
  EXPECT_DOUBLE_EQ(v.field("s")[0], -4 + 512.0 / 64 + 3);
  EXPECT_DOUBLE_EQ(v.field("q")[0], 4 + 3 + 1 + 1 + 0 + 1 + 0 + 1 + 2 + 8);
}

TEST(KrancScripts, TensorsAndTemporariesByFlatName) {
  const calc::Program p = lower_kranc("tensors.kranc");
  World w(p, {16, 16, 1});
  w.run_bin("initial");
  w.run_bin("analysis");
  // v = (sin(2 pi y), -sin(2 pi x), 0) / (2 pi) = w: curl v = (0, 0, -cos(2 pi x) - cos(2 pi y))
  // (fourth-order differences); v.w + v1 w1 = 2 v1^2 + v2^2; the trace of g is 3.
  EXPECT_LT(
      w.max_error("curl3", [](double x, double y,
                              double) { return -std::cos(2 * M_PI * x) - std::cos(2 * M_PI * y); }),
      2e-3);
  EXPECT_LT(w.max_error("curl1", [](double, double, double) { return 0.0; }), 1e-14);
  EXPECT_LT(w.max_error("dot",
                        [](double x, double y, double) {
                          const double v1 = std::sin(2 * M_PI * y) / (2 * M_PI),
                                       v2 = -std::sin(2 * M_PI * x) / (2 * M_PI);
                          return 2 * v1 * v1 + v2 * v2;
                        }),
            1e-14);
  EXPECT_LT(w.max_error("trg", [](double, double, double) { return 3.0; }), 1e-14);

  const calc::Program t = lower_kranc("temporaries.kranc");
  World v(t, {2, 2, 1});
  v.run_bin("initial");
  EXPECT_LT(v.max_error("out",
                        [](double x, double y, double) {
                          const double s = x + 2 * y;
                          return s * s + x * x + 4 * y * y;
                        }),
            1e-14);
}

// The suggestion for a misspelt name prefers a declared one over a built-in one-letter name.
TEST(KrancScripts, SuggestionPrefersDeclaredNames) {
  const std::string text = "begin thorn T\nbegin variables\nV_i w\nend variables\n"
                           "begin calculation c scheduled at initial\nw = V\nend calculation\n"
                           "end thorn\n";
  const std::string text2 = "begin thorn T\nbegin variables\nV2 w\nend variables\n"
                            "begin calculation c scheduled at initial\nw = V\nend calculation\n"
                            "end thorn\n";
  try {
    lower_text(text2);
    FAIL() << "expected an error";
  } catch (const edl::EdlError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'V2'?"), std::string::npos) << e.what();
  }
  try {
    lower_text(text);
  } catch (const edl::EdlError& e) {
    EXPECT_EQ(std::string(e.what()).find("did you mean 'x'"), std::string::npos) << e.what();
  }
}

// Errors of the Kranc constructs: file:line:col, the message, status 2 from the CLI.
TEST(KrancScripts, ErrorsNameTheirPlace) {
  struct Case {
    std::string text, where, message;
  };
  const std::string head = "begin thorn T\nbegin variables\nu w\nend variables\n"; // 1-4
  const std::string calc = "begin calculation c scheduled at analysis\nw = PD_1 u\n"
                           "end calculation\nend thorn\n";
  const std::vector<Case> cases = {
      {head + "begin derivatives\nPD_i = 1/(shift_i - 1)\nend derivatives\n" + calc,
       ":6:19:", "divide only by a single term"},
      {head + "begin derivatives\nPD_i = shift_j\nend derivatives\n" + calc,
       ":6:14:", "direction letters of 'PD'"},
      {head + "begin derivatives\nPD_i = PD_i\nend derivatives\n" + calc,
       ":6:8:", "defined in terms of itself"},
      {head + "begin derivatives\nPD_i = DZero_i\nPD_j = DPlus_j\nend derivatives\n" + calc,
       ":7:1:", "defined twice for the same indices"},
      {head +
           "begin derivatives\nPD_i = StandardCenteredDifferenceOperator(3, 1, i)\n"
           "end derivatives\n" +
           calc,
       ":6:8:", "needs more points"},
      {"begin thorn T\ninherit ADMBase\nbegin variables\nalp\nend variables\nend thorn\n",
       ":4:1:", "'alp' is declared twice"},
      {"begin thorn T\ninherit ADMbase Hydrobase MyThorn\nend thorn\n",
       ":2:27:", "unknown inherited thorn 'MyThorn'"},
      {head + "begin calculation b scheduled at MoL_RHSBoundaries\nD_t u = 0\n"
              "end calculation\nend thorn\n",
       ":6:1:", "D_t equation on the boundary but none for the interior"},
      {head + "begin calculation c on interior\nw = 1\nend calculation\nend thorn\n",
       ":5:24:", "'boundary' after 'on'"},
      {head + "begin calculation c\nw = @{Sin[x]}\nend calculation\nend thorn\n",
       ":6:5:", "raw Mathematica"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const fs::path file = dir.path / "bad.kranc";
    std::ofstream(file) << c.text;
    CliRun run = run_saguaro("inspect \"" + file.string() + "\"");
    EXPECT_EQ(run.status, 2) << c.text << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_NE(run.err.find("bad.kranc" + c.where + " error: "), std::string::npos)
        << c.where << "\n"
        << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.message << "\n" << run.err;
  }
}

// Runs a .par file over a boundary-RHS script and returns the last norm_inf of `err`.
double boundary_run_error(const std::string& script, bool with_boundary_rhs) {
  TempDir dir;
  std::string edl = read_file(kranc_dir() + "/" + script);
  if (!with_boundary_rhs) {
    // The same script without its boundary calculation: the boundary points keep their values.
    edl = std::regex_replace(edl, std::regex("begin calculation pulse_bound[^]*?end calculation"),
                             "");
  }
  std::ofstream(dir.path / "pulse.kranc") << edl;
  const std::string thorn = script == "boundary_rhs.kranc" ? "KrancBoundaryRHS" : "KrancOnBoundary";
  std::ofstream(dir.path / "pulse.par")
      << "ActiveThorns = \"Saguaro " << thorn << "\"\n"
      << "Saguaro::equations = \"pulse.kranc\"\nSaguaro::backend = \"cpu\"\n"
      << "Saguaro::boundary_condition = \"none\"\n"
      << "CoordBase::xmin = -1\nCoordBase::xmax = 1\nCoordBase::ymin = 0\n"
      << "CoordBase::ymax = 0.125\nCoordBase::zmin = 0\nCoordBase::zmax = 0.125\n"
      << "CoordBase::spacing = \"numcells\"\nCoordBase::ncells_x = 64\n"
      << "CoordBase::ncells_y = 4\nCoordBase::ncells_z = 4\nMoL::ODE_Method = \"RK4\"\n"
      << "Time::dtfac = 0.25\nCactus::terminate = \"time\"\nCactus::cctk_final_time = 0.5\n"
      << "IO::out_dir = \"" << (dir.path / "out").string() << "\"\nIO::out_every = 64\n"
      << "IOScalar::out_vars = \"" << thorn << "::err\"\n";
  CliRun run = run_saguaro("\"" + (dir.path / "pulse.par").string() + "\"");
  EXPECT_EQ(run.status, 0) << run.err;
  std::istringstream norms(read_file(dir.path / "out" / "err.norms.tsv"));
  std::string line, last;
  while (std::getline(norms, line))
    if (!line.empty() && line[0] != '#') last = line;
  std::istringstream fields(last);
  double v = -1;
  for (int k = 0; k < 7; ++k) fields >> v; // iteration time min max norm1 norm2 norm_inf
  return v;
}

TEST(KrancScripts, BoundaryRightHandSidesCarryTheExactSolutionIn) {
  for (const char* script : {"boundary_rhs.kranc", "on_boundary.kranc"}) {
    const double with = boundary_run_error(script, true);
    const double without = boundary_run_error(script, false);
    EXPECT_GE(with, 0) << script;
    EXPECT_LT(with, 2e-4) << script;
    EXPECT_GT(without, 25 * with) << script; // the pulse needs the boundary data
    EXPECT_GT(without, 5e-3) << script;
  }
}

} // namespace
} // namespace saguaro
