// param.ccl: the built-in components' declarations and the syntax of the language.
#include "param/registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace saguaro::param {
namespace {

using support::InputError;
using support::SourceFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<Declaration> parse(const std::string& text, const std::string& thorn = "Test") {
  return parse_param_ccl(std::make_shared<const SourceFile>("test.ccl", text), thorn);
}

InputError ccl_error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return InputError({}, "");
}

std::vector<std::string> range_texts(const Declaration& decl) {
  std::vector<std::string> out;
  for (const RangeItem& r : decl.ranges) out.push_back(r.text);
  return out;
}

// ---- the built-in components -----------------------------------------------------------------

TEST(BuiltinCcl, EveryFileOnDiskParses) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(SAGUARO_SOURCE_DIR) / "param/builtin")) {
    if (entry.path().extension() != ".ccl") continue;
    ++files;
    auto source = SourceFile::load(entry.path().string());
    std::vector<Declaration> decls = parse_param_ccl(source, entry.path().stem().string());
    EXPECT_FALSE(decls.empty()) << entry.path();
    for (const Declaration& d : decls) {
      EXPECT_FALSE(d.description.empty()) << d.thorn << "::" << d.name;
      EXPECT_EQ(d.thorn, entry.path().stem().string());
    }
  }
  EXPECT_GE(files, 9);
  auto own = SourceFile::load(std::string(SAGUARO_SOURCE_DIR) + "/thorn/param.ccl");
  EXPECT_GE(parse_param_ccl(own, "Saguaro").size(), 15u);
}

