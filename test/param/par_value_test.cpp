// The flesh's .par grammar (param/par_value.hpp): every construct, the evaluation of
// variables and arithmetic, the collection of every error of a file, and the established
// thorns' names (param/et_compat.hpp).
#include "param/et_compat.hpp"
#include "param/registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace saguaro::param {
namespace {

using support::InputError;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ParFile parse(const std::string& text) {
  return parse_par_text("runs/test.par", text);
}
const Assignment& only(const ParFile& par) {
  EXPECT_EQ(par.assignments.size(), 1u);
  return par.assignments.front();
}
InputError error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return InputError({}, "");
}

TEST(ParGrammar, ParfileUnquotedAndInStrings) {
  EXPECT_EQ(only(parse("IO::out_dir = $parfile\n")).text, "test");
  EXPECT_EQ(only(parse("IO::out_dir = \"out/${parfile}-1\"\n")).text, "out/test-1");
  EXPECT_EQ(only(parse("IO::out_dir = $parfile + \"-x\"\n")).text, "test-x");
}

TEST(ParGrammar, VariablesAndArithmetic) {
  ParFile par = parse("$n = 16\n$dx = 2.0 / $n\n"
                      "A::a = $n * 4 + 1\nA::b = $dx\nA::c = 7 / 2\nA::d = 7 / 2.0\n"
                      "A::e = 2 ** 10\nA::f = (1 + 2) * -3\nA::g = 10 % 4\n"
                      "A::h = max(1, 2.5) + min(3, 4)\nA::i = sqrt(16)\nA::j = \"n=$n\"\n"
                      "A::k = 1e3\nA::l = 1 +\n  2\n");
  ASSERT_EQ(par.assignments.size(), 12u);
  auto at = [&](int i) { return par.assignments[std::size_t(i)]; };
  EXPECT_TRUE(at(0).integer);
  EXPECT_EQ(at(0).integer_value, 65);
  EXPECT_DOUBLE_EQ(at(1).number, 0.125);
  EXPECT_EQ(at(2).integer_value, 3); // INT / INT truncates, as in the flesh
  EXPECT_DOUBLE_EQ(at(3).number, 3.5);
  EXPECT_FALSE(at(4).integer); // ** is REAL
  EXPECT_DOUBLE_EQ(at(4).number, 1024);
  EXPECT_EQ(at(5).integer_value, -9);
  EXPECT_EQ(at(6).integer_value, 2);
  EXPECT_DOUBLE_EQ(at(7).number, 5.5);
  EXPECT_DOUBLE_EQ(at(8).number, 4);
  EXPECT_EQ(at(9).text, "n=16");
  EXPECT_EQ(at(10).integer_value, 1000);
  EXPECT_EQ(at(10).text, "1e3");      // a literal keeps its spelling for messages
  EXPECT_EQ(at(11).integer_value, 3); // continued after a binary operator
}

TEST(ParGrammar, ComparisonsAndBooleans) {
  ParFile par = parse("A::a = 1 < 2\nA::b = 2 == 3 || !(1 >= 2)\nA::c = no\nA::d = TRUE\n"
                      "A::e = \"x\" == \"x\" && yes\n");
  ASSERT_EQ(par.assignments.size(), 5u);
  for (const Assignment& a : par.assignments) EXPECT_EQ(a.kind, Assignment::Kind::Boolean);
  EXPECT_TRUE(par.assignments[0].boolean);
  EXPECT_TRUE(par.assignments[1].boolean);
  EXPECT_FALSE(par.assignments[2].boolean);
  EXPECT_TRUE(par.assignments[3].boolean);
  EXPECT_TRUE(par.assignments[4].boolean);
}

TEST(ParGrammar, UnquotedKeywordsQuotesEscapesAndPaths) {
  ParFile par = parse("ADMBase::evolution_method = ML_BSSN\nA::b = '1+log'\n"
                      "A::c = \"say \\\"hi\\\" \\\\ \"\nA::d = 1+log\nA::e = ./data/x.h5\n"
                      "A::f = 2nd\n");
  ASSERT_EQ(par.assignments.size(), 6u);
  EXPECT_EQ(par.assignments[0].kind, Assignment::Kind::Word);
  EXPECT_EQ(par.assignments[0].text, "ML_BSSN");
  EXPECT_EQ(par.assignments[1].text, "1+log");
  EXPECT_EQ(par.assignments[2].text, "say \"hi\" \\ ");
  EXPECT_EQ(par.assignments[3].text, "1+log"); // as the flesh's first parser read it
  EXPECT_EQ(par.assignments[4].text, "./data/x.h5");
  EXPECT_EQ(par.assignments[5].text, "2nd");
}

