#include "runtime/cuda/array_space.hpp"

#include "codegen/cuda.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <utility>

// The embedded texts (src/CMakeLists.txt): ("boundary_point.hpp", ...), ("cuda/support.cu", ...).
std::vector<std::pair<std::string, std::string>> saguaro_cuda_support_files();

namespace saguaro::runtime::cuda {
namespace {

constexpr unsigned kThreads = 256;       // grid-stride launches
constexpr unsigned kReduceThreads = 256; // SAGUARO_REDUCE_THREADS in support.cu
constexpr unsigned kReduceBlocks = 1024; // at most, per reduce
constexpr int kPackFields = 32;          // SAGUARO_PACK_FIELDS in support.cu
// The exchange queue's launches (packs, unpacks) at most one block per multiprocessor: they run
// at the highest priority beside an interior kernel that fills the GPU, and every block they
// take is a slot the interior waits for. On 4 H100s (wave, 256^3, 2026-11-27) one block per SM
// gave 0.546 ms a step against 0.558 for up to 16 (2 per SM 0.546, 4 per SM 0.555, 1/2 0.574).
constexpr unsigned kExchangeBlocksPerSm = 1;

// Mirrors SaguaroTerms, SaguaroBox, SaguaroFieldTable, SaguaroShell and SaguaroRowGaps of
// support.cu.
struct SupportTerms {
  double a[ArraySpace::max_terms];
  const double* x[ArraySpace::max_terms];
};
static_assert(ArraySpace::max_terms == 8, "SAGUARO_COMBINE_TERMS in support.cu");
struct SupportBox {
  int alloc[3];
  int lo[3];
  int hi[3];
  int pitch;
};
struct SupportFieldTable {
  double* p[kPackFields];
};
struct SupportShell { // SaguaroShell
  SupportBox box[6];
  long long start[7];
  int boxes;
  int ghost;
  int wrap[3];
};
struct SupportRowGaps { // SaguaroRowGaps
  int alloc[3];
  int pitch;
  int ghost;
  int wrap[3];
  int row_lo[2], row_hi[2];
};

enum BoundaryKind : int { kFlat = 0, kStatic = 1, kRadiative = 2 };

CUdeviceptr device(const double* p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

// The box's volume; throws std::invalid_argument when it is not inside the allocation.
std::size_t checked_volume(const ArrayBox& box, const char* what) {
  std::size_t volume = 1;
  for (int a = 0; a < 3; ++a) {
    if (box.hi[a] <= box.lo[a]) return 0;
    if (box.lo[a] < 0 || box.hi[a] > box.alloc[a])
      throw std::invalid_argument(std::string("cuda array space: ") + what + ": the box [" +
                                  std::to_string(box.lo[a]) + ", " + std::to_string(box.hi[a]) +
                                  ") along axis " + std::to_string(a) + " is outside the " +
                                  std::to_string(box.alloc[a]) + " allocated points");
    volume *= std::size_t(box.hi[a] - box.lo[a]);
  }
  return volume;
}

// Arrays first .. first + count - 1 of `fields` as a kernel's field table.
template <class Pointer>
SupportFieldTable field_table(const std::vector<Pointer>& fields, std::size_t first, int count) {
  SupportFieldTable table{};
  for (int f = 0; f < count; ++f) table.p[f] = const_cast<double*>(fields[first + std::size_t(f)]);
  return table;
}

// launch(table, first, count) for `fields` in tables of at most kPackFields: a kernel takes its
// fields by value, so more than that many take several launches.
template <class Pointer, class Launch>
void launch_per_table(const std::vector<Pointer>& fields, Launch launch) {
  for (std::size_t first = 0; first < fields.size(); first += kPackFields) {
    const int count = int(std::min<std::size_t>(kPackFields, fields.size() - first));
    launch(field_table(fields, first, count), first, count);
  }
}

SupportBox support_box(const ArrayBox& box) {
  SupportBox b{};
  for (int a = 0; a < 3; ++a) {
    b.alloc[a] = box.alloc[a];
    b.lo[a] = box.lo[a];
    b.hi[a] = box.hi[a];
  }
  b.pitch = box.row_pitch();
  return b;
}

} // namespace

std::string support_source() {
  std::string header, body;
  for (const auto& [path, text] : saguaro_cuda_support_files()) {
    if (path == "boundary_point.hpp") header = "#line 1 \"runtime/boundary_point.hpp\"\n" + text;
    if (path == "cuda/support.cu") body = "#line 1 \"runtime/cuda/support.cu\"\n" + text;
  }
  if (header.empty() || body.empty())
    throw std::logic_error("cuda array space: the embedded support sources are missing");
  return std::string(codegen::kAfterPreviousKernel) + header + "\n" + body;
}

CudaArraySpace& CudaArraySpace::instance() {
  static CudaArraySpace* const space = new CudaArraySpace(); // lives as long as the process
  Driver::get();                                             // the context current on this thread
  return *space;
}

CudaArraySpace::CudaArraySpace() : driver_(Driver::get()) {
  Driver& d = driver_;
  CompileOptions options;
  // No contraction into fused multiply-adds: the same bits as the host loops.
  options.extra_options = {"--fmad=false"};
  support_ = compile(support_source(), d.info().arch(), options);
  SAGUARO_CU(d, cuModuleLoadData(&module_, support_.cubin.data()));
  const std::pair<CUfunction*, const char*> functions[] = {
      {&pack_, "saguaro_pack"},
      {&unpack_, "saguaro_unpack"},
      {&copy_box_, "saguaro_copy_box"},
      {&wrap_ghosts_, "saguaro_wrap_ghosts"},
      {&wrap_x_gaps_, "saguaro_wrap_x_gaps"},
      {&wrap_periodic_, "saguaro_wrap_periodic"},
      {&reduce_, "saguaro_reduce"},
      {&boundary_, "saguaro_boundary"},
      {&layout_, "saguaro_outer_faces_layout"},
  };
  for (const auto& [fn, name] : functions) SAGUARO_CU(d, cuModuleGetFunction(fn, module_, name));
  for (std::size_t m = 0; m < combine_.size(); ++m) {
    const std::string name = "saguaro_linear_combination_" + std::to_string(m + 1);
    SAGUARO_CU(d, cuModuleGetFunction(&combine_[m], module_, name.c_str()));
  }
  max_blocks_ = unsigned(std::max(1, d.info().multiprocessors)) * 16;
  exchange_blocks_ = unsigned(std::max(1, d.info().multiprocessors)) * kExchangeBlocksPerSm;
  int memory_operations = 0;
  SAGUARO_CU(d,
             cuDeviceGetAttribute(&memory_operations,
                                  CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d.device()));
  stream_memory_operations_ = memory_operations != 0;
  // The exchange queue at the highest priority: its pack and unpack blocks go ahead of the
  // waiting blocks of an interior kernel that fills the GPU.
  int least = 0, greatest = 0;
  SAGUARO_CU(d, cuCtxGetStreamPriorityRange(&least, &greatest));
  SAGUARO_CU(d, cuStreamCreateWithPriority(&exchange_, CU_STREAM_NON_BLOCKING, greatest));
  SAGUARO_CU(d, cuEventCreate(&fork_event_, CU_EVENT_DISABLE_TIMING));
  SAGUARO_CU(d, cuEventCreate(&join_event_, CU_EVENT_DISABLE_TIMING));
  SAGUARO_CU(d, cuMemAlloc(&partials_, sizeof(double) * 5 * kReduceBlocks));
  host_partials_.resize(5 * kReduceBlocks);

  // OuterFaces goes to the boundary kernel by value: its layout must be the host's.
  CUdeviceptr out = staging(sizeof(int) * 8);
  void* params[] = {&out};
  launch(layout_, 1, 1, params);
  int layout[6] = {};
  SAGUARO_CU(d, cuMemcpyDtoHAsync(layout, out, sizeof layout, d.stream()));
  SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
  const int host_layout[6] = {int(sizeof(OuterFaces)),
                              int(offsetof(OuterFaces, outer)),
                              int(offsetof(OuterFaces, origin)),
                              int(offsetof(OuterFaces, index_offset)),
                              int(offsetof(OuterFaces, spacing)),
                              int(offsetof(OuterFaces, pitch))};
  if (!std::equal(layout, layout + 6, host_layout))
    throw std::logic_error("cuda array space: OuterFaces has another layout on the device (" +
                           std::to_string(layout[0]) + " bytes) than on the host (" +
                           std::to_string(host_layout[0]) + " bytes)");
}

void CudaArraySpace::launch(CUfunction fn, unsigned blocks, unsigned threads, void** params,
                            CUstream stream) {
  Driver& d = Driver::get();
  const bool compute = stream == nullptr || stream == d.stream();
  d.check(d.launch(fn, {blocks, 1, 1}, {threads, 1, 1}, 0, compute ? d.stream() : stream, params,
                   compute),
          "cuLaunchKernel");
}

void CudaArraySpace::launch_1d(CUfunction fn, std::size_t n, void** params, CUstream stream) {
  if (n == 0) return;
  const unsigned most = stream != nullptr && stream == exchange_ ? exchange_blocks_ : max_blocks_;
  const std::size_t blocks = std::min<std::size_t>((n + kThreads - 1) / kThreads, most);
  launch(fn, unsigned(blocks), kThreads, params, stream);
}

CUdeviceptr CudaArraySpace::staging(std::size_t bytes) {
  if (bytes <= staging_bytes_) return staging_;
  Driver& d = Driver::get();
  if (staging_ != 0) {
    SAGUARO_CU(d, cuStreamSynchronize(d.stream())); // earlier operations may still use it
    SAGUARO_CU(d, cuMemFree(staging_));
    staging_ = 0;
    staging_bytes_ = 0;
  }
  const std::size_t grown = std::max(bytes, staging_bytes_ + staging_bytes_ / 2);
  SAGUARO_CU(d, cuMemAlloc(&staging_, grown));
  staging_bytes_ = grown;
  return staging_;
}

double* CudaArraySpace::allocate(std::size_t n) {
  Driver& d = Driver::get();
  const std::size_t bytes = sizeof(double) * std::max<std::size_t>(n, 1);
  CUdeviceptr p = 0;
  SAGUARO_CU(d, cuMemAlloc(&p, bytes));
  SAGUARO_CU(d, cuMemsetD8Async(p, 0, bytes, d.stream()));
  return reinterpret_cast<double*>(p);
}

void CudaArraySpace::release(double* array) {
  if (array == nullptr) return;
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuStreamSynchronize(d.stream())); // queued operations may still use it
  SAGUARO_CU(d, cuMemFree(device(array)));
}

void CudaArraySpace::to_host(double* host, const double* array, std::size_t n) {
  Driver& d = Driver::get();
  if (n > 0) SAGUARO_CU(d, cuMemcpyDtoHAsync(host, device(array), sizeof(double) * n, d.stream()));
  SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
}

void CudaArraySpace::from_host(double* array, const double* host, std::size_t n) {
  Driver& d = Driver::get();
  if (n > 0) SAGUARO_CU(d, cuMemcpyHtoDAsync(device(array), host, sizeof(double) * n, d.stream()));
  SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
}

void CudaArraySpace::synchronize() {
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
}

void CudaArraySpace::linear_combination(double* y, std::span<const Term> terms, std::size_t n) {
  if (terms.size() > max_terms)
    throw std::invalid_argument("cuda array space: a linear combination of " +
                                std::to_string(terms.size()) + " terms (at most " +
                                std::to_string(max_terms) + ")");
  if (n == 0) return;
  Driver& d = Driver::get();
  if (terms.empty()) { // no terms: zeros
    SAGUARO_CU(d, cuMemsetD8Async(device(y), 0, sizeof(double) * n, d.stream()));
    return;
  }
  SupportTerms table{};
  for (std::size_t m = 0; m < terms.size(); ++m) {
    table.a[m] = terms[m].a;
    table.x[m] = terms[m].x;
  }
  long long points = static_cast<long long>(n);
  void* params[] = {&y, &table, &points};
  launch_1d(combine_[terms.size() - 1], n, params);
}

void CudaArraySpace::pack_kernels(const std::vector<const double*>& fields, const ArrayBox& box,
                                  CUdeviceptr buffer, CUstream stream) {
  const std::size_t volume = box.volume();
  SupportBox b = support_box(box);
  launch_per_table(fields, [&](SupportFieldTable table, std::size_t first, int count) {
    CUdeviceptr out = buffer + sizeof(double) * first * volume;
    void* params[] = {&table, &count, &b, &out};
    launch_1d(pack_, volume * std::size_t(count), params, stream);
  });
}

void CudaArraySpace::unpack_kernels(const std::vector<double*>& fields, const ArrayBox& box,
                                    CUdeviceptr buffer, CUstream stream) {
  const std::size_t volume = box.volume();
  SupportBox b = support_box(box);
  launch_per_table(fields, [&](SupportFieldTable table, std::size_t first, int count) {
    CUdeviceptr in = buffer + sizeof(double) * first * volume;
    void* params[] = {&table, &count, &b, &in};
    launch_1d(unpack_, volume * std::size_t(count), params, stream);
  });
}

void CudaArraySpace::pack(const std::vector<const double*>& fields, const ArrayBox& box,
                          double* host_buffer) {
  const std::size_t total = checked_volume(box, "pack") * fields.size();
  if (total == 0) return;
  Driver& d = Driver::get();
  const CUdeviceptr buffer = staging(sizeof(double) * total);
  pack_kernels(fields, box, buffer, d.stream());
  SAGUARO_CU(d, cuMemcpyDtoHAsync(host_buffer, buffer, sizeof(double) * total, d.stream()));
  SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
}

void CudaArraySpace::unpack(const std::vector<double*>& fields, const ArrayBox& box,
                            const double* host_buffer) {
  const std::size_t total = checked_volume(box, "unpack") * fields.size();
  if (total == 0) return;
  Driver& d = Driver::get();
  const CUdeviceptr buffer = staging(sizeof(double) * total);
  SAGUARO_CU(d, cuMemcpyHtoDAsync(buffer, host_buffer, sizeof(double) * total, d.stream()));
  // The caller may reuse its buffer as soon as this returns (it may be pinned memory, whose
  // copy would otherwise still be in flight); the unpack kernels stay asynchronous.
  SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
  unpack_kernels(fields, box, buffer, d.stream());
}

// --- the exchange queue ----------------------------------------------------------------------

double* CudaArraySpace::allocate_message(std::size_t n, bool on_device) {
  Driver& d = Driver::get();
  if (on_device) {
    double* message = allocate(n);
    // Others write into a device message outside this process's streams: the MPI library
    // (CUDA-aware MPI) or a neighbour's pack kernels (CUDA IPC). allocate's zero fill, queued
    // on the compute queue behind whatever runs there, must be done before it is handed out,
    // or it may land after their data (a wrong ghost value, now and then, forever after for
    // variables exchanged once).
    SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
    return message;
  }
  const std::size_t bytes = sizeof(double) * std::max<std::size_t>(n, 1);
  void* host = nullptr;
  SAGUARO_CU(d, cuMemHostAlloc(&host, bytes, 0));
  CUdeviceptr staging = 0;
  try {
    SAGUARO_CU(d, cuMemAlloc(&staging, bytes));
  } catch (...) {
    d.api().cuMemFreeHost(host);
    throw;
  }
  message_staging_[static_cast<double*>(host)] = staging;
  return static_cast<double*>(host);
}

void CudaArraySpace::release_message(double* message, bool on_device) {
  if (message == nullptr) return;
  if (on_device) return release(message);
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuStreamSynchronize(exchange_)); // copies may still use them
  const auto it = staging_of(message, "release_message");
  SAGUARO_CU(d, cuMemFree(it->second));
  message_staging_.erase(it);
  SAGUARO_CU(d, cuMemFreeHost(message));
}

