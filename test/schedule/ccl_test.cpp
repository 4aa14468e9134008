// schedule.ccl parsing: every clause, case-insensitive keywords, and the diagnostics (file,
// line, column, did-you-mean) of malformed input.
#include "support.hpp"

using namespace saguaro::schedule;
using namespace saguaro::schedule::test;
using saguaro::support::InputError;
using ::testing::HasSubstr;

namespace {

TEST(ScheduleCcl, EveryClause) {
  auto items = parse(R"(# A comment line
SCHEDULE Foo AT CCTK_INITIAL AS FooAlias BEFORE (A, B) AFTER C AFTER (D E) WHILE Thorn::go IF Thorn::flag
{
  LANG: C   # a trailing comment
  STORAGE: g1 g2[3]
  SYNC: g ; OPTIONS: GLOBAL loop-local
  TRIGGERS: t1
  READS: ADMBase::lapse(everywhere)
  WRITES: w(interior), v
  TAGS: Checkpoint=no index="1 2"
} "Set up the initial data"

schedule group Grp in Foo
{
} "A group inside a function"
)",
                     "Thorn");
  ASSERT_EQ(items.size(), 2u);
  const ScheduleItem& f = items[0];
  EXPECT_EQ(f.name, "Foo");
  EXPECT_EQ(f.thorn, "Thorn");
  EXPECT_FALSE(f.is_group);
  EXPECT_TRUE(f.at);
  EXPECT_EQ(f.where, "INITIAL");
  EXPECT_EQ(f.alias, "FooAlias");
  EXPECT_EQ(f.while_var, "Thorn::go");
  EXPECT_EQ(f.if_var, "Thorn::flag");
  EXPECT_EQ(f.before, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(f.after, (std::vector<std::string>{"C", "D", "E"}));
  EXPECT_EQ(f.lang, "C");
  EXPECT_EQ(f.storage, (std::vector<std::string>{"g1", "g2[3]"}));
  EXPECT_EQ(f.sync, (std::vector<std::string>{"g"}));
  EXPECT_EQ(f.options, (std::vector<std::string>{"global", "loop-local"}));
  EXPECT_EQ(f.description, "Set up the initial data");
  EXPECT_EQ(f.loc.line, 2);
  EXPECT_EQ(f.loc.column, 10);

  const ScheduleItem& g = items[1];
  EXPECT_EQ(g.name, "Grp");
  EXPECT_TRUE(g.is_group);
  EXPECT_FALSE(g.at);
  EXPECT_EQ(g.where, "Foo");
  EXPECT_TRUE(g.lang.empty());
  EXPECT_EQ(g.description, "A group inside a function");
}

TEST(ScheduleCcl, KeywordsAndBinsIgnoreCase) {
  auto items = parse("schedule a at evol\n{\n  lang: c\n} \"a\"\n"
                     "Schedule b At Cctk_PostStep After a\n{\n} \"b\"\n"
                     "SCHEDULE c AT PARAMCHECK { LANG: C } \"one line\"\n");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].where, "EVOL");
  EXPECT_EQ(items[0].lang, "c");
  EXPECT_EQ(items[1].where, "POSTSTEP");
  EXPECT_EQ(items[1].after, (std::vector<std::string>{"a"}));
  EXPECT_EQ(items[2].where, "PARAMCHECK");
  EXPECT_EQ(items[2].lang, "C");
}

TEST(ScheduleCcl, EveryBinIsAccepted) {
  for (const std::string& bin : bins()) {
    auto items = parse("SCHEDULE f AT CCTK_" + bin + "\n{\n} \"x\"\n");
    ASSERT_EQ(items.size(), 1u);
    EXPECT_EQ(items[0].where, bin);
  }
}

TEST(ScheduleCcl, TopLevelStorageAndEmptyFiles) {
  EXPECT_TRUE(parse("").empty());
  EXPECT_TRUE(parse("# only comments\n\n# here\n").empty());
  auto items = parse("STORAGE: evolved_vars[3], rhs_vars\nstorage: other\n"
                     "SCHEDULE f AT ANALYSIS\n{\n  LANG: C\n} \"f\"");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].name, "f");
}