TEST(ParGrammar, CommentsInsideTheActiveThornsString) {
  ParFile par = parse("ActiveThorns = \"\n  # the driver\n  CarpetX  # and its IO\n"
                      "  IOUtil, ODESolvers\n\"\nActiveThorns = MoL\n");
  EXPECT_THAT(par.active_thorns, ElementsAre("CarpetX", "IOUtil", "ODESolvers", "MoL"));
  EXPECT_EQ(par.active_thorn_locs[0].line, 3);
  EXPECT_EQ(par.active_thorn_locs[0].column, 3);
}

TEST(ParGrammar, Arrays) {
  ParFile par = parse("A::v[2] = 3\nA::w [ 1] = 4\nA::x = [1, 2.5,\n  3]\n");
  ASSERT_EQ(par.assignments.size(), 5u);
  EXPECT_EQ(par.assignments[0].index, 2);
  EXPECT_EQ(par.assignments[1].index, 1);
  EXPECT_EQ(par.assignments[4].index, 2);
  EXPECT_EQ(par.assignments[4].integer_value, 3);
}

TEST(ParGrammar, ReferencesToParametersSetBefore) {
  ParFile par = parse("CoordBase::xmax = 2\nCoordBase::xmin = -CoordBase::xmax\n");
  EXPECT_EQ(par.assignments[1].integer_value, -2);
  InputError e = error_of("A::a = B::b\n");
  EXPECT_THAT(e.message(), HasSubstr("B::b is not set before this line"));
}

TEST(ParGrammar, EvaluationErrors) {
  EXPECT_THAT(error_of("A::a = $m\n").message(), HasSubstr("unknown variable $m"));
  EXPECT_THAT(error_of("A::a = 1 / 0\n").message(), HasSubstr("division by zero"));
  EXPECT_THAT(error_of("A::a = yes + 1\n").message(), HasSubstr("cannot apply '+'"));
  EXPECT_THAT(error_of("A::a = foo(1)\n").message(), HasSubstr("unknown function foo()"));
  EXPECT_THAT(error_of("A::a = (1 + 2\n").message(), HasSubstr("expected ')'"));
  EXPECT_THAT(error_of("$parfile = 3\n").message(), HasSubstr("predefined"));
}

// Nesting is bounded: a hostile value ends in an error, never in a stack overflow.
TEST(ParGrammar, NestingIsBounded) {
  InputError e = error_of("A::a = " + std::string(100000, '(') + "1\n");
  EXPECT_THAT(e.message(), HasSubstr("nested more than 64 levels"));
  e = error_of("A::a = " + std::string(100000, '-') + "1\n");
  EXPECT_THAT(e.message(), HasSubstr("nested more than 64 levels"));
}

// Every error of a file in one run, each at its line; reading goes on after each.
TEST(ParGrammar, EveryErrorOfTheFile) {
  InputError e = error_of("A::a = 1 2\nA::b = $nope\ngarbage\nA::c = 3\nA::d = (\n");
  ASSERT_EQ(e.diagnostics().size(), 4u) << e.what();
  EXPECT_EQ(e.diagnostics()[0].loc.line, 1);
  EXPECT_EQ(e.diagnostics()[1].loc.line, 2);
  EXPECT_EQ(e.diagnostics()[2].loc.line, 3);
  EXPECT_EQ(e.diagnostics()[3].loc.line, 6); // the unclosed ( reaches the end of the file
  std::string many;
  for (int i = 0; i < 80; ++i) many += "A::a = 1 2\n";
  e = error_of(many);
  ASSERT_EQ(e.diagnostics().size(), 51u);
  EXPECT_EQ(e.diagnostics().back().message, "30 more problems not shown");
  // With keep_going the registry reports them with its own.
  ParFile par = parse_par_text("x.par", "A::a = 1 2\nCactus::cctk_itlast = 5\n", true);
  EXPECT_EQ(par.problems.size(), 1u);
  EXPECT_EQ(par.assignments.size(), 1u);
}

// ---- established thorns -----------------------------------------------------------------------

