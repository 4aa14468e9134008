// Where a backend's grid functions live, and the fixed (non-EDL) operations the host runs on
// them: the method of lines' linear combinations, ghost-exchange packing, reductions for norms, and
// the outer boundary conditions. The CPU backends keep arrays in host memory (host_space()); the
// CUDA backend keeps them on the GPU for the whole run and runs these operations as kernels,
// so only output, norms and ghost messages ever cross to the host.
//
// Arrays are a patch's: C order [z][y][x], x fastest, `alloc` points per axis, rows `pitch`
// points apart (pitch >= alloc[0]: rows padded to whole cache sectors, see grid::Patch::pitch).
// A pointer an ArraySpace returns is only meaningful to that space (on the GPU: a device
// address).
#pragma once

#include "runtime/boundary_point.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace saguaro::runtime {

// A box of a patch's arrays: local indices [lo, hi) per axis.
struct ArrayBox {
  std::array<int, 3> alloc{0, 0, 0};
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
  int pitch = 0; // points between consecutive rows; 0: alloc[0] (unpadded)
  std::size_t volume() const;
  int row_pitch() const { return runtime::row_pitch(pitch, alloc[0]); }
};

// One rank's part of a reduction; the caller combines ranks (grid::reduce_norms).
struct BoxSums {
  double min = 0, max = 0, max_abs = 0; // +inf/-inf/0 for an empty box
  long double sum_abs = 0, sum_sq = 0;
  long long count = 0;
};

class ArraySpace {
public:
  virtual ~ArraySpace() = default;
  virtual const char* name() const = 0; // "host" or "cuda"
  virtual bool on_device() const = 0;   // pointers are not host-addressable

  // Arrays of n doubles, zeroed. release(nullptr) does nothing.
  virtual double* allocate(std::size_t n) = 0;
  virtual void release(double* array) = 0;
  // Copies between an array of this space and host memory; both return when the data is
  // there (all earlier operations on the array have finished).
  virtual void to_host(double* host, const double* array, std::size_t n) = 0;
  virtual void from_host(double* array, const double* host, std::size_t n) = 0;
  // Waits for everything queued (timings, before handing results to another thread or rank).
  virtual void synchronize() = 0;

  // The method of lines' one update (the integrators' tableaus, schedule/integrators.cpp):
  // y = sum_i a_i x_i over n points, the terms added in order from a_0 x_0 (no terms: zeros),
  // so that every space gives the same bits. y may be one of the x_i (every point reads its
  // terms before it writes) but must not overlap them otherwise. At most max_terms terms.
  struct Term {
    double a = 0;
    const double* x = nullptr;
  };
  static constexpr std::size_t max_terms = 8; // SAGUARO_COMBINE_TERMS in cuda/support.cu
  virtual void linear_combination(double* y, std::span<const Term> terms, std::size_t n) = 0;
  // y = x: the combination of one term.
  void copy(double* y, const double* x, std::size_t n) {
    const Term term{1.0, x};
    linear_combination(y, {&term, 1}, n);
  }

  // Ghost exchange staging: the box of every array, one after the other, x fastest, to or
  // from a host buffer of fields.size() * box.volume() doubles.
  virtual void pack(const std::vector<const double*>& fields, const ArrayBox& box,
                    double* host_buffer) = 0;
  virtual void unpack(const std::vector<double*>& fields, const ArrayBox& box,
                      const double* host_buffer) = 0;
  // The ghost exchange's asynchronous half (grid::Decomposition::begin_sync/finish_sync).
  // A space has two queues: the compute queue that every operation above runs on, and an
  // exchange queue for packing and unpacking messages, so that a kernel which needs no ghosts
  // runs while messages are in flight. The defaults are the host's: one queue, every call
  // finished when it returns, messages in host memory.
  //
  // Message buffers of n doubles: host memory the MPI library reads and writes (on a GPU
  // pinned, so that the staging copies run asynchronously at full speed), or with `on_device`
  // memory of this space itself, handed to an MPI library that takes device pointers.
  virtual double* allocate_message(std::size_t n, bool on_device);
  virtual void release_message(double* message, bool on_device);
  // fork_exchange: what is queued on the exchange queue from now on runs after everything
  // queued on the compute queue so far. join_exchange: what is queued on the compute queue
  // from now on runs after everything queued on the exchange queue so far.
  virtual void fork_exchange() {}
  virtual void join_exchange() {}
  // Queued on the exchange queue: pack the box of every field into a message (the layout of
  // pack()), or unpack a message into the box. A packed message may be sent, and an unpacked
  // one's buffer reused, after wait_exchange(), which waits for the exchange queue.
  virtual void pack_message(const std::vector<const double*>& fields, const ArrayBox& box,
                            double* message, bool on_device);
  virtual void unpack_message(const std::vector<double*>& fields, const ArrayBox& box,
                              const double* message, bool on_device);
  virtual void wait_exchange() {}
  // Peer messages (a GPU's: CUDA IPC): a device message buffer of this space that another
  // process on the same host opens in its own address space, so that its pack kernels write
  // straight into it (over NVLink between GPUs). export_message gives the handle to send it,
  // import_message opens a handle another process sent (a pointer for pack_message with
  // on_device), close_import closes it. The defaults: none (peer_messages() false, the others
  // throw).
  virtual bool peer_messages() const { return false; }
  virtual std::string export_message(double* message);
  virtual double* import_message(const std::string& handle);
  virtual void close_import(double* imported);
  // Peer arrays: an array of this space that another process on the same host opens, so that
  // its exchange copies its send slabs straight into this rank's ghost layers (no message
  // buffer, no unpack). export_array gives the handle to send (the array may start inside its
  // allocation), import_array opens one (close it with close_import); copy_to_peer queues on
  // the exchange queue the copy of `box` of every array in `from` into `to_box` of the
  // corresponding array of `to` (imported arrays; boxes of one shape, layouts may differ).
  // The defaults: none (peer_arrays() false, the others throw).
  virtual bool peer_arrays() const { return false; }
  virtual std::string export_array(double* array);
  virtual double* import_array(const std::string& handle);
  virtual void copy_to_peer(const std::vector<const double*>& from, const ArrayBox& box,
                            const std::vector<double*>& to, const ArrayBox& to_box);
  // The "ready" of a peer message on the device (a GPU's stream memory operations), so that
  // no host waits inside an exchange: a peer message buffer of n doubles is allocated with
  // one word more, its flag. signal_message queues on the exchange queue, behind the pack,
  // the write of `value` into the flag of `message` (the neighbour's buffer, with a memory
  // fence before it: the pack's stores arrive first); await_message queues on the exchange
  // queue a wait until the flag of `message` (this rank's buffer) is >= value. The defaults:
  // none (peer_signals() false, the others throw).
  virtual bool peer_signals() const { return false; }
  virtual void signal_message(double* message, std::size_t n, std::uint64_t value);
  virtual void await_message(const double* message, std::size_t n, std::uint64_t value);