TEST(ScheduleCcl, HeaderMaySpanLinesAndGroupMayBeAName) {
  auto items = parse("SCHEDULE f\n  AT INITIAL\n  AFTER g\n{\n} \"f\"\n"
                     "SCHEDULE group AT INITIAL\n{\n} \"a function named group\"\n");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].after, (std::vector<std::string>{"g"}));
  EXPECT_EQ(items[1].name, "group");
  EXPECT_FALSE(items[1].is_group);
}

// ---- errors -------------------------------------------------------------------------------

TEST(ScheduleCclErrors, UnknownBinSuggestsTheNearest) {
  InputError e = error_of([] { parse("\nSCHEDULE foo AT CCTK_EVOLL\n{\n} \"x\"\n"); });
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 17);
  EXPECT_THAT(e.message(), HasSubstr("unknown schedule bin 'CCTK_EVOLL'"));
  EXPECT_THAT(notes_of(e), HasSubstr("did you mean 'EVOL'?"));
  EXPECT_THAT(std::string(e.what()), HasSubstr("test.ccl:2:17: error:"));
}

TEST(ScheduleCclErrors, MissingDescription) {
  InputError e =
      error_of([] { parse("SCHEDULE foo AT EVOL\n{\n  LANG: C\n}\nSCHEDULE bar AT EVOL\n"); });
  EXPECT_EQ(e.loc().line, 4);
  EXPECT_EQ(e.loc().column, 2);
  EXPECT_THAT(e.message(), HasSubstr("expected the description string of 'foo'"));
}

TEST(ScheduleCclErrors, UnterminatedBraceAtEndOfFile) {
  InputError e = error_of([] { parse("SCHEDULE foo AT EVOL\n  {\n  LANG: C\n"); });
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_THAT(e.message(), HasSubstr("unterminated '{' of 'foo'"));
}

TEST(ScheduleCclErrors, UnterminatedBraceBeforeTheNextItem) {
  InputError e = error_of(
      [] { parse("SCHEDULE foo AT EVOL\n{\n  LANG: C\n\nSCHEDULE bar AT EVOL\n{\n} \"b\"\n"); });
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 1);
  EXPECT_THAT(e.message(), HasSubstr("before the next SCHEDULE"));
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_EQ(e.notes()[0].loc.line, 5);
}

TEST(ScheduleCclErrors, ConditionalBlocksAreRejectedAtTheIf) {
  InputError e = error_of([] {
    parse("SCHEDULE foo AT EVOL\n{\n} \"f\"\n\n  if (CCTK_Equals(method, \"RK4\") && x > 1)\n{\n"
          "  SCHEDULE bar AT EVOL\n  {\n  } \"b\"\n}\n");
  });
  EXPECT_EQ(e.loc().line, 5);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_EQ(e.message(), "conditional schedule blocks are not supported");
}

TEST(ScheduleCclErrors, UnknownClauseSuggestsTheNearest) {
  InputError e = error_of([] { parse("SCHEDULE foo AT EVOL\n{\n  STORGE: g\n} \"f\"\n"); });
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_EQ(e.loc().column, 3);
  EXPECT_THAT(e.message(), HasSubstr("unknown clause 'STORGE'"));
  EXPECT_THAT(notes_of(e), HasSubstr("did you mean 'STORAGE'?"));
}

