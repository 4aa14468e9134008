// The ghost exchange through peer messages, without a GPU: a space whose "device" message
// buffers are POSIX shared memory that the neighbouring ranks map (as CUDA IPC maps a GPU's),
// with and without the device-side "ready" (ArraySpace::peer_signals: here a flag word
// stored with release and awaited with acquire). Every rank runs on this host, so every
// remote face is a peer face. The values must be those of the exchange through MPI, over many
// exchanges (the two buffers of a face alternate, the flag counts exchanges) and changing
// field counts (the buffers are reallocated, the handles go round again).
#include "grid_test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

using namespace saguaro;
using namespace saguaro::grid;
using namespace saguaro::grid::test;

namespace {

// Host arrays (host_space() does the work); peer messages in shared memory.
class SharedMemoryPeerSpace final : public runtime::ArraySpace {
public:
  explicit SharedMemoryPeerSpace(bool signals) : signals_(signals) {}
  ~SharedMemoryPeerSpace() override {
    for (const auto& [p, name] : owned_) {
      munmap(p, sizes_.at(p));
      shm_unlink(name.c_str());
    }
  }

  const char* name() const override { return "shared-memory test"; }
  bool on_device() const override { return false; }
  double* allocate(std::size_t n) override { return host().allocate(n); }
  void release(double* a) override { host().release(a); }
  void to_host(double* h, const double* a, std::size_t n) override { host().to_host(h, a, n); }
  void from_host(double* a, const double* h, std::size_t n) override { host().from_host(a, h, n); }
  void synchronize() override {}
  void linear_combination(double* y, std::span<const Term> terms, std::size_t n) override {
    host().linear_combination(y, terms, n);
  }
  void pack(const std::vector<const double*>& f, const runtime::ArrayBox& b, double* m) override {
    host().pack(f, b, m);
  }
  void unpack(const std::vector<double*>& f, const runtime::ArrayBox& b, const double* m) override {
    host().unpack(f, b, m);
  }
  void wrap_ghosts(const std::vector<double*>& f, const std::array<int, 3>& alloc, int pitch,
                   int ghost, const std::array<bool, 3>& wrap) override {
    host().wrap_ghosts(f, alloc, pitch, ghost, wrap);
  }
  runtime::BoxSums reduce(const double* f, const runtime::ArrayBox& b) override {
    return host().reduce(f, b);
  }
  void apply_flat(const runtime::OuterFaces& faces, double* f) override {
    host().apply_flat(faces, f);
  }
  void apply_static_rhs(const runtime::OuterFaces& faces, double* r) override {
    host().apply_static_rhs(faces, r);
  }
  void apply_radiative_rhs(const runtime::OuterFaces& faces, const double* u, double* r, double u0,
                           double v0) override {
    host().apply_radiative_rhs(faces, u, r, u0, v0);
  }

  // "Device" messages: shared memory segments, zeroed (ftruncate).
  double* allocate_message(std::size_t n, bool on_device) override {
    if (!on_device) return ArraySpace::allocate_message(n, false);
    const std::string name =
        "/saguaro-peer-test-" + std::to_string(getpid()) + "-" + std::to_string(next_++);
    const std::size_t bytes = sizeof(double) * std::max<std::size_t>(n, 1);
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, off_t(bytes)) != 0)
      throw std::runtime_error("shm_open/ftruncate " + name + " failed");
    double* p = map(fd, bytes);
    owned_[p] = name;
    return p;
  }
  void release_message(double* m, bool on_device) override {
    if (!on_device) return ArraySpace::release_message(m, false);
    if (m == nullptr) return;
    munmap(m, sizes_.at(m));
    shm_unlink(owned_.at(m).c_str());
    owned_.erase(m);
    sizes_.erase(m);
  }
  void pack_message(const std::vector<const double*>& f, const runtime::ArrayBox& b, double* m,
                    bool) override {
    host().pack(f, b, m);
  }
  void unpack_message(const std::vector<double*>& f, const runtime::ArrayBox& b, const double* m,
                      bool) override {
    host().unpack(f, b, m);
  }
  bool peer_messages() const override { return true; }
  std::string export_message(double* m) override {
    std::string handle = owned_.at(m);
    handle.resize(kHandle, '\0'); // handles are of one size (Decomposition splits them)
    return handle;
  }
  double* import_message(const std::string& handle) override {
    const std::string name = handle.substr(0, handle.find('\0'));
    const int fd = shm_open(name.c_str(), O_RDWR, 0);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) throw std::runtime_error("shm_open " + name + " failed");
    ++imports_;
    return map(fd, std::size_t(st.st_size));
  }
  void close_import(double* m) override {
    munmap(m, sizes_.at(m));
    sizes_.erase(m);
  }
  bool peer_signals() const override { return signals_; }
  void signal_message(double* m, std::size_t n, std::uint64_t value) override {
    flag(m, n).store(value, std::memory_order_release);
    ++signals_sent_;
  }
  void await_message(const double* m, std::size_t n, std::uint64_t value) override {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (flag(const_cast<double*>(m), n).load(std::memory_order_acquire) < value) {
      if (std::chrono::steady_clock::now() > give_up)
        throw std::runtime_error("await_message: flag never reached " + std::to_string(value));
      std::this_thread::yield();
    }
  }

  int imports() const { return imports_; }
  long long signals_sent() const { return signals_sent_; }

