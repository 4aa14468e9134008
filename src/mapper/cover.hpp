// Fusion covers (Fousek 2010, §4.3.1 and §4.3.5; docs: shared/seeds/fousek-digest.md §3.1, §3.5):
// which vertex sets of a DAG may become one kernel (fusible sets), and which partition of the
// vertices into such sets is cheapest (a 0/1 set-partitioning ILP, solved with GLPK).
//
// Nothing here knows what a vertex is: the caller maps its calculations (or kernels) to
// 0..n-1, prices each candidate set, and may reject covers it cannot schedule through `check`.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace saguaro::mapper {

// A DAG over vertices 0..n-1 (edges u -> v: v uses u's value). Duplicate edges are allowed;
// self-loops are rejected (std::invalid_argument), and cycles where a DAG is needed
// (fusible_sets; cyclic_groups takes any graph, an order graph with reader -> writer edges say).
struct CoverGraph {
  int vertices = 0;
  std::vector<std::pair<int, int>> edges;
};

// Fousek 4.3.1: every vertex set of size <= max_size that is weakly connected as an induced
// subgraph and convex (no path leaves the set and re-enters it), singletons included.
// `links` are extra undirected pairs that count for connectivity only (two kernels reading the
// same input, say): they are no data edges, so they may close cycles with g's edges and never
// make a set non-convex. g itself must be a DAG (std::invalid_argument otherwise).
// Sets are listed by size, then lexicographically, each sorted ascending, so sets[v] == {v}.
// Enumeration stops when `limit` sets have been found and one more exists (truncated = true);
// because it goes size by size, a truncated result still holds every set smaller than the
// largest one it holds. Memory: two n x n bit matrices (reachability) besides the sets.
struct FusibleSets {
  std::vector<std::vector<int>> sets;
  bool truncated = false;
};
FusibleSets fusible_sets(const CoverGraph& g, int max_size, std::size_t limit,
                         const std::vector<std::pair<int, int>>& links = {});

// The thesis's O(|E|) test: weakly connected (through g's edges and `links`), and no BFS from
// an edge leaving the set reaches the set again. Empty sets are not fusible; out-of-range or
// repeated members throw.
bool is_fusible(const CoverGraph& g, const std::vector<int>& set,
                const std::vector<std::pair<int, int>>& links = {});

struct CoverProblem {
  int vertices = 0;
  std::vector<std::vector<int>> groups; // candidates; every singleton must be present (checked)
  std::vector<double> cost;             // predicted time per group (finite; any scale)
  // Optional: checks a complete cover (group indices, ascending); returns a set of chosen
  // group indices that must not all be chosen together (a "no-good", e.g. groups whose kernels
  // cannot be ordered), or empty if the cover is acceptable. The no-good must be a subset of
  // the cover (else std::logic_error: it would not cut the cover off). The solver adds
  // sum_{U in S} x_U <= |S| - 1 and searches on; no-goods hold for the rest of the call.
  // It is asked about every integral solution the branch and bound meets, not only the final
  // one, each cover at most once per call; it must be consistent (a no-good of one cover is a
  // no-good of every cover holding it) and must not call the solver. What it throws comes out
  // of the solver call.
  std::function<std::vector<int>(const std::vector<int>& cover)> check;
  // Optional budgets of one public call (optimal_cover, best_covers, cheapest_covers); 0: none.
  // A set-partitioning ILP can take GLPK's branch and bound minutes (BSSN's 25 pointwise
  // stores, 400 candidate groups of nearly equal cost), so a solve may be stopped early:
  //  - time_limit [seconds of wall clock] for the whole call: every solve gets what is left
  //    as GLPK's tm_lim (at least kMinSolveSeconds, so that a call started late can still
  //    return a cover), and the several-covers searches start no solve once it is spent;
  //  - node_limit: branch-and-bound nodes per solve. Unlike time it does not depend on the
  //    machine, so a caller that must be reproducible (the mapper) bounds its work with it
  //    and keeps time as a safety net.
  // Without time_limit a solve still stops after kMaxSolveSeconds. A stopped solve returns
  // GLPK's incumbent when it has one (feasible and acceptable to `check`, not proven optimal)
  // and no cover otherwise; CoverStats says which limit was hit.
  double time_limit = 0;
  long node_limit = 0;
};

inline constexpr double kMinSolveSeconds = 0.02;
inline constexpr double kMaxSolveSeconds = 30;

struct Cover {
  std::vector<int> groups; // indices into CoverProblem::groups, ascending
  double cost = 0;         // sum of their costs (the caller's units, never the scaled ones)
};

