// The grid: one uniform 3D Cartesian grid, split over MPI ranks into patches with ghost
// zones. Arrays are stored per grid function in C order [z][y][x] with x fastest.
//
// Geometry (documented in docs/host.md):
//  * Along a periodic axis the grid has `cells` points x_i = xmin + i*dx, i = 0..cells-1;
//    xmax is identified with xmin.
//  * Along a non-periodic axis it has `cells + 1` points, xmin and xmax included. Every one
//    of them is evolved; the outer boundary points are the `ghost` layers *outside*
//    [xmin, xmax] (Cactus's boundary_shiftout = 1), filled by the boundary conditions.
//  * Every patch is allocated with `ghost` layers on every face: filled by the ghost
//    exchange at faces between ranks and at periodic faces, by boundary conditions at
//    outer faces.
#pragma once

#include "runtime/array_space.hpp"

#include <mpi.h>

#include <array>
#include <map>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace saguaro::grid {

using Index3 = std::array<int, 3>;
using Real3 = std::array<double, 3>;

struct GridSpec {
  Index3 points{0, 0, 0}; // global points per axis (ghosts and outer boundary points excluded)
  Real3 origin{0, 0, 0};  // coordinate of global point (0,0,0)
  Real3 spacing{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};
  int ghost = 1; // ghost width on every face
  // The arrays' rows are aligned to this many points (1: unpadded, dense): the row pitch is
  // alloc[0] rounded up to a multiple of it, and every array starts row_offset() points past
  // an aligned address, so that the first owned point of every row starts an aligned
  // segment. 8 doubles = 64 bytes, a CPU cache line and two GPU sectors: rows of 258 doubles
  // (256^3, ghost 1) with the owned points 8 bytes into a sector ran the B1 stencil at 2.26
  // TB/s on an H100, aligned ones at 2.76-2.80 (triad 2.83; bench/results/
  // 2026-11-24-row-pitch-H100.md).
  int row_alignment = 8;
};

// A box of global point indices, [lo, hi) per axis.
struct Box {
  Index3 lo{0, 0, 0}, hi{0, 0, 0};
  bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
  long long volume() const;
};
Box intersect(const Box& a, const Box& b);

// This rank's part of the grid. Local array index (0,0,0) is global point owned.lo - ghost.
struct Patch {
  GridSpec spec;
  Box owned;                                  // points this rank evolves
  std::array<std::array<bool, 2>, 3> outer{}; // [axis][lower=0/upper=1]: an outer boundary face
  int rank = 0, ranks = 1;

  int ghost() const { return spec.ghost; }
  Index3 size() const;  // owned points per axis
  Index3 alloc() const; // allocated points per axis: size + 2*ghost
  int pitch() const;    // points between rows: alloc()[0] rounded up to row_alignment
  // Points between an aligned address and an array's first point (its lower x ghost), so
  // that the first owned point of every row is aligned: arrays are allocated points() +
  // row_offset() long and used from that offset on (GridFunctions does so).
  int row_offset() const;
  std::size_t points() const; // pitch()*alloc()[1]*alloc()[2]: an array's length
  // Array offset of global point (i,j,k); it must lie in the allocated box.
  std::size_t linear(int i, int j, int k) const;
  Box allocated() const; // owned grown by ghost on every face
  // Owned points plus the outer boundary layers at this patch's outer faces: the points
  // whose values are this rank's to set (time integration updates them all).
  Box valid() const;
  double coordinate(int axis, int global_index) const {
    return spec.origin[axis] + global_index * spec.spacing[axis];
  }
  Real3 array_origin() const; // coordinate of local array index (0,0,0)
};

// The decomposition of the grid over the ranks of `comm` (MPI_Dims_create + MPI_Cart_create,
// periodic where the grid is), any number of ranks, sizes need not divide evenly.
class Decomposition {
public:
  Decomposition(const GridSpec& spec, MPI_Comm comm);
  ~Decomposition();
  Decomposition(const Decomposition&) = delete;
  Decomposition& operator=(const Decomposition&) = delete;

