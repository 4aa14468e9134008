// Boxes, patches, the decomposition over MPI ranks and the ghost exchange.
#include "grid/grid.hpp"

// OpenMPI and MPICH say at run time whether they take device pointers.
#if defined(OPEN_MPI) && OPEN_MPI && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
#define SAGUARO_MPI_QUERY_CUDA 1
#endif
#elif defined(MPICH) && defined(MPIX_GPU_SUPPORT_CUDA)
#define SAGUARO_MPI_QUERY_GPU 1
#endif

#include <algorithm>
#include <climits>
#include <exception>
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

int Patch::pitch() const {
  return runtime::aligned_pitch(alloc()[0], spec.row_alignment);
}

int Patch::row_offset() const {
  return runtime::aligned_row_offset(ghost(), spec.row_alignment);
}

std::size_t Patch::points() const {
  const Index3 n = alloc();
  return static_cast<std::size_t>(pitch()) * static_cast<std::size_t>(n[1]) *
         static_cast<std::size_t>(n[2]);
}

std::size_t Patch::linear(int i, int j, int k) const {
  const int g = ghost();
  const Index3 n = alloc();
  const auto di = static_cast<std::size_t>(i - (owned.lo[0] - g));
  const auto dj = static_cast<std::size_t>(j - (owned.lo[1] - g));
  const auto dk = static_cast<std::size_t>(k - (owned.lo[2] - g));
  return (dk * static_cast<std::size_t>(n[1]) + dj) * static_cast<std::size_t>(pitch()) + di;
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

// The factorisation of `ranks` into dims that exchanges the least: the fewest ghost points a
// rank sends (both faces of every split axis, the largest rank's patch). Ties go to fewer
// split axes (fewer messages), then to splitting the slower axes (z, then y): a z face is one
// contiguous slab of memory, and the boundary shell of a z split is whole x-y planes, where an
// x split's shell is slabs a few points wide that waste most of a GPU thread block.
Index3 choose_dims(const GridSpec& spec, int ranks) {
  bool found = false;
  Index3 best{1, 1, 1};
  double best_cost = 0;
  int best_split = 0;
  for (int d0 = 1; d0 <= ranks; ++d0) {
    if (ranks % d0 != 0) continue;
    for (int d1 = 1; d1 <= ranks / d0; ++d1) {
      if ((ranks / d0) % d1 != 0) continue;
      const Index3 cand{d0, d1, ranks / d0 / d1};
      if (!feasible(spec, cand)) continue;
      double cost = 0;
      int split = 0;
      for (int a = 0; a < 3; ++a) {
        if (cand[a] == 1) continue;
        ++split;
        double area = 1;
        for (int b = 0; b < 3; ++b)
          if (b != a) area *= (spec.points[b] + cand[b] - 1) / cand[b];
        cost += 2 * area;
      }
      const auto slower_first = [](const Index3& d) {
        return std::array<int, 3>{d[2], d[1], d[0]};
      };
      const bool better =
          !found || cost < best_cost ||
          (cost == best_cost && (split < best_split ||
                                 (split == best_split && slower_first(cand) > slower_first(best))));
      if (better) {
        found = true;
        best = cand;
        best_cost = cost;
        best_split = split;
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
    for (int s = 0; s < 2; ++s)
      remote_[a][s] = neighbour_[a][s] != MPI_PROC_NULL && neighbour_[a][s] != rank;
  }
  // Which neighbours share this host (peer messages), and the largest ghost slab of any rank
  // (every rank sizes its message buffers alike, so that they are reallocated, and the peer
  // buffers' handles exchanged, at the same exchange everywhere).
  MPI_Comm host = MPI_COMM_NULL;
  MPI_Comm_split_type(cart_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  MPI_Group cart_group, host_group;
  MPI_Comm_group(cart_, &cart_group);
  MPI_Comm_group(host, &host_group);
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      if (neighbour_[a][s] == MPI_PROC_NULL) continue;
      int there = MPI_UNDEFINED;
      MPI_Group_translate_ranks(cart_group, 1, &neighbour_[a][s], host_group, &there);
      same_host_[a][s] = there != MPI_UNDEFINED;
    }
  MPI_Group_free(&cart_group);
  MPI_Group_free(&host_group);
  MPI_Comm_free(&host);
  for (int r = 0; r < ranks; ++r) {
    const Box b = owned_by(r);
    for (int a = 0; a < 3; ++a) {
      std::size_t v = std::size_t(spec.ghost);
      for (int c = 0; c < 3; ++c)
        if (c != a) v *= std::size_t(b.hi[c] - b.lo[c] + 2 * spec.ghost);
      max_slab_ = std::max(max_slab_, v);
    }
  }
}

Decomposition::~Decomposition() {
  try {
    release_messages();
  } catch (...) {
    // At exit the GPU driver may be gone: nothing to free then.
  }
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

bool Decomposition::same_rows_on_every_rank() const {
  for (int r = 0; r < patch_.ranks; ++r) {
    Patch other = patch_;
    other.owned = owned_by(r);
    if (other.pitch() != patch_.pitch() || other.alloc()[1] != patch_.alloc()[1]) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Ghost exchange

namespace {

// A box of global indices as local array indices of the patch (its allocated box).
runtime::ArrayBox local_box(const Patch& p, const Box& box) {
  runtime::ArrayBox b;
  b.alloc = p.alloc();
  b.pitch = p.pitch();
  for (int a = 0; a < 3; ++a) {
    const int base = p.owned.lo[a] - p.ghost();
    b.lo[a] = box.lo[a] - base;
    b.hi[a] = box.hi[a] - base;
  }
  return b;
}

} // namespace

runtime::ArrayBox Decomposition::local_slab(int axis, int side, bool send) const {
  return local_box(patch_, slab(axis, side, send));
}

bool mpi_takes_device_pointers() {
#if defined(SAGUARO_MPI_QUERY_CUDA)
  return MPIX_Query_cuda_support() == 1;
#elif defined(SAGUARO_MPI_QUERY_GPU)
  int supported = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) == MPI_SUCCESS && supported;
#else
  return false;
#endif
}

void Decomposition::use_device_messages(bool device) {
  device_messages_ = device;
}

bool Decomposition::messages_on_device(const runtime::ArraySpace& space) const {
  return device_messages_ && space.on_device();
}

std::string exchange_transport(const runtime::ArraySpace& space, bool device_messages,
                               bool peer_messages, bool direct_ghosts) {
  if (!space.on_device()) return "host arrays";
  if (peer_messages && direct_ghosts)
    return "peer messages (CUDA IPC: copied straight into the neighbour's ghost layers)";
  if (peer_messages) return "peer messages (CUDA IPC: packed straight into the neighbour's GPU)";
  return device_messages ? "device buffers handed to MPI (CUDA-aware)"
                         : "host-staged through pinned buffers";
}

std::string Decomposition::transport(const runtime::ArraySpace& space) const {
  bool peer = false;
  for (const auto& axis : peer_faces(space)) peer = peer || axis[0] || axis[1];
  return exchange_transport(space, messages_on_device(space), peer,
                            direct_ghosts_ && space.peer_signals() && space.peer_arrays());
}

void Decomposition::use_peer_messages(bool peer) {
  peer_messages_ = peer;
}

void Decomposition::use_direct_ghosts(bool direct) {
  direct_ghosts_ = direct;
}

std::array<std::array<bool, 2>, 3>
Decomposition::peer_faces(const runtime::ArraySpace& space) const {
  std::array<std::array<bool, 2>, 3> peer{};
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s)
      peer[a][s] = remote_[a][s] && same_host_[a][s] && peer_messages_ && space.peer_messages();
  return peer;
}

bool Decomposition::has_remote_faces() const {
  for (const auto& axis : remote_)
    if (axis[0] || axis[1]) return true;
  return false;
}

double* Decomposition::outgoing(int a, int s, int parity) const {
  return messages_.peer[a][s] ? messages_.peer_remote[a][s][parity] : messages_.send[a][s];
}

double* Decomposition::incoming(int a, int s, int parity) const {
  return messages_.peer[a][s] ? messages_.peer_recv[a][s][parity] : messages_.recv[a][s];
}

bool Decomposition::device_buffer(int a, int s) const {
  return messages_.peer[a][s] || messages_.on_device;
}

Box Decomposition::slab(int axis, int side, bool send) const {
  const int g = patch_.ghost();
  Box b = patch_.allocated();
  const Box& own = patch_.owned;
  if (send) {
    b.lo[axis] = side == 0 ? own.lo[axis] : own.hi[axis] - g;
    b.hi[axis] = side == 0 ? own.lo[axis] + g : own.hi[axis];
  } else {
    b.lo[axis] = side == 0 ? own.lo[axis] - g : own.hi[axis];
    b.hi[axis] = side == 0 ? own.lo[axis] : own.hi[axis] + g;
  }
  return b;
}

std::vector<double> Decomposition::message_bytes(int fields) const {
  std::vector<double> bytes;
  for (int a = 0; a < 3; ++a)
    if (remote_[a][0] || remote_[a][1])
      bytes.push_back(8.0 * double(fields) * double(slab(a, 0, true).volume()));
  return bytes;
}

void Decomposition::ensure_messages(std::size_t fields, runtime::ArraySpace& space) const {
  const bool on_device = messages_on_device(space);
  const std::size_t need = max_slab_ * fields; // the same on every rank
  if (messages_.space == &space && messages_.on_device == on_device && messages_.capacity >= need)
    return;
  release_messages();
  messages_.space = &space;
  messages_.on_device = on_device;
  messages_.capacity = need;
  messages_.peer = peer_faces(space);
  bool any_peer = false;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      if (!remote_[a][s]) continue;
      if (messages_.peer[a][s]) {
        any_peer = true;
        // + the flag (Messages::signals) and the neighbour's "ready" (direct faces)
        for (double*& buffer : messages_.peer_recv[a][s])
          buffer = space.allocate_message(need + 2, true);
      } else {
        messages_.send[a][s] = space.allocate_message(need, on_device);
        messages_.recv[a][s] = space.allocate_message(need, on_device);
      }
    }
  // Every rank reallocates at the same exchange (need is global): the handles go round.
  int any = any_peer ? 1 : 0, signals = !any_peer || space.peer_signals() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, cart_);
  MPI_Allreduce(MPI_IN_PLACE, &signals, 1, MPI_INT, MPI_LAND, cart_);
  messages_.signals = any && signals;
  if (!any) return;
  open_peer_buffers();
  bool any_direct = false;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      messages_.direct[a][s] =
          direct_ghosts_ && messages_.peer[a][s] && messages_.signals && space.peer_arrays();
      any_direct = any_direct || messages_.direct[a][s];
    }
  if (any_direct) open_peer_slabs();
}

// Each peer face's receive buffers are opened by the neighbour that packs into them: the
// handles of this rank's side-s buffers go to neighbour[a][s], which packs into them from its
// side 1-s.
void Decomposition::open_peer_buffers() const {
  runtime::ArraySpace& space = *messages_.space;
  const std::vector<Face> faces = faces_where(messages_.peer);
  std::vector<std::string> mine;
  for (const auto& [a, s] : faces) {
    std::string handles;
    for (double* buffer : messages_.peer_recv[a][s]) handles += space.export_message(buffer);
    mine.push_back(handles);
  }
  const std::vector<std::string> theirs = swap_with_neighbours(faces, 100, mine);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto [a, s] = faces[f];
    const std::size_t one = theirs[f].size() / 2;
    for (int p = 0; p < 2; ++p)
      messages_.peer_remote[a][s][p] = space.import_message(theirs[f].substr(p * one, one));
  }
}

