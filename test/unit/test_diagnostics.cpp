// Diagnostics of the EDL front end: every malformed input must be rejected with an EdlError
// that names the right line and column and says what went wrong; the CLI must print it as
// `file:line:col: error: ...` with the quoted line and a caret, exit with status 2 and write
// nothing to stdout; and no input, however mangled, may escape as any other exception.

#include <gtest/gtest.h>

#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "support.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using saguaro::calc::LowerOptions;
using saguaro::edl::EdlError;
using namespace saguaro::test;

// ---- running the front end ------------------------------------------------------------------

struct Outcome {
  enum class Kind { Accepted, Rejected, OtherException };
  Kind kind = Kind::Accepted;
  int line = 0, column = 0;
  std::string message;  // EdlError::message(), or what() of another exception
  std::string rendered; // EdlError::what()
  std::vector<saguaro::edl::Note> notes;
};

Outcome compile(const std::string& text, LowerOptions options = {},
                const std::string& name = "<input>") {
  Outcome out;
  try {
    saguaro::calc::lower(saguaro::edl::parse_string(text, name), options);
  } catch (const EdlError& e) {
    out.kind = Outcome::Kind::Rejected;
    out.line = e.loc().line;
    out.column = e.loc().column;
    out.message = e.message();
    out.rendered = e.what();
    out.notes = e.notes();
  } catch (const std::exception& e) {
    out.kind = Outcome::Kind::OtherException;
    out.message = e.what();
  } catch (...) {
    out.kind = Outcome::Kind::OtherException;
    out.message = "(not a std::exception)";
  }
  return out;
}

// ---- building inputs --------------------------------------------------------------------------
// Nothing is indented, so a column is the 1-based position in the line as written below.

// Lines 1-10. Line 3: `amp : real ...`; line 6: the grid functions; line 9: the temporary.
const std::string kDecls = "begin thorn T\n"                        // 1
                           "begin parameters\n"                     // 2
                           "amp : real \"amplitude\", default: 1\n" // 3
                           "end parameters\n"                       // 4
                           "begin variables\n"                      // 5
                           "phi psi v_i w_i g_ij\n"                 // 6
                           "end variables\n"                        // 7
                           "begin temporaries\n"                    // 8
                           "tmp\n"                                  // 9
                           "end temporaries\n";                     // 10

// `body` starts at line 12, column 1, inside `begin calculation c` (line 11; 'c' at column 19).
std::string calc(const std::string& body) {
  return kDecls + "begin calculation c\n" + body + "\nend calculation\nend thorn\n";
}
// `body` starts at line 11 (after the declarations), then `end thorn`.
std::string after_decls(const std::string& body) {
  return kDecls + body + "end thorn\n";
}
// `body` starts at line 2.
std::string thorn(const std::string& body) {
  return "begin thorn T\n" + body + "end thorn\n";
}
// `body` (parameter lines) starts at line 3.
std::string params(const std::string& body) {
  return "begin thorn T\nbegin parameters\n" + body + "\nend parameters\nend thorn\n";
}

// A user derivative operator Dp on line 12 (lines 11-13), for the calculation that follows.
const std::string kDerivatives = "begin derivatives\n"
                                 "Dp u_i = (u_(i+1) - u_(i)) / h\n"
                                 "end derivatives\n";

// ---- the table ----------------------------------------------------------------------------

struct Case {
  std::string name;
  std::string text;
  int line = 0, column = 0;
  std::vector<std::string> message;   // substrings of message()
  std::string note;                   // substring of one note's message; "" = none checked
  int note_line = 0, note_column = 0; // 0: the note's place is not checked

  Case& also(std::string m) {
    message.push_back(std::move(m));
    return *this;
  }
  Case& with_note(std::string n, int l = 0, int c = 0) {
    note = std::move(n);
    note_line = l;
    note_column = c;
    return *this;
  }
};

// Readable test output: a case shows as its name, not as bytes.
[[maybe_unused]] void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

Case C(std::string name, std::string text, int line, int column, std::string message) {
  Case c;
  c.name = std::move(name);
  c.text = std::move(text);
  c.line = line;
  c.column = column;
  c.message.push_back(std::move(message));
  return c;
}