  const Patch& patch() const { return patch_; }
  MPI_Comm comm() const { return cart_; } // the Cartesian communicator
  Index3 dims() const { return dims_; }
  Box owned_by(int rank) const; // any rank's owned box
  // Whether every rank's arrays have this rank's row pitch and rows per plane (the grid's x and
  // y extents split evenly, or not at all): kernels printed for one layout then serve them all,
  // compiled once (runtime::BackendOptions::array_layout).
  bool same_rows_on_every_rank() const;

  // Fills every ghost point of the given arrays (each patch().points() long) at faces
  // between ranks and at periodic faces, edges and corners included, from the valid points
  // of the neighbours: nonblocking MPI, one phase per axis with neighbours on other ranks,
  // all arrays in one message per neighbour and phase. Collective over comm(). The arrays
  // belong to `space`, which packs and unpacks the messages. sync() is begin_sync() and
  // finish_sync() back to back. The message buffers come from the space and are kept until the
  // next exchange with another space or the Decomposition's end: the space must outlive it.
  void sync(const std::vector<double*>& fields,
            runtime::ArraySpace& space = runtime::host_space()) const;

  // The exchange in two halves, so that work that needs no ghosts runs while messages are in
  // flight. begin_sync fills what this rank fills by itself (periodic copies onto itself, on
  // the space's compute queue), posts the first phase's receives and queues its packs on the
  // exchange queue; finish_sync sends, waits, unpacks every phase and makes the compute queue
  // wait for the unpacks. Between the two, work on the compute queue may read the fields
  // except their ghost zones at remote_faces() (and may not write them at all). One exchange
  // is pending at a time. With `timed`, last_marks() holds exchange-queue marks of the
  // exchange's start and end once it is finished (when any message was exchanged).
  void begin_sync(const std::vector<double*>& fields, runtime::ArraySpace& space,
                  bool timed = false) const;
  void finish_sync() const;
  struct Marks {
    int started = -1, finished = -1;
  };
  Marks last_marks() const { return last_marks_; }

  // [axis][lower=0/upper=1]: the faces whose ghosts come from another rank's messages.
  const std::array<std::array<bool, 2>, 3>& remote_faces() const { return remote_; }
  bool has_remote_faces() const;
  // Per phase (axis with remote faces, in order), the bytes of one message of `fields`
  // arrays: what the interconnect model prices.
  std::vector<double> message_bytes(int fields) const;
  // Hand MPI device buffers instead of staging messages through pinned host memory, when
  // the arrays are on a device (only for an MPI library that takes device pointers:
  // mpi_takes_device_pointers()). Off by default.
  void use_device_messages(bool device);
  bool messages_on_device(const runtime::ArraySpace& space) const;
  // Between ranks on one host whose space has peer messages (GPUs: CUDA IPC), pack kernels
  // write straight into the neighbour's receive buffers and the "ready" is a flag the space
  // writes and awaits on its exchange queue (peer_signals; else MPI carries a zero-byte
  // "ready"); on by default. Must be the same on every rank.
  void use_peer_messages(bool peer);
  // Peer faces whose space has peer arrays and signals (GPUs: CUDA IPC with stream memory
  // operations) copy their slabs straight into the neighbour's ghost layers, once it says it is
  // ready, instead of into a receive buffer it unpacks (direct(); peer_ghosts.cpp); on by
  // default. Must be the same on every rank.
  void use_direct_ghosts(bool direct);
  // [axis][side]: faces exchanged through peer messages with arrays in `space`.
  std::array<std::array<bool, 2>, 3> peer_faces(const runtime::ArraySpace& space) const;
  // How messages travel, in words for logs ("host-staged through pinned buffers", ...).
  std::string transport(const runtime::ArraySpace& space) const;

private:
  // The slab of thickness ghost along `axis` on `side`, the whole allocated extent along the
  // other axes: sent from the owned region (send) or received into the ghost zone.
  Box slab(int axis, int side, bool send) const;
  void ensure_messages(std::size_t fields, runtime::ArraySpace& space) const;
  void release_messages() const;
  void start_phase(int axis) const;
  // Face (a, s)'s "ready" goes through the device flag (a peer face of signalling spaces),
  // not through MPI.
  bool signalled(int a, int s) const { return messages_.peer[a][s] && messages_.signals; }
  // Whether phase `a` has a face whose "ready" the host waits for (MPI).
  bool host_in_phase(int a) const;
  // The buffer face (a, s)'s message is packed into (the neighbour's, for a peer face) and
  // the one it is unpacked from, for exchange `parity`, and whether they are device memory.
  double* outgoing(int a, int s, int parity) const;
  double* incoming(int a, int s, int parity) const;
  bool device_buffer(int a, int s) const;
  void open_peer_buffers() const;
  // A face (axis, side); the faces whose `which` is set, axis by axis, lower side first.
  using Face = std::array<int, 2>;
  static std::vector<Face> faces_where(const std::array<std::array<bool, 2>, 3>& which);
  // Per face (a, s): sends mine[f] to neighbour[a][s] and returns what that neighbour sent for
  // its side 1 - s, as many bytes (every rank sends alike); tags `tag` + 2 a + side (two ranks
  // along a periodic axis are each other's neighbour on both sides).
  std::vector<std::string> swap_with_neighbours(const std::vector<Face>& faces, int tag,
                                                const std::vector<std::string>& mine) const;
  // Direct peer faces (peer_ghosts.cpp): the send slab copied straight into the neighbour's
  // ghost layers of the same grid functions' arrays (ArraySpace::copy_to_peer), no message
  // buffer and no unpack; the neighbour first says it is ready (its fork reached: whatever it
  // queued before, which may read those ghosts, is done), through the word after its peer
  // buffer's flag. `direct` is the same on both sides of a face.
  bool direct(int a, int s) const { return messages_.direct[a][s]; }
  void open_peer_slabs() const;                                    // the neighbours' ghost boxes
  void open_peer_arrays(const std::vector<double*>& fields) const; // arrays not yet opened
  std::vector<double*> peer_arrays(const std::vector<const double*>& fields, int a, int s) const;
  void close_peer_arrays() const;
  runtime::ArrayBox local_slab(int axis, int side, bool send) const; // slab() as array indices

