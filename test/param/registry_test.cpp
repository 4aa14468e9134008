// The registry: .par values checked against declarations, every user error with its place,
// range boundaries, the parameter reference and the recorded parameter set.
#include "param/registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace saguaro::param {
namespace {

using support::InputError;
using support::SourceFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// An EDL-like thorn, declared the way the lead declares one (from param.ccl text here).
const char* const kWaveCcl = R"(restricted:
REAL amp "amplitude" { *:* :: "any" } 1.0
INT n "open low, closed high" { (0:10] :: "" } 5
REAL width "closed low, open high" { [0.5:2) :: "" } 1.0
INT even "stepped" { 2:8:2 :: "even orders" } 4
INT shifted "a step from an open end" { (0:9:3] :: "" } 3
INT choice "two single values"
{
  1  :: "one"
  -1 :: "off"
} 1
STRING name "lower-case" { "^[a-z]+$" :: "letters" } "abc"
STRING any "anything" { "" :: "anything" } ""
KEYWORD method "method" { "Euler" "RK4" :: "" } "Euler"
BOOLEAN flag "flag" { } no
INT v[3] "array" { 0:* :: "" } 0
)";

Registry make() {
  Registry r = Registry::with_builtin_components();
  r.declare_all(parse_param_ccl(std::make_shared<const SourceFile>("wave.ccl", kWaveCcl), "Wave"));
  return r;
}

void apply_par(Registry& r, const std::string& text) {
  r.apply(parse_par_text("test.par", text));
}

InputError apply_error(Registry& r, const std::string& text) {
  try {
    apply_par(r, text);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return InputError({}, "");
}
InputError apply_error(const std::string& text) {
  Registry r = make();
  return apply_error(r, text);
}

std::vector<std::string> note_texts(const InputError& e) {
  std::vector<std::string> out;
  for (const support::Note& n : e.notes()) out.push_back(n.message);
  return out;
}

// Runs of blanks and newlines as one space (the reference wraps long descriptions).
std::string squeeze(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool blank = c == ' ' || c == '\n';
    if (blank && !out.empty() && out.back() == ' ') continue;
    out += blank ? ' ' : c;
  }
  return out;
}

const char* const kActive = "ActiveThorns = \"Saguaro Wave\"\n";

// ---- values ------------------------------------------------------------------------------------

TEST(Registry, AppliesTypedValues) {
  Registry r = make();
  apply_par(r, R"(ActiveThorns = "saguaro WAVE"
MoL::ODE_Method = "rk4"
coordbase::DX = 1.0d-3
CoordBase::xmax = 2
Cactus::cctk_itlast = "20"
IO::out_every = 1e2
Cactus::cctk_final_time = -2.5
Periodic::periodic = yes
Periodic::periodic_x = "TRUE"
Periodic::periodic_y = 1
Periodic::periodic_z = "no"
Saguaro::equations = "wave.edl"
IO::out_dir = "runs/$parfile"
Saguaro::fd_order = 6
Wave::v[1] = 7
Wave::v[2] = 9
Wave::method = "rk4"
Wave::flag = TRUE
)");
  EXPECT_EQ(r.get_keyword("MoL", "ODE_Method"), "RK4"); // the declared spelling
  EXPECT_DOUBLE_EQ(r.get_real("CoordBase", "dx"), 1.0e-3);
  EXPECT_EQ(r.get_real("CoordBase", "xmax"), 2.0);
  EXPECT_EQ(r.get_int("Cactus", "cctk_itlast"), 20);
  EXPECT_EQ(r.get_int("IO", "out_every"), 100);
  EXPECT_EQ(r.get_real("Cactus", "cctk_final_time"), -2.5);
  EXPECT_TRUE(r.get_bool("Periodic", "periodic"));
  EXPECT_TRUE(r.get_bool("Periodic", "periodic_x"));
  EXPECT_TRUE(r.get_bool("Periodic", "periodic_y"));
  EXPECT_FALSE(r.get_bool("Periodic", "periodic_z"));
  EXPECT_EQ(r.get_string("Saguaro", "equations"), "wave.edl");
  EXPECT_EQ(r.get_string("IO", "out_dir"), "runs/test");
  EXPECT_EQ(r.get_int("SAGUARO", "FD_ORDER"), 6);
  EXPECT_EQ(r.get_int("Wave", "v", 0), 0);
  EXPECT_EQ(r.get_int("Wave", "v", 1), 7);
  EXPECT_EQ(r.get_int("Wave", "v", 2), 9);
  EXPECT_EQ(r.get_keyword("Wave", "method"), "RK4");
  EXPECT_TRUE(r.get_bool("Wave", "flag"));
  EXPECT_EQ(r.get_real("Wave", "amp"), 1.0); // untouched default

  EXPECT_TRUE(r.is_set("Saguaro", "fd_order"));
  EXPECT_FALSE(r.is_set("Saguaro", "backend"));
  EXPECT_EQ(r.set_at("saguaro", "fd_order").line, 14);
  EXPECT_EQ(r.set_at("Wave", "v").line, 15); // an array: its first assignment
  EXPECT_FALSE(r.set_at("Wave", "amp").valid());
  EXPECT_THAT(r.active_thorns(), ElementsAre("Saguaro", "Wave"));
}

