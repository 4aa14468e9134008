// Boxes, patches, the decomposition over MPI ranks and the ghost exchange.
#include "grid/grid.hpp"

#include <algorithm>
#include <climits>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace saguaro::grid {

// ---------------------------------------------------------------------------------------------
// Box, Patch

long long Box::volume() const {
  long long v = 1;
  for (int a = 0; a < 3; ++a) v *= std::max(0, hi[a] - lo[a]);
  return v;
}

Box intersect(const Box& a, const Box& b) {
  Box r;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d])); // empty: hi == lo
  }
  return r;
}

Index3 Patch::size() const {
  return {owned.hi[0] - owned.lo[0], owned.hi[1] - owned.lo[1], owned.hi[2] - owned.lo[2]};
}

Index3 Patch::alloc() const {
  const Index3 n = size();
  const int g = ghost();
  return {n[0] + 2 * g, n[1] + 2 * g, n[2] + 2 * g};
}

std::size_t Patch::points() const {
  const Index3 n = alloc();
  return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
         static_cast<std::size_t>(n[2]);
}

std::size_t Patch::linear(int i, int j, int k) const {
  const int g = ghost();
  const Index3 n = alloc();
  const auto di = static_cast<std::size_t>(i - (owned.lo[0] - g));
  const auto dj = static_cast<std::size_t>(j - (owned.lo[1] - g));
  const auto dk = static_cast<std::size_t>(k - (owned.lo[2] - g));
  return (dk * static_cast<std::size_t>(n[1]) + dj) * static_cast<std::size_t>(n[0]) + di;
}

Box Patch::allocated() const {
  Box b = owned;
  for (int a = 0; a < 3; ++a) {
    b.lo[a] -= ghost();
    b.hi[a] += ghost();
  }
  return b;
}

Box Patch::valid() const {
  Box b = owned;
  for (int a = 0; a < 3; ++a) {
    if (outer[a][0]) b.lo[a] -= ghost();
    if (outer[a][1]) b.hi[a] += ghost();
  }
  return b;
}

Real3 Patch::array_origin() const {
  Real3 x{};
  for (int a = 0; a < 3; ++a) x[a] = coordinate(a, owned.lo[a] - ghost());
  return x;
}

// ---------------------------------------------------------------------------------------------
// Decomposition

namespace {

// Part c of n points split into p parts as evenly as possible: the first n % p parts get one
// point more. Returns [lo, hi).
std::array<int, 2> part(int n, int p, int c) {
  const int base = n / p, extra = n % p;
  const int lo = c * base + std::min(c, extra);
  return {lo, lo + base + (c < extra ? 1 : 0)};
}

// Does an axis exchange ghosts (and so need at least `ghost` points on every rank)?
bool exchanges(const GridSpec& spec, const Index3& dims, int a) {
  return dims[a] > 1 || spec.periodic[a];
}

bool feasible(const GridSpec& spec, const Index3& dims) {
  for (int a = 0; a < 3; ++a) {
    const int smallest = spec.points[a] / dims[a];
    if (smallest < 1) return false;
    if (exchanges(spec, dims, a) && smallest < spec.ghost) return false;
  }
  return true;
}

std::string describe(const GridSpec& spec, int ranks) {
  std::ostringstream s;
  s << "a grid of " << spec.points[0] << " x " << spec.points[1] << " x " << spec.points[2]
    << " points (ghost width " << spec.ghost;
  static const char* axis_names[] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a)
    if (spec.periodic[a]) s << ", periodic " << axis_names[a];
  s << ") over " << ranks << (ranks == 1 ? " rank" : " ranks");
  return s.str();
}

