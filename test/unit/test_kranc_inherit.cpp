// `inherit THORN` for a thorn not built in (docs/edl.md, "Kranc scripts"): its grid functions
// from its interface.ccl and its global and restricted parameters from its param.ccl, found
// beside the script or on SAGUARO_THORN_PATH; errors in either file at their file:line:col.
#include "support.hpp"

#include "ccl/interface_ccl.hpp"
#include "support/diagnostics.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace saguaro {
namespace {

namespace fs = std::filesystem;
using namespace saguaro::test;

// ---- `inherit THORN` from the thorn's interface.ccl ----------------------------------------

TEST(KrancInterfaceCcl, ReadsPublicAndProtectedRealGridFunctions) {
  const std::string text = "# a comment\n"
                           "IMPLEMENTS: Waves\n"
                           "INHERITS: Grid, ADMBase\n"
                           "USES INCLUDE: loopcontrol.h\n"
                           "CCTK_REAL hidden TYPE=gf   # private: Cactus's default\n"
                           "public:\n"
                           "CCTK_REAL phi TYPE=gf TIMELEVELS=3 \"the field\"\n"
                           "CCTK_REAL flux TYPE = GF tags='tensortypealias=\"U\"'\n"
                           "{\n"
                           "  fx fy,\n"
                           "  fz\n"
                           "} \"a group over lines\"\n"
                           "CCTK_REAL vel[3] TYPE=gf { w } \"a vector\"\n"
                           "CCTK_REAL total TYPE=scalar\n"
                           "CCTK_REAL line TYPE=array DIM=1 SIZE=10 { l }\n"
                           "CCTK_INT mask TYPE=gf\n"
                           "CCTK_REAL FUNCTION Fn(CCTK_REAL IN x,\n"
                           "                      CCTK_REAL IN y)\n"
                           "REQUIRES FUNCTION Fn\n"
                           "protected:\n"
                           "CCTK_REAL chi TYPE=GF { chi } \"one variable\"\n"
                           "private:\n"
                           "CCTK_REAL own TYPE=gf\n";
  const auto file = std::make_shared<const support::SourceFile>("T/interface.ccl", text);
  const ccl::Interface t = ccl::read_interface_ccl(file, "Waves");
  std::vector<std::string> got;
  for (const auto& v : t.variables)
    got.push_back(v.name + ":" + v.group + ":" + std::to_string(v.rank));
  EXPECT_EQ(got, (std::vector<std::string>{"phi:phi:0", "fx:flux:0", "fy:flux:0", "fz:flux:0",
                                           "w:vel:1", "chi:chi:0"}));
}

TEST(KrancInterfaceCcl, SyntaxErrorsHaveTheirPlace) {
  struct Case {
    std::string text;
    int line, column;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"public:\nCCTK_REAL g TYPE=gf\n{\n  a b\n", 3, 1, "this '{' is not closed"},
      {"public:\nCCTK_REAL g TYPE=gf { a, 2b }\n", 2, 26, "expected a variable name"},
      {"public:\nCCTK_REAL g TYPE=grid\n", 2, 18, "expected GF, SCALAR or ARRAY"},
      {"public:\nCCTK_REAL\n", 2, 1, "expected a group name"},
      {"public:\n  groups g\n", 2, 3, "not 'groups'"},
      {"public:\nCCTK_REAL g TYPE=gf \"open\n", 2, 21, "not closed"},
      {"public:\nCCTK_REAL g TYPE=gf { a }\nCCTK_REAL h TYPE=gf { A }\n", 3, 23, "declared twice"},
  };
  for (const Case& c : cases) {
    const auto file = std::make_shared<const support::SourceFile>("X/interface.ccl", c.text);
    try {
      ccl::read_interface_ccl(file, "X");
      ADD_FAILURE() << c.text;
    } catch (const support::InputError& e) {
      EXPECT_EQ(e.loc().line, c.line) << c.text << e.message();
      EXPECT_EQ(e.loc().column, c.column) << c.text << e.message();
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.message();
    }
  }
}

