// Several covers of one problem (cover.hpp): best_covers and cheapest_covers, which split the
// covers into subproblems (Lawler, Murty) and solve each as one ILP (Session, cover_ilp.hpp);
// and all_covers and brute_force_cover, plain enumerations for tests and tiny problems. Apart
// from the single solve: these only decide which groups a solve forbids or requires.
#include "mapper/cover.hpp"
#include "mapper/cover_ilp.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::mapper {

using detail::cost_of;
using detail::no_good_of;
using detail::Session;
using detail::Stopwatch;
using detail::validate_problem;

namespace {

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

} // namespace saguaro::mapper
