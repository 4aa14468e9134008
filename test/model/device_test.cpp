// Device descriptions: every file in configs/devices reads, every quantity has its source,
// a description survives format -> parse, and bad files say where and what.
#include "model/device.hpp"

#include <gtest/gtest.h>

#include <filesystem>

using namespace saguaro;

namespace {

std::string devices_dir() {
  return std::string(SAGUARO_SOURCE_DIR) + "/configs/devices";
}

// Expects parse_device(text) to fail with a message containing each of `parts`.
void expect_error(const std::string& text, std::initializer_list<std::string> parts) {
  try {
    model::parse_device(text, "bad.yaml");
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const model::DeviceError& e) {
    const std::string what = e.what();
    for (const std::string& part : parts)
      EXPECT_NE(what.find(part), std::string::npos) << "missing '" << part << "' in:\n" << what;
  }
}

} // namespace

TEST(Device, EveryDescriptionReadsWithSources) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(devices_dir())) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const model::Device d = model::load_device(entry.path().string());
    EXPECT_FALSE(d.name.empty()) << entry.path();
    for (const model::Quantity& q : model::quantities()) {
      if (q.optional || q.gpu != (d.kind == "gpu")) continue;
      ASSERT_TRUE(d.sources.count(q.name)) << entry.path() << ": " << q.name;
      EXPECT_FALSE(d.sources.at(q.name).empty()) << entry.path() << ": " << q.name;
    }
    if (d.kind == "gpu") {
      EXPECT_GT(d.W_GM(), 0) << entry.path();
      EXPECT_GT(d.W_L2(), d.W_GM()) << entry.path();
    }
  }
  EXPECT_GE(files, 4); // k20xm, h100, h200, a100
}

TEST(Device, K20xmIsTableIII) {
  const model::Device d = model::load_device(devices_dir() + "/k20xm.yaml");
  // Table IIIa in the paper's units.
  EXPECT_NEAR(d.W_L2(), 3.96, 0.005);
  EXPECT_NEAR(d.W_GM(), 1.92, 0.005);
  EXPECT_DOUBLE_EQ(d.K_reg(), 32768);
  EXPECT_DOUBLE_EQ(d.K_smem(), 6144);
  EXPECT_DOUBLE_EQ(d.LS_c(), 16);
  EXPECT_DOUBLE_EQ(d.LS_L2(), 4);
  EXPECT_DOUBLE_EQ(d.dram_latency, 305);
  EXPECT_DOUBLE_EQ(d.barrier_latency, 483);
}

TEST(Device, FormatParsesBack) {
  for (const char* name : {"k20xm.yaml", "h100.yaml"}) {
    const model::Device d = model::load_device(devices_dir() + "/" + name);
    const model::Device again = model::parse_device(model::format_device(d), "again.yaml");
    EXPECT_EQ(again.name, d.name);
    EXPECT_EQ(again.arch, d.arch);
    EXPECT_EQ(again.match, d.match);
    EXPECT_EQ(again.sources, d.sources);
    for (const model::Quantity& q : model::quantities())
      EXPECT_NEAR(again.*(q.member), d.*(q.member), 1e-5 * std::abs(d.*(q.member))) << q.name;
  }
}