// MPI_Dims_create's factors, the largest on the axis with the most points; when that split
// leaves some rank fewer points than it needs, the factorisation of `ranks` with the least
// exchanged surface per rank among those that fit.
Index3 choose_dims(const GridSpec& spec, int ranks) {
  int factors[3] = {0, 0, 0};
  MPI_Dims_create(ranks, 3, factors); // non-increasing
  std::array<int, 3> order{0, 1, 2};
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return spec.points[a] > spec.points[b]; });
  Index3 dims{1, 1, 1};
  for (int m = 0; m < 3; ++m) dims[order[m]] = factors[m];
  if (feasible(spec, dims)) return dims;

  bool found = false;
  Index3 best{1, 1, 1};
  double best_cost = 0;
  for (int d0 = 1; d0 <= ranks; ++d0) {
    if (ranks % d0 != 0) continue;
    for (int d1 = 1; d1 <= ranks / d0; ++d1) {
      if ((ranks / d0) % d1 != 0) continue;
      const Index3 cand{d0, d1, ranks / d0 / d1};
      if (!feasible(spec, cand)) continue;
      double cost = 0; // points on the faces a rank exchanges, per rank (largest rank)
      for (int a = 0; a < 3; ++a) {
        if (!exchanges(spec, cand, a)) continue;
        double area = 1;
        for (int b = 0; b < 3; ++b)
          if (b != a) area *= (spec.points[b] + cand[b] - 1) / cand[b];
        cost += area;
      }
      if (!found || cost < best_cost) {
        found = true;
        best = cand;
        best_cost = cost;
      }
    }
  }
  if (!found) {
    std::ostringstream s;
    s << "saguaro::grid: cannot decompose " << describe(spec, ranks)
      << ": each rank needs at least one point along every axis and at least g = " << spec.ghost
      << " points along every split axis and every periodic axis";
    throw std::invalid_argument(s.str());
  }
  return best;
}

} // namespace

Decomposition::Decomposition(const GridSpec& spec, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL)
    throw std::invalid_argument("saguaro::grid: Decomposition needs a communicator, not null");
  if (spec.ghost < 0)
    throw std::invalid_argument("saguaro::grid: the ghost width must not be negative");
  for (int a = 0; a < 3; ++a) {
    if (spec.points[a] < 1)
      throw std::invalid_argument("saguaro::grid: the grid needs at least one point per axis");
    if (!(spec.spacing[a] > 0))
      throw std::invalid_argument("saguaro::grid: the grid spacing must be positive");
  }
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  // Everything above and choose_dims depend on global data only, so every rank throws alike
  // before the collective MPI_Cart_create.
  dims_ = choose_dims(spec, ranks);

  int dims[3] = {dims_[0], dims_[1], dims_[2]};
  int periods[3] = {spec.periodic[0] ? 1 : 0, spec.periodic[1] ? 1 : 0, spec.periodic[2] ? 1 : 0};
  MPI_Cart_create(comm, 3, dims, periods, /*reorder=*/0, &cart_);

  int rank = 0, coords[3] = {0, 0, 0};
  MPI_Comm_rank(cart_, &rank);
  MPI_Cart_coords(cart_, rank, 3, coords);
  patch_.spec = spec;
  patch_.rank = rank;
  patch_.ranks = ranks;
  for (int a = 0; a < 3; ++a) {
    coords_[a] = coords[a];
    const auto [lo, hi] = part(spec.points[a], dims_[a], coords[a]);
    patch_.owned.lo[a] = lo;
    patch_.owned.hi[a] = hi;
    patch_.outer[a][0] = !spec.periodic[a] && coords[a] == 0;
    patch_.outer[a][1] = !spec.periodic[a] && coords[a] == dims_[a] - 1;
    MPI_Cart_shift(cart_, a, 1, &neighbour_[a][0], &neighbour_[a][1]);
  }
}

Decomposition::~Decomposition() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