private:
  static constexpr std::size_t kHandle = 64;
  static runtime::ArraySpace& host() { return runtime::host_space(); }
  static std::atomic_ref<std::uint64_t> flag(double* m, std::size_t n) {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(m + n));
  }
  double* map(int fd, std::size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    sizes_[static_cast<double*>(p)] = bytes;
    return static_cast<double*>(p);
  }

  bool signals_;
  int next_ = 0, imports_ = 0;
  long long signals_sent_ = 0;
  std::map<double*, std::string> owned_;
  std::map<double*, std::size_t> sizes_;
};

long long count_mismatches(const Patch& p, const std::vector<std::vector<double>>& f,
                           const GridSpec& spec) {
  long long bad = 0;
  for (std::size_t m = 0; m < f.size(); ++m)
    for_box(p.allocated(), [&](int i, int j, int k) {
      if (!same(f[m][p.linear(i, j, k)], wrapped_value(spec, int(m), i, j, k))) ++bad;
    });
  return global_sum(bad);
}

void exchange_many_times(bool signals) {
  const GridSpec spec = make_spec({13, 10, 9}, {true, false, true}, 2);
  SharedMemoryPeerSpace space(signals);
  long long exchanges = 0;
  {
    Decomposition d(spec, MPI_COMM_WORLD);
    const Patch& p = d.patch();
    for (int count : {2, 2, 3, 3, 3, 1, 4}) { // 3 and 4 fields: the buffers grow
      SCOPED_TRACE(testing::Message() << count << " fields, exchange " << exchanges);
      std::vector<std::vector<double>> f(count, std::vector<double>(p.points(), kNaN));
      std::vector<double*> pointers;
      for (int m = 0; m < count; ++m) {
        for_box(p.allocated(), [&](int i, int j, int k) {
          // a different value every exchange, so a stale message shows
          f[m][p.linear(i, j, k)] = contains(p.valid(), i, j, k)
                                        ? wrapped_value(spec, m, i, j, k) + 1e9 * double(exchanges)
                                        : kNaN;
        });
        pointers.push_back(f[m].data());
      }
      d.begin_sync(pointers, space);
      d.finish_sync();
      for (auto& field : f)
        for_box(p.allocated(),
                [&](int i, int j, int k) { field[p.linear(i, j, k)] -= 1e9 * double(exchanges); });
      EXPECT_EQ(count_mismatches(p, f, spec), 0);
      ++exchanges;
    }
    // Every rank with a remote face opened its neighbours' buffers (as peers: one host).
    const bool remote = d.has_remote_faces();
    EXPECT_EQ(space.imports() > 0, remote);
    EXPECT_EQ(space.signals_sent() > 0, remote && signals);
    bool peer = false;
    for (const auto& axis : d.peer_faces(space)) peer = peer || axis[0] || axis[1];
    EXPECT_EQ(peer, remote);
  }
}

} // namespace

TEST(GridPeerSync, ReadyThroughMpi) {
  exchange_many_times(false);
}

TEST(GridPeerSync, ReadyThroughDeviceFlags) {
  exchange_many_times(true);
}