TEST(BuiltinCcl, RegistryHoldsEveryComponent) {
  Registry r = Registry::with_builtin_components();
  EXPECT_THAT(r.thorns(), ElementsAre("Cactus", "CoordBase", "Driver", "IO", "IOHDF5", "IOScalar",
                                      "MoL", "Periodic", "Saguaro", "Time"));
  const Declaration* itlast = r.find("cactus", "CCTK_ITLAST");
  ASSERT_NE(itlast, nullptr);
  EXPECT_EQ(itlast->thorn, "Cactus");
  EXPECT_EQ(itlast->name, "cctk_itlast");
  EXPECT_EQ(itlast->type, Type::Int);
  EXPECT_EQ(std::get<long>(itlast->default_value), 10);
  ASSERT_EQ(itlast->ranges.size(), 1u);
  EXPECT_EQ(itlast->ranges[0].lo, 0.0);
  EXPECT_FALSE(itlast->ranges[0].hi.has_value());
  EXPECT_EQ(itlast->steerable, "always");
  EXPECT_EQ(itlast->access, Access::Restricted);
  EXPECT_EQ(itlast->loc.file->name(), "param/builtin/Cactus.ccl");

  EXPECT_EQ(r.get_int("Cactus", "cctk_itlast"), 10);
  EXPECT_EQ(r.get_real("Cactus", "cctk_final_time"), -1.0);
  EXPECT_EQ(r.get_real("Cactus", "cctk_initial_time"), 0.0);
  EXPECT_EQ(r.get_keyword("Cactus", "terminate"), "iteration");
  EXPECT_THAT(range_texts(*r.find("Cactus", "terminate")),
              ElementsAre("never", "iteration", "time", "runtime", "any", "all", "either"));
  EXPECT_EQ(r.get_real("Cactus", "max_runtime"), 0.0);
  EXPECT_TRUE(r.get_bool("Cactus", "cctk_show_schedule"));
  EXPECT_EQ(r.get_string("Cactus", "cctk_run_title"), "");

  EXPECT_EQ(r.get_keyword("CoordBase", "domainsize"), "minmax");
  EXPECT_EQ(r.get_keyword("CoordBase", "spacing"), "gridspacing");
  EXPECT_EQ(r.get_real("CoordBase", "xmin"), 0.0);
  EXPECT_EQ(r.get_real("CoordBase", "zmax"), 1.0);
  EXPECT_EQ(r.get_real("CoordBase", "dy"), 0.1);
  const Declaration* dx = r.find("CoordBase", "dx");
  ASSERT_EQ(dx->ranges.size(), 1u);
  EXPECT_TRUE(dx->ranges[0].lo_open);
  EXPECT_EQ(dx->ranges[0].lo, 0.0);
  EXPECT_EQ(r.get_int("CoordBase", "ncells_y"), 10);
  EXPECT_EQ(r.find("CoordBase", "ncells_y")->ranges[0].lo, 1.0);
  EXPECT_EQ(r.get_int("CoordBase", "boundary_size_z_upper"), -1);

  for (const char* axis : {"periodic", "periodic_x", "periodic_y", "periodic_z"}) {
    EXPECT_EQ(r.find("Periodic", axis)->type, Type::Boolean);
    EXPECT_FALSE(r.get_bool("Periodic", axis));
  }
  EXPECT_EQ(r.get_int("Driver", "ghost_size"), -1);
  EXPECT_EQ(r.get_real("Time", "dtfac"), 0.5);
  EXPECT_TRUE(r.find("Time", "dtfac")->ranges[0].lo_open);
  EXPECT_EQ(r.get_keyword("Time", "timestep_method"), "courant_static");
  EXPECT_EQ(r.get_real("Time", "timestep"), 0.0);
  EXPECT_EQ(r.get_keyword("MoL", "ODE_Method"), "ICN");
  EXPECT_THAT(range_texts(*r.find("MoL", "ode_method")),
              ElementsAre("ICN", "RK2", "RK3", "RK3-Kutta", "RK2-midpoint", "Euler", "RK4"));
  EXPECT_THAT(r.find("MoL", "ODE_Method")->ranges[2].description, HasSubstr("SSP"));

  EXPECT_EQ(r.get_string("IO", "out_dir"), "$parfile");
  EXPECT_EQ(expand_parfile(r.get_string("IO", "out_dir"), "par/wave.par"), "wave");
  EXPECT_EQ(r.get_int("IO", "out_every"), 0);
  EXPECT_EQ(r.get_int("IO", "checkpoint_every"), -1);
  EXPECT_EQ(r.get_string("IO", "checkpoint_dir"), "");
  EXPECT_EQ(r.get_int("IO", "checkpoint_keep"), 2);
  EXPECT_FALSE(r.get_bool("IO", "checkpoint_on_terminate"));
  EXPECT_EQ(r.get_keyword("IO", "recover"), "no");
  EXPECT_EQ(r.get_string("IO", "recover_dir"), "");
  EXPECT_EQ(r.get_int("IOScalar", "out_every"), -1);
  EXPECT_EQ(r.get_string("IOScalar", "out_vars"), "all");
  EXPECT_EQ(r.get_int("IOHDF5", "out_every"), -1);
  EXPECT_EQ(r.get_string("IOHDF5", "out_vars"), "");

  EXPECT_EQ(r.get_string("Saguaro", "equations"), "");
  EXPECT_EQ(r.get_int("Saguaro", "fd_order"), 4);
  EXPECT_EQ(r.find("Saguaro", "fd_order")->ranges[0].step, 2);
  EXPECT_EQ(r.get_keyword("Saguaro", "backend"), "auto");
  EXPECT_EQ(r.get_string("Saguaro", "cache_dir"), "");
  EXPECT_EQ(r.get_keyword("Saguaro", "boundary_condition"), "radiative");
  EXPECT_THAT(range_texts(*r.find("Saguaro", "boundary_condition")),
              ElementsAre("radiative", "flat", "static", "none"));
  for (const char* face : {"boundary_x_lower", "boundary_x_upper", "boundary_y_lower",
                           "boundary_y_upper", "boundary_z_lower", "boundary_z_upper"}) {
    EXPECT_EQ(r.get_keyword("Saguaro", face), "default");
    EXPECT_THAT(range_texts(*r.find("Saguaro", face)),
                ElementsAre("default", "radiative", "flat", "static", "none"));
  }
  EXPECT_EQ(r.get_real("Saguaro", "radiative_speed"), 1.0);
  EXPECT_EQ(r.get_real("Saguaro", "radiative_value"), 0.0);
  EXPECT_EQ(r.get_real("Saguaro", "progress_every"), 10.0);
  EXPECT_FALSE(r.get_bool("Saguaro", "verbose"));
}

// ---- ranges ------------------------------------------------------------------------------------

