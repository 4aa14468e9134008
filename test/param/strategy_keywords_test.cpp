// thorn/param.ccl is a static file (a Cactus host reads it as it is), so its list of buffering
// strategies, Saguaro::cuda_buffering, is written out there; this test holds it to the list
// of strategies (calc/strategies/list.cpp): the same letters in the same order, then "mixed",
// each described by its strategy's summary.
#include "calc/strategy.hpp"
#include "param/registry.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace saguaro::param {
namespace {

std::string unquoted(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

TEST(StrategyKeywords, CudaBufferingListsEveryStrategyThenMixed) {
  const Registry registry = Registry::with_builtin_components();
  const Declaration* decl = registry.find("Saguaro", "cuda_buffering");
  ASSERT_NE(decl, nullptr);
  const std::vector<const calc::Strategy*>& strategies = calc::strategies();
  ASSERT_EQ(decl->ranges.size(), strategies.size() + 1)
      << "thorn/param.ccl's Saguaro::cuda_buffering and calc/strategies/list.cpp disagree";
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    EXPECT_EQ(unquoted(decl->ranges[i].text), std::string(1, strategies[i]->letter))
        << "keyword " << i << " of Saguaro::cuda_buffering";
    EXPECT_EQ(unquoted(decl->ranges[i].description), strategies[i]->summary)
        << "the description of '" << strategies[i]->letter << "' in thorn/param.ccl";
  }
  EXPECT_EQ(unquoted(decl->ranges.back().text), "mixed");
}

} // namespace
} // namespace saguaro::param
