// ccl/: param.ccl's syntax as values (what param/ and the EDL stage's inherited thorns read),
// the hooks' reading order, and the CCL literals.
#include "ccl/literals.hpp"
#include "ccl/param_ccl.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace saguaro::ccl {
namespace {

using support::InputError;
using support::SourceFile;

std::vector<ParamDecl> read(const std::string& text, const ParamCclHooks& hooks = {}) {
  return read_param_ccl(std::make_shared<const SourceFile>("p/param.ccl", text), hooks);
}

TEST(CclParamValues, DeclarationsAsWritten) {
  const std::vector<ParamDecl> decls =
      read("# comment\n"
           "REAL hidden \"private by default\" { *:* :: \"\" } 1\n"
           "global:\n"
           "INT n[3] \"three\" STEERABLE=ALWAYS\n"
           "{\n"
           "  ( 0 : 10 ] :: \"small\"\n"
           "} 4\n"
           "restricted:\n"
           "KEYWORD how \"method\" { \"Fast\" slow :: \"two\" } fast\n"
           "BOOLEAN on \"switch\" { } yes\n"
           "shares: IO\n"
           "USES INT out_every\n"
           "REAL own \"under shares:\" { } 1.0d-3\n"
           "private:\n"
           "STRING s \"text\" { \"^a\" :: \"\" } \"a b\"\n");
  ASSERT_EQ(decls.size(), 6u);
  const ParamDecl& hidden = decls[0];
  EXPECT_EQ(hidden.name, "hidden");
  EXPECT_EQ(hidden.type, ParamType::Real);
  EXPECT_EQ(hidden.access, ParamAccess::Private);
  EXPECT_EQ(hidden.description, "private by default");
  EXPECT_EQ(hidden.default_text, "1");
  EXPECT_EQ(hidden.loc.line, 2);
  EXPECT_EQ(hidden.loc.column, 6);
  EXPECT_EQ(hidden.loc.file->name(), "p/param.ccl");

  const ParamDecl& n = decls[1];
  EXPECT_EQ(n.type, ParamType::Int);
  EXPECT_EQ(n.access, ParamAccess::Global);
  EXPECT_EQ(n.array_size, 3);
  EXPECT_EQ(n.steerable, "always");
  ASSERT_EQ(n.ranges.size(), 1u);
  EXPECT_EQ(n.ranges[0].text, "(0:10]"); // its parts joined
  EXPECT_EQ(n.ranges[0].description, "small");
  EXPECT_EQ(n.ranges[0].loc.line, 6);
  EXPECT_EQ(n.ranges[0].loc.column, 3);
  EXPECT_EQ(n.ranges[0].loc.length, 10); // `( 0 : 10 ]`
  EXPECT_EQ(n.default_text, "4");
  EXPECT_EQ(n.default_loc.line, 7);
  EXPECT_EQ(n.default_loc.column, 3);

  const ParamDecl& how = decls[2];
  EXPECT_EQ(how.access, ParamAccess::Restricted);
  ASSERT_EQ(how.ranges.size(), 2u);
  EXPECT_EQ(how.ranges[0].text, "Fast");
  EXPECT_EQ(how.ranges[1].text, "slow");
  EXPECT_EQ(how.ranges[1].description, "two");
  EXPECT_EQ(how.default_text, "fast"); // as written: matching it to a keyword is the reader's

  EXPECT_EQ(decls[3].type, ParamType::Boolean);
  EXPECT_TRUE(decls[3].ranges.empty());
  EXPECT_EQ(decls[3].default_text, "yes");
  EXPECT_EQ(decls[4].name, "own");
  EXPECT_EQ(decls[4].access, ParamAccess::Private); // declared under `shares:`
  EXPECT_EQ(decls[4].default_text, "1.0d-3");
  EXPECT_EQ(decls[5].type, ParamType::String);
  EXPECT_EQ(decls[5].default_text, "a b"); // without its quotes
  EXPECT_EQ(decls[5].ranges[0].text, "^a");
}

TEST(CclParamValues, HooksSeeEachPieceInReadingOrder) {
  std::vector<std::string> seen;
  ParamCclHooks hooks;
  hooks.range = [&](ParamType type, const ParamRange& r) {
    seen.push_back(std::string(to_string(type)) + " range " + r.text);
  };
  hooks.declared = [&](const ParamDecl& d) { seen.push_back("declared " + d.name); };
  read("INT a \"a\" { 0:1 :: \"\"\n 3 :: \"\" } 0\n"
       "shares: T\nEXTENDS KEYWORD k { \"x\" :: \"\" }\n"
       "private:\nBOOLEAN b \"b\" { } no\n",
       hooks);
  EXPECT_EQ(seen, (std::vector<std::string>{"INT range 0:1", "INT range 3", "declared a",
                                            "KEYWORD range x", "declared b"}));

  // A hook's error is the file's first: the syntax error after it is not reached.
  hooks.range = [](ParamType, const ParamRange& r) {
    if (r.text == "bad") throw InputError(r.loc, "bad range");
  };
  try {
    read("INT a \"a\" { bad :: \"\" }\nINT b 1\n", hooks);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.message(), "bad range");
    EXPECT_EQ(e.loc().line, 1);
    EXPECT_EQ(e.loc().column, 13);
  }
}

TEST(CclParamValues, SyntaxErrorsHaveTheirPlace) {
  try {
    read("restricted:\nREAL x \"x\" { } \n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.loc().file->name(), "p/param.ccl");
    EXPECT_EQ(e.loc().line, 2);
    EXPECT_EQ(e.loc().column, 16);
    EXPECT_EQ(e.message(), "unexpected end of line: expected the default value of x after '}'");
  }
}

TEST(CclLiterals, NumbersAndBooleans) {
  EXPECT_EQ(parse_real("1.0d-3"), 1.0e-3);
  EXPECT_EQ(parse_real("-.5"), -0.5);
  EXPECT_EQ(parse_real("+4E2"), 400.0);
  EXPECT_FALSE(parse_real("1e").has_value());
  EXPECT_FALSE(parse_real("one").has_value());
  EXPECT_EQ(parse_int("1e6"), 1000000);
  bool not_integral = false;
  EXPECT_FALSE(parse_int("1.5", &not_integral).has_value());
  EXPECT_TRUE(not_integral);
  EXPECT_EQ(parse_bool(" Yes "), true);
  EXPECT_EQ(parse_bool("0"), false);
  EXPECT_FALSE(parse_bool("maybe").has_value());
  EXPECT_EQ(trim("  a b \n"), "a b");
}

} // namespace
} // namespace saguaro::ccl