std::vector<Case> cases() {
  return {
      // ---- lexical ------------------------------------------------------------------------
      C("BadCharacter", thorn("begin variables\nphi @\nend variables\n"), 3, 5,
        "unexpected character '@'"),
      C("ControlByte", thorn("begin variables\nphi \x01\nend variables\n"), 3, 5, "byte 0x01"),
      C("UnterminatedString", params("a : real \"abc, default: 1"), 3, 10, "unterminated string"),
      C("MalformedExponent", calc("phi = 1e+"), 12, 7, "malformed number"),
      C("MalformedFortranExponent", calc("phi = 2.5d"), 12, 7, "malformed number"),
      C("ComponentOutOfRange", calc("v_4 = 1"), 12, 3, "component index '4' is out of range"),
      C("ComponentZero", calc("phi = g_10"), 12, 10, "component index '0' is out of range"),

      // ---- structure ----------------------------------------------------------------------
      C("MissingEndThorn", "begin thorn T\nbegin variables\nphi\nend variables\n", 5, 1,
        "expected 'end thorn'"),
      C("EmptyFile", "", 1, 1, "expected 'begin thorn NAME'"),
      C("EndCalculationMissingBeforeBegin", calc("phi = 1\nbegin calculation d\npsi = 2"), 13, 1,
        "expected 'end calculation' before a new section")
          .also("calculation 'c' is still open"),
      C("EndCalculationMissingAtEof", kDecls + "begin calculation c\nphi = 1\n", 13, 1,
        "expected 'end calculation' for 'c'"),
      C("UnknownSection", thorn("begin foo\nend foo\n"), 2, 7, "unknown section 'foo'")
          .also("variables, temporaries, parameters, group, derivatives, calculation"),
      C("WrongClosingWord", calc("phi = 1\nend variables"), 13, 5,
        "expected 'end calculation', found 'variables'"),
      C("TextAfterEndThorn", "begin thorn T\nend thorn\nphi\n", 3, 1,
        "unexpected text after 'end thorn'"),
      C("TextAfterEndThornOnSameLine", "begin thorn T\nend thorn T\n", 2, 11,
        "expected end of line"),
      C("MissingThornName", "begin thorn\nend thorn\n", 1, 12, "expected a thorn name"),
      C("MissingEquals", calc("phi 1"), 12, 5, "expected '=' after the left side"),
      C("TwoEquals", calc("phi = 1 = 2"), 12, 9, "unexpected '='"),
      C("UnexpectedRParen", calc("phi = 1 + 2)"), 12, 12, "unexpected ')'"),
      C("UnclosedParen", calc("phi = (1 + 2"), 12, 7, "this '(' is not closed: expected ')'"),
      C("UnclosedCall", calc("phi = sin(1 + 2"), 12, 10, "this '(' is not closed: expected ')'"),
      C("MissingOperandAfterDerivative", calc("phi = D_1"), 12, 10, "expected the operand of 'D'"),
      C("OperatorAfterDerivative", calc("phi = D_1 + psi"), 12, 11, "expected the operand of 'D'"),
      C("TimeDerivativeOnRightSide", calc("phi = D_t psi"), 12, 7,
        "'D_t' may only stand on the left side"),
      C("TimeDerivativeWithoutVariable", calc("D_t = 1"), 12, 5,
        "expected the evolved variable after 'D_t'"),
      C("DerivativeOnLeftSide", calc("D_1 phi = 1"), 12, 1, "cannot be assigned to"),
      C("EmptyRightSide", calc("phi ="), 12, 5, "expected an expression after '='"),
      C("DanglingOperator", calc("phi = 1 +"), 12, 9, "expected an expression after '+'"),
      C("DanglingPower", calc("phi = 2**"), 12, 8, "expected an expression after '**'"),
      C("MissingIndexAfterUnderscore", calc("phi = v_"), 12, 9, "expected index letters"),
      C("ShiftOutsideDerivatives", calc("phi = v_(i+1)"), 12, 9,
        "only allowed in a derivatives block"),
      C("PrimeAfterComponent", calc("phi = v_1'"), 12, 9, "a prime can only follow"),
      C("UnknownFeature", thorn("use cse vectorz\n"), 2, 9, "unknown feature 'vectorz'")
          .also("loopcontrol, vectors, opencl, jacobian, cse, cakernel"),
      C("UseWithoutFeature", thorn("use\n"), 2, 4, "expected a feature after 'use'")
          .also("loopcontrol, vectors, opencl, jacobian, cse, cakernel"),
      C("ScheduledWithoutBin", thorn("begin calculation c scheduled\nend calculation\n"), 2, 30,
        "expected 'at' or 'in' after 'scheduled'"),
      C("UnknownParameterType", params("a : double \"x\""), 3, 5,
        "unknown parameter type 'double'"),
      C("UnknownParameterAttribute", params("a : real \"x\", defualt: 1"), 3, 15,
        "unknown parameter attribute 'defualt'"),
      C("KeywordDefaultNotInValues",
        params("k : keyword \"k\", values: \"one\" \"two\", default: \"three\""), 3, 48,
        "default \"three\" of 'k' is not one of its values"),
      C("BooleanDefaultNotBoolean", params("b : boolean \"b\", default: maybe"), 3, 27,
        "expected a boolean default"),
      C("BooleanWithRange", params("b : boolean \"b\", default: true, range: 0 to 1"), 3, 33,
        "a boolean parameter takes no range"),
      C("RangeWithoutTo", params("a : real \"x\", range: 0"), 3, 23,
        "expected 'to' between the ends of a range"),
      C("RangeWithCommaForTo", params("a : real \"x\", range: 0, 100"), 3, 23,
        "expected 'to' between the ends of a range"),
      C("DefaultOutsideRange", params("a : real \"x\", default: 200, range: 0 to 100"), 3, 24,
        "default 200 of 'a' is outside its range 0 to 100"),
      C("EmptyRange", params("a : real \"x\", range: 5 to 1"), 3, 22, "range of 'a' is empty"),
      C("NonConstantDefault", params("a : real \"x\", default: x"), 3, 24, "'x' is not a constant"),
      C("DefaultFromParameter",
        params("amp : real \"a\", default: 1\nb : real \"b\", default: 2*amp"), 4, 26,
        "'amp' is not a constant"),
      C("DefaultFromGridFunction",
        "begin thorn T\nbegin variables\nphi\nend variables\nbegin parameters\n"
        "a : real \"x\", default: phi\nend parameters\nend thorn\n",
        6, 24, "'phi' is not a constant"),
      C("IntDefaultNotInteger", params("n : int \"n\", default: 1.5"), 3, 23, "not an integer"),
      C("ConstantDivisionByZero", params("a : real \"x\", default: 1/(2-2)"), 3, 25,
        "division by zero"),
      C("ConstantLogOfZero", params("a : real \"x\", default: log(0)"), 3, 24, "no finite value"),
      C("DivisionByZeroInEquation", calc("phi = 1/0"), 12, 8, "division by zero"),
      C("LiteralOverflow", calc("phi = 1e999"), 12, 7, "too large for double precision"),
      C("LiteralOverflowInDefault", params("a : real \"x\", default: 1e999"), 3, 24,
        "too large for double precision"),
      C("ProductOverflow", calc("phi = 1e308 * 10"), 12, 13, "finite"),

      // ---- semantic -----------------------------------------------------------------------
      C("UndeclaredName", calc("phi = phj"), 12, 7, "undeclared name 'phj'")
          .with_note("did you mean 'phi'?"),
      C("UndeclaredLeftSide", calc("foo = 1"), 12, 1, "undeclared name 'foo'"),
      C("GroupMemberWithoutIndices",
        after_decls("begin group G\nphi : \"scalar\"\nv : \"bare\"\nend group\n"), 13, 1,
        "'v' has 1 index"),
      C("GroupMemberIsTemporary", after_decls("begin group G\ntmp : \"t\"\nend group\n"), 12, 1,
        "temporary"),
      C("GroupMemberRankMismatch", after_decls("begin group G\ng_i : \"one index\"\nend group\n"),
        12, 1, "'g' has 2 indices"),
      C("UnknownFunction", calc("phi = sine(psi)"), 12, 7, "unknown function 'sine'")
          .also("sin cos tan asin acos atan atan2 sinh cosh tanh exp log sqrt abs pow min max "
                "sign if")
          .with_note("did you mean 'sin'?"),
      C("TooFewArguments", calc("phi = atan2(psi)"), 12, 7, "'atan2' takes 2 arguments, given 1"),
      C("TooManyArguments", calc("phi = sin(psi, amp)"), 12, 7, "'sin' takes 1 argument, given 2"),
      C("IndexPositionMismatch", calc("v_i = w^i"), 12, 9, "index mismatch")
          .also("lower on the left side but upper on the right side")
          .with_note("left side index is here", 12, 3),
      C("FreeIndexOnlyOnRight", calc("phi = v_i"), 12, 9,
        "index 'i' is free on the right side but not on the left side")
          .with_note("left side is here", 12, 1),
      C("DifferentFreeIndicesInSum", calc("v_i = v_i + w_j"), 12, 13,
        "the terms of this sum have different free indices")
          .also("_i in the first term, _j in this one"),
      C("DifferentFreeIndicesInDifference", calc("v_i = v_i - g_ij"), 12, 13,
        "the terms of this sum have different free indices")
          .also("_i in the first term, _i _j in this one"),
      C("RepeatedLowerIndex", calc("phi = v_i w_i"), 12, 13,
        "index 'i' appears twice as a lower index"),
      C("RepeatedUpperIndex", calc("phi = v^i w^i"), 12, 13,
        "index 'i' appears twice as an upper index"),
      C("IndexThreeTimesWithDerivative", calc("phi = D_ii v_i"), 12, 14,
        "index 'i' appears 3 times"),
      C("IndexThreeTimesInProduct", calc("phi = v_i w^i v_i"), 12, 17, "index 'i' appears 3 times"),
      C("IndexThreeTimesAccepted", calc("v_i = w^i v_i w_i"), 12, 17, "index 'i' appears 3 times"),
      C("LeftIndexSummedOnRight", calc("v_i = w^i w_i"), 12, 9,
        "index 'i' is summed on the right side but is free on the left side"),
      C("IndexAcrossDivision", calc("phi = v_i / w^i"), 12, 15, "appears twice across a division"),
      C("FreeIndexInExponent", calc("phi = 2**v_i"), 12, 12, "an exponent cannot carry"),
      C("RankMismatchOnRight", calc("phi = v_ij"), 12, 7, "'v' has 1 index, used with 2"),
      C("RankMismatchOnRightTooFew", calc("phi = g_i"), 12, 7, "'g' has 2 indices, used with 1"),
      C("RankMismatchOnLeft", calc("v = phi"), 12, 1, "'v' has 1 index, assigned with 0"),
      C("IndexTwiceOnLeft", calc("g_ii = phi"), 12, 4, "index 'i' appears twice on the left"),
      C("ComponentNameTypo", calc("phi = v4"), 12, 7, "undeclared name 'v4'")
          .with_note("did you mean 'v'?"),
      C("TimeDerivativeOfTemporary", calc("D_t tmp = 1"), 12, 1, "'tmp' is a temporary"),
      C("TwoTimeDerivatives", calc("D_t phi = 1\nD_t phi = 2"), 13, 1,
        "'phi' has two D_t equations")
          .with_note("the first is here", 12, 1),
      C("TwoTimeDerivativesAcrossCalculations",
        calc("D_t phi = 1\nend calculation\nbegin calculation d\nD_t phi = 2"), 15, 1,
        "'phi' has two D_t equations")
          .with_note("the first is here", 12, 1),
      C("TwoTimeDerivativesOfComponent", calc("D_t v_2 = 1\nD_t v_i = 2"), 13, 1,
        "'v2' has two D_t equations")
          .with_note("the first is here", 12, 1),
      C("TemporaryBeforeAssignment", calc("phi = tmp\ntmp = 1"), 12, 7,
        "temporary 'tmp' is used before it is assigned"),
      C("AssignParameter", calc("amp = 1"), 12, 1, "'amp' is a parameter and cannot be assigned"),
      C("AssignBuiltin", calc("x = 1"), 12, 1, "'x' is built in and cannot be assigned"),
      C("DeclareBuiltin", thorn("begin variables\nphi x\nend variables\n"), 3, 5,
        "'x' is a built-in name"),
      C("DeclareFunction", thorn("begin temporaries\nsin\nend temporaries\n"), 3, 1,
        "'sin' is a function"),
      C("DeclareDerivativeD", thorn("begin variables\nphi D\nend variables\n"), 3, 5, "'D'"),
      C("DuplicateDeclaration",
        thorn("begin variables\nphi\nend variables\nbegin temporaries\nphi\nend temporaries\n"), 6,
        1, "'phi' is declared twice")
          .with_note("first declared here", 3, 1),
      C("ParameterAndVariableSameName",
        "begin thorn T\nbegin parameters\nphi : real \"p\"\nend parameters\nbegin variables\nphi\n"
        "end variables\nend thorn\n",
        6, 1, "'phi' is declared twice")
          .with_note("first declared here", 3, 1),
      C("RepeatedIndexInDeclaration", thorn("begin variables\ng_ii\nend variables\n"), 3, 4,
        "index 'i' repeats in the declaration of 'g'"),
      C("ComponentClashesWithName", thorn("begin variables\nv1 v_i\nend variables\n"), 3, 4,
        "component 'v1' of 'v'")
          .with_note("'v1' is declared here", 3, 1),
      C("NameClashesWithComponent", thorn("begin variables\nv_i v1\nend variables\n"), 3, 5,
        "'v1' is already the name of a component of 'v'"),
      C("DuplicateCalculation",
        kDecls + "begin calculation c\nphi = 1\nend calculation\nbegin calculation c\npsi = 1\n"
                 "end calculation\nend thorn\n",
        14, 19, "calculation 'c' is defined twice")
          .with_note("first defined here", 11, 19),
      C("EmptyCalculation", calc(""), 11, 19, "calculation 'c' has no equations"),
      C("DerivativeUsesForeignGridFunction",
        after_decls("begin derivatives\nDp u_i = (u_(i+1) - phi) / h\nend derivatives\n"), 12, 21,
        "a derivative definition may only use its operand 'u'")
          .also("found 'phi'"),
      C("DerivativeOperandWithoutDirection",
        after_decls("begin derivatives\nDp u = u\nend derivatives\n"), 12, 4,
        "needs a direction index"),
      C("DerivativeShiftedAlongUnknownDirection",
        after_decls("begin derivatives\nDp u_i = u_(j+1)\nend derivatives\n"), 12, 13,
        "expected one of the operator's direction indices"),
      C("DerivativeDefinedTwice",
        after_decls("begin derivatives\nDp u_i = u_(i+1)\nDp u_i = u_(i-1)\nend derivatives\n"), 13,
        1, "derivative operator 'Dp' is defined twice")
          .with_note("first defined here", 12, 1),
      C("UserOperatorIndexCount",
        after_decls(kDerivatives + "begin calculation c\nw_1 = Dp_1231 phi\nend calculation\n"), 15,
        7, "'Dp' takes 1, 2 or 3 direction indices, given 4"),
      C("BuiltinDerivativeIndexCount", calc("phi = D_ijk psi"), 12, 7,
        "'D' takes one or two direction indices"),
      C("BuiltinDerivativeWithoutIndex", calc("phi = D psi"), 12, 7,
        "'D' takes one or two direction indices"),
      C("UpwindDerivativeTakesOneIndex", calc("phi = DupwindSymm_12 psi"), 12, 7,
        "'DupwindSymm' takes one direction index (DupwindSymm_i f), given 2"),
      C("StencilShiftTooLarge",
        after_decls("begin derivatives\nDp u_i = u_(i+501)\nend derivatives\n"
                    "begin calculation c\nphi = Dp_1 psi\nend calculation\n"),
        12, 15, "shift 501 is too large"),
      C("StencilShiftOverflow",
        after_decls("begin derivatives\nDp u_i = u_(i+4294967297)\nend derivatives\n"
                    "begin calculation c\nphi = Dp_1 psi\nend calculation\n"),
        12, 15, "shift"),
      C("RaceReadNeighbourOfWritten", calc("phi = D_1 phi"), 12, 11,
        "grid function 'phi' is written by calculation 'c' and also read at a neighbouring "
        "point")
          .with_note("written here", 12, 1),
      C("RaceWithUserOperator",
        after_decls(kDerivatives + "begin calculation c\nphi = Dp_1 phi\nend calculation\n"), 15,
        12, "grid function 'phi' is written by calculation 'c'")
          .with_note("written here", 15, 1),
      C("RaceThroughTemporary", calc("tmp = phi\nphi = D_2 tmp"), 13, 11,
        "grid function 'phi' is written by calculation 'c'")
          .with_note("written here", 13, 1),
  };
}

