// The CUDA ArraySpace: arrays in device memory, the fixed operations as kernels of the support
// module (support.cu), queued on the driver's stream (the compute queue); the ghost exchange's
// packs, unpacks and staging copies on a second stream of the highest priority (the exchange
// queue), so that their few blocks are scheduled ahead of a long kernel's. Internal to runtime/.
#pragma once

#include "runtime/array_space.hpp"
#include "runtime/cuda/driver.hpp"

#include <cstddef>
#include <array>
#include <map>
#include <string>
#include <vector>

namespace saguaro::runtime::cuda {

class CudaArraySpace final : public ArraySpace {
public:
  // The process's space (its support module is compiled, or taken from the cache, and loaded
  // on first use). Throws std::runtime_error when CUDA is not available.
  static CudaArraySpace& instance();

  const char* name() const override { return "cuda"; }
  bool on_device() const override { return true; }

  double* allocate(std::size_t n) override;
  void release(double* array) override;
  void to_host(double* host, const double* array, std::size_t n) override;
  void from_host(double* array, const double* host, std::size_t n) override;
  void synchronize() override;

  void linear_combination(double* y, std::span<const Term> terms, std::size_t n) override;

  void pack(const std::vector<const double*>& fields, const ArrayBox& box,
            double* host_buffer) override;
  void wrap_ghosts(const std::vector<double*>& fields, const std::array<int, 3>& alloc, int pitch,
                   int ghost, const std::array<bool, 3>& wrap) override;
  void unpack(const std::vector<double*>& fields, const ArrayBox& box,
              const double* host_buffer) override;

  double* allocate_message(std::size_t n, bool on_device) override;
  void release_message(double* message, bool on_device) override;
  void fork_exchange() override;
  bool peer_arrays() const override { return true; }
  std::string export_array(double* array) override;
  double* import_array(const std::string& handle) override;
  void copy_to_peer(const std::vector<const double*>& from, const ArrayBox& box,
                    const std::vector<double*>& to, const ArrayBox& to_box) override;
  void wrap_ghosts_except(const std::vector<double*>& fields, const std::array<int, 3>& alloc,
                          int pitch, int ghost, const std::array<bool, 3>& wrap,
                          const std::array<bool, 3>& arriving) override;
  void join_exchange() override;
  void pack_message(const std::vector<const double*>& fields, const ArrayBox& box, double* message,
                    bool on_device) override;
  void unpack_message(const std::vector<double*>& fields, const ArrayBox& box,
                      const double* message, bool on_device) override;
  void wait_exchange() override;
  bool peer_messages() const override { return true; }
  std::string export_message(double* message) override;
  double* import_message(const std::string& handle) override;
  void close_import(double* imported) override;
  bool peer_signals() const override { return stream_memory_operations_; }
  void signal_message(double* message, std::size_t n, std::uint64_t value) override;
  void await_message(const double* message, std::size_t n, std::uint64_t value) override;
  int mark(Queue queue) override;
  double seconds(int from, int to) override;
  void clear_marks() override;
  void release_marks_before(int id) override;

  BoxSums reduce(const double* field, const ArrayBox& box) override;

  void apply_flat(const OuterFaces& faces, double* field) override;
  void apply_static_rhs(const OuterFaces& faces, double* rhs) override;
  void apply_radiative_rhs(const OuterFaces& faces, const double* u, double* rhs, double u0,
                           double v0) override;

  // How the support module was obtained (for logs): compile_seconds, from_cache, key.
  const CompiledModule& support_module() const { return support_; }

  CudaArraySpace(const CudaArraySpace&) = delete;
  CudaArraySpace& operator=(const CudaArraySpace&) = delete;

private:
  CudaArraySpace();
  ~CudaArraySpace() override = default; // never destroyed: the process's space

  // Launches `fn` over n points grid-stride (block kThreads).
  void launch_1d(CUfunction fn, std::size_t n, void** params, CUstream stream = nullptr);
  void launch(CUfunction fn, unsigned blocks, unsigned threads, void** params,
              CUstream stream = nullptr); // nullptr: the compute stream
  // The pack/unpack kernels over a device buffer, on `stream`.
  void pack_kernels(const std::vector<const double*>& fields, const ArrayBox& box,
                    CUdeviceptr buffer, CUstream stream);
  void unpack_kernels(const std::vector<double*>& fields, const ArrayBox& box, CUdeviceptr buffer,
                      CUstream stream);
  // `to` waits for what is queued on `from` (through `event`, recorded anew each time: a
  // wait takes the record current when it is queued).
  void order(CUstream from, CUstream to, CUevent event);
  // A device buffer of at least `bytes`, kept between calls.
  CUdeviceptr staging(std::size_t bytes);
  void boundary(const OuterFaces& faces, int kind, const double* u, double* out, double u0,
                double v0);

  Driver& driver_;
  CompiledModule support_;
  CUmodule module_ = nullptr;
  // combine_[m - 1]: the linear combination of m terms (one kernel per count, support.cu).
  std::array<CUfunction, ArraySpace::max_terms> combine_{};
  CUfunction pack_ = nullptr, unpack_ = nullptr, copy_box_ = nullptr, wrap_ghosts_ = nullptr,
             wrap_x_gaps_ = nullptr, wrap_periodic_ = nullptr, reduce_ = nullptr,
             boundary_ = nullptr, layout_ = nullptr;
  unsigned max_blocks_ = 1;               // grid-stride launches: at most this many blocks
  unsigned exchange_blocks_ = 1;          // ... and on the exchange queue (kExchangeBlocksPerSm)
  bool stream_memory_operations_ = false; // 64-bit cuStreamWaitValue/WriteValue
  CUdeviceptr staging_ = 0;
  std::size_t staging_bytes_ = 0;
  CUdeviceptr partials_ = 0;    // reduce: 5 doubles per block
  CUstream exchange_ = nullptr; // the exchange queue
  // Per pinned host message, the device buffer it is staged through; staging_of finds a
  // message's entry or throws, naming the operation `what`.
  std::map<const double*, CUdeviceptr> message_staging_;
  std::map<const double*, CUdeviceptr>::iterator staging_of(const double* message,
                                                            const char* what);
  CUevent fork_event_ = nullptr, join_event_ = nullptr;
  // Imported peer arrays that start inside their allocation: the address import_array
  // returned -> the allocation's base, which close_import closes.
  std::map<const double*, CUdeviceptr> imported_bases_;
  std::vector<CUevent> marks_;       // recorded marks, in id order
  int first_mark_ = 0;               // the id of marks_[0]
  std::vector<CUevent> spare_marks_; // events of cleared marks, reused
  std::vector<double> host_partials_;
};

} // namespace saguaro::runtime::cuda
