// Register-fit fission (mapper/fission.hpp): kernels that fit the live-value budget, valid as
// a mapping, for BSSN's right-hand side (which does not fit one kernel) at fd orders 4 and 8;
// one kernel where one fits; and the mapper hands the fission to the empirical finish.
#include "mapper/fission.hpp"
#include "mapper/occupancy.hpp"
#include "mapper/queues.hpp"
#include "mapper/mapper.hpp"
#include "mapper/run_plan.hpp"
#include "mapper_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace saguaro::mapper {
namespace {

TEST(Fission, BudgetFromTheRegisterFile) {
  EXPECT_EQ(live_value_budget(255), 110); // 255 registers less 35 for addresses, 2 per double
  EXPECT_EQ(live_value_budget(63), 14);
  EXPECT_EQ(live_value_budget(0), 8); // never below a kernel's minimum
}

TEST(Fission, BssnRightHandSideSplitsIntoKernelsThatFit) {
  for (int order : {4, 8}) {
    SCOPED_TRACE("fd order " + std::to_string(order));
    const calc::Program program = test::lower_file("par/bssn/bssn.edl", order);
    const calc::Calculation& rhs = test::calc_named(program, "bssn_rhs");
    const int budget = live_value_budget(255);
    // The stage storing the right-hand sides: the last (at fd order 8 a stage of the mixed
    // derivatives' intermediates comes first, calc::MixedDerivatives).
    const int last = int(rhs.stages.size()) - 1;
    EXPECT_EQ(rhs.stages.size(), order >= 8 ? 2u : 1u);
    // One kernel keeps far more alive than registers hold (the reason it spills).
    const calc::KernelPlan whole = calc::plan_kernels(rhs, calc::default_mapping(rhs)).back();
    EXPECT_GT(calc::max_live_values(rhs.dag, whole), 2 * budget);

    const Fission f = register_fit_fission(rhs, last, budget);
    EXPECT_TRUE(f.fits);
    ASSERT_GE(f.kernels.size(), 3u);
    std::multiset<int> stores;
    std::size_t temporaries = 0;
    for (const FissionKernel& k : f.kernels) {
      EXPECT_LE(k.live_values, budget);
      EXPECT_GT(k.live_values, 0);
      stores.insert(k.stores.begin(), k.stores.end());
      temporaries += k.temporaries.size();
    }
    EXPECT_EQ(stores.size(), rhs.stages[std::size_t(last)].stores.size()); // every store once
    EXPECT_EQ(std::set<int>(stores.begin(), stores.end()).size(), stores.size());
    EXPECT_GT(temporaries, 0u); // the At_ij equations need their sources stored

    // As a mapping it holds (order, temporaries made before they are read), and each of its
    // last stage's kernels' plans counts what the fission counted.
    const calc::Mapping m = register_fit_mapping(rhs, budget);
    const std::vector<calc::KernelPlan> plans = calc::plan_kernels(rhs, m);
    std::vector<int> live;
    for (std::size_t k = 0; k < plans.size(); ++k)
      if (m.kernels[k].stage == last) live.push_back(calc::max_live_values(rhs.dag, plans[k]));
    ASSERT_EQ(live.size(), f.kernels.size());
    for (std::size_t k = 0; k < live.size(); ++k) EXPECT_EQ(live[k], f.kernels[k].live_values) << k;
  }
}

// Merging to a looser budget than the extraction's: the same stores, each once, in fewer
// kernels, each within the merge budget (the fission the H100 ran fastest: 80 merged to 140).
TEST(Fission, MergingToALooserBudgetMakesFewerKernelsWithinIt) {
  const calc::Program program = test::lower_file("par/bssn/bssn.edl", 4);
  const calc::Calculation& rhs = test::calc_named(program, "bssn_rhs");
  const Fission tight = register_fit_fission(rhs, 0, 80);
  const Fission merged = register_fit_fission(rhs, 0, 80, 140);
  EXPECT_TRUE(merged.fits);
  EXPECT_LT(merged.kernels.size(), tight.kernels.size());
  std::multiset<int> stores;
  for (const FissionKernel& k : merged.kernels) {
    EXPECT_LE(k.live_values, 140);
    stores.insert(k.stores.begin(), k.stores.end());
  }
  EXPECT_EQ(stores.size(), rhs.stages[0].stores.size());
  EXPECT_EQ(std::set<int>(stores.begin(), stores.end()).size(), stores.size());
  EXPECT_NO_THROW(calc::plan_kernels(rhs, register_fit_mapping(rhs, 80, 140)));
}

// Recomputation against storing (FissionBudget::share): the values the kernels of 80 merged to
// 140 compute more than once, stored once when that saves at least 200 operations per point.
// The kernels then evaluate less arithmetic in all, the stores stay each made once, and the
// mapping is valid (the CPU backend computes the same numbers: test_equivalence.cpp).
TEST(Fission, StoringValuesComputedTwiceEvaluatesLessArithmetic) {
  const calc::Program program = test::lower_file("par/bssn/bssn.edl", 4);
  const calc::Calculation& rhs = test::calc_named(program, "bssn_rhs");
  auto arithmetic = [&](const calc::Mapping& m, std::size_t& temporaries) {
    std::size_t n = 0;
    temporaries = 0;
    for (const calc::KernelPlan& p : calc::plan_kernels(rhs, m))
      for (calc::NodeId id : p.nodes) {
        const calc::Node& node = rhs.dag.node(id);
        n += !node.uniform && node.op != calc::Op::Load && node.op != calc::Op::Coordinate;
      }
    for (const calc::KernelMapping& k : m.kernels) temporaries += k.temporaries.size();
    return n;
  };
  std::size_t plain_temporaries = 0, shared_temporaries = 0;
  const std::size_t plain = arithmetic(register_fit_mapping(rhs, 80, 140), plain_temporaries);
  const calc::Mapping m = register_fit_mapping(rhs, 80, 140, 200);
  const std::size_t shared = arithmetic(m, shared_temporaries);
  EXPECT_LT(shared, plain);
  EXPECT_GT(shared_temporaries, plain_temporaries);
  std::multiset<int> stores;
  for (const calc::KernelMapping& k : m.kernels) stores.insert(k.stores.begin(), k.stores.end());
  EXPECT_EQ(stores.size(), rhs.stages[0].stores.size());
  EXPECT_EQ(std::set<int>(stores.begin(), stores.end()).size(), stores.size());
  // A threshold no value reaches leaves the fission as it was.
  EXPECT_EQ(register_fit_mapping(rhs, 80, 140, 1000000), register_fit_mapping(rhs, 80, 140));
}

// At fd order 8 the fission at 80 live values extracts the derivatives themselves (about 200
// temporaries, 31 GB of scratch at 256^3): the mapper does not offer it; at fd order 4 it
// stores 9.
TEST(Fission, OneThatStoresMoreTemporariesThanOutputsIsNotOffered) {
  for (int order : {4, 8}) {
    SCOPED_TRACE("fd order " + std::to_string(order));
    const calc::Program program = test::lower_file("par/bssn/bssn.edl", order);
    const calc::Calculation& rhs = test::calc_named(program, "bssn_rhs");
    const calc::Mapping m = register_fit_mapping(rhs, 80, 140);
    std::size_t temporaries = 0;
    for (const calc::KernelMapping& k : m.kernels) temporaries += k.temporaries.size();
    EXPECT_EQ(too_many_temporaries(rhs, m), temporaries > rhs.stages[0].stores.size());
    EXPECT_EQ(too_many_temporaries(rhs, m), order == 8) << temporaries;
  }
}

// register_fit_candidates extracts once per extraction budget and shares it between the pairs
// that have it (kFissionBudgets' four extract at 0.73 twice and at 1.0 twice): each candidate
// must be the fission made on its own at its pair, in kFissionBudgets' order.
TEST(Fission, CandidatesEqualTheFissionsMadeOneByOne) {
  for (int order : {4, 8}) {
    SCOPED_TRACE("fd order " + std::to_string(order));
    const calc::Program program = test::lower_file("par/bssn/bssn.edl", order);
    const calc::Calculation& rhs = test::calc_named(program, "bssn_rhs");
    const int full = live_value_budget(255);
    std::vector<calc::Mapping> alone;
    for (const FissionBudget& b : kFissionBudgets)
      alone.push_back(register_fit_mapping(rhs, int(std::lround(b.extract * full)),
                                           int(std::lround(b.merge * full))));
    const std::vector<FissionCandidate> candidates = register_fit_candidates(rhs, 255);
    // fd 4: four, two and two from one extraction; fd 8: the others store too many temporaries
    ASSERT_GE(candidates.size(), order == 4 ? 3u : 1u);
    std::size_t next = 0; // candidates keep kFissionBudgets' order, some left out
    for (const FissionCandidate& c : candidates) {
      while (next < alone.size() && !(alone[next] == c.mapping)) ++next;
      ASSERT_LT(next, alone.size()) << c.origin << " is no pair's fission made alone";
      ++next;
    }
  }
}

TEST(Fission, WhatFitsStaysOneKernel) {
  const calc::Program program = test::lower_file("par/wave.edl", 4);
  for (const calc::Calculation& c : program.calculations) {
    const Fission f = register_fit_fission(c, 0, live_value_budget(255));
    EXPECT_TRUE(f.fits);
    EXPECT_EQ(f.kernels.size(), 1u) << c.name;
    // No fission; only the register-capped one thread per point (occupancy.hpp) and, for
    // the stencils, the register queues and the sums by input (queues.hpp), in this order; the
    // one the model prices below the search's best is the model's pick instead.
    const MapResult r = map_calculation(c, test::device("h100"));
    std::vector<calc::Mapping> expected{*full_occupancy_candidate(c, test::device("h100"))};
    for (const calc::Mapping& m : register_queue_candidates(c, test::device("h100")))
      expected.push_back(m);
    for (const calc::Mapping& m : sums_by_input_candidates(c, test::device("h100")))
      expected.push_back(m);
    if (auto pick = std::find(expected.begin(), expected.end(), r.best.mapping);
        pick != expected.end())
      expected.erase(pick);
    ASSERT_EQ(r.register_fits.size(), expected.size()) << c.name;
    for (std::size_t q = 0; q < expected.size(); ++q)
      EXPECT_TRUE(r.register_fits[q].mapping == expected[q]) << c.name << " " << q;
  }
}

TEST(Fission, TheEmpiricalFinishTimesIt) {
  const calc::Program program = test::lower_file("par/bssn/bssn.edl", 4);
  const calc::Calculation& rhs = test::calc_named(program, "bssn_rhs");
  const MapResult r = map_calculation(rhs, test::device("h100"));
  ASSERT_GE(r.register_fits.size(), 2u);
  EXPECT_EQ(r.register_fits[0].origin, "register-fit fission (80 live values, merged to 140)");
  const std::vector<calc::Mapping> timed = finish_candidates(rhs, r, calc::default_mapping(rhs), 4);
  for (const PricedMapping& m : r.register_fits) {
    EXPECT_GE(m.mapping.kernels.size(), 3u);
    EXPECT_NO_THROW(calc::plan_kernels(rhs, m.mapping));
    EXPECT_EQ(std::count(timed.begin(), timed.end(), m.mapping), 1);
  }
  EXPECT_EQ(timed.front(), r.best.mapping);
  // Every fission also at kFissionTwinBlock, after them all, the same kernels at that block.
  const std::size_t n = r.register_fits.size() / 2;
  ASSERT_EQ(r.register_fits.size(), 2 * n);
  for (std::size_t q = 0; q < n; ++q) {
    const PricedMapping& twin = r.register_fits[n + q];
    EXPECT_EQ(twin.origin, r.register_fits[q].origin + " at z 64x4x4");
    calc::Mapping moved = r.register_fits[q].mapping;
    for (calc::KernelMapping& k : moved.kernels) k.block = calc::parse_block_config("z 64x4x4");
    EXPECT_TRUE(twin.mapping == moved) << twin.origin;
  }
  // Not when the finish is off (one candidate: the model's).
  EXPECT_EQ(finish_candidates(rhs, r, calc::default_mapping(rhs), 1).size(), 3u);
}

} // namespace
} // namespace saguaro::mapper
