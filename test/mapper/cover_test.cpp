// Fusion covers (mapper/cover.hpp): the fusible sets of small DAGs, the GLPK set-partitioning
// ILP against enumeration of every partition, the precedence no-good, and the several-covers
// searches (Listing 4.5's breadth-first one and the exact cheapest-first one).
#include "mapper/cover.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>

using namespace saguaro::mapper;

namespace {

using Sets = std::vector<std::vector<int>>;

CoverGraph chain(int n) {
  CoverGraph g{n, {}};
  for (int v = 0; v + 1 < n; ++v) g.edges.push_back({v, v + 1});
  return g;
}

// Fig. 4.3 (left): source 0, middle layer 1..width, sink width + 1.
CoverGraph wide(int width) {
  CoverGraph g{width + 2, {}};
  for (int m = 1; m <= width; ++m) {
    g.edges.push_back({0, m});
    g.edges.push_back({m, width + 1});
  }
  return g;
}

// A DAG on n vertices with a random labelling (so that index order is no topological order).
CoverGraph random_dag(std::mt19937& rng, int n, double density) {
  std::vector<int> label(n);
  for (int v = 0; v < n; ++v) label[v] = v;
  std::shuffle(label.begin(), label.end(), rng);
  std::bernoulli_distribution edge(density);
  CoverGraph g{n, {}};
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v)
      if (edge(rng)) g.edges.push_back({label[u], label[v]});
  return g;
}

// Every subset of size <= k that passes is_fusible, in fusible_sets' order.
Sets fusible_by_subsets(const CoverGraph& g, int k,
                        const std::vector<std::pair<int, int>>& links = {}) {
  Sets out;
  for (unsigned mask = 1; mask < (1u << g.vertices); ++mask) {
    std::vector<int> s;
    for (int v = 0; v < g.vertices; ++v)
      if (mask & (1u << v)) s.push_back(v);
    if (static_cast<int>(s.size()) <= k && is_fusible(g, s, links)) out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return out;
}

// Singletons cost 1..10; a fusion costs its members' sum times 0.4..1.3, so that fusing
// sometimes pays and sometimes not. `scale` multiplies every cost.
CoverProblem random_problem(std::mt19937& rng, const CoverGraph& g, int k, double scale) {
  CoverProblem p;
  p.vertices = g.vertices;
  p.groups = fusible_sets(g, k, 100000).sets;
  std::uniform_real_distribution<double> single(1, 10), factor(0.4, 1.3);
  std::vector<double> alone(g.vertices);
  for (double& c : alone) c = single(rng);
  for (const auto& s : p.groups) {
    double sum = 0;
    for (int v : s) sum += alone[v];
    p.cost.push_back(scale * (s.size() == 1 ? sum : sum * factor(rng)));
  }
  return p;
}

// The cover partitions the vertices and its cost is the sum of its groups'.
void expect_valid(const CoverProblem& p, const Cover& c) {
  std::vector<int> count(p.vertices, 0);
  double sum = 0;
  for (int i : c.groups) {
    ASSERT_GE(i, 0);
    ASSERT_LT(i, static_cast<int>(p.groups.size()));
    for (int v : p.groups[i]) ++count[v];
    sum += p.cost[i];
  }
  for (int v = 0; v < p.vertices; ++v) EXPECT_EQ(count[v], 1) << "vertex " << v;
  EXPECT_TRUE(std::is_sorted(c.groups.begin(), c.groups.end()));
  EXPECT_DOUBLE_EQ(c.cost, sum);
}

double tolerance(const CoverProblem& p) {
  double largest = 0;
  for (double c : p.cost) largest = std::max(largest, std::abs(c));
  return 1e-6 * largest * p.vertices; // GLPK's optimality tolerance is relative (1e-7)
}

} // namespace