Box Decomposition::owned_by(int rank) const {
  if (rank < 0 || rank >= patch_.ranks)
    throw std::out_of_range("saguaro::grid: owned_by: no rank " + std::to_string(rank));
  int coords[3] = {0, 0, 0};
  MPI_Cart_coords(cart_, rank, 3, coords);
  Box b;
  for (int a = 0; a < 3; ++a) {
    const auto [lo, hi] = part(patch_.spec.points[a], dims_[a], coords[a]);
    b.lo[a] = lo;
    b.hi[a] = hi;
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// Ghost exchange

namespace {

// A box of global indices as local array indices of the patch (its allocated box).
runtime::ArrayBox local_box(const Patch& p, const Box& box) {
  runtime::ArrayBox b;
  b.alloc = p.alloc();
  for (int a = 0; a < 3; ++a) {
    const int base = p.owned.lo[a] - p.ghost();
    b.lo[a] = box.lo[a] - base;
    b.hi[a] = box.hi[a] - base;
  }
  return b;
}

} // namespace

void Decomposition::sync(const std::vector<double*>& fields, runtime::ArraySpace& space) const {
  const int g = patch_.ghost();
  if (fields.empty() || g == 0) return;
  const std::vector<const double*> sources(fields.begin(), fields.end());
  const Box all = patch_.allocated();
  const Box& own = patch_.owned;
  const int me = patch_.rank;

  for (int a = 0; a < 3; ++a) {
    const auto& nb = neighbour_[a];
    if (nb[0] == MPI_PROC_NULL && nb[1] == MPI_PROC_NULL) continue;

    // Slabs of thickness g along a, the whole allocated extent along the other axes: sent
    // from the owned region, received into the ghost region.
    std::array<Box, 2> send_box{all, all}, recv_box{all, all};
    send_box[0].lo[a] = own.lo[a];
    send_box[0].hi[a] = own.lo[a] + g;
    send_box[1].lo[a] = own.hi[a] - g;
    send_box[1].hi[a] = own.hi[a];
    recv_box[0].hi[a] = own.lo[a];
    recv_box[1].lo[a] = own.hi[a];

    const long long total = send_box[0].volume() * static_cast<long long>(fields.size());
    if (total > INT_MAX)
      throw std::length_error("saguaro::grid: sync: a ghost message exceeds INT_MAX doubles");
    const int count = static_cast<int>(total);

    // Tags: 2a for data travelling up (to the upper neighbour), 2a+1 for data travelling
    // down, so that a rank that is both neighbours (2 ranks along a periodic axis) tells
    // the two messages apart.
    const int tag_up = 2 * a, tag_down = 2 * a + 1;
    MPI_Request requests[4];
    int nreq = 0;
    for (int s = 0; s < 2; ++s) {
      if (send_buffer_[s].size() < static_cast<std::size_t>(count)) send_buffer_[s].resize(count);
      if (recv_buffer_[s].size() < static_cast<std::size_t>(count)) recv_buffer_[s].resize(count);
    }
    for (int s = 0; s < 2; ++s) {
      if (nb[s] == MPI_PROC_NULL || nb[s] == me) continue;
      // from the lower neighbour comes data travelling up, from the upper data travelling down
      MPI_Irecv(recv_buffer_[s].data(), count, MPI_DOUBLE, nb[s], s == 0 ? tag_up : tag_down, cart_,
                &requests[nreq++]);
    }
    for (int s = 0; s < 2; ++s) {
      if (nb[s] == MPI_PROC_NULL || nb[s] == me) continue;
      space.pack(sources, local_box(patch_, send_box[s]), send_buffer_[s].data());
      MPI_Isend(send_buffer_[s].data(), count, MPI_DOUBLE, nb[s], s == 0 ? tag_down : tag_up, cart_,
                &requests[nreq++]);
    }
    // A rank that is its own neighbour (one rank along a periodic axis): its lower ghosts
    // are its upper slab and vice versa, copied inside the space.
    for (int s = 0; s < 2; ++s)
      if (nb[s] == me)
        space.copy_box(fields, local_box(patch_, send_box[1 - s]), local_box(patch_, recv_box[s]));
    MPI_Waitall(nreq, requests, MPI_STATUSES_IGNORE);
    for (int s = 0; s < 2; ++s)
      if (nb[s] != MPI_PROC_NULL && nb[s] != me)
        space.unpack(fields, local_box(patch_, recv_box[s]), recv_buffer_[s].data());
  }
}

} // namespace saguaro::grid