TEST(KrancInterfaceCcl, FoundBesideTheScriptOrOnTheThornPath) {
  const std::string script = "begin thorn T\ninherit mythorn\n"
                             "begin calculation c\nout = 2*in_a\nend calculation\nend thorn\n";
  {
    TempDir dir; // arrangements/ARR/{T,MyThorn}: the script's thorn beside the inherited one
    fs::create_directories(dir.path / "T");
    fs::create_directories(dir.path / "MyThorn");
    std::ofstream(dir.path / "T" / "t.kranc") << script;
    std::ofstream(dir.path / "MyThorn" / "interface.ccl")
        << "public:\nCCTK_REAL io TYPE=gf\n{\n  in_a, out\n} \"in and out\"\n";
    CliRun run = run_saguaro("inspect \"" + (dir.path / "T" / "t.kranc").string() + "\"");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.out.find("calculation c"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("in_a "), std::string::npos) << run.out; // `_` glued as inherited
  }
  {
    TempDir dir, thorns;
    fs::create_directories(thorns.path / "mythorn");
    std::ofstream(dir.path / "t.kranc") << script;
    std::ofstream(thorns.path / "mythorn" / "interface.ccl")
        << "public:\nCCTK_REAL io TYPE=gf {in_a out}\n";
    CliRun missing = run_saguaro("inspect \"" + (dir.path / "t.kranc").string() + "\"");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("no interface.ccl of 'mythorn' was found; looked for " +
                               (dir.path / "mythorn" / "interface.ccl").string()),
              std::string::npos)
        << missing.err;
    EXPECT_NE(missing.err.find("SAGUARO_THORN_PATH"), std::string::npos) << missing.err;
    ::setenv("SAGUARO_THORN_PATH", ("/nonexistent:" + thorns.path.string()).c_str(), 1);
    CliRun run = run_saguaro("inspect \"" + (dir.path / "t.kranc").string() + "\"");
    std::ofstream(thorns.path / "mythorn" / "interface.ccl")
        << "public:\nCCTK_REAL io TYPE=gf {in_a\n";
    CliRun bad = run_saguaro("inspect \"" + (dir.path / "t.kranc").string() + "\"");
    ::unsetenv("SAGUARO_THORN_PATH");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("mythorn/interface.ccl:2:22: error: this '{' is not closed"),
              std::string::npos)
        << bad.err;
  }
}

// ---- `inherit THORN`: the parameters of the thorn's param.ccl ----------------------------

// A script beside the folder Thorn/ holding `interface` and `param` as its CCL files.
fs::path thorn_beside(const TempDir& dir, const std::string& script, const std::string& interface,
                      const std::string& param) {
  fs::create_directories(dir.path / "Thorn");
  std::ofstream(dir.path / "Thorn" / "interface.ccl") << interface;
  std::ofstream(dir.path / "Thorn" / "param.ccl") << param;
  std::ofstream(dir.path / "t.kranc") << script;
  return dir.path / "t.kranc";
}

const std::string kThornInterface = "public:\nCCTK_REAL io TYPE=gf { u out }\n";
const std::string kThornParams =
    "# the thorn's parameters\n"
    "private:\n"
    "REAL hidden \"the thorn's own\" { *:* :: \"\" } 3.0\n"
    "restricted:\n"
    "REAL amp \"amplitude\" { 0:* :: \"\" } 2.5d0\n"
    "INT n \"count\" { 1:* :: \"\" } 4\n"
    "BOOLEAN on \"switch\" { } yes\n"
    "KEYWORD how \"method\" { \"Fast\" \"slow\" :: \"\" } fast\n"
    "STRING name \"a string: the EDL has none\" { \".*\" :: \"\" } \"x\"\n"
    "REAL v[3] \"an array: the EDL has none\" { *:* :: \"\" } 0\n"
    "global:\n"
    "REAL g \"everyone's\" { *:* :: \"\" } -1\n"
    "shares: IO\n"
    "USES INT out_every\n";