TEST(FusibleSets, ChainGivesContiguousSegments) {
  const CoverGraph g = chain(6);
  const FusibleSets r = fusible_sets(g, 3, 1000);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.sets.size(), 6u + 5u + 4u);
  for (const auto& s : r.sets) {
    EXPECT_LE(s.size(), 3u);
    for (std::size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i], s[i - 1] + 1);
  }
  for (int v = 0; v < 6; ++v) EXPECT_EQ(r.sets[v], std::vector<int>{v});
  // Uncapped, a chain has n(n+1)/2 fusions: the best case of Fig. 4.3.
  EXPECT_EQ(fusible_sets(chain(10), 10, 1000).sets.size(), 55u);
}

TEST(FusibleSets, Diamond) {
  const CoverGraph g{4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}}; // a -> b, a -> c, b -> d, c -> d
  EXPECT_FALSE(is_fusible(g, {0, 3}));                     // not connected
  EXPECT_FALSE(is_fusible(g, {0, 1, 3}));                  // a -> c -> d leaves and re-enters
  EXPECT_FALSE(is_fusible(g, {1, 2}));                     // not connected
  EXPECT_TRUE(is_fusible(g, {0, 1, 2, 3}));
  EXPECT_TRUE(is_fusible(g, {0, 1, 2}));
  EXPECT_TRUE(is_fusible(g, {3, 1}));
  EXPECT_FALSE(is_fusible(g, {}));
  const Sets expected{{0},    {1},    {2},       {3},       {0, 1},      {0, 2},
                      {1, 3}, {2, 3}, {0, 1, 2}, {1, 2, 3}, {0, 1, 2, 3}};
  const FusibleSets r = fusible_sets(g, 4, 1000);
  EXPECT_EQ(r.sets, expected);
  EXPECT_FALSE(r.truncated);
}

TEST(FusibleSets, WideMiddleLayer) {
  // Sets holding the source and not the sink: the source and 1..3 of the 6 middle vertices;
  // as many with the sink; both need the whole middle layer (size 8 > 4); middles alone are
  // not connected.
  const FusibleSets r = fusible_sets(wide(6), 4, 100000);
  EXPECT_EQ(r.sets.size(), 8u + 2 * (6u + 15u + 20u));
  EXPECT_FALSE(r.truncated);
  const FusibleSets all = fusible_sets(wide(6), 8, 100000);
  EXPECT_EQ(all.sets.size(), 8u + 2 * 63u + 1u);
  EXPECT_EQ(all.sets.back(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_FALSE(is_fusible(wide(6), {0, 1, 7})); // 0 -> 2 -> 7 goes around
}

TEST(FusibleSets, TruncatesSizeBySize) {
  const FusibleSets r = fusible_sets(wide(6), 4, 20);
  EXPECT_TRUE(r.truncated);
  ASSERT_EQ(r.sets.size(), 20u);
  for (int v = 0; v < 8; ++v) EXPECT_EQ(r.sets[v], std::vector<int>{v});
  for (std::size_t i = 8; i < r.sets.size(); ++i) EXPECT_EQ(r.sets[i].size(), 2u);
  // Exactly as many as exist: not truncated.
  EXPECT_FALSE(fusible_sets(chain(6), 3, 15).truncated);
  EXPECT_TRUE(fusible_sets(chain(6), 3, 14).truncated);
  EXPECT_TRUE(fusible_sets(chain(6), 3, 0).truncated);
}

TEST(FusibleSets, AgreesWithTheSubsetTestOnRandomDags) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 3 + trial % 8;
    const CoverGraph g = random_dag(rng, n, 0.15 + 0.1 * (trial % 5));
    const int k = 1 + trial % 6;
    EXPECT_EQ(fusible_sets(g, k, 1u << 20).sets, fusible_by_subsets(g, k)) << "trial " << trial;
  }
}