std::string fmt_place(const Case& c) {
  return "<input>:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": error: ";
}
std::string fmt_order(int order) {
  return "order " + std::to_string(order) + " ";
}

class Diagnostics : public ::testing::TestWithParam<Case> {};

TEST_P(Diagnostics, ReportsLineColumnAndMessage) {
  const Case& c = GetParam();
  Outcome out = compile(c.text);
  ASSERT_EQ(out.kind, Outcome::Kind::Rejected)
      << (out.kind == Outcome::Kind::Accepted ? "accepted" : "other exception: " + out.message)
      << "\ninput:\n"
      << c.text;
  EXPECT_EQ(out.line, c.line) << out.rendered;
  EXPECT_EQ(out.column, c.column) << out.rendered;
  for (const std::string& m : c.message)
    EXPECT_NE(out.message.find(m), std::string::npos) << "message lacks \"" << m << "\":\n"
                                                      << out.rendered;
  if (!c.note.empty()) {
    bool found = false;
    for (const auto& note : out.notes) {
      if (note.message.find(c.note) == std::string::npos) continue;
      found = true;
      if (c.note_line != 0) {
        EXPECT_EQ(note.loc.line, c.note_line) << out.rendered;
        EXPECT_EQ(note.loc.column, c.note_column) << out.rendered;
      }
    }
    EXPECT_TRUE(found) << "no note with \"" << c.note << "\":\n" << out.rendered;
  }
  // The rendered diagnostic starts with the place and quotes the line.
  EXPECT_EQ(out.rendered.rfind(fmt_place(c), 0), 0u) << out.rendered;
}

