// The cover ILP's pieces that the files behind cover.hpp share (internal to mapper/): the
// checks of a CoverProblem and of a cover, and Session, which solves one problem with GLPK
// (both defined in cover_ilp.cpp), and Stopwatch, which times a public call. cover_search.cpp
// builds the several-covers searches on Session; cover.cpp checks covers with validate_cover.
#pragma once

#include "mapper/cover.hpp"

#include <chrono>
#include <exception>
#include <limits>
#include <optional>
#include <set>
#include <vector>

// GLPK's problem and branch-and-bound tree (glpk.h, which only cover_ilp.cpp includes).
struct glp_prob;
struct glp_tree;

namespace saguaro::mapper::detail {

using Clock = std::chrono::steady_clock;

// Adds the wall time of a public call to its stats, also when it throws.
class Stopwatch {
public:
  explicit Stopwatch(CoverStats* stats) : stats_(stats), start_(Clock::now()) {}
  ~Stopwatch() {
    if (stats_) stats_->seconds += std::chrono::duration<double>(Clock::now() - start_).count();
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

private:
  CoverStats* stats_;
  Clock::time_point start_;
};

// The checks and sums of cover_ilp.cpp (described there).
std::vector<std::vector<int>> validate_problem(const CoverProblem& p);
void validate_cover(int vertices, const std::vector<std::vector<int>>& groups,
                    const std::vector<int>& cover, const char* who);
double cost_of(const CoverProblem& p, const std::vector<int>& groups);
std::vector<int> no_good_of(const CoverProblem& p, const std::vector<int>& cover);

// One validated problem and the no-goods `check` has returned so far: a no-good is a fact
// about the groups, so it holds for every later solve of the same public call.
//
// `check` runs inside GLPK's branch and bound (GLP_IROWGEN): an integral LP solution that it
// rejects gets its no-good as a lazy row there and then, so one search replaces an outer
// "add the row and solve again" loop, which re-ran the whole search per no-good (55 searches
// of growing cost, 6.3 s, for one 40-vertex stress cover; 0.6 s so). GLPK keeps a lazy row
// only below the node that added it, so a known no-good that an LP solution elsewhere
// violates is added again.
class Session {
public:
  Session(const CoverProblem& p, CoverStats* stats);

  // Seconds of CoverProblem::time_limit left (+inf without one).
  double time_left() const {
    if (p_.time_limit <= 0) return std::numeric_limits<double>::infinity();
    return p_.time_limit - std::chrono::duration<double>(Clock::now() - start_).count();
  }

  // Whether the call's time is spent; says so in the stats when it is.
  bool out_of_time() {
    if (time_left() > 0) return false;
    if (stats_) stats_->out_of_time = true;
    return true;
  }

  std::optional<Cover> solve(const std::vector<char>& forbidden);

  std::size_t group_count() const { return p_.groups.size(); }

private:
  glp_prob* build(const std::vector<char>& forbidden);
  bool present(const std::vector<int>& s) const;
  void add_row(glp_prob* lp, const std::vector<int>& s);
  void record_no_good(std::vector<int> s);
  void note_stop(bool nodes);
  static void callback(glp_tree* tree, void* info);
  void generate_rows(glp_prob* lp);

  const CoverProblem& p_;
  CoverStats* stats_;
  std::vector<std::vector<int>> groups_of_;
  double scale_ = 1;
  std::vector<std::vector<int>> no_goods_;
  std::set<std::vector<int>> accepted_; // covers `check` accepted: not asked again
  // The problem being solved: group -> column (0: forbidden) and back.
  std::vector<int> column_, group_of_column_;
  std::vector<int> index_;
  std::vector<double> value_, x_;
  std::exception_ptr error_;
  Clock::time_point start_;       // of the public call: CoverProblem::time_limit counts from here
  bool out_of_nodes_ = false;     // the callback stopped the solve at CoverProblem::node_limit
  bool offer_singletons_ = false; // the callback offers the singletons as an incumbent
};

} // namespace saguaro::mapper::detail
