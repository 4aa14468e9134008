// .par files: syntax, value kinds, $parfile, and syntax errors with their places.
#include "param/registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace saguaro::param {
namespace {

using support::InputError;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

InputError par_error(const std::string& text) {
  try {
    parse_par_text("bad.par", text);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return InputError({}, "");
}

TEST(ParSyntax, EveryValueKind) {
  ParFile par = parse_par_text("par/wave.par", R"(# a comment line
!DESC "a test run"

ActiveThorns = "CoordBase  MoL
                Saguaro"   # two lines
activethorns = "Wave"
Cactus::cctk_itlast   = 100
CoordBase::dx=1.0d-3
CoordBase::xmax = 1.e5
CoordBase::xmin = -3
Time::dtfac = .25
Wave::big = +2E3
Periodic::periodic_x = yes
Periodic::periodic_y = "no"
Saguaro::equations = "wave.edl"   # trailing comment
IO::out_dir = "out/$parfile-${parfile}"
Cactus::cctk_run_title = "first line # not a comment on the first line
  second # a comment on a later line"
Wave::v[2] = 7
  Wave :: w [ 1 ] = 0.5
)");
  EXPECT_EQ(par.path, "par/wave.par");
  EXPECT_THAT(par.active_thorns, ElementsAre("CoordBase", "MoL", "Saguaro", "Wave"));
  ASSERT_EQ(par.active_thorn_locs.size(), 4u);
  EXPECT_EQ(par.active_thorn_locs[0].line, 4);
  EXPECT_EQ(par.active_thorn_locs[0].column, 17);
  EXPECT_EQ(par.active_thorn_locs[0].length, 9);
  EXPECT_EQ(par.active_thorn_locs[1].column, 28);
  EXPECT_EQ(par.active_thorn_locs[2].line, 5);
  EXPECT_EQ(par.active_thorn_locs[2].column, 17);
  EXPECT_EQ(par.active_thorn_locs[3].line, 6);

  ASSERT_EQ(par.assignments.size(), 13u);
  const Assignment& itlast = par.assignments[0];
  EXPECT_EQ(itlast.thorn, "Cactus");
  EXPECT_EQ(itlast.name, "cctk_itlast");
  EXPECT_EQ(itlast.kind, Assignment::Kind::Number);
  EXPECT_EQ(itlast.text, "100");
  EXPECT_FALSE(itlast.index.has_value());
  EXPECT_EQ(itlast.loc.line, 7);
  EXPECT_EQ(itlast.loc.column, 1);
  EXPECT_EQ(itlast.loc.length, 19);
  EXPECT_EQ(itlast.value_loc.column, 25);
  EXPECT_EQ(itlast.value_loc.length, 3);

  EXPECT_EQ(par.assignments[1].text, "1.0d-3");
  EXPECT_EQ(par.assignments[1].kind, Assignment::Kind::Number);
  EXPECT_EQ(par.assignments[2].text, "1.e5");
  EXPECT_EQ(par.assignments[3].text, "-3");
  EXPECT_EQ(par.assignments[4].text, ".25");
  EXPECT_EQ(par.assignments[5].text, "+2E3");
  EXPECT_EQ(par.assignments[6].kind, Assignment::Kind::Boolean);
  EXPECT_EQ(par.assignments[6].text, "yes");
  EXPECT_EQ(par.assignments[7].kind, Assignment::Kind::String);
  EXPECT_EQ(par.assignments[7].text, "no");
  EXPECT_EQ(par.assignments[8].text, "wave.edl");
  EXPECT_EQ(par.assignments[8].value_loc.column, 22);
  EXPECT_EQ(par.assignments[8].value_loc.length, 10);
  EXPECT_EQ(par.assignments[9].text, "out/wave-wave");
  EXPECT_EQ(par.assignments[10].text, "first line # not a comment on the first line\n  second ");
  EXPECT_EQ(par.assignments[10].value_loc.line, 17);
  EXPECT_EQ(par.assignments[11].index, 2);
  EXPECT_EQ(par.assignments[11].text, "7");
  EXPECT_EQ(par.assignments[12].thorn, "Wave");
  EXPECT_EQ(par.assignments[12].name, "w");
  EXPECT_EQ(par.assignments[12].index, 1);
  EXPECT_EQ(par.assignments[12].loc.column, 3);

  ASSERT_NE(par.find("coordbase", "DX"), nullptr);
  EXPECT_EQ(par.find("coordbase", "DX")->text, "1.0d-3");
  EXPECT_EQ(par.find("Cactus", "nothing"), nullptr);
  EXPECT_EQ(par.source->name(), "par/wave.par");
}

TEST(ParSyntax, FindReturnsTheLastAssignment) {
  ParFile par = parse_par_text("x.par", "A::b = 1\na::B = 2\n");
  EXPECT_EQ(par.find("a", "b")->text, "2");
}

TEST(ParSyntax, CrLfLineEndsAndNoFinalNewline) {
  ParFile par = parse_par_text("x.par", "A::b = 1\r\n# c\r\nA::c = \"s\"");
  ASSERT_EQ(par.assignments.size(), 2u);
  EXPECT_EQ(par.assignments[0].text, "1");
  EXPECT_EQ(par.assignments[1].text, "s");
}

TEST(ParSyntax, MultiLineDesc) {
  ParFile par = parse_par_text("x.par", "!desc \"one\ntwo\"\nA::b = 1\n");
  ASSERT_EQ(par.assignments.size(), 1u);
  EXPECT_EQ(par.assignments[0].loc.line, 3);
}

TEST(ParSyntax, ExpandParfile) {
  EXPECT_EQ(expand_parfile("$parfile", "par/wave.par"), "wave");
  EXPECT_EQ(expand_parfile("runs/$parfile/out", "/abs/path/bssn.par"), "runs/bssn/out");
  EXPECT_EQ(expand_parfile("${parfile}.h5", "wave.par"), "wave.h5");
  EXPECT_EQ(expand_parfile("$parfile", "notes.txt"), "notes.txt");
  EXPECT_EQ(expand_parfile("no variable", "wave.par"), "no variable");
  ParFile par = parse_par_text("dir/maxwell.par", "IO::out_dir = \"$parfile\"\n");
  EXPECT_EQ(par.assignments[0].text, "maxwell");
}

TEST(ParSyntax, ReadsAFile) {
  EXPECT_THROW(parse_par_file("/nonexistent/x.par"), InputError);
}

// ---- syntax errors -----------------------------------------------------------------------------

// `saguaro run FILE.par --set TEXT`: one assignment, $parfile of the .par file, replacing the
// file's value so that the registry sees it set once.
TEST(ParOverrides, ReplaceTheFilesValue) {
  ParFile par = parse_par_text("runs/wave.par", R"(ActiveThorns = "WaveDemo"
Cactus::cctk_itlast = 100
IO::out_dir = "a"
CoordBase::xmin = 0
)");
  std::vector<ParFile> overrides = {parse_override("cactus::CCTK_ITLAST=8", "runs/wave.par"),
                                    parse_override("IO::out_dir = \"o/$parfile\"", "runs/wave.par"),
                                    parse_override("IO::recover = \"auto\"", "runs/wave.par")};
  apply_overrides(par, overrides);
  ASSERT_EQ(par.assignments.size(), 4u);
  EXPECT_EQ(par.assignments[0].name, "xmin");
  EXPECT_EQ(par.find("Cactus", "cctk_itlast")->text, "8");
  EXPECT_EQ(par.find("IO", "out_dir")->text, "o/wave");
  EXPECT_EQ(par.find("IO", "out_dir")->loc.file->name(), "--set");
  EXPECT_EQ(par.find("IO", "recover")->text, "auto");

  Registry registry = Registry::with_builtin_components();
  registry.declare_thorn("WaveDemo");
  registry.apply(par); // nothing set twice
  EXPECT_EQ(registry.get_int("Cactus", "cctk_itlast"), 8);
  EXPECT_EQ(registry.get_keyword("IO", "recover"), "auto");
}

TEST(ParOverrides, OneAssignmentOnly) {
  for (const char* text : {"", "# nothing", "Cactus::cctk_itlast = 1\nIO::out_every = 2",
                           "ActiveThorns = \"X\"\nCactus::cctk_itlast = 1"}) {
    try {
      parse_override(text, "p.par");
      ADD_FAILURE() << "no error for: " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.loc().file->name(), "--set");
      EXPECT_THAT(e.message(), HasSubstr("--set takes one"));
    }
  }
  try {
    parse_override("Cactus::cctk_itlast = ", "p.par");
    ADD_FAILURE() << "no error for a missing value";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--set:1:"));
  }
}

TEST(ParErrors, MissingEquals) {
  InputError e = par_error("# c\nCactus::cctk_itlast 10\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 21);
  EXPECT_EQ(e.message(), "unexpected '1': expected '=' and a value after 'Cactus::cctk_itlast'");
}

TEST(ParErrors, MissingValue) {
  InputError e = par_error("Cactus::cctk_itlast =   # nothing\n");
  EXPECT_EQ(e.loc().line, 1);
  EXPECT_EQ(e.loc().column, 25);
  EXPECT_EQ(e.message(), "expected a value after 'Cactus::cctk_itlast ='");
}

TEST(ParErrors, JunkAfterValue) {
  InputError e = par_error("A::b = 1 2\n");
  EXPECT_EQ(e.loc().column, 10);
  EXPECT_THAT(e.message(), HasSubstr("unexpected '2' after the value"));
  e = par_error("A::b = \"multi\nline\" C::d = 1\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 7);
  EXPECT_EQ(e.loc().length, 4);
}

TEST(ParErrors, BareValueThatIsNeitherNumberNorWord) {
  InputError e = par_error("A::b = wave.edl\n");
  EXPECT_EQ(e.loc().column, 8);
  EXPECT_EQ(e.loc().length, 8);
  EXPECT_EQ(e.message(), "'wave.edl' is not a value: expected a number, a word, or a string in "
                         "quotes");
  e = par_error("A::b = 1.0.0\n");
  EXPECT_THAT(e.message(), HasSubstr("'1.0.0' is not a value"));
  e = par_error("A::b = 1e\n");
  EXPECT_THAT(e.message(), HasSubstr("'1e' is not a number"));
}

TEST(ParErrors, UnterminatedString) {
  InputError e = par_error("A::b = 1\nA::c = \"open\nmore\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 8);
  EXPECT_EQ(e.loc().length, 5);
  EXPECT_THAT(e.message(), HasSubstr("unterminated string"));
}

TEST(ParErrors, NoThorn) {
  InputError e = par_error("cctk_itlast = 3\n");
  EXPECT_EQ(e.loc().column, 1);
  EXPECT_EQ(e.loc().length, 11);
  EXPECT_THAT(e.message(), HasSubstr("'cctk_itlast' has no thorn"));
  e = par_error("Cactus:cctk_itlast = 3\n");
  EXPECT_EQ(e.loc().column, 7);
  EXPECT_THAT(e.message(), HasSubstr("expected '::' between the thorn and the parameter name"));
  e = par_error("Cactus:: = 3\n");
  EXPECT_EQ(e.loc().column, 10);
  EXPECT_THAT(e.message(), HasSubstr("expected a parameter name after 'Cactus::'"));
}

TEST(ParErrors, BadIndex) {
  InputError e = par_error("A::v[x] = 1\n");
  EXPECT_EQ(e.loc().column, 5);
  EXPECT_EQ(e.loc().length, 3);
  EXPECT_THAT(e.message(), HasSubstr("invalid array index"));
  e = par_error("A::v[-1] = 1\n");
  EXPECT_THAT(e.message(), HasSubstr("invalid array index"));
  e = par_error("A::v[1 = 1\n");
  EXPECT_THAT(e.message(), HasSubstr("invalid array index"));
}

TEST(ParErrors, StrayCharactersAndDirectives) {
  InputError e = par_error("\n  = 3\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_THAT(e.message(), HasSubstr("expected 'Thorn::name = value'"));
  e = par_error("!DESCRIPTION \"x\"\n");
  EXPECT_THAT(e.message(), HasSubstr("unknown directive '!DESCRIPTION'"));
  e = par_error("ActiveThorns = 3\n");
  EXPECT_EQ(e.loc().column, 16);
  EXPECT_THAT(e.message(), HasSubstr("ActiveThorns takes a list of thorn names in double quotes"));
  e = par_error("ActiveThorns = \"Coord/Base\"\n");
  EXPECT_EQ(e.loc().column, 17);
  EXPECT_EQ(e.loc().length, 10);
}

TEST(ParErrors, RenderedWithCaret) {
  InputError e = par_error("A::b = 1\nA::c = wave.edl\n");
  EXPECT_THAT(std::string(e.what()), HasSubstr("bad.par:2:8: error:"));
  EXPECT_THAT(std::string(e.what()), HasSubstr("  A::c = wave.edl\n         ^~~~~~~~\n"));
}

// A '#' on the first line of the ActiveThorns string is no comment there: a one-character name,
// refused, and the reading goes on (the fuzzer's input that once looped forever, pushing empty
// names: test/fuzz/regressions/par/active_thorns_hash_on_first_line.par).
TEST(ParSyntax, AHashOnTheActiveThornsFirstLineIsRefusedNotLoopedOn) {
  const InputError e = par_error("ActiveThorns = \"Saguaro Max# x\n  Other\n\"\nA::b = 1\n");
  EXPECT_NE(e.message().find("'#' is not a thorn name"), std::string::npos) << e.message();
}

} // namespace
} // namespace saguaro::param
