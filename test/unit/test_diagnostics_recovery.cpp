// Error recovery in the EDL front end: every error of a file is reported in one run (the first
// 50, then a note counting the rest), in file order, each with its line and column; the parser
// reads on at the next line or at a section's `begin`/`end` line; one bad line does not make
// the lines after it wrong; and no input, however cut, makes the recovery loop or crash.

#include <gtest/gtest.h>

#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "support.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using saguaro::edl::EdlError;
using saguaro::support::Diagnostic;
using namespace saguaro::test;

// The diagnostics of parsing (then lowering) `text`; none when it is accepted.
std::vector<Diagnostic> diagnostics_of(const std::string& text, bool lower = true) {
  try {
    const saguaro::edl::Thorn thorn = saguaro::edl::parse_string(text, "in.edl");
    if (lower) saguaro::calc::lower(thorn, saguaro::calc::LowerOptions{});
  } catch (const EdlError& e) {
    return e.diagnostics();
  }
  return {};
}

std::vector<std::pair<int, int>> places(const std::vector<Diagnostic>& diagnostics) {
  std::vector<std::pair<int, int>> out;
  for (const Diagnostic& d : diagnostics) out.emplace_back(d.loc.line, d.loc.column);
  return out;
}

std::string all_messages(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) out += d.message + "\n";
  return out;
}

// Independent syntax errors in every kind of section, one of them the lexer's.
const std::string kSeveral = "begin thorn T\n"                // 1
                             "begin parameters\n"             // 2
                             "amp : rael \"a\", default: 1\n" // 3: 'rael' at 7
                             "end parameters\n"               // 4
                             "begin variables\n"              // 5
                             "phi psi v_1\n"                  // 6: '1' at 11
                             "end variables\n"                // 7
                             "begin calculation c\n"          // 8
                             "phi psi = 1\n"                  // 9: 'psi' at 5
                             "psi = )\n"                      // 10: ')' at 7
                             "phi = psi $ 1\n"                // 11: '$' at 11 (lexer)
                             "phi = 1\n"                      // 12
                             "end calculation\n"              // 13
                             "begin calculaton d\n"           // 14: 'calculaton' at 7
                             "phi = 1\n"                      // 15 (skipped with the section)
                             "end calculation\n"              // 16
                             "begin calculation e\n"          // 17
                             "phi = 2 ,\n"                    // 18: ',' at 9
                             "end thorn\n";                   // 19: 'end' at 1

TEST(DiagnosticsRecovery, SeveralSyntaxErrorsAreAllReportedInFileOrder) {
  const std::vector<Diagnostic> d = diagnostics_of(kSeveral);
  const std::vector<std::pair<int, int>> expected = {{3, 7},   {6, 11}, {9, 5},  {10, 7},
                                                     {11, 11}, {14, 7}, {18, 9}, {19, 1}};
  EXPECT_EQ(places(d), expected) << all_messages(d);
  ASSERT_EQ(d.size(), expected.size());
  EXPECT_NE(d[0].message.find("unknown parameter type 'rael'"), std::string::npos);
  EXPECT_NE(d[1].message.find("not fixed components"), std::string::npos);
  EXPECT_NE(d[2].message.find("expected '=' after the left side"), std::string::npos);
  EXPECT_NE(d[3].message.find("expected an expression"), std::string::npos);
  EXPECT_NE(d[4].message.find("unexpected character '$'"), std::string::npos);
  EXPECT_NE(d[5].message.find("unknown section 'calculaton'"), std::string::npos);
  EXPECT_NE(d[6].message.find("expected end of line"), std::string::npos);
  EXPECT_NE(d[7].message.find("expected 'end calculation' before 'end thorn'"), std::string::npos);
  for (const Diagnostic& one : d) EXPECT_EQ(one.severity, "error");
}

TEST(DiagnosticsRecovery, TheRenderedErrorQuotesEveryLineWithACaret) {
  try {
    saguaro::edl::parse_string(kSeveral, "in.edl");
    FAIL() << "accepted";
  } catch (const EdlError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("in.edl:3:7: error: unknown parameter type 'rael'"), std::string::npos);
    EXPECT_NE(what.find("in.edl:10:7: error: expected an expression"), std::string::npos);
    EXPECT_NE(what.find("\n  psi = )\n        ^\n"), std::string::npos) << what;
    EXPECT_NE(what.find("\n  phi = 2 ,\n          ^\n"), std::string::npos) << what;
    // The first error is still the one loc() and message() name.
    EXPECT_EQ(e.loc().line, 3);
    EXPECT_EQ(e.loc().column, 7);
  }
}

