// The CUDA backend's public face in a build without CUDA (SAGUARO_WITH_CUDA off, or the CUDA
// toolkit not found): nothing is available and everything that would need CUDA throws.
#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"

#include <stdexcept>

namespace saguaro::runtime {
namespace cuda {
namespace {

const char* const kNoCuda = "this build has no CUDA (SAGUARO_WITH_CUDA)";

[[noreturn]] void no_cuda() {
  throw std::runtime_error(kNoCuda);
}

} // namespace

bool built_with_cuda() {
  return false;
}

bool available(std::string* why) {
  if (why != nullptr) *why = kNoCuda;
  return false;
}

DeviceInfo device_info() {
  no_cuda();
}

CompiledModule compile(const std::string&, const std::string&, const CompileOptions&) {
  no_cuda();
}

std::string nvrtc_version() {
  no_cuda();
}

ArraySpace& device_space() {
  no_cuda();
}

std::string support_source() {
  no_cuda();
}

struct KernelModule::Loaded {};
KernelModule::KernelModule(const std::string&, const CompileOptions&) {
  no_cuda();
}
KernelModule::~KernelModule() = default;
void KernelModule::launch(const std::string&, const std::array<unsigned, 3>&,
                          const std::array<unsigned, 3>&, void**, std::size_t) {
  no_cuda();
}
double KernelModule::time(const std::string&, const std::array<unsigned, 3>&,
                          const std::array<unsigned, 3>&, void**, int, std::size_t) {
  no_cuda();
}
const std::map<std::string, PtxasReport>& KernelModule::resources() const {
  no_cuda();
}

} // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions&) {
  throw std::runtime_error(std::string("the cuda backend cannot be used: ") + cuda::kNoCuda);
}

} // namespace saguaro::runtime