  Patch patch_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  Index3 dims_{1, 1, 1}, coords_{0, 0, 0};
  std::array<std::array<int, 2>, 3> neighbour_{}; // MPI_PROC_NULL at outer faces
  std::array<std::array<bool, 2>, 3> remote_{};   // neighbour_ is another rank
  bool device_messages_ = false, peer_messages_ = true, direct_ghosts_ = true;
  std::array<std::array<bool, 2>, 3> same_host_{}; // the neighbour shares this rank's host
  std::size_t max_slab_ = 0;            // the largest ghost slab of any rank and axis [points]
  mutable std::uint64_t exchanges_ = 0; // begun so far: alternates the peer buffers
  // Message buffers per [axis][side], from the space of the last exchange, kept between
  // exchanges (grown, never shrunk) so that a step does not allocate.
  struct Messages {
    runtime::ArraySpace* space = nullptr;
    bool on_device = false;
    std::size_t capacity = 0; // doubles per buffer
    std::array<std::array<double*, 2>, 3> send{}, recv{};
    // Peer faces: this rank's receive buffers, two used alternately (a neighbour may pack
    // the next exchange before this rank has unpacked the last), and the neighbour's
    // receive buffers for this side, opened here.
    std::array<std::array<bool, 2>, 3> peer{};
    std::array<std::array<std::array<double*, 2>, 2>, 3> peer_recv{}, peer_remote{};
    // Every rank's space signals its peer messages on the device (ArraySpace::peer_signals):
    // a peer face's "ready" is the flag word after its buffer's `capacity` doubles, written
    // with the exchange's number, and no host waits for it (nor MPI carries it).
    bool signals = false;
    // Direct faces (direct()): where this rank's face-(a, s) slab goes in the neighbour's
    // arrays, and per array of this rank that was exchanged, the neighbour's array of the same
    // grid function opened here (every rank allocates and swaps its arrays alike).
    std::array<std::array<bool, 2>, 3> direct{};
    std::array<std::array<runtime::ArrayBox, 2>, 3> peer_box{};
    std::map<const double*, std::array<std::array<double*, 2>, 3>> peer_array;
  };
  mutable Messages messages_;
  struct Pending {
    bool active = false;
    std::vector<double*> fields;
    runtime::ArraySpace* space = nullptr;
    std::vector<int> axes;             // phases with messages, in order
    std::vector<MPI_Request> requests; // the current phase's
    int count = 0;                     // doubles per message of the current phase
    Marks marks;
  };
  mutable Pending pending_;
  mutable Marks last_marks_;
};