std::vector<Decomposition::Face>
Decomposition::faces_where(const std::array<std::array<bool, 2>, 3>& which) {
  std::vector<Face> faces;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s)
      if (which[a][s]) faces.push_back({a, s});
  return faces;
}

std::vector<std::string>
Decomposition::swap_with_neighbours(const std::vector<Face>& faces, int tag,
                                    const std::vector<std::string>& mine) const {
  std::vector<std::string> theirs;
  std::vector<MPI_Request> requests;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto [a, s] = faces[f];
    theirs.emplace_back(mine[f].size(), '\0');
    requests.emplace_back();
    MPI_Irecv(theirs[f].data(), int(theirs[f].size()), MPI_BYTE, neighbour_[a][s],
              tag + 2 * a + (1 - s), cart_, &requests.back());
    requests.emplace_back();
    MPI_Isend(mine[f].data(), int(mine[f].size()), MPI_BYTE, neighbour_[a][s], tag + 2 * a + s,
              cart_, &requests.back());
  }
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return theirs;
}

void Decomposition::release_messages() const {
  if (messages_.space == nullptr) return;
  runtime::ArraySpace& space = *messages_.space;
  // Peer buffers: every neighbour closes what it opened of this rank's before this rank frees
  // them (all ranks release together: reallocation and destruction are collective), unless
  // an exception is unwinding, when a barrier could wait for a rank that has thrown.
  close_peer_arrays();
  bool peer = false;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s)
      for (int p = 0; p < 2; ++p) {
        if (messages_.peer_remote[a][s][p] != nullptr)
          space.close_import(messages_.peer_remote[a][s][p]);
        messages_.peer_remote[a][s][p] = nullptr;
        peer = peer || messages_.peer[a][s];
      }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (peer && !finalized && std::uncaught_exceptions() == 0) MPI_Barrier(cart_);
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      space.release_message(messages_.send[a][s], messages_.on_device);
      space.release_message(messages_.recv[a][s], messages_.on_device);
      messages_.send[a][s] = messages_.recv[a][s] = nullptr;
      for (double*& buffer : messages_.peer_recv[a][s]) {
        space.release_message(buffer, true);
        buffer = nullptr;
      }
    }
  messages_.space = nullptr;
  messages_.capacity = 0;
  messages_.peer = {};
  messages_.signals = false;
  messages_.direct = {};
}