TEST(FusibleSets, LinksJoinButNeverBreakConvexity) {
  // 0 -> 1 -> 2 and 3 alone; links 0 - 2 (and 2 - 0, closing a cycle with the edges) and 3 - 0.
  const CoverGraph g{4, {{0, 1}, {1, 2}}};
  const std::vector<std::pair<int, int>> links{{0, 2}, {2, 0}, {3, 0}};
  EXPECT_FALSE(is_fusible(g, {0, 3}));
  EXPECT_TRUE(is_fusible(g, {0, 3}, links));
  EXPECT_FALSE(is_fusible(g, {0, 2}, links)); // 0 -> 1 -> 2 goes around
  EXPECT_TRUE(is_fusible(g, {0, 1, 2, 3}, links));
  const FusibleSets r = fusible_sets(g, 4, 1000, links);
  EXPECT_EQ(r.sets, fusible_by_subsets(g, 4, links));
  EXPECT_EQ(r.sets.size(), 4u + 3u + 2u + 1u); // {01} {03} {12}; {012} {013}; {0123}
}

TEST(FusibleSets, WithLinksAgreesWithTheSubsetTestOnRandomDags) {
  std::mt19937 rng(8);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 3 + trial % 7;
    const CoverGraph g = random_dag(rng, n, 0.2);
    std::vector<std::pair<int, int>> links;
    std::uniform_int_distribution<int> vertex(0, n - 1);
    for (int i = 0; i < n / 2 + 1; ++i) links.push_back({vertex(rng), vertex(rng)});
    const int k = 1 + trial % 5;
    EXPECT_EQ(fusible_sets(g, k, 1u << 20, links).sets, fusible_by_subsets(g, k, links))
        << "trial " << trial;
  }
}

TEST(FusibleSets, RejectsBadGraphs) {
  EXPECT_THROW(fusible_sets(CoverGraph{3, {{0, 1}, {1, 2}, {2, 0}}}, 3, 100),
               std::invalid_argument);
  EXPECT_THROW(fusible_sets(CoverGraph{2, {{0, 2}}}, 2, 100), std::invalid_argument);
  EXPECT_THROW(fusible_sets(CoverGraph{2, {{1, 1}}}, 2, 100), std::invalid_argument);
  EXPECT_THROW(fusible_sets(chain(3), 0, 100), std::invalid_argument);
  EXPECT_THROW(is_fusible(chain(3), {0, 0}), std::invalid_argument);
  EXPECT_THROW(is_fusible(chain(3), {3}), std::invalid_argument);
  EXPECT_THROW(fusible_sets(chain(3), 2, 100, {{0, 3}}), std::invalid_argument);
}

TEST(OptimalCover, EqualsBruteForceOnRandomDags) {
  std::mt19937 rng(2010);
  const double scales[] = {1.0, 1e-9, 1e6};
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 5 + trial % 4;
    const CoverGraph g = random_dag(rng, n, 0.35);
    const CoverProblem p = random_problem(rng, g, 4, scales[trial % 3]);
    CoverStats stats;
    const auto ilp = optimal_cover(p, {}, &stats);
    const auto brute = brute_force_cover(p);
    ASSERT_TRUE(ilp && brute) << "trial " << trial;
    expect_valid(p, *ilp);
    EXPECT_NEAR(ilp->cost, brute->cost, tolerance(p)) << "trial " << trial;
    EXPECT_EQ(stats.ilp_solves, 1);
    EXPECT_EQ(stats.no_goods, 0);
  }
}

TEST(OptimalCover, ForbiddenGroupsAndInfeasibility) {
  const CoverGraph g = chain(3);
  CoverProblem p{3, fusible_sets(g, 3, 100).sets, {}, {}}; // {0} {1} {2} {01} {12} {012}
  p.cost = {5, 5, 5, 4, 4, 1};
  EXPECT_EQ(optimal_cover(p)->groups, (std::vector<int>{5}));
  std::vector<bool> forbidden(p.groups.size(), false);
  forbidden[5] = true;
  const auto c = optimal_cover(p, forbidden);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->cost, 9);
  forbidden.assign(p.groups.size(), false);
  forbidden[1] = forbidden[3] = forbidden[4] = forbidden[5] = true; // vertex 1 uncoverable
  EXPECT_FALSE(optimal_cover(p, forbidden));
  forbidden.assign(p.groups.size(), false);
  forbidden[0] = forbidden[2] = forbidden[5] = true; // 0 only in {01}, 2 only in {12}: clash
  EXPECT_FALSE(optimal_cover(p, forbidden));
  EXPECT_THROW(optimal_cover(p, std::vector<bool>(2, false)), std::invalid_argument);
  // No vertices: the empty cover.
  const auto empty = optimal_cover(CoverProblem{});
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->groups.empty());
}

