// Fusion candidates and precedence (cover.hpp): the fusible sets a cover's groups are drawn
// from (fusible_sets, is_fusible: connected and convex, Fousek 4.3.1) and the check that a
// cover's groups can run in some order (cyclic_groups, precedence_check). Graph work only:
// the ILP that picks covers is in cover_ilp.cpp and cover_search.cpp.
#include "mapper/cover.hpp"
#include "mapper/cover_ilp.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

namespace saguaro::mapper {

using detail::validate_cover;

namespace {

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
