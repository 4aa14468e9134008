// The straight-line text of a calculation (`saguaro inspect --expressions`).
#include "calc/lower.hpp"
#include "calc/print.hpp"
#include "edl/parser.hpp"

#include <gtest/gtest.h>

namespace saguaro::calc {
namespace {

std::string printed(const std::string& body, int fd_order = 2) {
  Program program = lower(edl::parse_string("begin thorn T\n"
                                            "begin parameters\n p : real \"p\", default: 1\n"
                                            "end parameters\n"
                                            "begin variables\n f g d e\nend variables\n"
                                            "begin temporaries\n r\nend temporaries\n"
                                            "begin calculation c\n" +
                                            body + "\nend calculation\nend thorn\n"),
                          {fd_order});
  return print_calculation(program.calculations.at(0), program.parameters);
}

TEST(Print, ArithmeticAndParameters) {
  EXPECT_EQ(printed("d = 2 x + p"), "  d = 2*x + p\n");
  EXPECT_EQ(printed("d = f - g"), "  d = f[i,j,k] - g[i,j,k]\n");
  EXPECT_EQ(printed("d = f / (g p)"), "  d = f[i,j,k]/(g[i,j,k]*p)\n");
  EXPECT_EQ(printed("d = sqrt(f) + t"), "  d = sqrt(f[i,j,k]) + t\n");
}

TEST(Print, StencilsAndSharedValues) {
  // The derivative is one shared value, named once and used by both stores.
  EXPECT_EQ(printed("d = D_1 f\ne = f D_1 f"), "  t5 = (-0.5*f[i-1,j,k] + 0.5*f[i+1,j,k])/dx\n"
                                               "  d = t5\n"
                                               "  e = f[i,j,k]*t5\n");
}

TEST(Print, StagesOfADerivativeOfAnExpression) {
  std::string text = printed("d = D_2 (f g)");
  EXPECT_NE(text.find("# stage 0\n  c_tmp1 = f[i,j,k]*g[i,j,k]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# stage 1\n  d = (-0.5*c_tmp1[i,j-1,k] + 0.5*c_tmp1[i,j+1,k])/dy\n"),
            std::string::npos)
      << text;
}

} // namespace
} // namespace saguaro::calc