TEST(KrancInheritParamCcl, RestrictedAndGlobalParametersAreTheScripts) {
  TempDir dir;
  const fs::path file =
      thorn_beside(dir,
                   "begin thorn T\ninherit Thorn\nbegin calculation c\nout = amp*n*g*u\n"
                   "end calculation\nend thorn\n",
                   kThornInterface, kThornParams);
  const calc::Program p = calc::lower(edl::parse_file(file.string()), calc::LowerOptions{4});
  std::vector<std::string> got;
  for (const calc::Parameter& q : p.parameters)
    got.push_back(q.name + ":" + edl::to_string(q.type) + ":" +
                  (q.type == edl::ParameterType::Keyword ? q.default_keyword
                                                         : fmt::format("{}", q.default_value)) +
                  ":" + q.inherited_from);
  EXPECT_EQ(got,
            (std::vector<std::string>{"amp:real:2.5:Thorn", "n:int:4:Thorn", "on:boolean:1:Thorn",
                                      "how:keyword:Fast:Thorn", "g:real:-1:Thorn"}));
  EXPECT_EQ(p.parameters[3].keyword_values, (std::vector<std::string>{"Fast", "slow"}));
  // The calculation reads u alone; amp*n*g folds to a product of parameters.
  ASSERT_EQ(p.calculations.size(), 1u);
  ASSERT_EQ(p.calculations[0].inputs.size(), 1u);
  const calc::Calculation& c = p.calculations[0];
  EXPECT_EQ(c.grid_functions[c.inputs[0].grid_function].name, "u");
}

TEST(KrancInheritParamCcl, APrivateParameterIsUndeclared) {
  TempDir dir;
  const fs::path file = thorn_beside(dir,
                                     "begin thorn T\ninherit Thorn\nbegin calculation c\n"
                                     "out = amp*hidden*u\nend calculation\nend thorn\n",
                                     kThornInterface, kThornParams);
  CliRun run = run_saguaro("inspect \"" + file.string() + "\"");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("t.kranc:4:11: error: undeclared name 'hidden'"), std::string::npos)
      << run.err;
}

TEST(KrancInheritParamCcl, DeclaringAnInheritedParameterAgainIsAnError) {
  TempDir dir;
  const fs::path file = thorn_beside(
      dir,
      "begin thorn T\ninherit Thorn\nbegin parameters\namp : real \"again\", default: 1.0\n"
      "end parameters\nbegin calculation c\nout = amp*u\nend calculation\n"
      "end thorn\n",
      kThornInterface, kThornParams);
  CliRun run = run_saguaro("inspect \"" + file.string() + "\"");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("error: 'amp' is declared twice"), std::string::npos) << run.err;
}

TEST(KrancInheritParamCcl, ABrokenParamCclIsNamedWithItsPlace) {
  const std::string script = "begin thorn T\ninherit Thorn\nbegin calculation c\nout = amp*u\n"
                             "end calculation\nend thorn\n";
  struct Case {
    std::string param_ccl, where;
  };
  const std::vector<Case> cases = {
      {"restricted:\nREAL amp \"amplitude\" { 0:* :: \"\" }\n",
       "Thorn/param.ccl:2:35: error: unexpected end of line: expected the default value of amp"},
      {"restricted:\nREAL amp { 0:* :: \"\" } 1\n",
       "Thorn/param.ccl:2:10: error: unexpected '{': expected the description of amp"},
      {"restricted:\nREAL amp \"amplitude\" { 0:* :: \"\" } one\n",
       "Thorn/param.ccl:2:36: error: the default 'one' of REAL amp is not a number"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const fs::path file = thorn_beside(dir, script, kThornInterface, c.param_ccl);
    CliRun run = run_saguaro("inspect \"" + file.string() + "\"");
    EXPECT_EQ(run.status, 2) << c.param_ccl;
    EXPECT_NE(run.err.find(c.where), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("read for 'inherit Thorn'"), std::string::npos) << run.err;
  }
}

} // namespace
} // namespace saguaro
