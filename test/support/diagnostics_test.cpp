// The diagnostic type every input shares: rendering, notes, several diagnostics in one error.
#include "support/diagnostics.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include <memory>
#include <string>

namespace saguaro::support {
namespace {

std::shared_ptr<const SourceFile> file(std::string text) {
  return std::make_shared<const SourceFile>("in.par", std::move(text));
}

TEST(Diagnostics, ErrorQuotesTheLineWithACaretAndUnderline) {
  auto f = file("A::b = 1\nCactus::cctk_itlst = 5\n");
  InputError e(SourceLoc{f, 2, 9, 10}, "thorn 'Cactus' has no parameter 'cctk_itlst'",
               {Note{{}, "did you mean 'cctk_itlast'?"}});
  EXPECT_EQ(std::string(e.what()), "in.par:2:9: error: thorn 'Cactus' has no parameter "
                                   "'cctk_itlst'\n"
                                   "  Cactus::cctk_itlst = 5\n" +
                                       std::string(10, ' ') + "^" + std::string(9, '~') +
                                       "\nnote: did you mean 'cctk_itlast'?\n");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_EQ(e.loc().column, 9);
  EXPECT_EQ(e.message(), "thorn 'Cactus' has no parameter 'cctk_itlst'");
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_EQ(e.diagnostics().size(), 1u);
}

TEST(Diagnostics, PlacesWithoutALine) {
  EXPECT_EQ(render_diagnostic(SourceLoc{file("x"), 0, 0, 1}, "error", "cannot read"),
            "in.par: error: cannot read\n");
  EXPECT_EQ(render_diagnostic({}, "error", "no file"), "saguaro: error: no file\n");
  EXPECT_EQ(render_diagnostic({}, "note", "a hint"), "note: a hint\n");
}

TEST(Diagnostics, NoteWithAPlace) {
  auto f = file("x = 1\nx = 2\n");
  const std::string text = render(Diagnostic{
      "error", SourceLoc{f, 2, 1, 1}, "x set twice", {Note{SourceLoc{f, 1, 1, 1}, "first here"}}});
  EXPECT_EQ(text, "in.par:2:1: error: x set twice\n  x = 2\n  ^\n"
                  "in.par:1:1: note: first here\n  x = 1\n  ^\n");
}

TEST(Diagnostics, OneErrorCarriesEveryDiagnosticOfAFile) {
  auto f = file("a\nb\nc\n");
  InputError e({Diagnostic{"error", SourceLoc{f, 1, 1, 1}, "bad a", {}},
                Diagnostic{"warning", SourceLoc{f, 3, 1, 1}, "odd c", {}}});
  ASSERT_EQ(e.diagnostics().size(), 2u);
  EXPECT_EQ(e.message(), "bad a");
  EXPECT_EQ(std::string(e.what()), "in.par:1:1: error: bad a\n  a\n  ^\n"
                                   "in.par:3:1: warning: odd c\n  c\n  ^\n");
}

TEST(Diagnostics, MultiByteCharactersTakeOneCaretColumn) {
  auto f = file("\xc3\xa9t\xc3\xa9 = 1\n"); // "été", columns count bytes
  EXPECT_EQ(render_diagnostic(SourceLoc{f, 1, 6, 1}, "error", "e"),
            "in.par:1:6: error: e\n  \xc3\xa9t\xc3\xa9 = 1\n     ^\n");
}

TEST(Diagnostics, CharactersAndNearNames) {
  EXPECT_EQ(describe_character('x'), "'x'");
  EXPECT_EQ(describe_character('\0'), "byte 0x00");
  EXPECT_EQ(describe_character('\x1b'), "byte 0x1b");
  EXPECT_EQ(nearest_name("xmni", {"xmin", "xmax", "dx"}), "xmin");
  EXPECT_EQ(nearest_name("XMIN", {"xmin"}), "xmin");
  EXPECT_EQ(nearest_name("zzzzzz", {"xmin"}), "");
  ASSERT_EQ(did_you_mean("cctk_itlst", {"cctk_itlast"}).size(), 1u);
  EXPECT_EQ(did_you_mean("cctk_itlst", {"cctk_itlast"})[0].message, "did you mean 'cctk_itlast'?");
}

// Issue 23, kind 5: a NUL (or another control byte) on the offending line cut the diagnostic
// where a reader took it as a C string; now it is shown escaped and the caret still lines up.
TEST(Diagnostics, ControlBytesAreShownEscapedAndTheCaretLinesUp) {
  auto f = file(std::string("a\0b = 1\x1b; zz\n", 13));
  const std::string out =
      render_diagnostic(SourceLoc{f, 1, 11, 2}, "error", std::string("bad\0name", 8));
  EXPECT_EQ(out, "in.par:1:11: error: bad\\x00name\n  a\\x00b = 1\\x1b; zz\n" +
                     std::string(2 + 16, ' ') + "^~\n");
  EXPECT_EQ(out.find('\0'), std::string::npos);
  const InputError e(SourceLoc{f, 1, 2, 1}, "unexpected byte 0x00");
  EXPECT_EQ(std::string(e.what()).size(), std::strlen(e.what())) << "what() is whole";
  EXPECT_NE(std::string(e.what()).find("  a\\x00b = 1"), std::string::npos) << e.what();
  EXPECT_EQ(printable("tab\tstays"), "tab\tstays");
}

// Issue 23, kind 6: a million-character undeclared name took seconds in the suggestion search
// (and against a declared name as long, a table of 10^12 cells). Candidates whose length rules
// them out, and tables past a bound, are skipped.
TEST(Diagnostics, NearNamesOfHugeNamesCostNothing) {
  const std::string huge(1000000, 'q');
  std::string other = huge;
  other[500000] = 'r'; // one edit away, but a table of 10^12 cells
  std::vector<std::string> candidates = {"x", "V2", other};
  for (int i = 0; i < 200; ++i) candidates.push_back("name" + std::to_string(i));
  EXPECT_EQ(nearest_name(huge, candidates), "");
  EXPECT_EQ(nearest_name("V", {"x", "V2"}), "V2");
}

TEST(Diagnostics, LoadNamesAMissingFile) {
  try {
    SourceFile::load("/no/such/dir/x.par");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "saguaro: error: cannot open '/no/such/dir/x.par'\n");
  }
}

} // namespace
} // namespace saguaro::support