void Decomposition::sync(const std::vector<double*>& fields, runtime::ArraySpace& space) const {
  begin_sync(fields, space);
  finish_sync();
}

// Tags: 2a for data travelling up (to the upper neighbour), 2a+1 for data travelling down, so
// that a rank that is both neighbours (2 ranks along a periodic axis) tells the two apart.
void Decomposition::start_phase(int a) const {
  Pending& p = pending_;
  runtime::ArraySpace& space = *p.space;
  const auto& nb = neighbour_[a];
  const std::vector<const double*> sources(p.fields.begin(), p.fields.end());
  const long long total = slab(a, 0, true).volume() * static_cast<long long>(p.fields.size());
  if (total > INT_MAX)
    throw std::length_error("saguaro::grid: sync: a ghost message exceeds INT_MAX doubles");
  p.count = static_cast<int>(total);
  p.requests.clear();
  const int parity = int(exchanges_ % 2);
  for (int s = 0; s < 2; ++s) {
    if (!remote_[a][s] || signalled(a, s)) continue;
    // from the lower neighbour comes data travelling up, from the upper data travelling down;
    // from a peer only word that its pack into this rank's buffer has finished
    const bool peer = messages_.peer[a][s];
    p.requests.emplace_back();
    MPI_Irecv(peer ? nullptr : messages_.recv[a][s], peer ? 0 : p.count, MPI_DOUBLE, nb[s],
              s == 0 ? 2 * a : 2 * a + 1, cart_, &p.requests.back());
  }
  // Direct faces: this rank is ready for its neighbours' slabs (the word after the flag of
  // their buffer for this side), then each slab goes once the neighbour is.
  for (int s = 0; s < 2; ++s)
    if (direct(a, s))
      space.signal_message(outgoing(a, s, parity), messages_.capacity + 1, exchanges_ + 1);
  for (int s = 0; s < 2; ++s) {
    if (!remote_[a][s]) continue;
    if (direct(a, s)) {
      space.await_message(incoming(a, s, parity), messages_.capacity + 1, exchanges_ + 1);
      space.copy_to_peer(sources, local_slab(a, s, true), peer_arrays(sources, a, s),
                         messages_.peer_box[a][s]);
    } else {
      space.pack_message(sources, local_slab(a, s, true), outgoing(a, s, parity),
                         device_buffer(a, s));
    }
    // The exchange's number: the same on both ranks (every rank counts every exchange).
    if (signalled(a, s))
      space.signal_message(outgoing(a, s, parity), messages_.capacity, exchanges_ + 1);
  }
}