// Accumulated (never reset) by the calls that are given one.
struct CoverStats {
  int ilp_solves = 0; // glp_intopt calls: one per cover searched (no-goods are lazy rows in it)
  int no_goods = 0;   // distinct no-goods `check` returned
  double seconds = 0; // wall time of the calls, `check` included
  int stopped = 0;    // solves stopped by a limit before they proved their optimum
  bool out_of_time = false;  // a solve hit the time limit, or a search stopped for lack of time
  bool out_of_nodes = false; // a solve hit CoverProblem::node_limit
};

// Minimum-cost set partition by 0/1 ILP (GLPK's glp_intopt, messages off):
//   sum_{U ∋ v} x_U = 1 for each v; minimise sum cost_U x_U; groups with forbidden[i] fixed
//   to 0 (`forbidden` is empty or one flag per group).
// Without `check`, glp_intopt with its presolver. With it, glp_simplex and then glp_intopt
// whose GLP_IROWGEN callback adds the no-goods as lazy rows: one branch and bound instead of
// one per no-good (a 40-vertex stress case: 0.6 s instead of 6.3 s; see cover_ilp.cpp); the
// all-singletons cover, when allowed and acceptable, is its first incumbent (so that a solve
// stopped by a limit has a cover to return).
// Costs are scaled for GLPK's absolute tolerances; optimal within ~1e-7 of the largest cost.
// nullopt when no acceptable cover exists, or a limit (CoverProblem::time_limit, node_limit)
// stopped the solve before it found one. Invalid problems throw std::invalid_argument; a GLPK
// failure (not infeasibility, not a limit) throws std::runtime_error.
std::optional<Cover> optimal_cover(const CoverProblem& p, const std::vector<bool>& forbidden = {},
                                   CoverStats* stats = nullptr);

// Listing 4.5: up to epsilon distinct covers, breadth-first from the optimum, each child of a
// node forbidding one group of the node's cover; sorted by cost. Two changes to the listing:
//  - the children partition the node's other covers (Lawler/Murty): child j forbids the j-th
//    group of the cover not already required and requires the ones before it. The listing's
//    children (forbid one group, remember used forbidden sets) overlap, find the same covers
//    over and over, and explode: all 98 covers of an 8-vertex DAG took 313,150 ILP solves.
//    Now every feasible node gives a new cover (98 solves there), and the first children
//    still just forbid one fusion each, as the thesis's;
//  - singletons are forbidden too, not only fusions (the digest's note): otherwise an optimum
//    that fuses nothing has no children, and covers fusing more are never reached.
// Every acceptable cover is reachable, so the result has min(epsilon, #acceptable covers)
// covers; but they are not in general the epsilon cheapest (the thesis says so too).
// Under CoverProblem's limits it may return fewer: it starts no solve once time_limit is
// spent (the first always runs), and a node whose stopped solve found nothing has no children.
std::vector<Cover> best_covers(const CoverProblem& p, int epsilon, CoverStats* stats = nullptr);

// Exactly the epsilon cheapest acceptable covers, cheapest first (ties in any order; exact
// within GLPK's optimality tolerance): the same nodes searched best-first (Murty's k-best),
// each child solved only when its parent's cost, a lower bound, comes first. A solve stopped
// by a limit breaks the promise (its cover need not be its node's cheapest); CoverStats says.
std::vector<Cover> cheapest_covers(const CoverProblem& p, int epsilon, CoverStats* stats = nullptr);

// For tests and tiny problems (n <= 10 or so): every acceptable cover (`check` honoured: a
// cover containing a no-good it returns is rejected), at most `limit`, sorted by cost; and the
// cheapest one.
std::vector<Cover> all_covers(const CoverProblem& p, std::size_t limit = 1000000);
std::optional<Cover> brute_force_cover(const CoverProblem& p);

// A precedence check for `check`: whether the quotient graph of a cover (one node per group,
// an edge where an edge of g crosses groups) is acyclic; if not, the group indices (ascending)
// on one shortest cycle (the shorter a no-good, the more covers it excludes), else empty.
// The cover must partition the graph's vertices (std::invalid_argument otherwise).
std::vector<int> cyclic_groups(const CoverGraph& g, const std::vector<std::vector<int>>& groups,
                               const std::vector<int>& cover);
std::vector<int> cyclic_groups(const CoverGraph& g, const CoverProblem& p,
                               const std::vector<int>& cover);
// cyclic_groups as a CoverProblem::check, holding its own copies of the graph and the groups.
std::function<std::vector<int>(const std::vector<int>&)>
precedence_check(CoverGraph g, std::vector<std::vector<int>> groups);

} // namespace saguaro::mapper