TEST(OptimalCover, RejectsMalformedProblems) {
  EXPECT_THROW(optimal_cover(CoverProblem{2, {{0}, {0, 1}}, {1, 1}, {}}), std::invalid_argument);
  EXPECT_THROW(optimal_cover(CoverProblem{2, {{0}, {1}}, {1}, {}}), std::invalid_argument);
  EXPECT_THROW(optimal_cover(CoverProblem{2, {{0}, {1}, {1, 2}}, {1, 1, 1}, {}}),
               std::invalid_argument);
  EXPECT_THROW(optimal_cover(CoverProblem{2, {{0}, {1}, {1, 1}}, {1, 1, 1}, {}}),
               std::invalid_argument);
  EXPECT_THROW(optimal_cover(CoverProblem{2, {{0}, {1}, {}}, {1, 1, 1}, {}}),
               std::invalid_argument);
  EXPECT_THROW(optimal_cover(CoverProblem{2, {{0}, {1}}, {1, NAN}, {}}), std::invalid_argument);
  EXPECT_THROW(brute_force_cover(CoverProblem{2, {{0}}, {1}, {}}), std::invalid_argument);
  EXPECT_THROW(best_covers(CoverProblem{1, {{0}}, {1}, {}}, -1), std::invalid_argument);
}

TEST(OptimalCover, CheckMustNameGroupsOfTheCover) {
  CoverProblem p{2, {{0}, {1}, {0, 1}}, {1, 1, 5}, {}};
  p.check = [](const std::vector<int>&) { return std::vector<int>{2}; };
  EXPECT_THROW(optimal_cover(p), std::logic_error);
}

TEST(OptimalCover, CheckErrorsPassThroughGlpk) {
  CoverProblem p{2, {{0}, {1}, {0, 1}}, {1, 1, 5}, {}};
  p.check = [](const std::vector<int>&) -> std::vector<int> { throw std::runtime_error("boom"); };
  EXPECT_THROW(optimal_cover(p), std::runtime_error);
  EXPECT_THROW(best_covers(p, 3), std::runtime_error);
  p.check = nullptr; // GLPK is still usable afterwards
  EXPECT_DOUBLE_EQ(optimal_cover(p)->cost, 2);
}

// Two fusions {a,d} and {b,c} of a -> c, a -> d, b -> c, b -> d: each is fusible, together the
// kernels need each other's results first (a -> c and b -> d cross both ways).
TEST(OptimalCover, CyclicQuotientIsCutOff) {
  const CoverGraph g{4, {{0, 2}, {0, 3}, {1, 2}, {1, 3}}};
  ASSERT_TRUE(is_fusible(g, {0, 3}));
  ASSERT_TRUE(is_fusible(g, {1, 2}));
  CoverProblem p;
  p.vertices = 4;
  p.groups = fusible_sets(g, 4, 1000).sets;
  const Sets cheap{{0, 3}, {1, 2}};
  for (const auto& s : p.groups)
    p.cost.push_back(s.size() == 1 ? 10.0 : std::count(cheap.begin(), cheap.end(), s) ? 1.0 : 30.0);
  const auto free = optimal_cover(p);
  ASSERT_TRUE(free);
  EXPECT_DOUBLE_EQ(free->cost, 2);
  EXPECT_FALSE(cyclic_groups(g, p, free->groups).empty());
  EXPECT_EQ(cyclic_groups(g, p, free->groups), free->groups);

  p.check = precedence_check(g, p.groups);
  CoverStats stats;
  const auto ordered = optimal_cover(p, {}, &stats);
  const auto brute = brute_force_cover(p);
  ASSERT_TRUE(ordered && brute);
  expect_valid(p, *ordered);
  EXPECT_TRUE(cyclic_groups(g, p, ordered->groups).empty());
  EXPECT_DOUBLE_EQ(ordered->cost, brute->cost);
  EXPECT_DOUBLE_EQ(ordered->cost, 21); // {a,d} (or {b,c}) with two singletons
  EXPECT_GE(stats.no_goods, 1);
  EXPECT_EQ(stats.ilp_solves, 1); // the no-goods are lazy rows of one search
  EXPECT_GT(stats.seconds, 0);
}