TEST(Registry, BuiltinComponentsNeedNoActiveThorns) {
  Registry r = make();
  apply_par(r, "Cactus::cctk_itlast = 5\nCoordBase::ncells_x = 32\nMoL::ODE_Method = \"RK3\"\n");
  EXPECT_EQ(r.get_int("Cactus", "cctk_itlast"), 5);
  EXPECT_EQ(r.get_int("CoordBase", "ncells_x"), 32);
  EXPECT_TRUE(r.active_thorns().empty());
  // Naming a built-in component in ActiveThorns is fine too, as in Cactus par files.
  Registry r2 = make();
  apply_par(r2, "ActiveThorns = \"CoordBase MoL Time\"\nTime::dtfac = 0.25\n");
  EXPECT_EQ(r2.get_real("Time", "dtfac"), 0.25);
}

TEST(Registry, ActiveThornsAcceptsAThornDeclaredBeforeApply) {
  ParFile par = parse_par_text("late.par", "ActiveThorns = \"Late\"\nLate::x = 3\n");
  Registry r = Registry::with_builtin_components();
  r.declare_all(parse_param_ccl(
      std::make_shared<const SourceFile>("late.ccl", "INT x \"x\" { } 1\n"), "Late"));
  r.apply(par);
  EXPECT_EQ(r.get_int("Late", "x"), 3);
}

TEST(Registry, ALaterFileOverridesAnEarlierOne) {
  Registry r = make();
  apply_par(r, "Cactus::cctk_itlast = 5\n");
  apply_par(r, "Cactus::cctk_itlast = 7\n");
  EXPECT_EQ(r.get_int("Cactus", "cctk_itlast"), 7);
}

TEST(Registry, GettersRejectCallerBugs) {
  Registry r = make();
  EXPECT_THROW(r.get_int("Cactus", "cctk_final_time"), std::logic_error);
  EXPECT_THROW(r.get_real("Cactus", "cctk_itlast"), std::logic_error);
  EXPECT_THROW(r.get_bool("Cactus", "nothing"), std::logic_error);
  EXPECT_THROW(r.get_string("Cactus", "cctk_itlast"), std::logic_error);
  EXPECT_THROW(r.get_int("Wave", "v", 3), std::logic_error);
  EXPECT_THROW(r.get_int("Wave", "v", -1), std::logic_error);
  EXPECT_EQ(r.get_keyword("Cactus", "terminate"), "iteration");
  EXPECT_EQ(r.get_string("Cactus", "terminate"), "iteration");
}

// ---- errors ------------------------------------------------------------------------------------