INSTANTIATE_TEST_SUITE_P(Malformed, Diagnostics, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// ---- single tests -------------------------------------------------------------------------

const std::string kWave = "begin thorn WaveDemo\n"
                          "begin variables\n"
                          "phi pi\n"
                          "end variables\n"
                          "begin calculation wave_rhs scheduled in MoL_CalcRHS\n"
                          "D_t phi = pi\n"
                          "D_t pi = Euc^ij D_ij phi\n"
                          "end calculation\n"
                          "end thorn\n";

TEST(DiagnosticsFdOrder, OrderThreeIsRejected) {
  ASSERT_EQ(compile(kWave).kind, Outcome::Kind::Accepted);
  for (int order : {2, 4, 6, 8})
    EXPECT_EQ(compile(kWave, LowerOptions{order}).kind, Outcome::Kind::Accepted) << order;
  for (int order : {3, 0, 10}) {
    Outcome out = compile(kWave, LowerOptions{order});
    ASSERT_EQ(out.kind, Outcome::Kind::Rejected) << order;
    EXPECT_NE(out.message.find(fmt_order(order)), std::string::npos) << out.message;
    EXPECT_NE(out.message.find("2, 4, 6 or 8"), std::string::npos) << out.message;
  }
}

TEST(DiagnosticsExamples, EveryParFileLowers) {
  int count = 0;
  for (const fs::path& file : example_files(/*recursive=*/false)) {
    ++count;
    Outcome out = compile(read_file(file), {}, file.string());
    EXPECT_EQ(out.kind, Outcome::Kind::Accepted) << file << ": " << out.message << "\n"
                                                 << out.rendered;
  }
  EXPECT_GE(count, 1) << "no par/*.edl under " << source_dir();
}

// `g_i1` works; `g_1i` (a fixed component, then a letter) should too.
TEST(Diagnostics, MixedComponentThenLetterIndex) {
  EXPECT_EQ(compile(calc("v_i = g_1i")).kind, Outcome::Kind::Accepted);
  EXPECT_EQ(compile(calc("g_1i = v_i")).kind, Outcome::Kind::Accepted);
}

// Columns count bytes, but the caret must line up under the culprit on a terminal: a
// multi-byte UTF-8 character before it takes one place in the caret line, not two.
TEST(Diagnostics, CaretAfterUtf8Character) {
  Outcome out = compile(params("a : real \"\xC3\x85 amplitude\", default: y"));
  ASSERT_EQ(out.kind, Outcome::Kind::Rejected);
  std::istringstream lines(out.rendered);
  std::string head, quoted, caret;
  std::getline(lines, head);
  std::getline(lines, quoted);
  std::getline(lines, caret);
  // `a : real "Å amplitude", default: y`: 'y' is byte 35 but the 34th character on screen;
  // the caret line is indented by 2 like the quoted line.
  EXPECT_EQ(out.column, 35);
  EXPECT_EQ(caret, std::string(2 + 33, ' ') + "^") << out.rendered;
}

TEST(Diagnostics, DirectoryIsNotAnEdlFile) {
  try {
    saguaro::edl::parse_file(source_dir());
    ADD_FAILURE() << "a directory was parsed";
  } catch (const EdlError& e) {
    EXPECT_NE(e.message().find("cannot"), std::string::npos) << e.what();
  }
}

// Deep nesting is refused with a diagnostic (no input may exhaust the stack of the
// recursive passes). A flat chain is as deep as it is long (the tree is left-deep, evaluated in
// the order written): a chain of 4000 terms lowers; 90000 (issue 23, kind 2: a crash by stack
// overflow in lowering and in destroying the tree) are refused, whatever the operator. (The
// fuzzer found 7000 too deep for a sanitizer build: test/fuzz/regressions/edl/.)
TEST(Diagnostics, DeepNestingDoesNotCrash) {
  for (const std::string& rhs :
       {std::string(20000, '(') + "1" + std::string(20000, ')'), std::string(50000, '-') + "1"}) {
    Outcome out = compile(calc("phi = " + rhs));
    ASSERT_EQ(out.kind, Outcome::Kind::Rejected) << out.message;
    EXPECT_NE(out.message.find("nested more than 256 levels"), std::string::npos) << out.message;
  }
  auto chain = [](const std::string& op, int terms) {
    std::string text = "phi = psi";
    for (int i = 1; i < terms; ++i) text += op + "psi";
    return text;
  };
  for (const std::string& op : {" + ", " * ", " / ", " - ", " "}) {
    SCOPED_TRACE("'" + op + "'");
    Outcome fits = compile(calc(chain(op, 4000)));
    EXPECT_EQ(fits.kind, Outcome::Kind::Accepted) << fits.message;
    Outcome out = compile(calc(chain(op, 90000)));
    ASSERT_EQ(out.kind, Outcome::Kind::Rejected) << out.message;
    EXPECT_NE(out.message.find("more than 4000 operations"), std::string::npos) << out.message;
  }
  std::string derivatives = "phi = ";
  for (int i = 0; i < 50000; ++i) derivatives += "D_1 ";
  Outcome out = compile(calc(derivatives + "psi"));
  ASSERT_EQ(out.kind, Outcome::Kind::Rejected) << out.message;
  EXPECT_NE(out.message.find("nested more than 256 levels"), std::string::npos) << out.message;
}

// Issue 23, kind 3: a tensor of rank 18 took 8.8 GB in 20 s (3^18 components). More than six
// indices are refused at the seventh; rank 6 (729 components) is still declared.
TEST(Diagnostics, TensorRankIsBounded) {
  for (const char* name : {"T_ijklmnopqrstuvwxyz", "T_ijklmnopqr", "T^ijklmno"}) {
    SCOPED_TRACE(name);
    Outcome out = compile(std::string("begin thorn T\n  begin variables\n    ") + name +
                          "\n  end variables\nend thorn\n");
    ASSERT_EQ(out.kind, Outcome::Kind::Rejected) << out.message;
    EXPECT_NE(out.message.find("more than 6 indices"), std::string::npos) << out.message;
    EXPECT_EQ(out.column, 13); // the seventh index
  }
  Outcome six =
      compile("begin thorn T\n  begin variables\n    T_ijklmn\n  end variables\nend thorn\n");
  EXPECT_EQ(six.kind, Outcome::Kind::Accepted) << six.message;
}

// ---- the command line -----------------------------------------------------------------------

// Writes `text` to `path` and returns `path`.
fs::path write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// `saguaro inspect [OPTIONS] FILE`.
CliRun inspect(const fs::path& file, const std::string& options = "") {
  return run_saguaro("inspect " + (options.empty() ? "" : options + " ") + "\"" + file.string() +
                     "\"");
}

TEST(DiagnosticsCli, MalformedFileExitsTwoWithQuotedLineAndCaret) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  fs::path file = write_file(dir.path / "bad.edl", calc("D_t phi = phj + 1"));
  CliRun run = inspect(file);
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.out, "") << "no output on error";

  std::istringstream lines(run.err);
  std::string head, quoted, caret, note;
  std::getline(lines, head);
  std::getline(lines, quoted);
  std::getline(lines, caret);
  std::getline(lines, note);
  EXPECT_EQ(head.rfind(file.string() + ":12:11: error: undeclared name 'phj'", 0), 0u) << run.err;
  // The quoted line, then a caret under column 11 with '~' for the rest of the name.
  ASSERT_NE(quoted.find("D_t phi = phj + 1"), std::string::npos) << run.err;
  std::size_t start = quoted.find("D_t");
  EXPECT_EQ(caret.find('^'), start + 10) << run.err;
  EXPECT_EQ(caret.substr(start + 10), "^~~") << run.err;
  EXPECT_EQ(caret.find_first_not_of(' '), caret.find('^')) << run.err;
  EXPECT_EQ(note, "note: did you mean 'phi'?") << run.err;
}

