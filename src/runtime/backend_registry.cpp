#include "runtime/backend_registry.hpp"

#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kokkos.hpp"

#include <stdexcept>

namespace saguaro::runtime {

const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> kBackends = {
      {"cuda", "generated CUDA, compiled by NVRTC, on this rank's GPU", true,
       [](std::string* why) { return cuda::available(why); }, "no GPU can be used",
       make_cuda_backend, Hardware::gpu},
      {"cpu", "generated C++, compiled by the host compiler, on the host's cores", true, nullptr,
       "it cannot be used", [](const BackendOptions& o) { return make_cpu_backend(o); },
       Hardware::host},
      {"kokkos",
       "generated Kokkos C++, compiled by Kokkos's compiler, on Kokkos's default execution space",
       false, [](std::string* why) { return kokkos::available(why); }, "Kokkos cannot be used",
       make_kokkos_backend, Hardware::host},
      {"interpreter", "the reference interpreter, point by point (slow, for testing)", false,
       nullptr, "it cannot be used",
       [](const BackendOptions&) { return make_interpreter_backend(); }, Hardware::host},
  };
  return kBackends;
}

const BackendEntry* find_backend(const std::string& name) {
  for (const BackendEntry& e : backend_registry())
    if (e.name == name) return &e;
  return nullptr;
}

std::string backend_names() {
  std::string out;
  for (const BackendEntry& e : backend_registry()) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

BackendChoice
choose_backend(const std::string& word,
               const std::function<bool(const BackendEntry&, std::string& why)>& usable) {
  auto can_use = [&](const BackendEntry& e, std::string& why) {
    return !e.available || usable(e, why);
  };
  if (word == "auto") {
    for (const BackendEntry& e : backend_registry()) {
      std::string why;
      if (e.automatic && can_use(e, why)) return {e.name, ""};
    }
    return {word, "no backend can be used"};
  }
  const BackendEntry* e = find_backend(word);
  if (e == nullptr)
    return {word, "unknown backend '" + word + "' (known: " + backend_names() + ")"};
  std::string why;
  if (!can_use(*e, why)) return {word, e->unavailable + ": " + why};
  return {word, ""};
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options) {
  const BackendEntry* e = find_backend(name);
  if (e == nullptr)
    throw std::invalid_argument("unknown backend '" + name + "' (known: " + backend_names() + ")");
  return e->make(options);
}

std::string to_string(const BackendDescription& d) {
  std::string out = d.name + ": ";
  out += d.hardware == Hardware::gpu ? "GPU" : "host CPU";
  if (!d.device_detail.empty()) out += " (" + d.device_detail + ")";
  out += d.takes_mappings ? (d.mapped_by_model ? ", takes mappings (chosen by the model)"
                                               : ", takes mappings (the default partition)")
                          : ", ignores mappings";
  switch (d.model) {
  case DeviceModel::none: out += ", not predicted"; break;
  case DeviceModel::host_roofline: out += ", predicted with the host's roofline"; break;
  case DeviceModel::gpu_description: out += ", predicted with a GPU description"; break;
  }
  switch (d.clock) {
  case KernelClock::none: out += ", kernels not timed"; break;
  case KernelClock::host_clock: out += ", kernels timed by the host clock"; break;
  case KernelClock::gpu_events: out += ", kernels timed by GPU events"; break;
  }
  return out + ", arrays in " + d.array_space;
}

} // namespace saguaro::runtime
