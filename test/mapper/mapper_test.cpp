// The whole mapper on the examples and on random calculations with several outputs: the chosen
// mapping holds (plan_kernels), is never predicted slower than the default mapping or its
// runners-up, and the runners-up are distinct.
#include "mapper_support.hpp"

#include <gtest/gtest.h>

using namespace saguaro;
using namespace saguaro::mapper;
using test::device;

namespace {

void check_result(const calc::Calculation& calc, const model::Device& d, const MapResult& r,
                  const MapperOptions& o) {
  SCOPED_TRACE(calc.name + " on " + d.name);
  EXPECT_NO_THROW(calc::plan_kernels(calc, r.best.mapping));
  ASSERT_EQ(r.best.kernels.size(), r.best.mapping.kernels.size());
  double sum = 0;
  for (const PricedKernel& k : r.best.kernels) {
    EXPECT_TRUE(k.prediction.valid);
    sum += k.seconds;
  }
  EXPECT_NEAR(r.best.seconds, sum, 1e-12 * sum);
  // Priced again from scratch, the chosen mapping costs what the search said.
  const PricedMapping again = price_mapping(calc, r.best.mapping, d, o);
  EXPECT_NEAR(again.seconds, r.best.seconds, 1e-9 * r.best.seconds);
  const PricedMapping plain = price_mapping(calc, calc::default_mapping(calc), d, o);
  EXPECT_LE(r.best.seconds, plain.seconds * (1 + 1e-12));
  std::vector<calc::Mapping> seen{r.best.mapping};
  for (const PricedMapping& m : r.runners_up) {
    EXPECT_NO_THROW(calc::plan_kernels(calc, m.mapping));
    EXPECT_GE(m.seconds, r.best.seconds * (1 - 1e-12));
    EXPECT_EQ(std::count(seen.begin(), seen.end(), m.mapping), 0) << "runner-up repeated";
    seen.push_back(m.mapping);
  }
  EXPECT_GT(r.stats.model_calls, 0);
}

} // namespace

TEST(Mapper, ExamplesOnEveryDevice) {
  for (const char* file :
       {"par/wave.edl", "par/maxwell.edl", "par/advect.edl", "par/microbench.edl"})
    for (int order : {2, 8}) {
      const calc::Program program = test::lower_file(file, order);
      for (const char* dev : {"k20xm", "h100", "a100"})
        for (const calc::Calculation& c : program.calculations) {
          MapperOptions o;
          const MapResult r = map_calculation(c, device(dev), o);
          check_result(c, device(dev), r, o);
        }
    }
}

// Priced with what the compiler made of its kernels: ptxas's registers replace the estimate,
// and spills it reports cost L2 traffic the estimate did not see.
TEST(Mapper, PriceWithTheCompilersResources) {
  const calc::Program program = test::lower_file("par/maxwell.edl", 4);
  const calc::Calculation& rhs = program.calculations[1];
  MapperOptions o;
  o.grid = {256, 256, 256};
  const calc::Mapping m = calc::one_thread_per_point(rhs);
  const PricedMapping estimated = price_mapping(rhs, m, device("h100"), o);
  model::CompiledResources fits;
  fits.registers = 64;
  const PricedMapping compiled = price_mapping(rhs, m, device("h100"), o, {fits});
  EXPECT_TRUE(compiled.kernels.at(0).prediction.registers_from_ptxas);
  EXPECT_EQ(compiled.kernels.at(0).prediction.registers_per_thread, 64);
  EXPECT_FALSE(estimated.kernels.at(0).prediction.registers_from_ptxas);
  model::CompiledResources spills = fits;
  spills.registers = 255;
  spills.spill_bytes = 7000;
  const PricedMapping spilled = price_mapping(rhs, m, device("h100"), o, {spills});
  EXPECT_GT(spilled.seconds, 2 * compiled.seconds);
  // An entry without registers keeps the estimate.
  EXPECT_DOUBLE_EQ(price_mapping(rhs, m, device("h100"), o, {model::CompiledResources{}}).seconds,
                   estimated.seconds);
}

TEST(Mapper, RandomCalculationsWithSeveralOutputs) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const calc::Program program =
        test::lower_text(test::random_edl(rng, 2 + trial % 6, 2 + trial % 4));
    for (const char* dev : {"k20xm", "h100"}) {
      MapperOptions o;
      o.grid = {64, 48, 40};
      const MapResult r = map_calculation(program.calculations.at(0), device(dev), o);
      check_result(program.calculations.at(0), device(dev), r, o);
    }
  }
}

namespace {

// Ten inputs summed into six outputs: enough stores for every partition strategy to have work.
const calc::Calculation& six_outputs() {
  static const calc::Program program = [] {
    std::mt19937 rng(11);
    return test::lower_text(test::random_edl(rng, 10, 6));
  }();
  return program.calculations.at(0);
}

} // namespace

// The partition search is bounded by counted work (MapperOptions::partition_budget), so the
// same options give the same mapping on any machine, and every strategy gets its share: the
// covers run even when the moves could use the whole budget.
TEST(Mapper, BudgetIsCountedWorkSharedByTheStrategies) {
  const calc::Calculation& c = six_outputs();
  MapperOptions o;
  o.grid = {64, 48, 40};
  o.partition_budget = 3000;
  const MapResult a = map_calculation(c, device("h100"), o);
  const MapResult b = map_calculation(c, device("h100"), o);
  check_result(c, device("h100"), a, o);
  EXPECT_TRUE(a.stats.out_of_budget);
  EXPECT_FALSE(a.stats.out_of_time);
  EXPECT_GT(a.stats.cover_groups, 0);
  EXPECT_EQ(a.best.mapping, b.best.mapping);
  EXPECT_EQ(a.stats.model_calls, b.stats.model_calls);
  EXPECT_EQ(a.stats.nodes_planned, b.stats.nodes_planned);
  EXPECT_EQ(a.stats.partitions, b.stats.partitions);
  // With the default budget the search ends on its own, and no worse.
  const MapResult full = map_calculation(c, device("h100"), MapperOptions{.grid = o.grid});
  check_result(c, device("h100"), full, o);
  EXPECT_FALSE(full.stats.out_of_budget);
  EXPECT_GT(full.stats.ilp_solves, 0);
  EXPECT_LE(full.best.seconds, a.best.seconds * (1 + 1e-12));
}

// The wall-clock safety net: with no time at all the search still returns a valid mapping (the
// one-kernel search runs before it) and says that it ran out of time.
TEST(Mapper, SafetyNetReportsOutOfTime) {
  const calc::Calculation& c = six_outputs();
  MapperOptions o;
  o.grid = {64, 48, 40};
  o.partition_seconds = 0;
  const MapResult r = map_calculation(c, device("h100"), o);
  check_result(c, device("h100"), r, o);
  EXPECT_TRUE(r.stats.out_of_time);
  EXPECT_EQ(r.stats.ilp_solves, 0);
}
