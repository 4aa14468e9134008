#include "runtime/cuda/driver.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <exception>
#include <stdexcept>

namespace saguaro::runtime::cuda {
namespace {

// The local rank of an MPI job from the launcher's environment (Open MPI, MPICH/Intel MPI,
// MVAPICH, Slurm), else 0.
int local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PMI_LOCAL_RANK"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    long rank = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && rank >= 0 && rank < 1 << 20) return int(rank);
  }
  return 0;
}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

} // namespace

std::string Driver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.cuGetErrorName == nullptr || api_.cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (api_.cuGetErrorString == nullptr || api_.cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  std::string s = name != nullptr ? name : "CUDA error " + std::to_string(int(result));
  if (text != nullptr) s += std::string(" (") + text + ")";
  return s;
}

void Driver::check(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) return;
  throw std::runtime_error("CUDA driver: " + std::string(call) + " failed: " + describe(result));
}

void Driver::load() {
  dlerror();
  library_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* err = dlerror();
    throw std::runtime_error(std::string("libcuda.so.1 not found (no NVIDIA driver here?): ") +
                             (err != nullptr ? err : "dlopen failed"));
  }
  auto get_proc =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library_, "cuGetProcAddress_v2"));
  if (get_proc == nullptr)
    throw std::runtime_error("the NVIDIA driver is too old: libcuda.so.1 has no "
                             "cuGetProcAddress_v2 (a driver for CUDA 12.0 or later is needed; "
                             "this build uses CUDA " +
                             version_text(CUDA_VERSION) + ")");
  int driver_version = 0;
  auto resolve = [&](void** slot, const char* name) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = get_proc(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r == CUDA_ERROR_STUB_LIBRARY)
      throw std::runtime_error("the libcuda.so.1 found is the CUDA toolkit's stub library "
                               "(CUDA_ERROR_STUB_LIBRARY), not an NVIDIA driver: take the "
                               "toolkit's stubs directory out of the library path");
    if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || fn == nullptr) {
      std::string why = status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                            ? "the driver is older than the CUDA version of this build"
                            : "symbol not found";
      if (r != CUDA_SUCCESS) why = describe(r);
      std::string versions = "this build uses CUDA " + version_text(CUDA_VERSION);
      if (driver_version > 0)
        versions += ", the driver supports CUDA " + version_text(driver_version);
      throw std::runtime_error("cannot resolve the driver function " + std::string(name) +
                               " through cuGetProcAddress: " + why + " (" + versions + ")");
    }
    *slot = fn;
  };
  // Error reporting and the version first, so that later failures can say more.
  resolve(reinterpret_cast<void**>(&api_.cuGetErrorName), "cuGetErrorName");
  resolve(reinterpret_cast<void**>(&api_.cuGetErrorString), "cuGetErrorString");
  resolve(reinterpret_cast<void**>(&api_.cuDriverGetVersion), "cuDriverGetVersion");
  if (api_.cuDriverGetVersion(&driver_version) != CUDA_SUCCESS) driver_version = 0;
#define SAGUARO_CUDA_DRIVER_RESOLVE(name, type)                                                    \
  if (api_.name == nullptr) resolve(reinterpret_cast<void**>(&api_.name), #name);
  SAGUARO_CUDA_DRIVER_FUNCTIONS(SAGUARO_CUDA_DRIVER_RESOLVE)
#undef SAGUARO_CUDA_DRIVER_RESOLVE

  CUresult init = api_.cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE)
    throw std::runtime_error("no CUDA device (cuInit: " + describe(init) + ")");
  if (init == CUDA_ERROR_STUB_LIBRARY)
    throw std::runtime_error("libcuda.so.1 is the CUDA toolkit's stub, not a driver (" +
                             describe(init) + ")");
  if (init != CUDA_SUCCESS) throw std::runtime_error("cuInit(0) failed: " + describe(init));
  if (driver_version > 0 && driver_version < CUDA_VERSION)
    throw std::runtime_error("the NVIDIA driver supports CUDA " + version_text(driver_version) +
                             " only; this build's NVRTC (CUDA " + version_text(CUDA_VERSION) +
                             ") makes code that needs a newer driver");
  int count = 0;
  SAGUARO_CU(*this, cuDeviceGetCount(&count));
  if (count <= 0) throw std::runtime_error("no CUDA device (cuDeviceGetCount: 0)");

  const int ordinal = local_rank() % count;
  SAGUARO_CU(*this, cuDeviceGet(&device_, ordinal));
  info_.ordinal = ordinal;
  info_.driver_version = driver_version;
  char name[256] = {};
  SAGUARO_CU(*this, cuDeviceGetName(name, int(sizeof name) - 1, device_));
  info_.name = name;
  SAGUARO_CU(*this, cuDeviceGetAttribute(&info_.cc_major,
                                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_));
  SAGUARO_CU(*this, cuDeviceGetAttribute(&info_.cc_minor,
                                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_));
  SAGUARO_CU(*this, cuDeviceGetAttribute(&info_.multiprocessors,
                                         CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_));
  SAGUARO_CU(*this, cuDeviceTotalMem(&info_.memory_bytes, device_));

  SAGUARO_CU(*this, cuDevicePrimaryCtxRetain(&context_, device_));
  SAGUARO_CU(*this, cuCtxSetCurrent(context_));
  SAGUARO_CU(*this, cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  set_programmatic_launch(true);
}

CUresult Driver::launch(CUfunction fn, const std::array<unsigned, 3>& grid,
                        const std::array<unsigned, 3>& block, unsigned shared_bytes,
                        CUstream stream, void** params, bool after_previous) const {
  if (!after_previous || !programmatic_launch_)
    return api_.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                               shared_bytes, stream, params, nullptr);
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = block[0];
  config.blockDimY = block[1];
  config.blockDimZ = block[2];
  config.sharedMemBytes = shared_bytes;
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return api_.cuLaunchKernelEx(&config, fn, params, nullptr);
}

void Driver::bind_this_thread() {
  // The primary context is current per thread: bind it once on every thread that uses CUDA.
  thread_local bool bound = false;
  if (bound) return;
  SAGUARO_CU(*this, cuCtxSetCurrent(context_));
  bound = true;
}

Driver* Driver::instance(const std::string** error) {
  static std::string failure;
  static Driver* const driver = []() -> Driver* {
    Driver* d = new Driver(); // kept for the life of the process when it works
    try {
      d->load();
      return d;
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown error while loading the CUDA driver";
    }
    delete d;
    return nullptr;
  }();
  *error = &failure;
  return driver;
}

Driver& Driver::get() {
  const std::string* error = nullptr;
  Driver* d = instance(&error);
  if (d == nullptr) throw std::runtime_error("CUDA is not available: " + *error);
  d->bind_this_thread();
  return *d;
}

bool Driver::usable(std::string* why) {
  try {
    const std::string* error = nullptr;
    Driver* d = instance(&error);
    if (d == nullptr) {
      if (why != nullptr) *why = *error;
      return false;
    }
    d->bind_this_thread();
    return true;
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
  } catch (...) {
    if (why != nullptr) *why = "unknown error";
  }
  return false;
}

} // namespace saguaro::runtime::cuda

// ---- the public face (runtime/cuda.hpp) ---------------------------------------------------------

namespace saguaro::runtime::cuda {

bool built_with_cuda() {
  return true;
}

bool available(std::string* why) {
  return Driver::usable(why);
}

DeviceInfo device_info() {
  return Driver::get().info();
}

} // namespace saguaro::runtime::cuda