TEST(DiagnosticsCli, LexicalErrorExitsTwo) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  fs::path file =
      write_file(dir.path / "lex.edl", thorn("begin variables\nphi @\nend variables\n"));
  CliRun run = inspect(file);
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find(file.string() + ":3:5: error: unexpected character '@'"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("\n  phi @\n      ^\n"), std::string::npos) << run.err;
}

TEST(DiagnosticsCli, FdOrderThreeExitsTwo) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  fs::path file = write_file(dir.path / "wave.edl", kWave);
  CliRun ok = inspect(file);
  EXPECT_EQ(ok.status, 0) << ok.err;
  CliRun bad = inspect(file, "--fd-order 3");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("3"), std::string::npos) << bad.err;
}

TEST(DiagnosticsCli, MissingFileExitsTwo) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  CliRun run = inspect(dir.path / "none.edl");
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("cannot open"), std::string::npos) << run.err;
}

// ---- robustness: seeded mutations of the examples ---------------------------------------------

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin + 1));
    begin = end + 1;
  }
  return lines;
}

// One random edit: delete a character, delete a token (a run of letters/digits or one other
// character), duplicate a line, swap two neighbouring characters, or insert a character.
std::string mutate(const std::string& text, std::mt19937& rng) {
  static const std::string kInsert = "()_^=+-*/,:\"#\n 0123456789abcxyzD";
  if (text.empty()) return std::string(1, kInsert[rng() % kInsert.size()]);
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  std::string s = text;
  switch (pick(5)) {
  case 0: s.erase(pick(s.size()), 1); break;
  case 1: {
    std::size_t i = pick(s.size()), j = i + 1;
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    if (word(s[i])) {
      while (i > 0 && word(s[i - 1])) --i;
      while (j < s.size() && word(s[j])) ++j;
    }
    s.erase(i, j - i);
    break;
  }
  case 2: {
    std::vector<std::string> lines = split_lines(s);
    std::size_t k = pick(lines.size());
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(k), lines[k]);
    s.clear();
    for (const auto& l : lines) s += l;
    break;
  }
  case 3: {
    if (s.size() < 2) break;
    std::size_t i = pick(s.size() - 1);
    std::swap(s[i], s[i + 1]);
    break;
  }
  default: s.insert(pick(s.size() + 1), 1, kInsert[pick(kInsert.size())]); break;
  }
  return s;
}

