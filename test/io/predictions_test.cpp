// The prediction log: records from timings (CPU roofline, GPU model, no description), the
// TSV and JSON lines written and read back, the old files kept when a write fails, the table
// and the SVG. Not collective: every rank works in its own directory.
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "io/predictions.hpp"
#include "model/device.hpp"
#include "mpi_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using saguaro::io::PredictionRecord;
using saguaro::test::SharedTempDir;
using saguaro::test::world_rank;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string source(const std::string& rel) {
  return std::string(SAGUARO_SOURCE_DIR) + "/" + rel;
}

std::string rank_dir(const SharedTempDir& dir) {
  const std::string d = dir / ("rank" + std::to_string(world_rank()));
  fs::create_directories(d);
  return d;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, sep)) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.push_back("");
  return out;
}

saguaro::calc::Program wave() {
  return saguaro::calc::lower(saguaro::edl::parse_file(source("par/wave.edl")),
                              saguaro::calc::LowerOptions{4});
}

// Two kernels, one with a prediction and one without, names that need escaping, NaNs.
std::vector<PredictionRecord> sample_records() {
  PredictionRecord a;
  a.calculation = "wave_rhs";
  a.kernel = 0;
  a.name = "saguaro_1_wave_rhs_k0";
  a.mapping = "s0 z 32x8x8 A0:r";
  a.backend = "cuda";
  a.device = "NVIDIA H100 80GB HBM3";
  a.ranks = 2;
  a.iteration = 40;
  a.points = 48.0 * 48 * 48;
  a.launches = 160;
  a.predicted_hu = 1.25e-5;
  a.predicted_chemora = 1.5e-5;
  a.launch = 3e-6;
  a.l2 = 2e-6;
  a.dram = 5e-6;
  a.data = 5e-6;
  a.latency = 4e-6;
  a.issue = 1e-6;
  a.limiter = "DRAM";
  a.registers = 40;
  a.spill_bytes = 0;
  a.occupancy = 0.75;
  a.measured_median = 1.1e-5;
  a.measured_min = 1.0e-5;
  a.measured_max = 3.0e-5;
  a.samples = {3.0e-5, 1.1e-5, 1.0e-5};
  a.sample_every = 80;
  a.error_hu = (a.predicted_hu - a.measured_median) / a.measured_median;
  a.error_chemora = (a.predicted_chemora - a.measured_median) / a.measured_median;
  a.share = 0.8;
  PredictionRecord b = a;
  b.calculation = "energy";
  b.name = "odd\tname <&> \"quoted\" é";
  b.mapping = "s0 y 16x16x4";
  b.predicted_hu = b.predicted_chemora = kNaN;
  b.launch = b.l2 = b.dram = b.data = b.latency = b.issue = kNaN;
  b.error_hu = b.error_chemora = kNaN;
  b.occupancy = kNaN;
  b.limiter = "";
  b.registers = -1;
  b.note = "no device description in configs/devices/ is for X";
  b.share = 0.2;
  b.samples = {};
  b.sample_every = 1;
  return {b, a}; // the table sorts by share
}

TEST(PredictionLog, RoundTripThroughJsonLines) {
  SharedTempDir dir("predictions");
  const std::string d = rank_dir(dir);
  const std::vector<PredictionRecord> records = sample_records();
  saguaro::io::write_predictions(d, records);
  const std::vector<PredictionRecord> back = saguaro::io::read_predictions(d);
  ASSERT_EQ(back.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i)
    EXPECT_TRUE(back[i] == records[i]) << "record " << i << " differs after the round trip";
  // The file itself names the same path.
  EXPECT_EQ(saguaro::io::read_predictions(d + "/predictions.jsonl").size(), records.size());

  // The TSV: a comment, the header of every column, one row per record of as many cells.
  std::istringstream tsv(read_text(fs::path(d) / "predictions.tsv"));
  std::string line;
  std::getline(tsv, line);
  EXPECT_EQ(line.rfind("# prediction log: cuda backend, device NVIDIA H100 80GB HBM3", 0), 0u)
      << line;
  std::getline(tsv, line);
  ASSERT_EQ(line.rfind("# ", 0), 0u) << line;
  EXPECT_EQ(split(line.substr(2), '\t'), saguaro::io::prediction_columns());
  int rows = 0;
  while (std::getline(tsv, line)) {
    ++rows;
    EXPECT_EQ(split(line, '\t').size(), saguaro::io::prediction_columns().size()) << line;
  }
  EXPECT_EQ(rows, 2);
  // No temporary files left behind.
  for (const auto& entry : fs::directory_iterator(d))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST(PredictionLog, ReadingSomethingElseFailsWithTheLine) {
  SharedTempDir dir("predictions-bad");
  const std::string d = rank_dir(dir);
  std::ofstream(d + "/predictions.jsonl") << "\n{\"calculation\": \"x\"}\n";
  try {
    saguaro::io::read_predictions(d);
    FAIL() << "no error for a record without the columns";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("predictions.jsonl:2: no 'kernel'"), std::string::npos)
        << e.what();
  }
  std::ofstream(d + "/predictions.jsonl") << "not json\n";
  EXPECT_THROW(saguaro::io::read_predictions(d), std::runtime_error);
  EXPECT_THROW(saguaro::io::read_predictions(d + "/missing"), std::runtime_error);
}