TEST(ScheduleCclErrors, MalformedHeaders) {
  InputError no_at = error_of([] { parse("SCHEDULE foo EVOL\n{\n} \"f\"\n"); });
  EXPECT_EQ(no_at.loc().column, 14);
  EXPECT_THAT(no_at.message(), HasSubstr("expected AT (a bin) or IN (a group) after 'foo'"));

  InputError bad_keyword = error_of([] { parse("SCHEDULE foo AT EVOL BEFOR x\n{\n} \"f\"\n"); });
  EXPECT_EQ(bad_keyword.loc().column, 22);
  EXPECT_THAT(notes_of(bad_keyword), HasSubstr("did you mean 'BEFORE'?"));

  InputError unclosed = error_of([] { parse("SCHEDULE foo AT EVOL BEFORE (a b\n{\n} \"f\"\n"); });
  EXPECT_EQ(unclosed.loc().column, 29);
  EXPECT_THAT(unclosed.message(), HasSubstr("unclosed '('"));

  InputError no_colon = error_of([] { parse("SCHEDULE foo AT EVOL\n{\n  LANG C\n} \"f\"\n"); });
  EXPECT_EQ(no_colon.loc().line, 3);
  EXPECT_EQ(no_colon.loc().column, 8);
  EXPECT_THAT(no_colon.message(), HasSubstr("expected ':' after LANG"));

  InputError stray = error_of([] { parse("SCHEDUEL foo AT EVOL\n"); });
  EXPECT_EQ(stray.loc().column, 1);
  EXPECT_THAT(notes_of(stray), HasSubstr("did you mean 'SCHEDULE'?"));

  InputError string = error_of([] { parse("SCHEDULE foo AT EVOL\n{\n} \"no end\n"); });
  EXPECT_EQ(string.loc().line, 3);
  EXPECT_THAT(string.message(), HasSubstr("unterminated string"));

  InputError trailing = error_of([] { parse("SCHEDULE foo AT EVOL\n{\n} \"f\" extra\n"); });
  EXPECT_EQ(trailing.loc().column, 7);

  InputError char_error = error_of([] { parse("SCHEDULE foo AT EVOL\n{\n  LANG: C$\n} \"f\"\n"); });
  EXPECT_EQ(char_error.loc().line, 3);
  EXPECT_EQ(char_error.loc().column, 10);

  InputError two_langs =
      error_of([] { parse("SCHEDULE f AT EVOL\n{\n  LANG: C Fortran\n} \"f\"\n"); });
  EXPECT_THAT(two_langs.message(), HasSubstr("exactly one language"));
}

// ---- the built-in components ----------------------------------------------------------------

TEST(ScheduleBuiltin, ParsesAndValidates) {
  Schedule s = Schedule::with_builtin_components();
  EXPECT_NO_THROW(s.validate());
  EXPECT_EQ(names(s.ordered("BASEGRID")),
            (std::vector<std::string>{"Driver_SetupGrid", "Time_Simple"}));
  EXPECT_EQ(names(s.ordered("CCTK_EVOL")), (std::vector<std::string>{"MoL_Evolution"}));
  EXPECT_EQ(names(s.ordered("MoL_Evolution")),
            (std::vector<std::string>{"MoL_CalcRHS", "MoL_PostStep"}));
  EXPECT_EQ(names(s.ordered("MoL_PostStep")),
            (std::vector<std::string>{"Driver_SyncEvolved", "Boundary_ApplyOuter"}));
  EXPECT_EQ(names(s.ordered("ANALYSIS")),
            (std::vector<std::string>{"IOScalar_OutputNorms", "IOHDF5_Output", "IO_Checkpoint"}));
  for (const ScheduleItem& item : s.items()) {
    EXPECT_FALSE(item.thorn.empty());
    EXPECT_TRUE(item.loc.valid()) << item.name;
    EXPECT_THAT(item.loc.file->name(), HasSubstr("schedule/builtin/" + item.thorn + ".ccl"));
  }
  std::string tree = s.tree();
  EXPECT_THAT(tree, HasSubstr("[CCTK_EVOL]\n  MoL::MoL_Evolution: "));
  EXPECT_THAT(tree, HasSubstr("\n    GROUP MoL::MoL_CalcRHS: "));
  EXPECT_THAT(tree, HasSubstr("\n      Driver::Boundary_RHS: "));
}

TEST(ScheduleBuiltin, EdlCalculationsJoinTheBuiltins) {
  // What the host does with a calculation `scheduled in MoL_CalcRHS`.
  Schedule s = Schedule::with_builtin_components();
  ScheduleItem rhs;
  rhs.name = "wave_rhs";
  rhs.thorn = "Wave";
  rhs.at = false;
  rhs.where = "MoL_CalcRHS";
  rhs.before = {"Boundary_RHS"};
  rhs.lang = "EDL";
  s.add(rhs);
  EXPECT_NO_THROW(s.validate());
  EXPECT_EQ(names(s.ordered("mol_calcrhs")),
            (std::vector<std::string>{"wave_rhs", "Boundary_RHS"}));
}

} // namespace