std::map<const double*, CUdeviceptr>::iterator CudaArraySpace::staging_of(const double* message,
                                                                          const char* what) {
  auto it = message_staging_.find(message);
  if (it == message_staging_.end())
    throw std::invalid_argument(std::string("cuda array space: ") + what +
                                ": not a message buffer");
  return it;
}

void CudaArraySpace::order(CUstream from, CUstream to, CUevent event) {
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuEventRecord(event, from));
  SAGUARO_CU(d, cuStreamWaitEvent(to, event, 0));
}

void CudaArraySpace::fork_exchange() {
  order(Driver::get().stream(), exchange_, fork_event_);
}

void CudaArraySpace::join_exchange() {
  order(exchange_, Driver::get().stream(), join_event_);
}

void CudaArraySpace::wait_exchange() {
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuStreamSynchronize(exchange_));
}

void CudaArraySpace::pack_message(const std::vector<const double*>& fields, const ArrayBox& box,
                                  double* message, bool on_device) {
  const std::size_t total = checked_volume(box, "pack_message") * fields.size();
  if (total == 0) return;
  if (on_device) return pack_kernels(fields, box, device(message), exchange_);
  const CUdeviceptr staging = staging_of(message, "pack_message")->second;
  Driver& d = Driver::get();
  pack_kernels(fields, box, staging, exchange_);
  SAGUARO_CU(d, cuMemcpyDtoHAsync(message, staging, sizeof(double) * total, exchange_));
}