TEST(CclSyntax, NumericRanges) {
  auto decls = parse(R"(
INT a "open below, closed above" { (0:10] :: "1 to 10" } 5
REAL b "closed below, open above" { [0:1) :: "unit" } 0.5
INT c "stepped" { 1:8:2 :: "odd" } 3
INT d "single values"
{
  3 :: "three"
  7 :: "seven"
} 7
REAL e "anything" { *:* :: "any" } 1.0d-3
REAL f "no upper bound written" { 0: :: "non-negative" } .5
INT g "star" { * :: "any" } -2
REAL h "quoted range" { "-1.5:2.5" :: "quoted" } 1e-3
REAL i "both open" { (-1:1) :: "" } 0
)");
  ASSERT_EQ(decls.size(), 9u);
  const RangeItem& a = decls[0].ranges[0];
  EXPECT_EQ(a.text, "(0:10]");
  EXPECT_EQ(a.description, "1 to 10");
  EXPECT_EQ(a.lo, 0.0);
  EXPECT_EQ(a.hi, 10.0);
  EXPECT_TRUE(a.lo_open);
  EXPECT_FALSE(a.hi_open);
  EXPECT_EQ(a.step, 0);
  const RangeItem& b = decls[1].ranges[0];
  EXPECT_FALSE(b.lo_open);
  EXPECT_TRUE(b.hi_open);
  EXPECT_EQ(b.hi, 1.0);
  EXPECT_EQ(decls[2].ranges[0].step, 2);
  EXPECT_EQ(decls[2].ranges[0].lo, 1.0);
  EXPECT_EQ(decls[2].ranges[0].hi, 8.0);
  ASSERT_EQ(decls[3].ranges.size(), 2u);
  EXPECT_EQ(decls[3].ranges[1].lo, 7.0);
  EXPECT_EQ(decls[3].ranges[1].hi, 7.0);
  EXPECT_EQ(decls[3].ranges[1].description, "seven");
  EXPECT_FALSE(decls[4].ranges[0].lo.has_value());
  EXPECT_FALSE(decls[4].ranges[0].hi.has_value());
  EXPECT_DOUBLE_EQ(std::get<double>(decls[4].default_value), 1.0e-3);
  EXPECT_EQ(decls[5].ranges[0].lo, 0.0);
  EXPECT_FALSE(decls[5].ranges[0].hi.has_value());
  EXPECT_EQ(std::get<double>(decls[5].default_value), 0.5);
  EXPECT_FALSE(decls[6].ranges[0].lo.has_value());
  EXPECT_EQ(std::get<long>(decls[6].default_value), -2);
  EXPECT_EQ(decls[7].ranges[0].lo, -1.5);
  EXPECT_EQ(decls[7].ranges[0].hi, 2.5);
  EXPECT_TRUE(decls[8].ranges[0].lo_open && decls[8].ranges[0].hi_open);
  EXPECT_EQ(std::get<double>(decls[8].default_value), 0.0); // an integer default of a REAL
}

TEST(CclSyntax, KeywordsStringsBooleans) {
  auto decls = parse(R"(
KEYWORD method "several words on a line, bare words too"
{
  "ICN" "RK2" :: "second order"
  RK4         :: "fourth order"
} "rk4"
KEYWORD bare "bare default" {
  "a" :: ""
  "b" :: ""
} b
STRING name "regex" { "^[a-z]+$" :: "lower-case letters" } "abc"
STRING anything "empty regex" { "" :: "anything" } "x y z"
STRING multi "description over
two lines" { ".*" :: "any" } ""
BOOLEAN flag "a flag" { } "yes"
BOOLEAN flag2 "unquoted default" {
} no
BOOLEAN flag3 "numeric default" { } 1
BOOLEAN flag4 "upper case" { } FALSE
)");
  ASSERT_EQ(decls.size(), 9u);
  EXPECT_THAT(range_texts(decls[0]), ElementsAre("ICN", "RK2", "RK4"));
  EXPECT_EQ(decls[0].ranges[0].description, "second order");
  EXPECT_EQ(decls[0].ranges[1].description, "second order");
  EXPECT_EQ(std::get<std::string>(decls[0].default_value), "RK4"); // the declared spelling
  EXPECT_THAT(range_texts(decls[1]), ElementsAre("a", "b"));
  EXPECT_EQ(std::get<std::string>(decls[1].default_value), "b");
  EXPECT_THAT(range_texts(decls[2]), ElementsAre("^[a-z]+$"));
  EXPECT_THAT(range_texts(decls[3]), ElementsAre(""));
  EXPECT_EQ(decls[4].description, "description over\ntwo lines");
  EXPECT_EQ(decls[5].type, Type::Boolean);
  EXPECT_TRUE(decls[5].ranges.empty());
  EXPECT_TRUE(std::get<bool>(decls[5].default_value));
  EXPECT_FALSE(std::get<bool>(decls[6].default_value));
  EXPECT_TRUE(std::get<bool>(decls[7].default_value));
  EXPECT_FALSE(std::get<bool>(decls[8].default_value));
}

