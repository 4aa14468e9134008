// `saguaro calibrate` on a GPU (calibrate/calibrate.hpp): a quick calibration gives positive,
// plausibly ordered values with sources, keeps what a base description supplies, and gives a
// description that reads back. Skipped, saying why, where no GPU can be used; there it must
// refuse with a reason instead.
#include <cmath>
#include <filesystem>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "model/device.hpp"
#include "calibrate/calibrate.hpp"
#include "runtime/cuda.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime_support.hpp"

namespace saguaro::test {
namespace {

namespace cuda = runtime::cuda;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string why_no_gpu() {
  std::string why;
  if (cuda::available(&why)) return "";
  return why.empty() ? "no reason given" : why;
}

TEST(Calibrate, TodayIsAnIsoDate) {
  EXPECT_TRUE(
      std::regex_match(calibrate::today(), std::regex(R"(20[0-9]{2}-[01][0-9]-[0-3][0-9])")))
      << calibrate::today();
}

// The interconnect's line t = latency + bytes / bandwidth (saguaro calibrate --interconnect).
std::vector<double> message_sizes() {
  std::vector<double> bytes;
  for (double b = 8192; b <= 64.0 * 1024 * 1024; b *= 2) bytes.push_back(b);
  return bytes;
}

TEST(Calibrate, InterconnectFitRecoversAnExactLine) {
  const std::vector<double> bytes = message_sizes();
  std::vector<double> seconds;
  for (double b : bytes) seconds.push_back(20e-6 + b / 10e9); // 20 us, 10 GB/s
  const calibrate::LinearFit fit = calibrate::fit_latency_bandwidth(bytes, seconds);
  EXPECT_NEAR(fit.latency_s, 20e-6, 1e-9 * 20e-6);
  EXPECT_NEAR(fit.seconds_per_byte, 1e-10, 1e-9 * 1e-10);
  // Two sizes are enough.
  const calibrate::LinearFit two =
      calibrate::fit_latency_bandwidth({1e3, 1e6}, {2e-6 + 1e-7, 2e-6 + 1e-4});
  EXPECT_NEAR(two.latency_s, 2e-6, 1e-12);
  EXPECT_NEAR(two.seconds_per_byte, 1e-10, 1e-18);
}

TEST(Calibrate, InterconnectFitToleratesNoise) {
  // 5% multiplicative noise (a fixed seed), three repeats of each size: the latency, which
  // only the small messages show, still within 10%, the bandwidth within 5%.
  std::mt19937 random(2026);
  std::uniform_real_distribution<double> noise(-0.05, 0.05);
  std::vector<double> bytes, seconds;
  for (double b : message_sizes())
    for (int r = 0; r < 3; ++r) {
      bytes.push_back(b);
      seconds.push_back((15e-6 + b / 25e9) * (1 + noise(random)));
    }
  const calibrate::LinearFit fit = calibrate::fit_latency_bandwidth(bytes, seconds);
  EXPECT_NEAR(fit.latency_s, 15e-6, 0.10 * 15e-6);
  EXPECT_NEAR(1 / fit.seconds_per_byte, 25e9, 0.05 * 25e9);
}

TEST(Calibrate, InterconnectFitClampsANegativeLatency) {
  // A line through the origin less 1 us: the latency is 0 and the slope refitted through the
  // origin, still near 1 ns per byte.
  std::vector<double> bytes = message_sizes(), seconds;
  for (double b : bytes) seconds.push_back(b * 1e-9 - 1e-6);
  const calibrate::LinearFit fit = calibrate::fit_latency_bandwidth(bytes, seconds);
  EXPECT_EQ(fit.latency_s, 0);
  EXPECT_NEAR(fit.seconds_per_byte, 1e-9, 0.05e-9);
}

TEST(Calibrate, InterconnectFitRefusesWhatIsNoLine) {
  auto refuses = [](const std::vector<double>& bytes, const std::vector<double>& seconds,
                    const std::string& why) {
    try {
      calibrate::fit_latency_bandwidth(bytes, seconds);
      ADD_FAILURE() << "accepted; expected: " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(why));
    }
  };
  refuses({}, {}, "at least 2 distinct message sizes");
  refuses({8192, 8192, 8192}, {1e-5, 2e-5, 3e-5}, "at least 2 distinct message sizes");
  refuses({8192, 16384}, {1e-5}, "2 sizes but 1 times");
  refuses({8192, 16384}, {1e-5, 0}, "not positive");
  refuses({-1, 16384}, {1e-5, 2e-5}, "negative");
  refuses({8192, 16384, 32768}, {3e-5, 2e-5, 1e-5}, "do not grow with the message size");
}

TEST(Calibrate, WithoutAGpuRefusesSayingWhy) {
  const std::string why = why_no_gpu();
  if (why.empty()) GTEST_SKIP() << "a GPU is here";
  try {
    calibrate::calibrate_gpu(nullptr, calibrate::CalibrationOptions{});
    FAIL() << "calibrate_gpu did not throw without a GPU";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no GPU can be calibrated"));
  }
}

TEST(Calibrate, QuickGpuCalibrationIsPlausibleAndReadsBack) {
  const std::string why = why_no_gpu();
  if (!why.empty()) GTEST_SKIP() << "no GPU can be used here: " << why;

  // A base that supplies two of the unmeasured quantities; the rest take the defaults.
  model::Device base;
  base.name = "a base description";
  base.beta = 0.5;
  base.sources["beta"] = "test base";
  base.parallel_global = 7;
  base.sources["parallel_global"] = "test base";
  base.dram_bandwidth = 1; // measured: the base's value must not survive
  base.sources["dram_bandwidth"] = "test base";

  calibrate::CalibrationOptions options;
  options.quick = true;
  options.command = "saguaro calibrate --quick (test)";
  options.cache_dir = SuiteCache::dir();
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  const model::Device d = calibrate::calibrate_gpu(&base, options);
  for (const std::string& line : progress) std::printf("  %s\n", line.c_str());

  const cuda::DeviceInfo info = cuda::device_info();
  EXPECT_EQ(d.kind, "gpu");
  EXPECT_EQ(d.name, info.name);
  EXPECT_EQ(d.arch, info.arch());
  EXPECT_EQ(d.sm_count, info.multiprocessors);

  // Every GPU quantity is positive (but the flag, which may be 0) and has a source.
  for (const model::Quantity& q : model::quantities()) {
    if (!q.gpu) continue;
    ASSERT_TRUE(d.sources.count(q.name)) << q.name << " has no source";
    if (std::string(q.name) != "global_loads_cached_in_l1") {
      EXPECT_GT(d.*(q.member), 0) << q.name;
    }
    EXPECT_TRUE(std::isfinite(d.*(q.member))) << q.name;
  }

  // Measured values say so; attributes name the attribute; the base's values are kept.
  EXPECT_THAT(d.sources.at("dram_bandwidth"),
              StartsWith("calibrated " + calibrate::today() + " " + info.name +
                         " saguaro calibrate --quick (test): "));
  EXPECT_GT(d.dram_bandwidth, 10.0);
  EXPECT_THAT(d.sources.at("l2_size"), StartsWith("CUDA driver attribute CU_DEVICE_ATTRIBUTE_"));
  EXPECT_EQ(d.beta, 0.5);
  EXPECT_EQ(d.sources.at("beta"), "test base");
  EXPECT_EQ(d.parallel_global, 7);
  EXPECT_EQ(d.sources.at("parallel_global"), "test base");
  EXPECT_THAT(d.sources.at("parallel_shared"), HasSubstr("default (Hu et al. Table IIIb)"));
  EXPECT_GE(progress.size(), 15u);

  // The memory hierarchy in its order: farther is slower to reach and narrower.
  EXPECT_GT(d.dram_latency, d.l2_latency);
  EXPECT_GT(d.l2_latency, d.readonly_latency);
  EXPECT_GT(d.l2_bandwidth, d.dram_bandwidth);
  // Sanity bounds any GPU of the last decade meets.
  EXPECT_GT(d.clock_ghz, 0.3);
  EXPECT_LT(d.clock_ghz, 4.0);
  EXPECT_LT(d.launch_overhead, 100.0);
  EXPECT_LT(d.fp_latency, 100.0);
  EXPECT_LE(d.fp64_rate, 2 * 64.0); // at most 64 FP64 lanes per SM on any GPU so far

  // Written (format_device, write_atomically) and read back (load_device): the same
  // description, values to the 6 digits written.
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("saguaro-calibrate-" + std::to_string(getpid()) + ".yaml");
  runtime::write_atomically(file, model::format_device(d), "test");
  const model::Device back = model::load_device(file.string());
  std::filesystem::remove(file);
  EXPECT_EQ(back.name, d.name);
  EXPECT_EQ(back.kind, d.kind);
  EXPECT_EQ(back.arch, d.arch);
  EXPECT_EQ(back.sources, d.sources);
  for (const model::Quantity& q : model::quantities()) {
    if (!q.gpu) continue;
    EXPECT_NEAR(back.*(q.member), d.*(q.member), 1e-5 * std::abs(d.*(q.member))) << q.name;
  }
}

} // namespace
} // namespace saguaro::test