TEST(RegistryErrors, UnknownThorn) {
  InputError e = apply_error("# run\nCactuss::cctk_itlast = 5\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 1);
  EXPECT_EQ(e.loc().length, 7);
  EXPECT_EQ(e.message(), "unknown thorn 'Cactuss'");
  ASSERT_GE(e.notes().size(), 2u);
  EXPECT_EQ(e.notes()[0].message, "did you mean 'Cactus'?");
  EXPECT_THAT(e.notes()[1].message, HasSubstr("known thorns: Cactus, CoordBase"));
  EXPECT_THAT(std::string(e.what()), HasSubstr("test.par:2:1: error: unknown thorn 'Cactuss'"));
}

TEST(RegistryErrors, UnknownParameter) {
  InputError e = apply_error("Cactus::cctk_itlst = 5\n");
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_EQ(e.loc().column, 9);
  EXPECT_EQ(e.loc().length, 10);
  EXPECT_EQ(e.message(), "thorn 'Cactus' has no parameter 'cctk_itlst'");
  EXPECT_THAT(note_texts(e), ElementsAre("did you mean 'cctk_itlast'?",
                                         "'saguaro params Cactus' lists its parameters"));
  // The thorn is matched case-insensitively and named as declared; spaces around '::'.
  e = apply_error("mol ::  ode_methd = \"RK4\"\n");
  EXPECT_EQ(e.loc().column, 9);
  EXPECT_EQ(e.message(), "thorn 'MoL' has no parameter 'ode_methd'");
  EXPECT_EQ(e.notes()[0].message, "did you mean 'ODE_Method'?");
}

TEST(RegistryErrors, ThornNotActive) {
  InputError e = apply_error("ActiveThorns = \"CoordBase\"\nSaguaro::fd_order = 4\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 1);
  EXPECT_EQ(e.loc().length, 7);
  EXPECT_EQ(e.message(), "thorn 'Saguaro' is not active: add it to ActiveThorns to set "
                         "Saguaro::fd_order");
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_EQ(e.notes()[0].loc.line, 1);
  EXPECT_EQ(e.notes()[0].loc.column, 17);
  EXPECT_EQ(e.notes()[0].message, "add 'Saguaro' to the ActiveThorns list here");

  e = apply_error("Wave::amp = 2\n");
  EXPECT_THAT(note_texts(e), ElementsAre("add the line: ActiveThorns = \"Wave\""));
}

TEST(RegistryErrors, UnknownThornInActiveThorns) {
  InputError e = apply_error("ActiveThorns = \"CoordBase Saguaro\n  Wav\"\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_EQ(e.loc().length, 3);
  EXPECT_EQ(e.message(), "thorn 'Wav' in ActiveThorns is not provided by Saguaro");
  EXPECT_EQ(e.notes()[0].message, "did you mean 'Wave'?");
  EXPECT_THAT(e.notes()[1].message, HasSubstr("Saguaro runs physics written in EDL"));
}

TEST(RegistryErrors, WrongType) {
  struct Case {
    std::string line;
    int column, length;
    std::string message;
  };
  std::vector<Case> cases = {
      {"Cactus::cctk_itlast = \"ten\"", 23, 5,
       "expected an integer for Cactus::cctk_itlast (INT), not \"ten\""},
      {"Cactus::cctk_itlast = 2.5", 23, 3,
       "expected an integer for Cactus::cctk_itlast (INT), not 2.5"},
      {"Cactus::cctk_itlast = 1.0d-3", 23, 6,
       "expected an integer for Cactus::cctk_itlast (INT), not 1.0d-3"},
      {"Cactus::cctk_itlast = yes", 23, 3,
       "expected an integer for Cactus::cctk_itlast (INT), not 'yes'"},
      {"Cactus::cctk_itlast = 99999999999999999999", 23, 20,
       "99999999999999999999 is too large for Cactus::cctk_itlast (INT)"},
      {"CoordBase::dx = no", 17, 2, "expected a real number for CoordBase::dx (REAL), not 'no'"},
      {"CoordBase::dx = \"small\"", 17, 7,
       "expected a real number for CoordBase::dx (REAL), not \"small\""},
      {"Periodic::periodic = maybe", 22, 5,
       "expected a boolean for Periodic::periodic (yes, no, true, false, 1 or 0), not 'maybe'"},
      {"Periodic::periodic = 2", 22, 1,
       "expected a boolean for Periodic::periodic (yes, no, true, false, 1 or 0), not '2'"},
      {"Saguaro::equations = 3", 22, 1,
       "expected a string for Saguaro::equations (STRING), not 3: write \"3\""},
      {"MoL::ODE_Method = 2 * 2", 19, 5, "\"4\" is not a keyword of MoL::ODE_Method"},
  };
  for (const Case& c : cases) {
    InputError e = apply_error(std::string(kActive) + c.line + "\n");
    EXPECT_EQ(e.loc().line, 2) << c.line;
    EXPECT_EQ(e.loc().column, c.column) << c.line;
    EXPECT_EQ(e.loc().length, c.length) << c.line;
    EXPECT_EQ(e.message(), c.message);
  }
}

TEST(RegistryErrors, OutOfRange) {
  InputError e = apply_error(std::string(kActive) + "Saguaro::fd_order = 5\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 21);
  EXPECT_EQ(e.message(), "5 is out of range for Saguaro::fd_order (INT)");
  ASSERT_EQ(e.notes().size(), 2u);
  EXPECT_EQ(e.notes()[0].message, "allowed: 2:8:2 (even orders 2, 4, 6, 8)");
  EXPECT_EQ(e.notes()[1].message, "Saguaro::fd_order is declared here");
  EXPECT_EQ(e.notes()[1].loc.file->name(), "thorn/param.ccl");

  e = apply_error("CoordBase::dx = 0\n");
  EXPECT_EQ(e.message(), "0 is out of range for CoordBase::dx (REAL)");
  EXPECT_EQ(e.notes()[0].message, "allowed: (0:* (positive)");

  e = apply_error(std::string(kActive) + "Wave::name = \"Wave1\"\n");
  EXPECT_EQ(e.loc().column, 14);
  EXPECT_EQ(e.message(), "\"Wave1\" does not match the allowed patterns of Wave::name");
  EXPECT_EQ(e.notes()[0].message, "allowed: \"^[a-z]+$\" (letters)");
}

// Issue 23, kind 1: a 50,000-character string value overflowed the stack inside std::regex
// when checked against its range. The ranges are matched by RE2 now (linear, no recursion).
TEST(RegistryRanges, LongStringValuesAreMatchedWithoutRecursion) {
  const std::string long_name(50000, 'a'), long_dir(200000, 'd');
  Registry r = make();
  apply_par(r, std::string(kActive) + "IO::out_dir = \"" + long_dir + "\"\nIOHDF5::out_vars = \"" +
                   long_dir + "\"\nWave::name = \"" + long_name + "\"\n");
  EXPECT_EQ(r.get_string("IO", "out_dir"), long_dir);
  EXPECT_EQ(r.get_string("Wave", "name"), long_name);
  InputError e = apply_error(std::string(kActive) + "Wave::name = \"" + long_name + "1\"\n");
  EXPECT_NE(e.message().find("does not match the allowed patterns of Wave::name"),
            std::string::npos);
  // A pattern RE2 cannot read is refused where it is declared.
  Registry bad = Registry::with_builtin_components();
  EXPECT_THROW(bad.declare_all(parse_param_ccl(
                   std::make_shared<const SourceFile>(
                       "bad.ccl", "STRING s \"s\"\n{\n  \"a(b\" :: \"unclosed\"\n} \"ab\"\n"),
                   "Bad")),
               InputError);
}

// Issue 23: a .par file with several problems reports every one of them, each at its place,
// in one error (one edit-and-rerun round instead of one per problem).
TEST(RegistryErrors, EveryProblemOfAFileAtOnce) {
  Registry r = make();
  const double dtfac = r.get_real("Time", "dtfac");
  InputError e =
      apply_error(r, std::string(kActive) + "CoordBase::xmni = 0.5\n" // line 2: unknown parameter
                                            "Saguaro::fd_order = 5\n" // line 3: out of range
                                            "CoordBse::xmin = 0.5\n"  // line 4: unknown thorn
                                            "Cactus::cctk_itlast = 2.5\n" // line 5: wrong type
                                            "Time::dtfac = 0.125\n");     // line 6: fine
  ASSERT_EQ(e.diagnostics().size(), 4u) << e.what();
  EXPECT_EQ(e.diagnostics()[0].loc.line, 2);
  EXPECT_EQ(e.diagnostics()[1].loc.line, 3);
  EXPECT_EQ(e.diagnostics()[2].loc.line, 4);
  EXPECT_EQ(e.diagnostics()[3].loc.line, 5);
  EXPECT_EQ(r.get_real("Time", "dtfac"), dtfac) << "nothing is applied";
  std::string many(kActive);
  for (int i = 0; i < 80; ++i) many += "CoordBase::nope" + std::to_string(i) + " = 1\n";
  e = apply_error(r, many);
  ASSERT_EQ(e.diagnostics().size(), 51u);
  EXPECT_EQ(e.diagnostics().back().message, "30 more problems not shown");
}

TEST(RegistryErrors, KeywordNotInTheList) {
  InputError e = apply_error("MoL::ODE_Method = \"RK44\"\n");
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_EQ(e.loc().column, 19);
  EXPECT_EQ(e.loc().length, 6);
  EXPECT_EQ(e.message(), "\"RK44\" is not a keyword of MoL::ODE_Method");
  EXPECT_THAT(note_texts(e),
              ElementsAre("did you mean 'RK4'?",
                          "allowed: \"ICN\", \"RK2\", \"RK3\", \"RK3-Kutta\", \"RK2-midpoint\", "
                          "\"Euler\", \"RK4\"",
                          "MoL::ODE_Method is declared here"));
  EXPECT_EQ(e.notes()[2].loc.file->name(), "param/builtin/MoL.ccl");
}

TEST(RegistryErrors, ArrayIndices) {
  InputError e = apply_error(std::string(kActive) + "Wave::v[3] = 1\n");
  EXPECT_EQ(e.loc().column, 8);
  EXPECT_EQ(e.loc().length, 3);
  EXPECT_EQ(e.message(), "index 3 is out of bounds: Wave::v has 3 elements (indices 0 to 2)");

  e = apply_error("Cactus::cctk_itlast[0] = 1\n");
  EXPECT_EQ(e.loc().column, 20);
  EXPECT_EQ(e.loc().length, 3);
  EXPECT_EQ(e.message(), "Cactus::cctk_itlast is not an array: remove the index");

  e = apply_error(std::string(kActive) + "Wave::v = 1\n");
  EXPECT_EQ(e.loc().column, 1);
  EXPECT_EQ(e.message(), "Wave::v is an array of 3 elements: set one element, as in "
                         "Wave::v[0] = ...");
}

TEST(RegistryErrors, SetTwice) {
  InputError e = apply_error("Cactus::cctk_itlast = 5\n# again\n  CACTUS::CCTK_ITLAST = 6\n");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_EQ(e.message(), "Cactus::cctk_itlast is set twice");
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_EQ(e.notes()[0].message, "first set here");
  EXPECT_EQ(e.notes()[0].loc.line, 1);
  EXPECT_EQ(e.notes()[0].loc.column, 1);

  e = apply_error(std::string(kActive) + "Wave::v[1] = 1\nWave::v[0] = 1\nWave::v[1] = 2\n");
  EXPECT_EQ(e.loc().line, 4);
  EXPECT_EQ(e.message(), "Wave::v[1] is set twice");
  EXPECT_EQ(e.notes()[0].loc.line, 2);
}

TEST(RegistryErrors, AFailedApplyChangesNothing) {
  Registry r = make();
  apply_error(r, "ActiveThorns = \"Wave\"\nCactus::cctk_itlast = 5\nCactus::cctk_itlast = -1\n");
  EXPECT_EQ(r.get_int("Cactus", "cctk_itlast"), 10);
  EXPECT_FALSE(r.is_set("Cactus", "cctk_itlast"));
  EXPECT_TRUE(r.active_thorns().empty());
}

// ---- range boundaries --------------------------------------------------------------------------

TEST(RegistryRanges, Boundaries) {
  struct Case {
    std::string assignment;
    bool ok;
  };
  std::vector<Case> cases = {
      // (0:10]
      {"Wave::n = 0", false},
      {"Wave::n = 1", true},
      {"Wave::n = 10", true},
      {"Wave::n = 11", false},
      // [0.5:2)
      {"Wave::width = 0.5", true},
      {"Wave::width = 0.49999", false},
      {"Wave::width = 1.999", true},
      {"Wave::width = 2", false},
      {"Wave::width = 2.0", false},
      // 2:8:2
      {"Wave::even = 2", true},
      {"Wave::even = 3", false},
      {"Wave::even = 8", true},
      {"Wave::even = 10", false},
      {"Wave::even = 0", false},
      // (0:9:3] counts steps from the lower bound even though it is excluded
      {"Wave::shifted = 0", false},
      {"Wave::shifted = 3", true},
      {"Wave::shifted = 4", false},
      {"Wave::shifted = 9", true},
      {"Wave::shifted = 12", false},
      // single values 1 and -1
      {"Wave::choice = 1", true},
      {"Wave::choice = -1", true},
      {"Wave::choice = 0", false},
      // *:*
      {"Wave::amp = -1e300", true},
      // "^[a-z]+$"
      {"Wave::name = \"abc\"", true},
      {"Wave::name = \"Abc\"", false},
      {"Wave::name = \"\"", false},
      // "" matches anything, as in Cactus
      {"Wave::any = \"\"", true},
      {"Wave::any = \"x y\"", true},
      // 0:* on each array element
      {"Wave::v[2] = 0", true},
      {"Wave::v[2] = -1", false},
      // Cactus's own
      {"Cactus::cctk_itlast = 0", true},
      {"Cactus::cctk_itlast = -1", false},
      {"IO::checkpoint_every = -1", true},
      {"IO::checkpoint_every = 0", false},
      {"Time::dtfac = 0", false},
      {"Time::dtfac = 1e-9", true},
  };
  for (const Case& c : cases) {
    Registry r = make();
    if (c.ok) {
      EXPECT_NO_THROW(apply_par(r, std::string(kActive) + c.assignment + "\n")) << c.assignment;
    } else {
      InputError e = apply_error(r, std::string(kActive) + c.assignment + "\n");
      EXPECT_THAT(e.message(),
                  ::testing::AnyOf(HasSubstr("out of range"), HasSubstr("does not match")))
          << c.assignment;
    }
  }
}

// ---- the reference and the recorded parameter set ----------------------------------------------

TEST(ParameterReference, ListsEveryParameterWithTypeAndDefault) {
  Registry r = make();
  std::string text = format_parameter_reference(r);
  std::string squeezed = squeeze(text);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  for (const std::string& thorn : r.thorns()) {
    EXPECT_THAT(text, HasSubstr(thorn + "\n" + std::string(thorn.size(), '=') + "\n"));
    for (const Declaration* d : r.declarations(thorn)) {
      std::string title = d->thorn + "::" + d->name;
      std::size_t at = text.find("\n" + title + (d->array_size ? "[" : " "));
      ASSERT_NE(at, std::string::npos) << title;
      std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
      EXPECT_THAT(line, HasSubstr(std::string("  ") + to_string(d->type) + " ")) << line;
      EXPECT_THAT(line, HasSubstr("  default: ")) << line;
      EXPECT_THAT(squeezed, HasSubstr(squeeze(d->description))) << title;
    }
  }
  EXPECT_THAT(text, HasSubstr("Cactus::cctk_itlast         INT      default: 10\n"));
  EXPECT_THAT(text, HasSubstr("MoL::ODE_Method  KEYWORD  default: \"ICN\"\n"));
  EXPECT_THAT(text, HasSubstr("    allowed: 2:8:2  even orders 2, 4, 6, 8\n"));
  EXPECT_THAT(text, HasSubstr("    allowed: \"ICN\"           iterative Crank-Nicolson"));
  EXPECT_THAT(text, HasSubstr("             \"RK3\"           third-order"));
  EXPECT_THAT(text, HasSubstr("Periodic::periodic    BOOLEAN  default: no\n"));
  EXPECT_THAT(text, HasSubstr("IO::out_dir  "));
  EXPECT_THAT(text, HasSubstr("default: \"$parfile\""));
  EXPECT_THAT(text, HasSubstr("Wave::v[3]"));
  EXPECT_THAT(text, HasSubstr("    allowed: \"Euler\" \"RK4\"\n")); // one line, one description
}

TEST(ParameterReference, OneThorn) {
  Registry r = make();
  std::string text = format_parameter_reference(r, "mol");
  EXPECT_EQ(text.rfind("MoL\n===\n", 0), 0u);
  EXPECT_THAT(text, HasSubstr("MoL::ODE_Method"));
  EXPECT_THAT(text, Not(HasSubstr("Cactus::")));
  try {
    format_parameter_reference(r, "Saguro");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("unknown thorn 'Saguro'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("did you mean 'Saguaro'?"));
  }
}

TEST(ParText, RecordsEveryParameterAndReadsBack) {
  Registry r = make();
  apply_par(r, R"(ActiveThorns = "Saguaro Wave"
Saguaro::fd_order = 6
Saguaro::equations = "wave.edl"
CoordBase::dx = 1.0d-3
Wave::v[1] = 7
Wave::name = "xyz"
Wave::flag = yes
MoL::ODE_Method = "rk3"
IO::out_dir = "out"
)");
  std::string text = r.to_par_text();
  EXPECT_EQ(text, r.to_par_text());
  EXPECT_EQ(text.rfind("ActiveThorns = \"Saguaro Wave\"\n", 0), 0u);
  EXPECT_THAT(text, HasSubstr("\nSaguaro::fd_order = 6\n"));
  EXPECT_THAT(text, HasSubstr("\nSaguaro::equations = \"wave.edl\"\n"));
  EXPECT_THAT(text, HasSubstr("\nCoordBase::dx = 0.001\n"));
  EXPECT_THAT(text, HasSubstr("\nCoordBase::xmax = 1.0\n"));
  EXPECT_THAT(text, HasSubstr("\nWave::v[0] = 0\nWave::v[1] = 7\nWave::v[2] = 0\n"));
  EXPECT_THAT(text, HasSubstr("\nWave::flag = yes\n"));
  EXPECT_THAT(text, HasSubstr("\nMoL::ODE_Method = \"RK3\"\n"));
  EXPECT_LT(text.find("Cactus::"), text.find("CoordBase::"));
  // Every declaration appears once per element.
  std::size_t lines = 0;
  for (const std::string& thorn : r.thorns())
    for (const Declaration* d : r.declarations(thorn))
      lines += static_cast<std::size_t>(std::max(1, d->array_size));
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), lines + 1);

  Registry back = make();
  back.apply(parse_par_text("recorded.par", text));
  EXPECT_EQ(back.to_par_text(), text);
  EXPECT_EQ(back.get_int("Wave", "v", 1), 7);
  EXPECT_DOUBLE_EQ(back.get_real("CoordBase", "dx"), 1.0e-3);
}

TEST(ParText, InactiveThornsAreCommentedOut) {
  Registry r = make();
  std::string text = r.to_par_text();
  EXPECT_THAT(text, HasSubstr("# thorn Wave is not active; its parameters:\n# Wave::amp = 1.0\n"));
  Registry back = make();
  EXPECT_NO_THROW(back.apply(parse_par_text("recorded.par", text)));
}

} // namespace
} // namespace saguaro::param