TEST(CclSyntax, SectionsArraysAttributesComments) {
  auto decls = parse(R"(# leading comment
GLOBAL:
INT g "global" { 0:* :: "" } 0   # trailing comment
restricted:
REAL r[3] "an array of three" AS rr STEERABLE = ALWAYS
{
  # a comment inside the block
  *:* :: "any"
} 1.5
shares: IO
USES STRING out_dir
USES CCTK_INT out_every AS io_every
EXTENDS KEYWORD recover
{
  "maybe" :: "added by this thorn"
}
Private :
INT p [2] "spaced array" STEERABLE=recover ACCUMULATOR=(x+y) { 1:* :: "" } 1
shares:Cactus
USES REAL cctk_final_time
private:
BOOLEAN last "after the shares section" { } no
)");
  ASSERT_EQ(decls.size(), 4u);
  EXPECT_EQ(decls[0].name, "g");
  EXPECT_EQ(decls[0].access, Access::Global);
  EXPECT_EQ(decls[0].loc.line, 3);
  EXPECT_EQ(decls[0].loc.column, 5);
  EXPECT_EQ(decls[1].name, "r");
  EXPECT_EQ(decls[1].array_size, 3);
  EXPECT_EQ(decls[1].access, Access::Restricted);
  EXPECT_EQ(decls[1].steerable, "always");
  EXPECT_EQ(std::get<double>(decls[1].default_value), 1.5);
  EXPECT_EQ(decls[2].name, "p");
  EXPECT_EQ(decls[2].array_size, 2);
  EXPECT_EQ(decls[2].access, Access::Private);
  EXPECT_EQ(decls[2].steerable, "recover");
  EXPECT_EQ(decls[3].name, "last");
  EXPECT_EQ(decls[3].access, Access::Private);
  EXPECT_EQ(decls[3].steerable, "never");
  EXPECT_EQ(decls[3].thorn, "Test");
}

TEST(CclSyntax, DefaultAccessIsPrivateAndTypesAreCaseInsensitive) {
  auto decls = parse("int a \"a\" { 0:* :: \"\" } 1\nReal b \"b\" { } 2.0\n");
  ASSERT_EQ(decls.size(), 2u);
  EXPECT_EQ(decls[0].access, Access::Private);
  EXPECT_EQ(decls[0].type, Type::Int);
  EXPECT_EQ(decls[1].type, Type::Real);
  EXPECT_TRUE(decls[1].ranges.empty());
}

// ---- errors ------------------------------------------------------------------------------------

TEST(CclErrors, MissingDefault) {
  InputError e = ccl_error("INT a \"a\" { 0:* :: \"\" }\nINT b \"b\" { } 1\n");
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_EQ(e.loc().column, 24);
  EXPECT_THAT(e.message(), HasSubstr("expected the default value of a after '}'"));
}

TEST(CclErrors, InvalidRanges) {
  InputError e = ccl_error("INT a \"a\" { 1.5:2 :: \"\" } 2\n");
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_EQ(e.loc().column, 13);
  EXPECT_EQ(e.loc().length, 5);
  EXPECT_THAT(e.message(), HasSubstr("'1.5' is not an integer"));

  e = ccl_error("REAL a \"a\" { 0:1:2 :: \"\" } 0\n");
  EXPECT_THAT(e.message(), HasSubstr("only INT ranges take a step"));
  e = ccl_error("INT a \"a\" { 5:1 :: \"\" } 2\n");
  EXPECT_THAT(e.message(), HasSubstr("lower bound is above the upper bound"));
  e = ccl_error("INT a \"a\" { 0:1:2:3 :: \"\" } 0\n");
  EXPECT_THAT(e.message(), HasSubstr("too many ':'"));
  e = ccl_error("INT a \"a\" { 0:10:0 :: \"\" } 0\n");
  EXPECT_THAT(e.message(), HasSubstr("step must be a positive integer"));
  e = ccl_error("STRING s \"s\" { \"[a-\" :: \"\" } \"\"\n");
  EXPECT_THAT(e.message(), HasSubstr("not a valid regular expression"));
  EXPECT_EQ(e.loc().column, 16);
}