TEST(DiagnosticsRecovery, AMangledLineIsOneError) {
  // The lexer reports the first bad character of a line; the parser adds nothing there.
  const std::vector<Diagnostic> d = diagnostics_of("begin thorn T\nbegin variables\n"
                                                   "phi @{x} $ \x01\npsi\nend variables\n"
                                                   "end thorn\n");
  EXPECT_EQ(places(d), (std::vector<std::pair<int, int>>{{3, 5}})) << all_messages(d);
}

TEST(DiagnosticsRecovery, SixtyErrorsReportFiftyAndCountTheRest) {
  std::string text = "begin thorn T\nbegin variables\nphi\nend variables\n"
                     "begin calculation c\n";
  for (int i = 0; i < 60; ++i) text += "phi = )\n";
  text += "end calculation\nend thorn\n";
  const std::vector<Diagnostic> d = diagnostics_of(text);
  ASSERT_EQ(d.size(), 51u) << all_messages(d);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(d[i].severity, "error");
    EXPECT_EQ(d[i].loc.line, 6 + i);
    EXPECT_EQ(d[i].loc.column, 7);
  }
  EXPECT_EQ(d.back().severity, "note");
  EXPECT_EQ(d.back().message, "10 more problems not shown");
}

TEST(DiagnosticsRecovery, AnErrorOnlyAtTheEndIsTheOneError) {
  const std::string wave = read_file(fs::path(source_dir()) / "par" / "wave.edl");
  ASSERT_FALSE(wave.empty());
  const std::string cut = wave.substr(0, wave.rfind("end thorn"));
  std::vector<Diagnostic> d = diagnostics_of(cut + "end thron\n");
  ASSERT_EQ(d.size(), 1u) << all_messages(d);
  EXPECT_NE(d[0].message.find("expected 'thorn'"), std::string::npos) << d[0].message;
  d = diagnostics_of(cut);
  ASSERT_EQ(d.size(), 1u) << all_messages(d);
  EXPECT_NE(d[0].message.find("expected 'end thorn'"), std::string::npos) << d[0].message;
}

TEST(DiagnosticsRecovery, AnOpenSectionAtTheEndOfTheFileIsOneError) {
  const std::vector<Diagnostic> d =
      diagnostics_of("begin thorn T\nbegin variables\nphi\nbegin calculation c\nphi = 1\n");
  // `begin calculation` ends the variables (one error); the end of the file ends the
  // calculation (one error), not the thorn as well.
  EXPECT_EQ(places(d), (std::vector<std::pair<int, int>>{{4, 1}, {6, 1}})) << all_messages(d);
}

TEST(DiagnosticsRecovery, KrancParameterLinesAfterABadOneAreNotReadAsParameters) {
  const std::vector<Diagnostic> d = diagnostics_of("begin thorn T\nbegin parameters\n"
                                                   "name: 3\n"
                                                   "description: the amplitude\n"
                                                   "default: 1\n"
                                                   "name: kwav\n"
                                                   "description: the wave number\n"
                                                   "default: )\n"
                                                   "end parameters\nend thorn\n");
  EXPECT_EQ(places(d), (std::vector<std::pair<int, int>>{{3, 7}, {8, 10}})) << all_messages(d);
}

TEST(DiagnosticsRecovery, SemanticErrorsOfSeveralCalculationsAreReportedTogether) {
  const std::vector<Diagnostic> d = diagnostics_of("begin thorn T\n"
                                                   "begin variables\nphi psi\nend variables\n"
                                                   "begin calculation a\n"
                                                   "phi = phj\n" // 6: 'phj' at 7
                                                   "psi = qsi\n" // 7: the same calculation
                                                   "end calculation\n"
                                                   "begin calculation b\n"
                                                   "psi = 1\n"
                                                   "phi = psj\n" // 11: 'psj' at 7
                                                   "end calculation\n"
                                                   "end thorn\n");
  EXPECT_EQ(places(d), (std::vector<std::pair<int, int>>{{6, 7}, {11, 7}})) << all_messages(d);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(d[0].message.find("undeclared name 'phj'"), std::string::npos) << d[0].message;
  EXPECT_NE(d[1].message.find("undeclared name 'psj'"), std::string::npos) << d[1].message;
}