TEST(OptimalCover, PrecedenceCheckEqualsBruteForceOnRandomDags) {
  std::mt19937 rng(4);
  int cut = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const CoverGraph g = random_dag(rng, 5 + trial % 4, 0.4);
    CoverProblem p = random_problem(rng, g, 4, 1.0);
    p.check = precedence_check(g, p.groups);
    CoverStats stats;
    const auto ilp = optimal_cover(p, {}, &stats);
    const auto brute = brute_force_cover(p);
    ASSERT_TRUE(ilp && brute);
    expect_valid(p, *ilp);
    EXPECT_TRUE(cyclic_groups(g, p, ilp->groups).empty());
    EXPECT_NEAR(ilp->cost, brute->cost, tolerance(p)) << "trial " << trial;
    cut += stats.no_goods > 0;
  }
  EXPECT_GT(cut, 0); // the random problems do exercise the no-goods
}

TEST(CyclicGroups, FindsACycleAndRejectsNonPartitions) {
  const CoverGraph g = chain(3);
  const Sets groups{{0}, {1}, {2}, {0, 2}, {0, 1}};
  EXPECT_TRUE(cyclic_groups(g, groups, {0, 1, 2}).empty());
  EXPECT_TRUE(cyclic_groups(g, groups, {4, 2}).empty());
  EXPECT_EQ(cyclic_groups(g, groups, {1, 3}), (std::vector<int>{1, 3})); // {0,2} <-> {1}
  EXPECT_THROW(cyclic_groups(g, groups, {0, 1}), std::invalid_argument);
  EXPECT_THROW(cyclic_groups(g, groups, {0, 4, 2}), std::invalid_argument);
  EXPECT_THROW(cyclic_groups(g, groups, {7}), std::invalid_argument);
}

TEST(AllCovers, CountsPartitions) {
  // Every subset a group: the Bell numbers.
  CoverProblem p{5, {}, {}, {}};
  for (unsigned mask = 1; mask < 32; ++mask) {
    std::vector<int> s;
    for (int v = 0; v < 5; ++v)
      if (mask & (1u << v)) s.push_back(v);
    p.groups.push_back(s);
    p.cost.push_back(1);
  }
  EXPECT_EQ(all_covers(p).size(), 52u);
  EXPECT_EQ(all_covers(p, 10).size(), 10u);
  // A chain's contiguous segments: the compositions of n, 2^(n-1).
  const CoverGraph g = chain(6);
  CoverProblem q{6, fusible_sets(g, 6, 1000).sets, {}, {}};
  q.cost.assign(q.groups.size(), 1.0);
  EXPECT_EQ(all_covers(q).size(), 32u);
}

TEST(BestCovers, DistinctSortedFirstOptimal) {
  std::mt19937 rng(45);
  for (int trial = 0; trial < 40; ++trial) {
    const CoverGraph g = random_dag(rng, 6 + trial % 3, 0.35);
    const CoverProblem p = random_problem(rng, g, 4, 1.0);
    const auto all = all_covers(p);
    const auto best = optimal_cover(p);
    ASSERT_TRUE(best);
    for (int epsilon : {1, 5, 20}) {
      CoverStats stats;
      const auto covers = best_covers(p, epsilon, &stats);
      ASSERT_EQ(covers.size(), std::min<std::size_t>(epsilon, all.size())) << "trial " << trial;
      std::set<std::vector<int>> distinct;
      for (std::size_t i = 0; i < covers.size(); ++i) {
        expect_valid(p, covers[i]);
        distinct.insert(covers[i].groups);
        if (i > 0) {
          EXPECT_LE(covers[i - 1].cost, covers[i].cost);
        }
      }
      EXPECT_EQ(distinct.size(), covers.size());
      EXPECT_NEAR(covers.front().cost, best->cost, tolerance(p));
      EXPECT_GE(stats.ilp_solves, static_cast<int>(covers.size()));
    }
  }
}