bool Decomposition::host_in_phase(int a) const {
  for (int s = 0; s < 2; ++s)
    if (remote_[a][s] && !signalled(a, s)) return true;
  return false;
}

void Decomposition::begin_sync(const std::vector<double*>& fields, runtime::ArraySpace& space,
                               bool timed) const {
  if (pending_.active)
    throw std::logic_error("saguaro::grid: begin_sync while another exchange is pending");
  pending_ = Pending{};
  if (fields.empty() || patch_.ghost() == 0) return;
  pending_.active = true;
  pending_.fields = fields;
  pending_.space = &space;
  // A rank that is its own neighbour (one rank along a periodic axis): its lower ghosts are
  // its upper owned layers and vice versa, wrapped inside the space first (one pass for all
  // such axes), so that the messages of the other axes carry these ghosts' values to the
  // edges and corners of the neighbours.
  std::array<bool, 3> wrap{false, false, false};
  for (int a = 0; a < 3; ++a)
    wrap[a] = neighbour_[a][0] == patch_.rank && neighbour_[a][1] == patch_.rank;
  // The ghost layers of an axis with messages on both sides are left to them (they cover the
  // whole extent of the other axes, these ghosts included): neighbours may copy them in
  // meanwhile. (Next to an outer face, the wrap still fills that face's ghost layers.)
  std::array<bool, 3> arriving{false, false, false};
  for (int a = 0; a < 3; ++a) arriving[a] = remote_[a][0] && remote_[a][1];
  if (wrap[0] || wrap[1] || wrap[2])
    space.wrap_ghosts_except(fields, patch_.alloc(), patch_.pitch(), patch_.ghost(), wrap,
                             arriving);
  for (int a = 0; a < 3; ++a)
    if (remote_[a][0] || remote_[a][1]) pending_.axes.push_back(a);
  if (pending_.axes.empty()) return;
  ensure_messages(fields.size(), space);
  open_peer_arrays(fields);
  // The last exchange's unpacks may still read the buffers MPI is about to receive into.
  bool host = false;
  for (int a : pending_.axes) host = host || host_in_phase(a);
  if (host) space.wait_exchange();
  space.fork_exchange();
  if (timed) pending_.marks.started = space.mark(runtime::ArraySpace::Queue::exchange);
  start_phase(pending_.axes.front());
}