  // Timing marks on a queue (on a GPU events, measured where the queue reaches them; on the
  // host the wall clock when called): mark() returns an id, seconds(from, to) the time
  // between two marks, waiting for both; clear_marks() forgets every mark,
  // release_marks_before(id) those made before mark `id` (a run keeps the marks of the step
  // in flight while it reads the step before: Simulation::retire_steps). Ids grow with every
  // mark and are never reused, so an id kept past a release cannot name a newer mark.
  enum class Queue { compute, exchange };
  virtual int mark(Queue queue);
  virtual double seconds(int from, int to);
  virtual void clear_marks();
  virtual void release_marks_before(int id);

  // The exchange of a rank that is its own neighbour along the periodic `wrap` axes, in one
  // pass over the ghost points, edges and corners included, kept inside the space (on a GPU
  // one kernel, no trip through host memory): every point of `alloc` within `ghost` layers
  // of a wrapped axis's ends takes the value of the point whose coordinates along the wrapped
  // axes are wrapped into the owned range (i -> ghost + (i - ghost) mod (alloc - 2 ghost)).
  // The same values as copying the faces axis after axis, each over the others' ghosts.
  // `pitch`: the arrays' row pitch (0: alloc[0]).
  virtual void wrap_ghosts(const std::vector<double*>& fields, const std::array<int, 3>& alloc,
                           int pitch, int ghost, const std::array<bool, 3>& wrap) = 0;
  // wrap_ghosts, leaving the ghost layers of the axes in `arriving` alone: neighbours copy
  // them in (copy_to_peer), possibly while this runs. The default wraps them too, which is
  // right where every message is unpacked after the wrap.
  virtual void wrap_ghosts_except(const std::vector<double*>& fields,
                                  const std::array<int, 3>& alloc, int pitch, int ghost,
                                  const std::array<bool, 3>& wrap,
                                  const std::array<bool, 3>& arriving) {
    (void)arriving;
    wrap_ghosts(fields, alloc, pitch, ghost, wrap);
  }

  // min, max, max |u|, sum |u|, sum u^2 over the box.
  virtual BoxSums reduce(const double* field, const ArrayBox& box) = 0;

  // Outer boundary conditions on the outer layers of `faces` (see boundary_point.hpp):
  // flat copies the nearest valid point; static zeroes the right-hand side; radiative sets
  // NewRad's Sommerfeld right-hand side from u.
  virtual void apply_flat(const OuterFaces& faces, double* field) = 0;
  virtual void apply_static_rhs(const OuterFaces& faces, double* rhs) = 0;
  virtual void apply_radiative_rhs(const OuterFaces& faces, const double* u, double* rhs, double u0,
                                   double v0) = 0;

private:
  std::vector<std::chrono::steady_clock::time_point> marks_; // the default mark()'s
  int first_mark_ = 0;                                       // the id of marks_[0]
};

// Throws std::invalid_argument where a wrapped axis has fewer owned points than ghost layers:
// a ghost would wrap more than once, and every space's wrap shifts by one period.
void check_wrap_period(const std::array<int, 3>& alloc, int ghost, const std::array<bool, 3>& wrap);

// The ghost points wrap_ghosts writes, as boxes: per wrapped axis its two ghost slabs over the
// whole allocated extent of the other axes (boxes of different axes overlap at edges). Throws
// as check_wrap_period.
// Along the axes in `arriving`, only the owned range (ArraySpace::wrap_ghosts_except).
std::vector<ArrayBox> wrapped_ghost_boxes(const std::array<int, 3>& alloc, int pitch, int ghost,
                                          const std::array<bool, 3>& wrap,
                                          const std::array<bool, 3>& arriving = {});

// The padded layout of grid::Patch (GridSpec::row_alignment): rows of `nx` points padded to a
// multiple of `alignment` points, and the points an array starts past an aligned address so
// that index `ghost` (the first owned point) of every row is aligned. alignment 1: unpadded.
inline int aligned_pitch(int nx, int alignment) {
  const int m = alignment > 1 ? alignment : 1;
  return (nx + m - 1) / m * m;
}
inline int aligned_row_offset(int ghost, int alignment) {
  const int m = alignment > 1 ? alignment : 1;
  return (m - ghost % m) % m;
}

// The host memory space (OpenMP loops); one object for the process.
ArraySpace& host_space();

} // namespace saguaro::runtime