// A write that fails part way (here: the file size limit, as a full disk would) leaves the
// previous log whole.
TEST(PredictionLog, FailedWriteKeepsThePreviousFiles) {
  SharedTempDir dir("predictions-atomic");
  const std::string d = rank_dir(dir);
  std::vector<PredictionRecord> old = sample_records();
  old.resize(1);
  saguaro::io::write_predictions(d, old);
  const std::string old_tsv = read_text(fs::path(d) / "predictions.tsv");
  const std::string old_jsonl = read_text(fs::path(d) / "predictions.jsonl");

  std::vector<PredictionRecord> bigger = sample_records();
  for (int i = 0; i < 20; ++i) bigger.push_back(bigger.back());
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto previous = std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of the signal
  rlimit small = saved;
  small.rlim_cur = 512;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    saguaro::io::write_predictions(d, bigger);
  } catch (const std::runtime_error&) {
    threw = true;
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous);
  EXPECT_TRUE(threw) << "the write past the size limit did not fail";
  EXPECT_EQ(read_text(fs::path(d) / "predictions.tsv"), old_tsv);
  EXPECT_EQ(read_text(fs::path(d) / "predictions.jsonl"), old_jsonl);
  const std::vector<PredictionRecord> back = saguaro::io::read_predictions(d);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(back[0] == old[0]);
  for (const auto& entry : fs::directory_iterator(d))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

// Timings of the CPU backend against a roofline given by hand: predictions, errors, shares,
// and at most ~200 samples kept.
TEST(PredictionLog, RecordsFromCpuTimings) {
  const saguaro::calc::Program program = wave();
  ASSERT_GE(program.calculations.size(), 2u);
  saguaro::model::Device host;
  host.kind = "cpu";
  host.name = "test host";
  host.cores = 4;
  host.dram_bandwidth = 10; // GB/s
  host.fp64_peak = 1;       // GFLOP/s: the wave's right-hand side is compute-bound here
  std::vector<saguaro::runtime::KernelTiming> timings(2);
  for (int c = 0; c < 2; ++c) {
    timings[c].name = program.calculations[c].name;
    timings[c].mapping = "cpu";
    timings[c].calculation = c;
    timings[c].points = 1000;
  }
  for (int i = 0; i < 1000; ++i) timings[0].seconds.push_back(1e-3 * (1 + i % 3));
  timings[0].launches = 1000;
  timings[1].seconds = {2e-3};
  timings[1].launches = 1;
  saguaro::io::PredictionSource src;
  src.backend = "cpu";
  src.host = true;
  src.device = &host;
  src.iteration = 7;
  const std::vector<PredictionRecord> r =
      saguaro::io::prediction_records(program, {}, timings, src);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].calculation, program.calculations[0].name);
  EXPECT_EQ(r[0].device, "test host");
  EXPECT_EQ(r[0].iteration, 7);
  EXPECT_DOUBLE_EQ(r[0].measured_median, 2e-3);
  EXPECT_DOUBLE_EQ(r[0].measured_min, 1e-3);
  EXPECT_DOUBLE_EQ(r[0].measured_max, 3e-3);
  EXPECT_EQ(r[0].sample_every, 5);
  EXPECT_EQ(r[0].samples.size(), 200u);
  EXPECT_NEAR(r[0].share + r[1].share, 1.0, 1e-12);
  EXPECT_NEAR(r[0].share, 1.999 / 2.001, 1e-12); // 334 x 1 ms + 333 x 2 ms + 333 x 3 ms
  for (const PredictionRecord& k : r) {
    EXPECT_GT(k.predicted_hu, 0) << k.name;
    EXPECT_EQ(k.predicted_hu, k.predicted_chemora) << k.name;
    EXPECT_NEAR(k.predicted_hu, std::max(k.dram, k.issue), 1e-15) << k.name;
    EXPECT_TRUE(k.limiter == "DRAM" || k.limiter == "FP64") << k.limiter;
    EXPECT_NEAR(k.error_hu, (k.predicted_hu - k.measured_median) / k.measured_median, 1e-12);
    EXPECT_TRUE(std::isnan(k.launch) && std::isnan(k.latency) && std::isnan(k.occupancy));
    EXPECT_TRUE(k.note.empty()) << k.note;
  }

  // Without a description: the measured side only, and why.
  src.device = nullptr;
  src.note = "no description";
  const std::vector<PredictionRecord> bare =
      saguaro::io::prediction_records(program, {}, timings, src);
  ASSERT_EQ(bare.size(), 2u);
  EXPECT_TRUE(std::isnan(bare[0].predicted_hu) && std::isnan(bare[0].error_hu));
  EXPECT_DOUBLE_EQ(bare[0].measured_median, 2e-3);
  EXPECT_EQ(bare[0].note, "no description");

  // A GPU's description for the CPU backend is refused in the note, not used.
  saguaro::model::Device gpu = host;
  gpu.kind = "gpu";
  src.device = &gpu;
  const std::vector<PredictionRecord> wrong =
      saguaro::io::prediction_records(program, {}, timings, src);
  EXPECT_TRUE(std::isnan(wrong[0].predicted_hu));
  EXPECT_NE(wrong[0].note.find("is for a GPU"), std::string::npos) << wrong[0].note;
}

