// The backend registry (runtime/backend_registry.hpp): one list keyed by name, "auto" resolved
// by availability, and backends that describe themselves.
#include "runtime/backend_registry.hpp"

#include "runtime/cuda.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace saguaro::runtime {
namespace {

using ::testing::HasSubstr;

TEST(BackendRegistry, ListsEveryBackendOnceAndFindsThemByName) {
  std::vector<std::string> names;
  for (const BackendEntry& e : backend_registry()) {
    names.push_back(e.name);
    EXPECT_FALSE(e.summary.empty()) << e.name;
    EXPECT_TRUE(e.make) << e.name;
    EXPECT_EQ(find_backend(e.name), &e);
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("interpreter", "cpu", "cuda", "kokkos"));
  EXPECT_EQ(find_backend("sycl"), nullptr);
  EXPECT_EQ(backend_names(), "cuda, cpu, kokkos, interpreter");
}

TEST(BackendRegistry, AutoTakesTheFirstUsableAutomaticBackend) {
  std::vector<std::string> asked;
  auto none = [&](const BackendEntry& e, std::string& why) {
    asked.push_back(e.name);
    why = "not here";
    return false;
  };
  const BackendChoice fallback = choose_backend("auto", none);
  EXPECT_EQ(fallback.name, "cpu");
  EXPECT_TRUE(fallback.error.empty());
  EXPECT_EQ(asked, std::vector<std::string>{"cuda"}); // the cpu backend needs no check

  const BackendChoice gpu =
      choose_backend("auto", [](const BackendEntry&, std::string&) { return true; });
  EXPECT_EQ(gpu.name, "cuda");
}

TEST(BackendRegistry, ANamedBackendThatCannotBeUsedSaysWhy) {
  const BackendChoice c = choose_backend("cuda", [](const BackendEntry&, std::string& why) {
    why = "rank 1: no CUDA device";
    return false;
  });
  EXPECT_EQ(c.name, "cuda");
  EXPECT_EQ(c.error, "no GPU can be used: rank 1: no CUDA device");
  EXPECT_TRUE(choose_backend("interpreter", nullptr).error.empty());
  EXPECT_THAT(choose_backend("sycl", nullptr).error,
              HasSubstr("unknown backend 'sycl' (known: cuda, cpu, kokkos, interpreter)"));
  EXPECT_THROW(make_backend("sycl", {}), std::invalid_argument);
}

TEST(BackendRegistry, HostBackendsDescribeThemselves) {
  const BackendDescription cpu = make_backend("cpu", {})->description();
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_EQ(cpu.hardware, Hardware::host);
  EXPECT_TRUE(cpu.device.empty());
  EXPECT_TRUE(cpu.takes_mappings);
  EXPECT_FALSE(cpu.mapped_by_model);
  EXPECT_EQ(cpu.model, DeviceModel::host_roofline);
  EXPECT_EQ(cpu.clock, KernelClock::host_clock);
  EXPECT_EQ(cpu.array_space, "host");
  EXPECT_EQ(to_string(cpu), "cpu: host CPU, takes mappings (the default partition), predicted with "
                            "the host's roofline, kernels timed by the host clock, arrays in host");

  const BackendDescription interpreter = make_backend("interpreter", {})->description();
  EXPECT_EQ(interpreter.name, "interpreter");
  EXPECT_FALSE(interpreter.takes_mappings);
  EXPECT_EQ(interpreter.model, DeviceModel::none);
  EXPECT_EQ(interpreter.clock, KernelClock::none);
}

TEST(BackendRegistry, TheCudaBackendDescribesItsGpu) {
  std::string why;
  if (!cuda::available(&why)) GTEST_SKIP() << "no GPU can be used here: " << why;
  const BackendDescription d = make_backend("cuda", {})->description();
  const cuda::DeviceInfo info = cuda::device_info();
  EXPECT_EQ(d.hardware, Hardware::gpu);
  EXPECT_EQ(d.device, info.name);
  // Programmatic dependent launch where the GPU has it (sm_90 on), unless switched off.
  const std::string detail = info.name + ", " + info.arch();
  EXPECT_EQ(d.device_detail,
            detail + (info.cc_major >= 9 ? ", programmatic dependent launch" : std::string()));
  BackendOptions off;
  off.programmatic_launch = false;
  EXPECT_EQ(make_backend("cuda", off)->description().device_detail, detail);
  EXPECT_TRUE(d.takes_mappings);
  EXPECT_TRUE(d.mapped_by_model);
  EXPECT_EQ(d.model, DeviceModel::gpu_description);
  EXPECT_EQ(d.clock, KernelClock::gpu_events);
  EXPECT_EQ(d.array_space, "cuda");
}

} // namespace
} // namespace saguaro::runtime