void CudaArraySpace::unpack_message(const std::vector<double*>& fields, const ArrayBox& box,
                                    const double* message, bool on_device) {
  const std::size_t total = checked_volume(box, "unpack_message") * fields.size();
  if (total == 0) return;
  if (on_device) return unpack_kernels(fields, box, device(message), exchange_);
  const CUdeviceptr staging = staging_of(message, "unpack_message")->second;
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuMemcpyHtoDAsync(staging, message, sizeof(double) * total, exchange_));
  unpack_kernels(fields, box, staging, exchange_);
}

std::string CudaArraySpace::export_message(double* message) {
  Driver& d = Driver::get();
  CUipcMemHandle handle{};
  SAGUARO_CU(d, cuIpcGetMemHandle(&handle, device(message)));
  return std::string(handle.reserved, sizeof handle.reserved);
}

double* CudaArraySpace::import_message(const std::string& bytes) {
  Driver& d = Driver::get();
  CUipcMemHandle handle{};
  if (bytes.size() != sizeof handle.reserved)
    throw std::invalid_argument("cuda array space: import_message: not an IPC handle");
  std::copy(bytes.begin(), bytes.end(), handle.reserved);
  CUdeviceptr p = 0;
  // Lazily enabled peer access: the pack kernels write through the pointer over NVLink.
  SAGUARO_CU(d, cuIpcOpenMemHandle(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  return reinterpret_cast<double*>(p);
}

void CudaArraySpace::close_import(double* imported) {
  if (imported == nullptr) return;
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuStreamSynchronize(exchange_)); // packs may still write through it
  CUdeviceptr base = device(imported);
  if (auto inside = imported_bases_.find(imported); inside != imported_bases_.end()) {
    base = inside->second;
    imported_bases_.erase(inside);
  }
  SAGUARO_CU(d, cuIpcCloseMemHandle(base));
}

// The handle of the array's allocation and the array's offset in it (8 bytes).
std::string CudaArraySpace::export_array(double* array) {
  Driver& d = Driver::get();
  CUdeviceptr base = 0;
  std::size_t bytes = 0;
  SAGUARO_CU(d, cuMemGetAddressRange(&base, &bytes, device(array)));
  const std::uint64_t offset = device(array) - base;
  std::string handle = export_message(reinterpret_cast<double*>(base));
  handle.append(reinterpret_cast<const char*>(&offset), sizeof offset);
  return handle;
}

double* CudaArraySpace::import_array(const std::string& handle) {
  std::uint64_t offset = 0;
  if (handle.size() != sizeof(CUipcMemHandle::reserved) + sizeof offset)
    throw std::invalid_argument("cuda array space: import_array: not an array's handle");
  std::copy(handle.end() - sizeof offset, handle.end(), reinterpret_cast<char*>(&offset));
  double* base = import_message(handle.substr(0, handle.size() - sizeof offset));
  if (offset == 0) return base;
  double* array = reinterpret_cast<double*>(reinterpret_cast<char*>(base) + offset);
  imported_bases_[array] = device(base);
  return array;
}

void CudaArraySpace::copy_to_peer(const std::vector<const double*>& from, const ArrayBox& box,
                                  const std::vector<double*>& to, const ArrayBox& to_box) {
  const std::size_t volume = checked_volume(box, "copy_to_peer");
  if (checked_volume(to_box, "copy_to_peer") != volume || from.size() != to.size())
    throw std::invalid_argument("cuda array space: copy_to_peer: boxes or arrays differ");
  if (volume == 0) return;
  SupportBox src = support_box(box), dst = support_box(to_box);
  launch_per_table(from, [&](SupportFieldTable in, std::size_t first, int count) {
    SupportFieldTable out = field_table(to, first, count);
    void* params[] = {&in, &out, &count, &src, &dst};
    launch_1d(copy_box_, volume * std::size_t(count), params, exchange_);
  });
}

void CudaArraySpace::signal_message(double* message, std::size_t n, std::uint64_t value) {
  Driver& d = Driver::get();
  // Without CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER: a fence (as __threadfence_system, for
  // this stream) comes first, so the neighbour sees the packed message before the flag.
  SAGUARO_CU(d, cuStreamWriteValue64(exchange_, device(message) + sizeof(double) * n, value,
                                     CU_STREAM_WRITE_VALUE_DEFAULT));
}

void CudaArraySpace::await_message(const double* message, std::size_t n, std::uint64_t value) {
  Driver& d = Driver::get();
  SAGUARO_CU(d, cuStreamWaitValue64(exchange_, device(message) + sizeof(double) * n, value,
                                    CU_STREAM_WAIT_VALUE_GEQ));
}

int CudaArraySpace::mark(Queue queue) {
  Driver& d = Driver::get();
  CUevent e = nullptr;
  if (!spare_marks_.empty()) {
    e = spare_marks_.back();
    spare_marks_.pop_back();
  } else {
    SAGUARO_CU(d, cuEventCreate(&e, CU_EVENT_DEFAULT));
  }
  SAGUARO_CU(d, cuEventRecord(e, queue == Queue::exchange ? exchange_ : d.stream()));
  marks_.push_back(e);
  return first_mark_ + int(marks_.size()) - 1;
}

double CudaArraySpace::seconds(int from, int to) {
  Driver& d = Driver::get();
  CUevent a = marks_.at(std::size_t(from - first_mark_)),
          b = marks_.at(std::size_t(to - first_mark_));
  SAGUARO_CU(d, cuEventSynchronize(a));
  SAGUARO_CU(d, cuEventSynchronize(b));
  float ms = 0;
  SAGUARO_CU(d, cuEventElapsedTime(&ms, a, b));
  return double(ms) * 1e-3;
}

void CudaArraySpace::clear_marks() {
  release_marks_before(first_mark_ + int(marks_.size()));
}

// A released mark's event may still be pending on its queue; cuEventRecord on it again (a later
// mark) simply re-records it, as CUDA allows.
void CudaArraySpace::release_marks_before(int id) {
  const auto n = std::min(marks_.size(), std::size_t(std::max(0, id - first_mark_)));
  spare_marks_.insert(spare_marks_.end(), marks_.begin(), marks_.begin() + std::ptrdiff_t(n));
  marks_.erase(marks_.begin(), marks_.begin() + std::ptrdiff_t(n));
  first_mark_ += int(n);
}

void CudaArraySpace::wrap_ghosts(const std::vector<double*>& fields,
                                 const std::array<int, 3>& alloc, int pitch, int ghost,
                                 const std::array<bool, 3>& wrap) {
  wrap_ghosts_except(fields, alloc, pitch, ghost, wrap, {false, false, false});
}

void CudaArraySpace::wrap_ghosts_except(const std::vector<double*>& fields,
                                        const std::array<int, 3>& alloc, int pitch, int ghost,
                                        const std::array<bool, 3>& wrap,
                                        const std::array<bool, 3>& arriving) {
  // Where this rank is its own x neighbour and no ghosts arrive by message, one launch
  // (saguaro_wrap_periodic): the y and z ghost rows whole, the x gaps of the other rows. Where
  // y or z ghosts arrive, the x slabs by gaps (saguaro_wrap_x_gaps) and then the y and z slabs,
  // x ghosts included, point by point by the shell (its sources wrap along x still).
  check_wrap_period(alloc, ghost, wrap);
  std::array<bool, 3> shell_axes = wrap;
  if (wrap[0] && !arriving[0] && ghost > 0 && !fields.empty()) {
    shell_axes[0] = false;
    const bool whole_rows = !arriving[1] && !arriving[2];
    SupportRowGaps gaps{};
    for (int a = 0; a < 3; ++a) {
      gaps.alloc[a] = alloc[a];
      gaps.wrap[a] = wrap[a] ? 1 : 0;
    }
    gaps.pitch = pitch;
    gaps.ghost = ghost;
    // The gaps of the rows not among the ghost rows copied whole (those of an arriving axis:
    // its owned range, whose ghost rows the messages bring).
    for (int a = 1; a < 3; ++a) {
      const bool owned_only = whole_rows ? wrap[std::size_t(a)] : arriving[std::size_t(a)];
      gaps.row_lo[a - 1] = owned_only ? ghost : 0;
      gaps.row_hi[a - 1] = owned_only ? alloc[std::size_t(a)] - ghost : alloc[std::size_t(a)];
    }
    const std::size_t gap_threads = (std::size_t(alloc[1]) * std::size_t(alloc[2]) + 1) *
                                    std::size_t(pitch - (alloc[0] - 2 * ghost));
    if (!whole_rows) {
      launch_per_table(fields, [&](SupportFieldTable table, std::size_t, int count) {
        void* params[] = {&table, &count, &gaps};
        launch_1d(wrap_x_gaps_, gap_threads, params);
      });
    } else {
      // An exchange of the 8th-order wave at 256^3 on an H200: 37 us with the shell's boxes
      // after the gaps, 29 with a row-copy kernel after them, 27 in one launch
      // (bench/results/2026-11-29-wrap-rows-H200.md).
      const std::size_t planes =
          wrap[2] ? std::size_t(alloc[2] - 2 * ghost) : std::size_t(alloc[2]);
      const std::size_t rows = (wrap[2] ? std::size_t(2 * ghost) * std::size_t(alloc[1]) : 0) +
                               (wrap[1] ? std::size_t(2 * ghost) * planes : 0);
      // One thread per point of a row (whole warps, at most 1024): a block copies a row in one
      // pass, where 256 threads over a row of 264 points took two.
      const unsigned threads = unsigned(std::min(1024, (pitch + 31) / 32 * 32));
      int row_blocks = int(std::min<std::size_t>(rows, max_blocks_));
      const std::size_t gap_blocks =
          std::min<std::size_t>((gap_threads + threads - 1) / threads, max_blocks_);
      launch_per_table(fields, [&](SupportFieldTable table, std::size_t, int count) {
        void* params[] = {&table, &count, &gaps, &row_blocks};
        launch(wrap_periodic_, unsigned(std::size_t(row_blocks) + gap_blocks), threads, params);
      });
      return;
    }
  }
  const std::vector<ArrayBox> boxes =
      wrapped_ghost_boxes(alloc, pitch, ghost, shell_axes, arriving);
  if (boxes.empty() || fields.empty()) return;
  SupportShell shell{};
  shell.boxes = int(boxes.size());
  shell.ghost = ghost;
  std::size_t volume = 0;
  for (std::size_t b = 0; b < boxes.size(); ++b) {
    shell.box[b] = support_box(boxes[b]);
    shell.start[b] = static_cast<long long>(volume);
    volume += checked_volume(boxes[b], "wrap_ghosts");
  }
  shell.start[boxes.size()] = static_cast<long long>(volume);
  for (int a = 0; a < 3; ++a) shell.wrap[a] = wrap[a] ? 1 : 0;
  launch_per_table(fields, [&](SupportFieldTable table, std::size_t, int count) {
    void* params[] = {&table, &count, &shell};
    launch_1d(wrap_ghosts_, volume * std::size_t(count), params);
  });
}

BoxSums CudaArraySpace::reduce(const double* field, const ArrayBox& box) {
  BoxSums sums;
  sums.min = std::numeric_limits<double>::infinity();
  sums.max = -std::numeric_limits<double>::infinity();
  const std::size_t volume = checked_volume(box, "reduce");
  if (volume == 0) return sums;
  Driver& d = Driver::get();
  const unsigned blocks = unsigned(
      std::min<std::size_t>((volume + kReduceThreads - 1) / kReduceThreads, kReduceBlocks));
  SupportBox b = support_box(box);
  CUdeviceptr out = partials_;
  void* params[] = {&field, &b, &out};
  launch(reduce_, blocks, kReduceThreads, params);
  SAGUARO_CU(d, cuMemcpyDtoHAsync(host_partials_.data(), partials_, sizeof(double) * 5 * blocks,
                                  d.stream()));
  SAGUARO_CU(d, cuStreamSynchronize(d.stream()));
  for (unsigned blk = 0; blk < blocks; ++blk) {
    const double* p = &host_partials_[5 * std::size_t(blk)];
    sums.min = std::min(sums.min, p[0]);
    sums.max = std::max(sums.max, p[1]);
    sums.max_abs = std::max(sums.max_abs, p[2]);
    sums.sum_abs += static_cast<long double>(p[3]);
    sums.sum_sq += static_cast<long double>(p[4]);
  }
  sums.count = static_cast<long long>(volume);
  return sums;
}

void CudaArraySpace::boundary(const OuterFaces& faces, int kind, const double* u, double* out,
                              double u0, double v0) {
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      if (!faces.outer[axis][side]) continue;
      std::size_t volume = std::size_t(std::max(0, std::min(faces.ghost, faces.alloc[axis])));
      for (int b = 0; b < 3; ++b)
        if (b != axis) volume *= std::size_t(std::max(0, faces.alloc[b]));
      if (volume == 0) continue;
      OuterFaces f = faces;
      int a = axis, s = side, k = kind;
      void* params[] = {&f, &a, &s, &k, &u, &out, &u0, &v0};
      launch_1d(boundary_, volume, params);
    }
}

void CudaArraySpace::apply_flat(const OuterFaces& faces, double* field) {
  boundary(faces, kFlat, field, field, 0.0, 0.0);
}

void CudaArraySpace::apply_static_rhs(const OuterFaces& faces, double* rhs) {
  boundary(faces, kStatic, nullptr, rhs, 0.0, 0.0);
}

void CudaArraySpace::apply_radiative_rhs(const OuterFaces& faces, const double* u, double* rhs,
                                         double u0, double v0) {
  boundary(faces, kRadiative, u, rhs, u0, v0);
}

} // namespace saguaro::runtime::cuda

namespace saguaro::runtime::cuda {

ArraySpace& device_space() {
  return CudaArraySpace::instance();
}

} // namespace saguaro::runtime::cuda