Registry applied(const std::string& text) {
  Registry r = Registry::with_builtin_components();
  r.apply(parse_par_text("et.par", text));
  return r;
}
InputError apply_error(const std::string& text) {
  try {
    applied(text);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return InputError({}, "");
}

TEST(EtThorns, AliasesMapToBuiltInComponents) {
  Registry r = applied("ActiveThorns = \"IOUtil CarpetIOScalar CarpetX ODESolvers SymBase\"\n"
                       "IOUtil::out_every = 4\nIOScalar::outScalar_vars = \"all\"\n"
                       "CarpetX::ncells_x = 8\nDriver::periodic = \"yes\"\n"
                       "ODESolvers::method = \"RK3\"\nCarpetX::dtfac = 0.25\n"
                       "IO::parfile_write = no\nCactus::presync_mode = \"mixed-error\"\n");
  EXPECT_EQ(r.get_int("IO", "out_every"), 4);
  EXPECT_EQ(r.get_string("IOScalar", "out_vars"), "all");
  EXPECT_EQ(r.get_int("CoordBase", "ncells_x"), 8);
  EXPECT_EQ(r.get_int("CoordBase", "ncells_y"), 128); // CarpetX's default
  EXPECT_EQ(r.get_keyword("CoordBase", "spacing"), "numcells");
  EXPECT_EQ(r.get_real("CoordBase", "xmin"), -1.0);
  EXPECT_TRUE(r.get_bool("Periodic", "periodic"));
  EXPECT_EQ(r.get_keyword("MoL", "ODE_Method"), "RK3-Kutta"); // ODESolvers' RK3 is Kutta's
  EXPECT_EQ(r.get_real("Time", "dtfac"), 0.25);
  EXPECT_TRUE(r.warnings().empty()) << r.warnings().size();
  EXPECT_EQ(applied("ActiveThorns = \"ODESolvers\"\n").get_keyword("MoL", "ODE_Method"),
            "RK2-midpoint");
}

TEST(EtThorns, IgnoredSettingsAreWarnings) {
  Registry r = applied("ActiveThorns = \"CarpetX CarpetIOASCII\"\nCarpetX::out_tsv_vars = \"x\"\n"
                       "IOASCII::out1D_every = 2\n");
  ASSERT_EQ(r.warnings().size(), 3u);
  EXPECT_THAT(r.warnings()[0].message, HasSubstr("'CarpetIOASCII' is accepted but does nothing"));
}

TEST(EtThorns, MissingThornsAreErrorsWithTheirSettings) {
  InputError e = apply_error("ActiveThorns = \"CoordBase\n  ML_BSSN\"\n"
                             "ML_BSSN::harmonicN = 1\nML_BSSN::ShiftGammaCoeff = 0.75\n");
  ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_EQ(e.message(), "thorn 'ML_BSSN' in ActiveThorns is not provided by Saguaro");
  EXPECT_THAT(std::string(e.what()), HasSubstr("ML_BSSN::harmonicN (line 3)"));
  // Saguaro::missing_thorns = "warn": the run goes on, warned.
  Registry r = applied("ActiveThorns = \"Saguaro ML_BSSN\"\nSaguaro::missing_thorns = \"warn\"\n"
                       "ML_BSSN::harmonicN = 1\n");
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0].severity, "warning");
}

TEST(EtThorns, UnsupportedValuesAndTyposStayErrors) {
  InputError e = apply_error("ActiveThorns = \"CarpetX\"\nCarpetX::max_num_levels = 3\n");
  EXPECT_THAT(e.message(), HasSubstr("CarpetX::max_num_levels = 3 is not supported"));
  e = apply_error("Cactus::cctk_itlst = 3\n"); // a built-in component's own name
  EXPECT_EQ(e.message(), "thorn 'Cactus' has no parameter 'cctk_itlst'");
  e = apply_error("ActiveThorns = \"ODESolvers\"\nODESolvers::method = \"RKF78\"\n");
  EXPECT_THAT(e.message(), HasSubstr("is not a keyword of ODESolvers::method (MoL::ODE_Method)"));
}

TEST(EtThorns, CompatReportListsEveryThorn) {
  ParFile par = parse_par_text("et.par", "ActiveThorns = \"IOUtil SymBase WaveToyC\"\n"
                                         "IO::out_dir = $parfile\nWaveToyC::bound = \"zero\"\n");
  Translation t = translate_et(par, Registry::with_builtin_components(), true);
  std::string report = format_compat_report(t, "et.par");
  EXPECT_THAT(report, HasSubstr("runs        IOUtil"));
  EXPECT_THAT(report, HasSubstr("no-op       SymBase"));
  EXPECT_THAT(report, HasSubstr("missing     WaveToyC"));
  EXPECT_THAT(report, HasSubstr("WaveToyC::bound (line 3)"));
  EXPECT_THAT(et_thorn_names(), ::testing::Contains("CarpetIOHDF5"));
}

} // namespace
} // namespace saguaro::param