TEST(DiagnosticsRecovery, EveryBoundaryRightHandSideWithoutAnInteriorOneIsReported) {
  // Found after the calculations lower: one error per variable, in file order.
  const std::vector<Diagnostic> d =
      diagnostics_of("begin thorn T\n"
                     "begin variables\nzeta phi psi\nend variables\n"
                     "begin calculation i scheduled in MoL_CalcRHS\nD_t psi = 1\nend calculation\n"
                     "begin calculation b scheduled in MoL_CalcRHS on boundary\n"
                     "D_t zeta = 0\n" // 9
                     "D_t psi = 0\n"
                     "D_t phi = 0\n" // 11
                     "end calculation\n"
                     "end thorn\n");
  EXPECT_EQ(places(d), (std::vector<std::pair<int, int>>{{9, 1}, {11, 1}})) << all_messages(d);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].message.rfind("'zeta' has a D_t equation on the boundary but none", 0), 0u);
  EXPECT_EQ(d[1].message.rfind("'phi' has a D_t equation on the boundary but none", 0), 0u);
}

// Every prefix of the examples parses (and lowers) or is rejected with an EdlError: the
// recovery never loops, never crashes and never throws anything else.
TEST(DiagnosticsRecovery, EveryPrefixOfTheExamplesEndsCleanly) {
  const auto start = std::chrono::steady_clock::now();
  for (const char* example : {"wave.edl", "bssn/bssn.edl"}) {
    const std::string text = read_file(fs::path(source_dir()) / "par" / example);
    ASSERT_FALSE(text.empty()) << example;
    // Every character of the small file; every line end and every 13th character of BSSN.
    const std::size_t stride = text.size() < 4000 ? 1 : 13;
    for (std::size_t n = 0; n <= text.size(); ++n) {
      const bool line_end = n == text.size() || text[n] == '\n';
      if (n % stride != 0 && !line_end) continue;
      const std::string prefix = text.substr(0, n);
      try {
        const saguaro::edl::Thorn thorn = saguaro::edl::parse_string(prefix, example);
        saguaro::calc::lower(thorn, saguaro::calc::LowerOptions{});
      } catch (const EdlError& e) {
        ASSERT_FALSE(e.diagnostics().empty());
        ASSERT_LE(e.diagnostics().size(), 51u);
      } catch (const std::exception& e) {
        FAIL() << example << " cut at " << n << ": " << e.what();
      }
    }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

// ---- the CLI ----------------------------------------------------------------------------------

TEST(DiagnosticsRecoveryCli, InspectPrintsEveryErrorAndExitsTwo) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  const fs::path file = dir.path / "several.edl";
  std::ofstream(file) << kSeveral;
  const CliRun run = run_saguaro("inspect \"" + file.string() + "\"");
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.out, "");
  std::size_t at = 0;
  for (const char* place : {":3:7: error:", ":6:11: error:", ":9:5: error:", ":10:7: error:",
                            ":11:11: error:", ":14:7: error:", ":18:9: error:", ":19:1: error:"}) {
    const std::size_t found = run.err.find(file.string() + place, at);
    ASSERT_NE(found, std::string::npos) << place << " (in file order)\n" << run.err;
    at = found + 1;
  }
}

TEST(DiagnosticsRecoveryCli, CheckOfAParFilePrintsEveryErrorOfItsEdlFile) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  std::ofstream(dir.path / "several.edl") << kSeveral;
  std::ofstream(dir.path / "several.par") << "ActiveThorns = \"Saguaro T\"\n"
                                             "Saguaro::equations = \"several.edl\"\n";
  const CliRun run = run_saguaro("check \"" + (dir.path / "several.par").string() + "\"");
  EXPECT_EQ(run.status, 2) << run.err;
  std::size_t errors = 0;
  for (std::size_t at = run.err.find(": error: "); at != std::string::npos;
       at = run.err.find(": error: ", at + 1))
    ++errors;
  EXPECT_EQ(errors, 8u) << run.err;
  EXPECT_NE(run.err.find("several.edl:19:1: error: expected 'end calculation' before 'end thorn'"),
            std::string::npos)
      << run.err;
}

} // namespace
