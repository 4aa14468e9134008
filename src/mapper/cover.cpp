#include "mapper/cover.hpp"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>

namespace saguaro::mapper {

namespace {

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

void validate_graph(const CoverGraph& g) {
  if (g.vertices < 0) throw std::invalid_argument("cover graph: negative vertex count");
  for (const auto& [u, v] : g.edges) {
    if (u < 0 || u >= g.vertices || v < 0 || v >= g.vertices)
      throw std::invalid_argument("cover graph: edge " + std::to_string(u) + " -> " +
                                  std::to_string(v) + " outside 0.." +
                                  std::to_string(g.vertices - 1));
    if (u == v)
      throw std::invalid_argument("cover graph: self-loop at vertex " + std::to_string(u));
  }
}

struct Adjacency {
  std::vector<std::vector<int>> out, in, both; // deduplicated
};

// `links` join vertices in `both` (connectivity) only.
Adjacency adjacency(const CoverGraph& g, const std::vector<std::pair<int, int>>& links) {
  for (const auto& [u, v] : links)
    if (u < 0 || u >= g.vertices || v < 0 || v >= g.vertices)
      throw std::invalid_argument("cover graph: link " + std::to_string(u) + " - " +
                                  std::to_string(v) + " outside 0.." +
                                  std::to_string(g.vertices - 1));
  Adjacency a;
  const auto n = static_cast<std::size_t>(g.vertices);
  a.out.resize(n);
  a.in.resize(n);
  a.both.resize(n);
  for (const auto& [u, v] : g.edges) {
    a.out[u].push_back(v);
    a.in[v].push_back(u);
    a.both[u].push_back(v);
    a.both[v].push_back(u);
  }
  for (const auto& [u, v] : links)
    if (u != v) {
      a.both[u].push_back(v);
      a.both[v].push_back(u);
    }
  for (auto* lists : {&a.out, &a.in, &a.both})
    for (auto& l : *lists) {
      std::sort(l.begin(), l.end());
      l.erase(std::unique(l.begin(), l.end()), l.end());
    }
  return a;
}

// Kahn's algorithm; the graph must be a DAG for convexity to mean what Fousek means.
std::vector<int> topological_order(const Adjacency& a) {
  const int n = static_cast<int>(a.out.size());
  std::vector<int> indegree(n), order;
  for (int v = 0; v < n; ++v) indegree[v] = static_cast<int>(a.in[v].size());
  for (int v = 0; v < n; ++v)
    if (indegree[v] == 0) order.push_back(v);
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int w : a.out[order[i]])
      if (--indegree[w] == 0) order.push_back(w);
  if (static_cast<int>(order.size()) != n) throw std::invalid_argument("cover graph: not acyclic");
  return order;
}

// Descendant and ancestor bit sets of every vertex, so that convexity of a candidate set costs
// O(|set| * n / 64) instead of a graph search per set.
class Reach {
public:
  Reach(const Adjacency& a, const std::vector<int>& topo)
      : words_((topo.size() + 63) / 64), desc_(topo.size() * words_), anc_(topo.size() * words_) {
    for (auto it = topo.rbegin(); it != topo.rend(); ++it)
      for (int c : a.out[*it]) {
        set(desc(*it), c);
        merge(desc(*it), desc(c));
      }
    for (int v : topo)
      for (int p : a.in[v]) {
        set(anc(v), p);
        merge(anc(v), anc(p));
      }
  }

  // No vertex outside T is both a descendant and an ancestor of members of T.
  bool convex(const std::vector<int>& t) const {
    std::vector<std::uint64_t> leaving(words_, 0); // descendants of T outside T
    for (int v : t)
      for (std::size_t w = 0; w < words_; ++w) leaving[w] |= desc_[v * words_ + w];
    for (int v : t) leaving[v / 64] &= ~(std::uint64_t{1} << (v % 64));
    for (int v : t)
      for (std::size_t w = 0; w < words_; ++w)
        if (anc_[v * words_ + w] & leaving[w]) return false;
    return true;
  }

private:
  std::uint64_t* desc(int v) { return &desc_[v * words_]; }
  std::uint64_t* anc(int v) { return &anc_[v * words_]; }
  static void set(std::uint64_t* bits, int i) { bits[i / 64] |= std::uint64_t{1} << (i % 64); }
  void merge(std::uint64_t* into, const std::uint64_t* from) const {
    for (std::size_t w = 0; w < words_; ++w) into[w] |= from[w];
  }