// Listing 4.5 reaches every cover: with epsilon at least their number it lists them all.
// (Its first epsilon covers are not in general the epsilon cheapest; see CheapestCovers.)
TEST(BestCovers, ListsEveryCoverOfASmallProblem) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const CoverGraph g = random_dag(rng, 5, 0.4);
    const CoverProblem p = random_problem(rng, g, 3, 1.0);
    const auto all = all_covers(p);
    const auto covers = best_covers(p, static_cast<int>(all.size()) + 3);
    ASSERT_EQ(covers.size(), all.size()) << "trial " << trial;
    std::set<std::vector<int>> a, b;
    for (const auto& c : all) a.insert(c.groups);
    for (const auto& c : covers) b.insert(c.groups);
    EXPECT_EQ(a, b);
  }
}

TEST(BestCovers, AnAllSingletonOptimumStillGivesAlternatives) {
  // Fusing never pays here; forbidding only fusions (the digest's note) would stop at one.
  const CoverGraph g = chain(4);
  CoverProblem p{4, fusible_sets(g, 4, 100).sets, {}, {}};
  for (const auto& s : p.groups) p.cost.push_back(s.size() == 1 ? 1.0 : 10.0 * s.size());
  const auto covers = best_covers(p, 5);
  ASSERT_EQ(covers.size(), 5u);
  EXPECT_EQ(covers.front().groups, (std::vector<int>{0, 1, 2, 3}));
}

TEST(BestCovers, HonoursTheCheck) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const CoverGraph g = random_dag(rng, 6, 0.45);
    CoverProblem p = random_problem(rng, g, 4, 1.0);
    p.check = precedence_check(g, p.groups);
    const auto all = all_covers(p);
    const auto covers = best_covers(p, 10);
    ASSERT_EQ(covers.size(), std::min<std::size_t>(10, all.size()));
    for (const auto& c : covers) EXPECT_TRUE(cyclic_groups(g, p, c.groups).empty());
    EXPECT_NEAR(covers.front().cost, all.front().cost, tolerance(p));
  }
}

TEST(CheapestCovers, AreTheEpsilonCheapest) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    const CoverGraph g = random_dag(rng, 5 + trial % 3, 0.4);
    CoverProblem p = random_problem(rng, g, 4, trial % 2 ? 1.0 : 1e-7);
    if (trial % 4 == 3) p.check = precedence_check(g, p.groups);
    const auto all = all_covers(p);
    for (int epsilon : {1, 7, 30}) {
      const auto covers = cheapest_covers(p, epsilon);
      ASSERT_EQ(covers.size(), std::min<std::size_t>(epsilon, all.size()));
      std::set<std::vector<int>> distinct;
      for (std::size_t i = 0; i < covers.size(); ++i) {
        expect_valid(p, covers[i]);
        distinct.insert(covers[i].groups);
        EXPECT_NEAR(covers[i].cost, all[i].cost, tolerance(p)) << "trial " << trial << " #" << i;
      }
      EXPECT_EQ(distinct.size(), covers.size());
    }
  }
}