// A CUDA kernel's timing priced by the GPU model with a shipped description: every part in
// seconds, the total at least the launch overhead.
TEST(PredictionLog, RecordsFromGpuTimings) {
  const saguaro::calc::Program program = wave();
  const saguaro::model::Device h100 =
      saguaro::model::load_device(source("configs/devices/h100.yaml"));
  saguaro::runtime::KernelTiming t;
  t.name = "saguaro_1_k0";
  t.mapping = "s0 z 32x8x8";
  t.calculation = 1;
  t.kernel = 0;
  t.registers = 40;
  t.points = 128.0 * 128 * 128;
  t.launches = 3;
  t.seconds = {2e-5, 2.2e-5, 2.1e-5};
  saguaro::io::PredictionSource src;
  src.backend = "cuda";
  src.device = &h100;
  const std::vector<PredictionRecord> r = saguaro::io::prediction_records(program, {}, {t}, src);
  ASSERT_EQ(r.size(), 1u);
  const PredictionRecord& k = r[0];
  EXPECT_TRUE(k.note.empty()) << k.note;
  EXPECT_GT(k.predicted_hu, k.launch);
  EXPECT_GT(k.predicted_chemora, k.launch);
  EXPECT_GT(k.launch, 0);
  EXPECT_NEAR(k.data, std::max(k.l2, k.dram), 1e-15);
  EXPECT_GE(k.latency, 0);
  EXPECT_GT(k.issue, 0);
  EXPECT_FALSE(k.limiter.empty());
  EXPECT_GT(k.occupancy, 0);
  EXPECT_EQ(k.registers, 40);
  EXPECT_DOUBLE_EQ(k.measured_median, 2.1e-5);
  EXPECT_DOUBLE_EQ(k.share, 1.0);

  // A kernel index the mapping does not have is a note, not a crash.
  t.kernel = 5;
  const std::vector<PredictionRecord> bad = saguaro::io::prediction_records(program, {}, {t}, src);
  EXPECT_TRUE(std::isnan(bad[0].predicted_hu));
  EXPECT_NE(bad[0].note.find("no kernel 5"), std::string::npos) << bad[0].note;
}

TEST(PredictionLog, TableSortedByShare) {
  const std::string table = saguaro::io::prediction_table(sample_records());
  EXPECT_NE(table.find("NVIDIA H100 80GB HBM3 (cuda backend), rank 0's kernels of 2 ranks"),
            std::string::npos)
      << table;
  const auto first = table.find("saguaro_1_wave_rhs_k0"), second = table.find("odd");
  ASSERT_NE(first, std::string::npos) << table;
  ASSERT_NE(second, std::string::npos) << table;
  EXPECT_LT(first, second) << "the kernel with the larger share comes first:\n" << table;
  EXPECT_NE(table.find("12.5 us"), std::string::npos) << table; // predicted
  EXPECT_NE(table.find("+13.6%"), std::string::npos) << table;  // (12.5 - 11) / 11
  EXPECT_NE(table.find("80.0%"), std::string::npos) << table;   // share
  EXPECT_NE(table.find("note: no device description"), std::string::npos) << table;
}

// The SVG's structure: one document, every kernel named (escaped), the points and bars drawn.
TEST(PredictionLog, SvgNamesEveryKernel) {
  const std::string svg = saguaro::io::prediction_svg(sample_records());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_NE(svg.find("NVIDIA H100 80GB HBM3 (cuda backend)"), std::string::npos);
  EXPECT_NE(svg.find("saguaro_1_wave_rhs_k0"), std::string::npos);
  EXPECT_NE(svg.find("odd\tname &lt;&amp;&gt; &quot;quoted&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<&>"), std::string::npos);
  EXPECT_NE(svg.find("<circle"), std::string::npos) << "no point for the predicted kernel";
  EXPECT_NE(svg.find("<polygon"), std::string::npos) << "no 10% band";
  EXPECT_NE(svg.find("within 10%"), std::string::npos);
  EXPECT_NE(svg.find("time per launch ["), std::string::npos);
  // Nothing to plot still makes a document.
  const std::string empty = saguaro::io::prediction_svg({});
  EXPECT_NE(empty.find("</svg>"), std::string::npos);
}

} // namespace