  std::size_t words_;
  std::vector<std::uint64_t> desc_, anc_;
};

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
  Session(const CoverProblem& p, CoverStats* stats)
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

  // The cheapest acceptable cover using no forbidden group; nullopt if there is none (or a
  // limit stopped the search before it found one).
  std::optional<Cover> solve(const std::vector<char>& forbidden) {
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

  std::size_t group_count() const { return p_.groups.size(); }

private:
  // The partition rows, one binary column per allowed group, and the known no-goods.
  glp_prob* build(const std::vector<char>& forbidden) {
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
  bool present(const std::vector<int>& s) const {
    return std::all_of(s.begin(), s.end(), [&](int i) { return column_[i] != 0; });
  }

  void add_row(glp_prob* lp, const std::vector<int>& s) {
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

  void record_no_good(std::vector<int> s) {
    no_goods_.push_back(std::move(s));
    if (stats_) ++stats_->no_goods;
  }

  void note_stop(bool nodes) {
    if (!stats_) return;
    ++stats_->stopped;
    (nodes ? stats_->out_of_nodes : stats_->out_of_time) = true;
  }

  static void callback(glp_tree* tree, void* info) {
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
  void generate_rows(glp_prob* lp) {
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

bool cheaper(const Cover& a, const Cover& b) {
  if (a.cost != b.cost) return a.cost < b.cost;
  return a.groups < b.groups;
}

// Every cover of `p` (groups as picked: the one holding the lowest uncovered vertex, in
// index order); `visit` returns false to stop. Ignores `check`.
template <class Visit>
void enumerate_partitions(const CoverProblem& p, const std::vector<std::vector<int>>& groups_of,
                          Visit&& visit) {
  std::vector<char> covered(static_cast<std::size_t>(p.vertices), 0);
  std::vector<int> chosen;
  bool stop = false;
  auto recurse = [&](auto&& self, int from) -> void {
    int v = from;
    while (v < p.vertices && covered[v]) ++v;
    if (v == p.vertices) {
      if (!visit(chosen)) stop = true;
      return;
    }
    for (int i : groups_of[v]) {
      const auto& g = p.groups[i];
      if (std::any_of(g.begin(), g.end(), [&](int w) { return covered[w] != 0; })) continue;
      for (int w : g) covered[w] = 1;
      chosen.push_back(i);
      self(self, v + 1);
      chosen.pop_back();
      for (int w : g) covered[w] = 0;
      if (stop) return;
    }
  };
  recurse(recurse, 0);
}

} // namespace

FusibleSets fusible_sets(const CoverGraph& g, int max_size, std::size_t limit,
                         const std::vector<std::pair<int, int>>& links) {
  validate_graph(g);
  if (max_size < 1) throw std::invalid_argument("fusible_sets: max_size must be at least 1");
  const Adjacency a = adjacency(g, links);
  const Reach reach(a, topological_order(a));

  FusibleSets r;
  std::vector<std::vector<int>> level;
  for (int v = 0; v < g.vertices; ++v) {
    if (r.sets.size() == limit) {
      r.truncated = true;
      return r;
    }
    r.sets.push_back({v});
    level.push_back({v});
  }
  // Grow size by size from the fusible sets one smaller. Complete: every fusible set S with
  // |S| >= 2 has a member v with S \ {v} fusible: a leaf block of S's undirected block-cut
  // tree (edges and links) holds a vertex that is no cut vertex and a source or sink of the
  // edges inside S, and removing a source or sink keeps a convex set convex (a detour through
  // it would already leave S).
  std::vector<int> candidates;
  for (int size = 2; size <= max_size && !level.empty(); ++size) {
    std::set<std::vector<int>> next; // sorted: the output order, and deduplication
    const std::size_t room = limit - r.sets.size();
    for (const auto& s : level) {
      if (next.size() > room) break; // enough to know the result is truncated
      candidates.clear();
      for (int v : s)
        for (int w : a.both[v])
          if (!std::binary_search(s.begin(), s.end(), w)) candidates.push_back(w);
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
      for (int w : candidates) {
        std::vector<int> t = s;
        t.insert(std::upper_bound(t.begin(), t.end(), w), w);
        if (next.count(t) || !reach.convex(t)) continue;
        next.insert(std::move(t));
        if (next.size() > room) break;
      }
    }
    level.assign(next.begin(), next.end());
    if (level.size() > room) {
      level.resize(room);
      r.truncated = true;
    }
    r.sets.insert(r.sets.end(), level.begin(), level.end());
    if (r.truncated) break;
  }
  return r;
}

bool is_fusible(const CoverGraph& g, const std::vector<int>& set,
                const std::vector<std::pair<int, int>>& links) {
  validate_graph(g);
  const auto n = static_cast<std::size_t>(g.vertices);
  std::vector<char> in_set(n, 0);
  for (int v : set) {
    if (v < 0 || v >= g.vertices)
      throw std::invalid_argument("is_fusible: vertex " + std::to_string(v) + " out of range");
    if (in_set[v])
      throw std::invalid_argument("is_fusible: vertex " + std::to_string(v) + " repeated");
    in_set[v] = 1;
  }
  if (set.empty()) return false;
  const Adjacency a = adjacency(g, links);

  // Weakly connected as an induced subgraph.
  std::vector<char> seen(n, 0);
  std::vector<int> queue{set.front()};
  seen[set.front()] = 1;
  for (std::size_t i = 0; i < queue.size(); ++i)
    for (int w : a.both[queue[i]])
      if (in_set[w] && !seen[w]) {
        seen[w] = 1;
        queue.push_back(w);
      }
  if (queue.size() != set.size()) return false;

  // Fousek's test: BFS from every edge leaving the set; one colouring shared by all searches
  // (a vertex already searched from reaches no member), hence O(|E|) in all.
  std::vector<char> visited(n, 0);
  for (int v : set)
    for (int w : a.out[v]) {
      if (in_set[w] || visited[w]) continue;
      visited[w] = 1;
      queue.assign(1, w);
      for (std::size_t i = 0; i < queue.size(); ++i)
        for (int x : a.out[queue[i]]) {
          if (in_set[x]) return false;
          if (!visited[x]) {
            visited[x] = 1;
            queue.push_back(x);
          }
        }
    }
  return true;
}

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

namespace {

// The several-covers searches (best_covers, cheapest_covers). A node is a subproblem: groups
// forbidden, and groups required (the node's covers must hold them). The children of a node
// whose optimum is C partition its other covers (Lawler 1972, Murty 1968): child j forbids the
// j-th group U_j of C that is not required yet and requires U_1..U_{j-1}; a cover C' != C of
// the node misses some U_j and lies in the child of the first it misses. So no two nodes give
// the same cover, every cover is some node's optimum, and each solve is a plain partition ILP.
class CoverSearch {
public:
  CoverSearch(const CoverProblem& p, CoverStats* stats, int epsilon, const char* who)
      : p_(p), session_(p, stats), mask_(p.groups.size()),
        in_required_(static_cast<std::size_t>(p.vertices)) {
    if (epsilon < 0) throw std::invalid_argument(std::string(who) + ": negative epsilon");
  }

  struct Node {
    std::vector<int> forbidden, required; // ascending
  };

  std::optional<Cover> solve(const Node& node) {
    // A required group must be the only allowed one for its vertices: forbid those meeting it.
    std::fill(mask_.begin(), mask_.end(), 0);
    std::fill(in_required_.begin(), in_required_.end(), 0);
    for (int i : node.forbidden) mask_[i] = 1;
    for (int i : node.required)
      for (int v : p_.groups[i]) in_required_[v] = 1;
    for (std::size_t i = 0; i < mask_.size(); ++i)
      if (!std::binary_search(node.required.begin(), node.required.end(), static_cast<int>(i)))
        for (int v : p_.groups[i])
          if (in_required_[v]) mask_[i] = 1;
    ++solves_;
    return session_.solve(mask_);
  }

  // Whether to start no more solves: the call's time is spent (the first solve always runs).
  bool out_of_time() { return solves_ > 0 && session_.out_of_time(); }

  // Fusions first: then the first children forbid one fusion of C and nothing else, which is
  // exactly the thesis's child; the later ones keep those fusions and split them no further.
  std::vector<Node> children(const Node& node, const Cover& c) const {
    std::vector<int> free;
    for (int i : c.groups)
      if (!std::binary_search(node.required.begin(), node.required.end(), i)) free.push_back(i);
    std::stable_sort(free.begin(), free.end(),
                     [&](int a, int b) { return p_.groups[a].size() > p_.groups[b].size(); });
    std::vector<Node> out;
    Node child = node;
    for (int u : free) {
      Node next = child;
      next.forbidden.insert(std::upper_bound(next.forbidden.begin(), next.forbidden.end(), u), u);
      out.push_back(std::move(next));
      child.required.insert(std::upper_bound(child.required.begin(), child.required.end(), u), u);
    }
    return out;
  }

private:
  const CoverProblem& p_;
  Session session_;
  std::vector<char> mask_, in_required_;
  int solves_ = 0;
};

} // namespace

std::vector<Cover> best_covers(const CoverProblem& p, int epsilon, CoverStats* stats) {
  Stopwatch watch(stats);
  CoverSearch search(p, stats, epsilon, "best_covers");
  std::vector<Cover> found;
  std::deque<CoverSearch::Node> queue{CoverSearch::Node{}}; // breadth-first, as the thesis
  while (!queue.empty() && static_cast<int>(found.size()) < epsilon && !search.out_of_time()) {
    const CoverSearch::Node node = std::move(queue.front());
    queue.pop_front();
    std::optional<Cover> c = search.solve(node);
    if (!c) continue;
    for (auto& child : search.children(node, *c)) queue.push_back(std::move(child));
    found.push_back(std::move(*c));
  }
  std::sort(found.begin(), found.end(), cheaper);
  return found;
}

std::vector<Cover> cheapest_covers(const CoverProblem& p, int epsilon, CoverStats* stats) {
  Stopwatch watch(stats);
  CoverSearch search(p, stats, epsilon, "cheapest_covers");
  // Best-first over the same nodes. A child is queued unsolved, keyed by its parent's cost (a
  // lower bound: its covers are some of the parent's), and solved only when it comes first;
  // a solved node that comes first holds the cheapest cover not yet listed.
  struct Entry {
    double key;
    bool solved;
    std::size_t order; // first in, first out among equal keys: deterministic
    CoverSearch::Node node;
    Cover cover;
  };
  auto later = [](const Entry& a, const Entry& b) {
    if (a.key != b.key) return a.key > b.key;
    if (a.solved != b.solved) return b.solved;
    return a.order > b.order;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> open(later);
  std::size_t order = 0;
  open.push({-std::numeric_limits<double>::infinity(), false, order++, {}, {}});
  std::vector<Cover> found;
  while (!open.empty() && static_cast<int>(found.size()) < epsilon && !search.out_of_time()) {
    Entry e = open.top();
    open.pop();
    if (!e.solved) {
      std::optional<Cover> c = search.solve(e.node);
      if (c) open.push({c->cost, true, order++, std::move(e.node), std::move(*c)});
      continue;
    }
    for (auto& child : search.children(e.node, e.cover))
      open.push({e.cover.cost, false, order++, std::move(child), {}});
    found.push_back(std::move(e.cover));
  }
  // GLPK's optimum is exact only within its tolerance; keep the promised order anyway.
  std::stable_sort(found.begin(), found.end(),
                   [](const Cover& a, const Cover& b) { return a.cost < b.cost; });
  return found;
}

std::vector<Cover> all_covers(const CoverProblem& p, std::size_t limit) {
  const auto groups_of = validate_problem(p);
  std::vector<Cover> out;
  if (limit == 0) return out;
  enumerate_partitions(p, groups_of, [&](const std::vector<int>& chosen) {
    std::vector<int> sorted = chosen;
    std::sort(sorted.begin(), sorted.end());
    if (!no_good_of(p, sorted).empty()) return true;
    out.push_back({sorted, cost_of(p, sorted)});
    return out.size() < limit;
  });
  std::sort(out.begin(), out.end(), cheaper);
  return out;
}

std::optional<Cover> brute_force_cover(const CoverProblem& p) {
  const auto groups_of = validate_problem(p);
  std::optional<Cover> best;
  enumerate_partitions(p, groups_of, [&](const std::vector<int>& chosen) {
    Cover c{chosen, cost_of(p, chosen)};
    std::sort(c.groups.begin(), c.groups.end());
    if (best && !cheaper(c, *best)) return true;
    if (no_good_of(p, c.groups).empty()) best = std::move(c);
    return true;
  });
  return best;
}

std::vector<int> cyclic_groups(const CoverGraph& g, const std::vector<std::vector<int>>& groups,
                               const std::vector<int>& cover) {
  validate_graph(g);
  validate_cover(g.vertices, groups, cover, "cyclic_groups");
  const int k = static_cast<int>(cover.size());
  std::vector<int> part(static_cast<std::size_t>(g.vertices));
  for (int q = 0; q < k; ++q)
    for (int v : groups[cover[q]]) part[v] = q;
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(k));
  for (const auto& [u, v] : g.edges)
    if (part[u] != part[v]) succ[part[u]].push_back(part[v]);
  for (auto& s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }

  // Kahn's algorithm: what it cannot remove lies on or behind a cycle.
  std::vector<int> indegree(static_cast<std::size_t>(k), 0), order;
  for (const auto& s : succ)
    for (int r : s) ++indegree[r];
  for (int q = 0; q < k; ++q)
    if (indegree[q] == 0) order.push_back(q);
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int r : succ[order[i]])
      if (--indegree[r] == 0) order.push_back(r);
  if (static_cast<int>(order.size()) == k) return {};

  // A shortest cycle (BFS back to each remaining node): the fewer groups a no-good names, the
  // more covers its row excludes, and the fewer rounds the solver needs.
  std::vector<int> best, parent(static_cast<std::size_t>(k)), queue;
  for (int root = 0; root < k; ++root) {
    if (indegree[root] == 0) continue;
    std::fill(parent.begin(), parent.end(), -1);
    queue.assign(1, root);
    parent[root] = root;
    int last = -1; // the node whose edge closes the cycle at root
    for (std::size_t i = 0; i < queue.size() && last < 0; ++i) {
      const int q = queue[i];
      for (int r : succ[q]) {
        if (r == root) {
          last = q;
          break;
        }
        if (parent[r] < 0 && indegree[r] > 0) {
          parent[r] = q;
          queue.push_back(r);
        }
      }
    }
    if (last < 0) continue;
    std::vector<int> cycle;
    for (int x = last; x != root; x = parent[x]) cycle.push_back(cover[x]);
    cycle.push_back(cover[root]);
    if (best.empty() || cycle.size() < best.size()) best = std::move(cycle);
    if (best.size() == 2) break;
  }
  std::sort(best.begin(), best.end());
  return best;
}

std::vector<int> cyclic_groups(const CoverGraph& g, const CoverProblem& p,
                               const std::vector<int>& cover) {
  return cyclic_groups(g, p.groups, cover);
}

std::function<std::vector<int>(const std::vector<int>&)>
precedence_check(CoverGraph g, std::vector<std::vector<int>> groups) {
  return [g = std::move(g), groups = std::move(groups)](const std::vector<int>& cover) {
    return cyclic_groups(g, groups, cover);
  };
}

} // namespace saguaro::mapper