TEST(DiagnosticsRobustness, SeededMutationsOfExamplesOnlyThrowEdlError) {
  using Clock = std::chrono::steady_clock;
  auto budget = std::chrono::seconds(4);
  if (std::getenv("SAGUARO_MUTATIONS") != nullptr) budget = std::chrono::hours(1);
  const std::vector<fs::path> files = example_files(/*recursive=*/false);
  ASSERT_FALSE(files.empty()) << "no par/*.edl under " << source_dir();

  int per_file = 2500;
  if (const char* env = std::getenv("SAGUARO_MUTATIONS"); env != nullptr && *env != '\0')
    per_file = std::atoi(env);
  const auto start = Clock::now();
  int runs = 0, rejected = 0, failures = 0;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::string original = read_file(files[f]);
    // A fixed seed per file: a failure names the file and the mutation number to replay it.
    std::mt19937 rng(20240611u + static_cast<unsigned>(f));
    for (int m = 0; m < per_file; ++m) {
      if (Clock::now() - start > budget) break;
      std::string text = original;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) text = mutate(text, rng);
      Outcome out = compile(text, {}, files[f].filename().string());
      ++runs;
      if (out.kind == Outcome::Kind::Rejected) {
        ++rejected;
        // A diagnostic must point into the file (or at the line just past its end).
        const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
        EXPECT_TRUE(out.line == 0 || (out.line >= 1 && out.line <= lines && out.column >= 1))
            << files[f] << " mutation " << m << ": " << out.rendered;
      }
      if (out.kind == Outcome::Kind::OtherException && ++failures <= 5)
        ADD_FAILURE() << files[f].filename() << " mutation " << m
                      << ": exception other than EdlError: " << out.message << "\n---- input ----\n"
                      << text;
    }
  }
  EXPECT_EQ(failures, 0) << failures << " of " << runs << " mutated inputs escaped as other "
                         << "exceptions";
  EXPECT_GT(runs, 500) << "the time budget allowed too few runs";
  EXPECT_GT(rejected, runs / 4) << "suspiciously few mutations were rejected";
  RecordProperty("mutations", runs);
  RecordProperty("rejected", rejected);
}

} // namespace