TEST(CclErrors, DefaultOutsideRange) {
  InputError e = ccl_error("INT a \"a\"\n{\n  0:10 :: \"\"\n} 11\n");
  EXPECT_EQ(e.loc().line, 4);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_EQ(e.message(), "the default 11 of a is outside its range");
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_EQ(e.notes()[0].message, "allowed: 0:10");

  e = ccl_error("KEYWORD k \"k\" { \"a\" \"b\" :: \"\" } \"c\"\n");
  EXPECT_THAT(e.message(), HasSubstr("the default \"c\" of KEYWORD k is not one of its keywords"));
  e = ccl_error("INT a \"a\" { 0:* :: \"\" } 1.5\n");
  EXPECT_THAT(e.message(), HasSubstr("is not an integer"));
  e = ccl_error("BOOLEAN b \"b\" { } maybe\n");
  EXPECT_THAT(e.message(), HasSubstr("is not a boolean"));
}

TEST(CclErrors, Structure) {
  InputError e = ccl_error("private:\nFLOAT x \"x\" { } 1\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 1);
  EXPECT_THAT(e.message(), HasSubstr("unexpected 'FLOAT'"));
  EXPECT_THAT(e.message(), HasSubstr("expected a declaration (INT, REAL"));

  e = ccl_error("INT x { 0:* :: \"\" } 1\n");
  EXPECT_EQ(e.loc().column, 7);
  EXPECT_THAT(e.message(), HasSubstr("expected the description of x in double quotes"));

  e = ccl_error("INT x \"x\" STEERABLE=sometimes { } 1\n");
  EXPECT_EQ(e.loc().column, 21);
  EXPECT_THAT(e.message(), HasSubstr("STEERABLE takes never, always or recover"));

  e = ccl_error("INT x \"unterminated { } 1\n");
  EXPECT_EQ(e.loc().column, 7);
  EXPECT_THAT(e.message(), HasSubstr("unterminated string"));

  e = ccl_error("INT x \"x\"\n{\n  0:* :: \"\"\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_THAT(e.message(), HasSubstr("this '{' is not closed"));

  e = ccl_error("INT x[0] \"x\" { } 1\n");
  EXPECT_EQ(e.loc().column, 6);
  EXPECT_THAT(e.message(), HasSubstr("invalid array size '[0]'"));

  e = ccl_error("INT x \"x\" 1\n");
  EXPECT_THAT(e.message(), HasSubstr("expected '{' and the allowed ranges of x"));

  e = ccl_error("shares:\nUSES INT x\n");
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_THAT(e.message(), HasSubstr("expected the name of the thorn"));
}

TEST(CclErrors, DeclaredTwice) {
  Registry r;
  r.declare_all(parse("INT a \"a\" { } 1\n"));
  auto again = parse("\nINT A \"again\" { } 2\n");
  try {
    r.declare_all(again);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.loc().line, 2);
    EXPECT_EQ(e.message(), "parameter Test::A is declared twice");
    ASSERT_EQ(e.notes().size(), 1u);
    EXPECT_EQ(e.notes()[0].loc.line, 1);
    EXPECT_EQ(e.notes()[0].message, "first declared here");
  }
  // A declaration built in code (the EDL thorn's) is checked as well.
  Declaration bad;
  bad.thorn = "Wave";
  bad.name = "amp";
  bad.type = Type::Int;
  bad.default_value = 5L;
  bad.ranges.push_back(RangeItem{"0:3", "", 0.0, 3.0});
  EXPECT_THROW(r.declare(bad), InputError);
  bad.default_value = std::string("x");
  EXPECT_THROW(r.declare(bad), InputError);
  EXPECT_EQ(r.find("Wave", "amp"), nullptr);
}

} // namespace
} // namespace saguaro::param
