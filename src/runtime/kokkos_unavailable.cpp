// The Kokkos backend's public face in a build without Kokkos (SAGUARO_KOKKOS off, or
// find_package(Kokkos) found none): nothing is available, and the reason says how to get it.
#include "runtime/backends.hpp"
#include "runtime/kokkos.hpp"

#include <stdexcept>

namespace saguaro::runtime {
namespace kokkos {
namespace {

[[noreturn]] void no_kokkos() {
  throw std::runtime_error(kNotBuilt);
}

} // namespace

bool built_with_kokkos() {
  return false;
}

bool available(std::string* why) {
  if (why != nullptr) *why = kNotBuilt;
  return false;
}

std::string describe() {
  no_kokkos();
}

ArraySpace& space() {
  no_kokkos();
}

std::vector<std::string> compile_command() {
  no_kokkos();
}

std::vector<std::string> link_flags() {
  no_kokkos();
}

} // namespace kokkos

std::unique_ptr<Backend> make_kokkos_backend(const BackendOptions&) {
  kokkos::no_kokkos();
}

} // namespace saguaro::runtime
