// The Kokkos array space: arrays in Kokkos memory of the default execution space, every
// operation a kernel of the support library (kokkos/support.cpp), reached through its table.
// Loading the library and Kokkos::initialize happen on first use.
#include "runtime/kokkos.hpp"
#include "runtime/kokkos/support_api.hpp"
#include "runtime/kokkos_config_CXX.hpp" // generated: src/CMakeLists.txt
#include "runtime/native_library.hpp"

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>

namespace saguaro::runtime::kokkos {
namespace {

const char* const kWho = "kokkos backend";

// The support library, loaded once (RTLD_GLOBAL, so that generated objects linked against it
// share its Kokkos), with Kokkos initialised; or why it cannot be.
struct Support {
  std::shared_ptr<detail::Library> library;
  const SupportTable* table = nullptr;
  std::string description; // "Kokkos 3.4.1, Serial"
  std::string error;
};

const Support& support() {
  static const Support s = [] {
    Support out;
    try {
      const std::string path = SAGUARO_KOKKOS_SUPPORT_LIBRARY;
      if (!std::filesystem::exists(path))
        throw std::runtime_error("its support library " + path +
                                 " is missing (build the target saguaro_kokkos_support)");
      out.library = detail::load_library(path, kWho, true);
      auto get = reinterpret_cast<const SupportTable* (*)()>(
          detail::symbol(*out.library, SAGUARO_KOKKOS_SUPPORT_SYMBOL, path, kWho));
      out.table = get();
      if (out.table == nullptr || out.table->abi != kSupportAbi)
        throw std::runtime_error(path + " is of another version of Saguaro");
      out.description = out.table->initialize();
    } catch (const std::exception& e) {
      out.table = nullptr;
      out.error = e.what();
    }
    return out;
  }();
  return s;
}

const SupportTable& table() {
  const Support& s = support();
  if (s.table == nullptr) throw std::runtime_error(std::string(kWho) + ": " + s.error);
  return *s.table;
}

Box box_of(const ArrayBox& b) {
  Box out{};
  for (int a = 0; a < 3; ++a) {
    out.alloc[a] = b.alloc[a];
    out.lo[a] = b.lo[a];
    out.hi[a] = b.hi[a];
  }
  out.pitch = b.row_pitch();
  return out;
}

class KokkosArraySpace final : public ArraySpace {
public:
  explicit KokkosArraySpace(const SupportTable& t) : t_(t), on_device_(t.host_accessible() == 0) {}
  const char* name() const override { return "kokkos"; }
  bool on_device() const override { return on_device_; }

  double* allocate(std::size_t n) override { return t_.allocate(n); }
  void release(double* array) override {
    if (array != nullptr) t_.release(array);
  }
  void to_host(double* host, const double* array, std::size_t n) override {
    t_.to_host(host, array, n);
  }
  void from_host(double* array, const double* host, std::size_t n) override {
    t_.from_host(array, host, n);
  }
  void synchronize() override { t_.fence(); }

  void linear_combination(double* y, std::span<const Term> terms, std::size_t n) override {
    if (terms.size() > max_terms)
      throw std::invalid_argument("kokkos space: a linear combination of " +
                                  std::to_string(terms.size()) + " terms (at most " +
                                  std::to_string(max_terms) + ")");
    double a[max_terms];
    const double* x[max_terms];
    for (std::size_t m = 0; m < terms.size(); ++m) {
      a[m] = terms[m].a;
      x[m] = terms[m].x;
    }
    t_.linear_combination(y, a, x, int(terms.size()), n);
  }

  void pack(const std::vector<const double*>& fields, const ArrayBox& box,
            double* host_buffer) override {
    const Box b = box_of(box);
    t_.pack(fields.data(), int(fields.size()), &b, host_buffer);
  }
  void unpack(const std::vector<double*>& fields, const ArrayBox& box,
              const double* host_buffer) override {
    const Box b = box_of(box);
    t_.unpack(fields.data(), int(fields.size()), &b, host_buffer);
  }

  void wrap_ghosts(const std::vector<double*>& fields, const std::array<int, 3>& alloc, int pitch,
                   int ghost, const std::array<bool, 3>& wrap) override {
    check_wrap_period(alloc, ghost, wrap);
    const int w[3] = {wrap[0], wrap[1], wrap[2]};
    for (double* f : fields) t_.wrap_ghosts(f, alloc.data(), row_pitch(pitch, alloc[0]), ghost, w);
  }

  BoxSums reduce(const double* field, const ArrayBox& box) override {
    const Box b = box_of(box);
    double out[3];
    long double sums[2];
    t_.reduce(field, &b, out, sums);
    BoxSums s;
    s.min = out[0];
    s.max = out[1];
    s.max_abs = out[2];
    s.sum_abs = sums[0];
    s.sum_sq = sums[1];
    s.count = static_cast<long long>(box.volume());
    return s;
  }

  void apply_flat(const OuterFaces& faces, double* field) override { t_.apply_flat(&faces, field); }
  void apply_static_rhs(const OuterFaces& faces, double* rhs) override {
    t_.apply_static_rhs(&faces, rhs);
  }
  void apply_radiative_rhs(const OuterFaces& faces, const double* u, double* rhs, double u0,
                           double v0) override {
    t_.apply_radiative_rhs(&faces, u, rhs, u0, v0);
  }

private:
  const SupportTable& t_;
  bool on_device_;
};

} // namespace

bool built_with_kokkos() {
  return true;
}

bool available(std::string* why) {
  const Support& s = support();
  if (s.table == nullptr && why != nullptr) *why = s.error;
  return s.table != nullptr;
}

std::string describe() {
  table();
  return support().description;
}

ArraySpace& space() {
  static KokkosArraySpace space(table());
  return space;
}

std::vector<std::string> compile_command() {
  std::vector<std::string> argv{SAGUARO_KOKKOS_CXX, "-O3", "-fPIC", "-std=c++17"};
  static const char* const flags[] = {SAGUARO_KOKKOS_COMPILE_FLAGS};
  for (const char* const* f = flags; *f != nullptr; ++f) argv.emplace_back(*f);
  return argv;
}

std::vector<std::string> link_flags() {
  const std::filesystem::path library = SAGUARO_KOKKOS_SUPPORT_LIBRARY;
  std::vector<std::string> argv{library.string(), "-Wl,-rpath," + library.parent_path().string()};
  static const char* const flags[] = {SAGUARO_KOKKOS_LINK_FLAGS};
  for (const char* const* f = flags; *f != nullptr; ++f) argv.emplace_back(*f);
  return argv;
}

} // namespace saguaro::runtime::kokkos