// Whether the MPI library says, at run time, that it takes CUDA device pointers (OpenMPI's
// MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support); false when it cannot say.
bool mpi_takes_device_pointers();

// How ghost messages of arrays in `space` travel, in words for logs and sources ("host-staged
// through pinned buffers", ...); `device_messages`: device buffers handed to MPI;
// `direct_ghosts`: peer messages copied straight into the neighbour's ghost layers.
std::string exchange_transport(const runtime::ArraySpace& space, bool device_messages,
                               bool peer_messages = false, bool direct_ghosts = false);

// Storage for named grid functions on one patch, zero-initialised, allocated from an
// ArraySpace (host memory, or the GPU's for the CUDA backend). data(i) is the space's
// pointer: only meaningful to the space and to kernels of its backend; host(i) gives a host
// copy to read (output, tests), host_mirror(i) and upload(i) write from the host.
class GridFunctions {
public:
  explicit GridFunctions(const Patch& patch, runtime::ArraySpace& space = runtime::host_space())
      : patch_(patch), space_(&space) {}
  ~GridFunctions();
  GridFunctions(const GridFunctions&) = delete;
  GridFunctions& operator=(const GridFunctions&) = delete;

  int add(const std::string& name); // returns the index; adding a name twice returns its index
  int find(const std::string& name) const; // -1 when absent
  double* data(int index) { return data_[index]; }
  const double* data(int index) const { return data_[index]; }
  // The array in host memory: for a device space a copy into the host mirror (allocated on
  // first use) taken now; for the host space data(index) itself.
  const double* host(int index);
  // The host mirror to write into, not filled from the space (data(index) for the host
  // space); upload(index) copies it to the space (a no-op for the host space).
  double* host_mirror(int index);
  void upload(int index);
  const std::string& name(int index) const { return names_[index]; }
  // Grid functions a and b exchange their arrays (the time integrator's register swaps).
  void swap(int a, int b) {
    std::swap(data_[a], data_[b]);
    std::swap(mirror_[a], mirror_[b]);
  }
  int count() const { return static_cast<int>(names_.size()); }
  const Patch& patch() const { return patch_; }
  runtime::ArraySpace& space() const { return *space_; }

private:
  Patch patch_;
  runtime::ArraySpace* space_;
  std::vector<std::string> names_;
  std::vector<double*> data_;               // from space_, released by the destructor
  std::vector<std::vector<double>> mirror_; // per field; empty until first used
};

// Outer boundary conditions on the outer faces of a patch (no-op on other faces). Each fills
// the ghost layers at outer faces over the whole allocated extent of the other axes, so edges
// and corners are set; apply after sync().
enum class BoundaryKind { Flat, Static, Radiative, None };
BoundaryKind boundary_kind_from_string(const std::string& word); // throws std::invalid_argument

// Flat: every outer boundary point takes the value of the nearest valid point inside
// [xmin, xmax] along each outer axis (a copy, zero normal derivative).
void apply_flat(const Patch& patch, double* field,
                runtime::ArraySpace& space = runtime::host_space());

// Radiative (Sommerfeld, as Cactus NewRad): on the outer boundary points, the right-hand side
//   rhs = -v0 * (x^i/r) d_i u - v0 * (u - u0) / r
// with d_i one-sided second-order differences pointing inward along axes where the point is
// in an outer layer and centred otherwise. Static: rhs = 0 there.
void apply_radiative_rhs(const Patch& patch, const double* u, double* rhs, double u0, double v0,
                         runtime::ArraySpace& space = runtime::host_space());
void apply_static_rhs(const Patch& patch, double* rhs,
                      runtime::ArraySpace& space = runtime::host_space());

// The patch's outer faces as the ArraySpace's boundary operations see them.
runtime::OuterFaces outer_faces(const Patch& patch);

// Global reductions over owned points.
struct Norms {
  double min = 0, max = 0, l1 = 0, l2 = 0, linf = 0; // l1 = sum|u|/N, l2 = sqrt(sum u^2/N)
  long long count = 0;
};
// `field` belongs to `space`, which reduces this rank's owned points.
Norms reduce_norms(const Decomposition& decomposition, const double* field,
                   runtime::ArraySpace& space = runtime::host_space());

} // namespace saguaro::grid