namespace {

// A cover problem GLPK's branch and bound does not finish in 30 s (measured: it stops at the
// ceiling kMaxSolveSeconds with 837 no-goods): BSSN's initial data in miniature. 25 "stores"
// and 8 "temporaries", four of which feed every store and the others about a third of them;
// stores linked pairwise (pointwise kernels share their inputs); 400 candidate groups of up to
// three; costs of 1 to 3 per vertex with every fusion at 55% of its members' sum, so that many
// covers tie; and the precedence check, whose no-goods (fusions that would need each other's
// temporaries first) the search meets by the hundred. The mapper's ILP hung on such a problem
// before the limits.
CoverProblem hard_problem() {
  const int ns = 25, nt = 8, n = ns + nt;
  std::uint64_t state = 1; // a fixed LCG: the same problem with every standard library
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<unsigned>(state >> 33);
  };
  CoverGraph data{n, {}};
  for (int t = 0; t < nt; ++t)
    for (int s = 0; s < ns; ++s)
      if (t < 4 || next() % 10 < 3) data.edges.push_back({ns + t, s});
  for (int t = 5; t < nt; ++t) data.edges.push_back({ns + t - 1, ns + t});
  std::vector<std::pair<int, int>> links;
  for (int a = 0; a < ns; ++a)
    for (int b = a + 1; b < ns; ++b) links.push_back({a, b});
  CoverProblem p;
  p.vertices = n;
  p.groups = fusible_sets(data, 3, 400, links).sets;
  std::vector<double> alone(static_cast<std::size_t>(n));
  for (double& c : alone) c = 1 + next() % 3;
  for (const auto& s : p.groups) {
    double sum = 0;
    for (int v : s) sum += alone[static_cast<std::size_t>(v)];
    p.cost.push_back(s.size() == 1 ? sum : 0.55 * sum);
  }
  p.check = precedence_check(data, p.groups);
  return p;
}

void expect_distinct_valid(const CoverProblem& p, const std::vector<Cover>& covers) {
  std::set<std::vector<int>> distinct;
  for (const Cover& c : covers) {
    expect_valid(p, c);
    EXPECT_TRUE(p.check(c.groups).empty());
    distinct.insert(c.groups);
  }
  EXPECT_EQ(distinct.size(), covers.size());
}

} // namespace

// The time limit bounds a search GLPK cannot finish: best_covers returns (10x the limit is
// generous: it overshoots by one solve's floor, kMinSolveSeconds, and GLPK's granularity),
// does not throw, and what it returns is valid.
TEST(BestCovers, TimeLimitBoundsAHardProblem) {
  CoverProblem p = hard_problem();
  p.time_limit = 0.1;
  CoverStats stats;
  std::vector<Cover> covers;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(covers = best_covers(p, 8, &stats));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10 * p.time_limit);
  EXPECT_TRUE(stats.out_of_time);
  EXPECT_GE(stats.stopped, 1);
  EXPECT_LT(covers.size(), 8u); // the epsilon loop stopped when the time was spent
  expect_distinct_valid(p, covers);
  // optimal_cover too; with almost no time left the first solve still gets kMinSolveSeconds.
  p.time_limit = 1e-6;
  const auto one = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(optimal_cover(p));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - one).count(),
            10 * kMinSolveSeconds);
}

// The node limit bounds it by work, not time: the same covers on any machine.
TEST(BestCovers, NodeLimitIsDeterministic) {
  CoverProblem p = hard_problem();
  p.node_limit = 200;
  CoverStats first, second;
  const std::vector<Cover> a = best_covers(p, 4, &first);
  const std::vector<Cover> b = best_covers(p, 4, &second);
  EXPECT_TRUE(first.out_of_nodes);
  EXPECT_FALSE(first.out_of_time);
  EXPECT_GE(first.stopped, 1);
  ASSERT_FALSE(a.empty());
  expect_distinct_valid(p, a);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].groups, b[i].groups);
  // Without `check` (the presolver's path) the limit holds as well.
  p.check = nullptr;
  CoverStats plain;
  EXPECT_NO_THROW(best_covers(p, 4, &plain));
  EXPECT_FALSE(plain.out_of_time);
}

TEST(BestCovers, RejectsBadLimits) {
  CoverProblem p{1, {{0}}, {1}, {}};
  p.time_limit = -1;
  EXPECT_THROW(best_covers(p, 1), std::invalid_argument);
  p.time_limit = 0;
  p.node_limit = -1;
  EXPECT_THROW(optimal_cover(p), std::invalid_argument);
}