TEST(Device, InterconnectIsOptionalAndRoundTrips) {
  // A description without it reads, the interconnect not described (0), and is written
  // without it.
  // (a100.yaml has none: no machine of several A100s was calibrated.)
  const model::Device a100 = model::load_device(devices_dir() + "/a100.yaml");
  EXPECT_EQ(a100.interconnect_latency, 0);
  EXPECT_EQ(a100.interconnect_bandwidth, 0);
  EXPECT_FALSE(a100.sources.count("interconnect_latency"));
  EXPECT_EQ(model::format_device(a100).find("interconnect"), std::string::npos);
  // h100.yaml has the H100 machine's (CUDA IPC between two of its GPUs).
  const model::Device h100 = model::load_device(devices_dir() + "/h100.yaml");
  EXPECT_NEAR(h100.interconnect_latency, 24.2, 0.1);
  EXPECT_NEAR(h100.interconnect_bandwidth, 275, 1);

  // Given, it is read with its unit and source, written, and read back.
  model::Device d = a100;
  d.interconnect_latency = 23.5;
  d.interconnect_bandwidth = 11.25;
  d.sources["interconnect_latency"] = "calibrated today, \"quoted\"";
  d.sources["interconnect_bandwidth"] = "calibrated today";
  const std::string text = model::format_device(d);
  EXPECT_NE(text.find("  interconnect_latency: {value: 23.5, unit: us, source: "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  interconnect_bandwidth: {value: 11.25, unit: GB/s, source: "),
            std::string::npos)
      << text;
  const model::Device back = model::parse_device(text, "again.yaml");
  EXPECT_EQ(back.interconnect_latency, 23.5);
  EXPECT_EQ(back.interconnect_bandwidth, 11.25);
  EXPECT_EQ(back.sources, d.sources);

  // A CPU description may carry it too.
  const std::string cpu = "name: host\nkind: cpu\nquantities:\n"
                          "  cores: {value: 2, unit: count, source: s}\n"
                          "  fp64_peak: {value: 10, unit: GFLOP/s, source: s}\n"
                          "  dram_bandwidth: {value: 10, unit: GB/s, source: s}\n";
  EXPECT_EQ(model::parse_device(cpu).interconnect_bandwidth, 0);
  const model::Device host =
      model::parse_device(cpu + "  interconnect_bandwidth: {value: 5, unit: GB/s, source: s}\n");
  EXPECT_EQ(host.interconnect_bandwidth, 5);
  EXPECT_NE(model::format_device(host).find("interconnect_bandwidth"), std::string::npos);

  // Checked like every quantity.
  const std::string head = "name: x\nkind: cpu\nquantities:\n";
  expect_error(head + "  interconnect_latency: {value: 3, unit: ms, source: s}\n",
               {"bad.yaml:4", "'interconnect_latency' is in us, not ms"});
  expect_error(head + "  interconnect_bandwidth: {value: 3, unit: GB/s}\n",
               {"bad.yaml:4", "needs value, unit and source"});
  expect_error(head + "  interconect_latency: {value: 3, unit: us, source: s}\n",
               {"did you mean 'interconnect_latency'"});
}

TEST(Device, FindsTheDescriptionOfADriverName) {
  EXPECT_EQ(
      std::filesystem::path(model::find_device_description("NVIDIA H100 80GB HBM3")).filename(),
      "h100.yaml");
  EXPECT_EQ(std::filesystem::path(model::find_device_description("NVIDIA H100 PCIe")).filename(),
            "h100.yaml");
  EXPECT_EQ(model::find_device_description("Some Other GPU"), "");
}

TEST(Device, BadDescriptionsSayWhereAndWhat) {
  const std::string head = "name: x\nkind: gpu\nquantities:\n";
  expect_error(head + "  sm_cuont: {value: 1, unit: count, source: s}\n",
               {"bad.yaml:4:3", "unknown quantity 'sm_cuont'", "did you mean 'sm_count'", "^"});
  expect_error(head + "  sm_count: {value: 1, unit: GB/s, source: s}\n",
               {"bad.yaml:4", "'sm_count' is in count, not GB/s"});
  expect_error(head + "  sm_count: {value: 1, unit: count}\n",
               {"bad.yaml:4", "needs value, unit and source"});
  expect_error(head + "  sm_count: {value: many, unit: count, source: s}\n",
               {"bad.yaml:4", "needs a number, not 'many'"});
  expect_error(head + "  sm_count: {value: 1, unit: count, source: s}\n",
               {"a gpu description needs", "clock_ghz"});
  expect_error("name: x\nkind: tpu\n", {"bad.yaml:2:7", "kind is \"gpu\" or \"cpu\""});
  expect_error("name: x\nquantites: {}\n", {"did you mean 'quantities'"});
  expect_error("name: [x\n", {"bad.yaml:", "not valid YAML"});
  EXPECT_THROW(model::load_device("/no/such/file.yaml"), model::DeviceError);
}