void Decomposition::finish_sync() const {
  Pending& p = pending_;
  if (!p.active) return;
  runtime::ArraySpace& space = *p.space;
  for (std::size_t i = 0; i < p.axes.size(); ++i) {
    const int a = p.axes[i];
    const auto& nb = neighbour_[a];
    // The packs of an axis read the ghosts the previous axis unpacked (edges and corners):
    // they are queued after those unpacks.
    if (i > 0) start_phase(a);
    const int parity = int(exchanges_ % 2);
    if (host_in_phase(a)) {
      space.wait_exchange(); // the packed messages are ready to send
      for (int s = 0; s < 2; ++s) {
        if (!remote_[a][s] || signalled(a, s)) continue;
        const bool peer = messages_.peer[a][s];
        p.requests.emplace_back();
        MPI_Isend(peer ? nullptr : messages_.send[a][s], peer ? 0 : p.count, MPI_DOUBLE, nb[s],
                  s == 0 ? 2 * a + 1 : 2 * a, cart_, &p.requests.back());
      }
      MPI_Waitall(int(p.requests.size()), p.requests.data(), MPI_STATUSES_IGNORE);
    }
    for (int s = 0; s < 2; ++s) {
      if (!remote_[a][s]) continue;
      if (signalled(a, s))
        space.await_message(incoming(a, s, parity), messages_.capacity, exchanges_ + 1);
      if (!direct(a, s))
        space.unpack_message(p.fields, local_slab(a, s, false), incoming(a, s, parity),
                             device_buffer(a, s));
    }
  }
  if (!p.axes.empty()) {
    if (p.marks.started >= 0) p.marks.finished = space.mark(runtime::ArraySpace::Queue::exchange);
    space.join_exchange();
    ++exchanges_;
  }
  last_marks_ = p.marks;
  p = Pending{};
}

} // namespace saguaro::grid
