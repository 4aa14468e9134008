// The cover ILP (cover_ilp.hpp): the checks of a CoverProblem and of a cover, and the GLPK
// session that solves one problem, `check`'s no-goods added as lazy rows; optimal_cover, one
// solve. Apart from the candidate groups and the precedence check (cover.cpp) and from the
// several-covers searches (cover_search.cpp): this is the one file that talks to GLPK.
#include "mapper/cover.hpp"
#include "mapper/cover_ilp.hpp"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

namespace saguaro::mapper {

namespace detail {

// Throws unless `p` is a well-formed set-partitioning problem; returns the groups of each vertex.
std::vector<std::vector<int>> validate_problem(const CoverProblem& p) {
  if (p.vertices < 0) throw std::invalid_argument("cover problem: negative vertex count");
  if (p.cost.size() != p.groups.size())
    throw std::invalid_argument("cover problem: " + std::to_string(p.cost.size()) + " costs for " +
                                std::to_string(p.groups.size()) + " groups");
  const auto n = static_cast<std::size_t>(p.vertices);
  std::vector<std::vector<int>> groups_of(n);
  std::vector<int> stamp(n, -1);
  std::vector<char> singleton(n, 0);
  for (std::size_t i = 0; i < p.groups.size(); ++i) {
    const std::string name = "cover problem: group " + std::to_string(i);
    if (p.groups[i].empty()) throw std::invalid_argument(name + " is empty");
    if (!std::isfinite(p.cost[i])) throw std::invalid_argument(name + " has a non-finite cost");
    for (int v : p.groups[i]) {
      if (v < 0 || v >= p.vertices)
        throw std::invalid_argument(name + " has vertex " + std::to_string(v) + " outside 0.." +
                                    std::to_string(p.vertices - 1));
      if (stamp[v] == static_cast<int>(i))
        throw std::invalid_argument(name + " repeats vertex " + std::to_string(v));
      stamp[v] = static_cast<int>(i);
      groups_of[v].push_back(static_cast<int>(i));
    }
    if (p.groups[i].size() == 1) singleton[p.groups[i][0]] = 1;
  }
  for (std::size_t v = 0; v < n; ++v)
    if (!singleton[v])
      throw std::invalid_argument("cover problem: vertex " + std::to_string(v) +
                                  " has no singleton group {" + std::to_string(v) + "}");
  return groups_of;
}

// Throws unless `cover` (group indices) partitions 0..vertices-1.
void validate_cover(int vertices, const std::vector<std::vector<int>>& groups,
                    const std::vector<int>& cover, const char* who) {
  std::vector<char> covered(static_cast<std::size_t>(vertices), 0);
  int count = 0;
  for (int i : cover) {
    if (i < 0 || i >= static_cast<int>(groups.size()))
      throw std::invalid_argument(std::string(who) + ": group index " + std::to_string(i) +
                                  " out of range");
    for (int v : groups[i]) {
      if (v < 0 || v >= vertices)
        throw std::invalid_argument(std::string(who) + ": group " + std::to_string(i) +
                                    " has vertex " + std::to_string(v) + " out of range");
      if (covered[v])
        throw std::invalid_argument(std::string(who) + ": vertex " + std::to_string(v) +
                                    " covered twice");
      covered[v] = 1;
      ++count;
    }
  }
  if (count != vertices)
    throw std::invalid_argument(std::string(who) + ": the cover leaves vertices uncovered");
}

double cost_of(const CoverProblem& p, const std::vector<int>& groups) {
  double sum = 0;
  for (int i : groups) sum += p.cost[i];
  return sum;
}

// Calls p.check and returns its no-good sorted, or throws if it would not cut `cover` off.
std::vector<int> no_good_of(const CoverProblem& p, const std::vector<int>& cover) {
  if (!p.check) return {};
  std::vector<int> s = p.check(cover);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  for (int i : s)
    if (!std::binary_search(cover.begin(), cover.end(), i))
      throw std::logic_error("cover check returned group " + std::to_string(i) +
                             ", which is not in the cover it checked");
  return s;
}

namespace {

const char* glpk_error_name(int rc) {
  switch (rc) {
  case GLP_EBOUND: return "GLP_EBOUND (incorrect bounds)";
  case GLP_EROOT: return "GLP_EROOT (no optimal LP basis)";
  case GLP_ENOPFS: return "GLP_ENOPFS (no primal feasible solution)";
  case GLP_ENODFS: return "GLP_ENODFS (no dual feasible solution)";
  case GLP_EFAIL: return "GLP_EFAIL (solver failure)";
  case GLP_EMIPGAP: return "GLP_EMIPGAP (gap tolerance reached)";
  case GLP_ETMLIM: return "GLP_ETMLIM (time limit reached)";
  case GLP_ESTOP: return "GLP_ESTOP (stopped by the application)";
  default: return "unknown GLPK return code";
  }
}

// GLPK's terminal output is a process (thread) setting: switch it off for the call, then put
// back whatever the application had.
class QuietGlpk {
public:
  QuietGlpk() : previous_(glp_term_out(GLP_OFF)) {}
  ~QuietGlpk() { glp_term_out(previous_); }
  QuietGlpk(const QuietGlpk&) = delete;
  QuietGlpk& operator=(const QuietGlpk&) = delete;

private:
  int previous_;
};

struct GlpDelete {
  void operator()(glp_prob* lp) const { glp_delete_prob(lp); }
};

const char* simplex_error_name(int rc) {
  switch (rc) {
  case GLP_EBADB: return "GLP_EBADB (invalid basis)";
  case GLP_ESING: return "GLP_ESING (singular basis)";
  case GLP_ECOND: return "GLP_ECOND (ill-conditioned basis)";
  case GLP_EBOUND: return "GLP_EBOUND (incorrect bounds)";
  case GLP_EFAIL: return "GLP_EFAIL (solver failure)";
  case GLP_EITLIM: return "GLP_EITLIM (iteration limit)";
  case GLP_ETMLIM: return "GLP_ETMLIM (time limit)";
  default: return "unknown GLPK return code";
  }
}

} // namespace

Session::Session(const CoverProblem& p, CoverStats* stats)
    : p_(p), stats_(stats), groups_of_(validate_problem(p)), start_(Clock::now()) {
  if (p.time_limit < 0 || !std::isfinite(p.time_limit))
    throw std::invalid_argument("cover problem: time limit must be finite and >= 0");
  if (p.node_limit < 0) throw std::invalid_argument("cover problem: negative node limit");
  // GLPK's tolerances are absolute (reduced costs 1e-7): costs of 1e-6 s would all look
  // alike. Scale the largest magnitude to 1; covers are priced in the caller's units.
  double largest = 0;
  for (double c : p.cost) largest = std::max(largest, std::abs(c));
  scale_ = largest > 0 ? 1 / largest : 1;
}

// The cheapest acceptable cover using no forbidden group; nullopt if there is none (or a
// limit stopped the search before it found one).
std::optional<Cover> Session::solve(const std::vector<char>& forbidden) {
  const int n = p_.vertices;
  if (n == 0) { // the empty cover; nothing to solve (a no-good of it would throw)
    no_good_of(p_, {});
    return Cover{};
  }
  // GLPK needs every row to have a column; an uncoverable vertex means no cover.
  for (const auto& gs : groups_of_)
    if (std::none_of(gs.begin(), gs.end(), [&](int i) { return !forbidden[i]; }))
      return std::nullopt;

  QuietGlpk quiet;
  for (;;) { // more than once only if the search's answer fails `check` after all
    std::unique_ptr<glp_prob, GlpDelete> lp(build(forbidden));

    // GLPK's time limit: what is left of the call's, within [kMinSolveSeconds,
    // kMaxSolveSeconds] (tm_lim is in whole milliseconds).
    const double seconds = std::clamp(time_left(), kMinSolveSeconds, kMaxSolveSeconds);
    const int tm_lim = static_cast<int>(std::ceil(seconds * 1e3));
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.tm_lim = tm_lim;
    if (!p_.check) {
      parm.presolve = GLP_ON; // also spares the glp_simplex call
    } else {
      // The presolver would renumber the columns the callback reads; without it glp_intopt
      // needs the LP relaxation's optimal basis first.
      glp_smcp smcp;
      glp_init_smcp(&smcp);
      smcp.msg_lev = GLP_MSG_OFF;
      smcp.tm_lim = tm_lim;
      const int src = glp_simplex(lp.get(), &smcp);
      if (src == GLP_ETMLIM) { // no relaxation, hence no cover in time
        note_stop(false);
        return std::nullopt;
      }
      if (src != 0)
        throw std::runtime_error(std::string("GLPK glp_simplex: ") + simplex_error_name(src));
      const int lp_status = glp_get_status(lp.get());
      if (lp_status == GLP_NOFEAS) return std::nullopt;
      if (lp_status != GLP_OPT)
        throw std::runtime_error("GLPK glp_simplex: no optimal LP relaxation (status " +
                                 std::to_string(lp_status) + ")");
      // Its rounded solutions become incumbents without a GLP_IROWGEN call, unchecked.
      parm.sr_heur = GLP_OFF;
    }
    // A first incumbent for the branch and bound when the singletons are allowed and
    // acceptable (the callback offers it at the root): with hundreds of groups of nearly
    // equal cost and the no-goods as lazy rows, GLPK can take thousands of nodes to find an
    // integral solution of its own, and a solve stopped by a limit before that finds nothing.
    offer_singletons_ = false;
    if (p_.check) {
      std::vector<int> singletons;
      for (std::size_t i = 0; i < p_.groups.size(); ++i)
        if (p_.groups[i].size() == 1 && !forbidden[i]) singletons.push_back(static_cast<int>(i));
      if (static_cast<int>(singletons.size()) == n) {
        if (!accepted_.count(singletons) && no_good_of(p_, singletons).empty())
          accepted_.insert(singletons);
        offer_singletons_ = accepted_.count(singletons) > 0;
      }
    }
    // The callback adds the no-goods (with `check`), offers that incumbent, and counts nodes
    // (with a node limit); it reads the columns only in the first two cases, which have the
    // presolver off.
    if (p_.check || p_.node_limit > 0) {
      parm.cb_func = &Session::callback;
      parm.cb_info = this;
    }
    error_ = nullptr;
    out_of_nodes_ = false;
    const int rc = glp_intopt(lp.get(), &parm);
    if (stats_) ++stats_->ilp_solves;
    if (error_) std::rethrow_exception(error_); // from `check`, stopped with GLP_ESTOP
    if (rc == GLP_ENOPFS) return std::nullopt;  // the presolver's "infeasible"
    const bool stopped = rc == GLP_ETMLIM || (rc == GLP_ESTOP && out_of_nodes_);
    if (rc != 0 && !stopped)
      throw std::runtime_error(std::string("GLPK glp_intopt: ") + glpk_error_name(rc));
    const int status = glp_mip_status(lp.get());
    if (stopped) {
      note_stop(rc == GLP_ESTOP);
      // The incumbent if there is one: with `check` every incumbent passed GLP_IROWGEN
      // (the rounding heuristic is off), and it is checked again below anyway.
      if (status != GLP_FEAS && status != GLP_OPT) return std::nullopt;
    } else {
      if (status == GLP_NOFEAS) return std::nullopt;
      if (status != GLP_OPT)
        throw std::runtime_error("GLPK glp_intopt: no optimal solution (status " +
                                 std::to_string(status) + ")");
    }

    Cover c;
    for (int j = 1; j < static_cast<int>(group_of_column_.size()); ++j)
      if (glp_mip_col_val(lp.get(), j) > 0.5) c.groups.push_back(group_of_column_[j]);
    validate_cover(n, p_.groups, c.groups, "GLPK's solution"); // defensive: never expected
    c.cost = cost_of(p_, c.groups);
    if (!p_.check || accepted_.count(c.groups)) return c;
    std::vector<int> s = no_good_of(p_, c.groups);
    if (s.empty()) {
      accepted_.insert(c.groups);
      return c;
    }
    record_no_good(std::move(s));
    if (stopped) return std::nullopt; // no time (or nodes) to search on
  }
}

// The partition rows, one binary column per allowed group, and the known no-goods.
glp_prob* Session::build(const std::vector<char>& forbidden) {
  const int n = p_.vertices;
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_rows(lp, n);
  for (int v = 1; v <= n; ++v) glp_set_row_bnds(lp, v, GLP_FX, 1.0, 1.0);
  const int m = static_cast<int>(p_.groups.size());
  column_.assign(static_cast<std::size_t>(m), 0);
  group_of_column_.assign(1, -1);
  for (int i = 0; i < m; ++i) {
    if (forbidden[i]) continue;
    const int j = glp_add_cols(lp, 1);
    column_[i] = j;
    group_of_column_.push_back(i);
    glp_set_col_kind(lp, j, GLP_BV);
    glp_set_obj_coef(lp, j, p_.cost[i] * scale_);
    index_.assign(1, 0);
    value_.assign(1, 0);
    for (int v : p_.groups[i]) {
      index_.push_back(v + 1);
      value_.push_back(1.0);
    }
    glp_set_mat_col(lp, j, static_cast<int>(p_.groups[i].size()), index_.data(), value_.data());
  }
  for (const auto& s : no_goods_)
    if (present(s)) add_row(lp, s);
  return lp;
}

// A no-good naming a forbidden group always holds (that x is 0): it needs no row.
bool Session::present(const std::vector<int>& s) const {
  return std::all_of(s.begin(), s.end(), [&](int i) { return column_[i] != 0; });
}

void Session::add_row(glp_prob* lp, const std::vector<int>& s) {
  const int r = glp_add_rows(lp, 1);
  glp_set_row_bnds(lp, r, GLP_UP, 0.0, static_cast<double>(s.size()) - 1);
  index_.assign(1, 0);
  value_.assign(1, 0);
  for (int i : s) {
    index_.push_back(column_[i]);
    value_.push_back(1.0);
  }
  glp_set_mat_row(lp, r, static_cast<int>(s.size()), index_.data(), value_.data());
}

void Session::record_no_good(std::vector<int> s) {
  no_goods_.push_back(std::move(s));
  if (stats_) ++stats_->no_goods;
}

void Session::note_stop(bool nodes) {
  if (!stats_) return;
  ++stats_->stopped;
  (nodes ? stats_->out_of_nodes : stats_->out_of_time) = true;
}

void Session::callback(glp_tree* tree, void* info) {
  auto* self = static_cast<Session*>(info);
  if (glp_ios_reason(tree) == GLP_ISELECT && self->p_.node_limit > 0) {
    int total = 0; // every node created so far, also those already fathomed
    glp_ios_tree_size(tree, nullptr, nullptr, &total);
    if (total > self->p_.node_limit) {
      self->out_of_nodes_ = true;
      glp_ios_terminate(tree);
    }
    return;
  }
  if (glp_ios_reason(tree) == GLP_IHEUR && self->offer_singletons_) {
    self->offer_singletons_ = false; // once, at the root
    const int columns = static_cast<int>(self->group_of_column_.size()) - 1;
    std::vector<double> x(static_cast<std::size_t>(columns) + 1, 0.0);
    for (int j = 1; j <= columns; ++j)
      if (self->p_.groups[self->group_of_column_[j]].size() == 1) x[j] = 1;
    glp_ios_heur_sol(tree, x.data()); // GLPK keeps it only if it beats what it has
    return;
  }
  if (glp_ios_reason(tree) != GLP_IROWGEN || !self->p_.check) return;
  try {
    self->generate_rows(glp_ios_get_prob(tree));
  } catch (...) { // never through GLPK's C frames
    self->error_ = std::current_exception();
    glp_ios_terminate(tree);
  }
}

// At an LP optimum of a branch-and-bound node: add the known no-goods it violates; else, if
// it is integral, ask `check` about the cover it is.
void Session::generate_rows(glp_prob* lp) {
  const int columns = static_cast<int>(group_of_column_.size()) - 1;
  x_.assign(static_cast<std::size_t>(columns) + 1, 0.0);
  for (int j = 1; j <= columns; ++j) x_[j] = glp_get_col_prim(lp, j);
  bool added = false;
  for (const auto& s : no_goods_) {
    if (!present(s)) continue;
    double sum = 0;
    for (int i : s) sum += x_[column_[i]];
    if (sum > static_cast<double>(s.size()) - 1 + 1e-6) {
      add_row(lp, s);
      added = true;
    }
  }
  if (added) return;
  std::vector<int> cover;
  for (int j = 1; j <= columns; ++j) {
    if (x_[j] > 1e-6 && x_[j] < 1 - 1e-6) return; // fractional: GLPK branches
    if (x_[j] > 0.5) cover.push_back(group_of_column_[j]);
  }
  if (accepted_.count(cover)) return;
  std::vector<int> s = no_good_of(p_, cover);
  if (s.empty()) {
    accepted_.insert(std::move(cover));
    return;
  }
  add_row(lp, s);
  record_no_good(std::move(s));
}

} // namespace detail

using detail::Session;
using detail::Stopwatch;

std::optional<Cover> optimal_cover(const CoverProblem& p, const std::vector<bool>& forbidden,
                                   CoverStats* stats) {
  Stopwatch watch(stats);
  Session session(p, stats);
  if (!forbidden.empty() && forbidden.size() != p.groups.size())
    throw std::invalid_argument("optimal_cover: " + std::to_string(forbidden.size()) +
                                " forbidden flags for " + std::to_string(p.groups.size()) +
                                " groups");
  std::vector<char> mask(p.groups.size(), 0);
  for (std::size_t i = 0; i < forbidden.size(); ++i) mask[i] = forbidden[i] ? 1 : 0;
  return session.solve(mask);
}

} // namespace saguaro::mapper
