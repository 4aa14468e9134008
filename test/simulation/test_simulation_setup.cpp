// Whole simulations through the host, on whatever number of ranks mpirun started (ctest runs
// this suite at 1, 2, 3 and 4): setup from the .par file (lowering order, which error comes
// first), the backend without a GPU, the prediction log and the start-up times in the banner.
#include "simulation_support.hpp"

#include "io/predictions.hpp"
#include "runtime/cuda.hpp"
#include "support/diagnostics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace saguaro::test {
namespace {

// Setup lowers once, after declaring the thorn's parameters: the program has the .par's
// finite-difference order (order 2 reaches one point, order 8 four).
TEST(Setup, LowersAtTheParFilesOrder) {
  SharedTempDir dir("setup_order");
  for (int order : {2, 8}) {
    const std::string par = dir / ("wave" + std::to_string(order) + ".par");
    write_file(par, wave_par(8, order, {{"IO::out_dir", quoted(dir / "out")}}));
    const host::Setup setup = host::load_setup(par);
    EXPECT_EQ(setup.program.fd_order, order);
    int radius = 0;
    for (const calc::Calculation& c : setup.program.calculations)
      radius = std::max(radius, c.radius[0]);
    EXPECT_EQ(radius, order / 2);
  }
}

// An error in the EDL file's calculations is reported before one in the .par, as when setup
// lowered the whole file before reading the .par.
TEST(Setup, EdlErrorBeforeParError) {
  SharedTempDir dir("setup_errors");
  const std::string edl = dir / "bad.edl";
  write_file(edl, "begin thorn WaveDemo\n"
                  "begin variables\nphi\nend variables\n"
                  "begin calculation c\nphi = nope\nend calculation\n"
                  "end thorn\n");
  const std::string par = dir / "bad.par";
  write_file(
      par,
      wave_par(8, 4, {{"Saguaro::equations", quoted(edl)}, {"CoordBase::no_such_parameter", "1"}}));
  std::string message;
  try {
    host::load_setup(par);
  } catch (const edl::EdlError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("bad.edl:6:7: error: undeclared name 'nope'"), std::string::npos)
      << message;
  // With a good EDL file, the .par's error (in a file of its own: other ranks may still be
  // reading the first).
  const std::string good = dir / "good.par";
  write_file(good, wave_par(8, 4, {{"CoordBase::no_such_parameter", "1"}}));
  message.clear();
  try {
    host::load_setup(good);
  } catch (const edl::EdlError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("no_such_parameter"), std::string::npos) << message;
}

// Saguaro::backend = "cuda" where no GPU can be used: `saguaro check` accepts the file (it
// needs no GPU); making the simulation fails with a par error at the setting that says why
// and suggests "auto" or "cpu". Without a GPU "auto" runs on the CPU.
TEST(Backend, CudaWithoutAGpuIsAParError) {
  std::string why;
  if (runtime::cuda::available(&why)) GTEST_SKIP() << "a GPU can be used here";
  SharedTempDir dir("cuda");
  const std::string par = dir / "cuda.par";
  const std::string text =
      wave_par(8, 4, {{"Saguaro::backend", quoted("cuda")}, {"IO::out_dir", quoted(dir / "out")}});
  write_file(par, text);
  int line = 1;
  for (std::size_t at = 0; at < text.find("Saguaro::backend"); ++at) line += text[at] == '\n';

  host::Setup setup = host::load_setup(par); // does not throw
  std::ostringstream log;
  std::string message;
  try {
    host::Simulation sim(std::move(setup), MPI_COMM_WORLD, log);
  } catch (const support::InputError& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "no error for Saguaro::backend = \"cuda\" without a GPU";
  EXPECT_NE(message.find("cuda.par:" + std::to_string(line) + ":"), std::string::npos) << message;
  EXPECT_NE(message.find("error:"), std::string::npos) << message;
  EXPECT_NE(message.find("no GPU can be used"), std::string::npos) << message;
  EXPECT_NE(message.find(why), std::string::npos) << message;
  EXPECT_NE(message.find("\"auto\""), std::string::npos) << message;
  EXPECT_NE(message.find("\"cpu\""), std::string::npos) << message;
  EXPECT_NE(message.find('^'), std::string::npos) << message;

  // "auto" falls back to the generated C++.
  write_file(par, wave_par(8, 4,
                           {{"Saguaro::backend", quoted("auto")},
                            {"Cactus::terminate", quoted("iteration")},
                            {"Cactus::cctk_itlast", "2"},
                            {"IO::out_dir", quoted(dir / "out")}}));
  std::ostringstream run_log;
  host::Simulation sim(host::load_setup(par), MPI_COMM_WORLD, run_log);
  sim.run();
  EXPECT_EQ(sim.iteration(), 2);
  if (world_rank() == 0) {
    EXPECT_NE(run_log.str().find("backend cpu,"), std::string::npos) << run_log.str();
  }
}

// The prediction log of a CPU run: one record per calculation that ran (the analysis
// calculation too, since IO::out_every = 1), each measured and predicted by the host's
// roofline measured at start; the table closes the run's log. `saguaro report` on such a
// directory is the CLI test cli.report_of_a_run.
TEST(PredictionLog, CpuRunLogsEveryCalculationThatRan) {
  SharedTempDir dir("predictions");
  write_file(dir / "p.par", wave_par(8, 4,
                                     {{"Cactus::terminate", quoted("iteration")},
                                      {"Cactus::cctk_itlast", "3"},
                                      {"IO::out_every", "1"},
                                      // every step's exchanges measured (default: every 8th)
                                      {"Saguaro::device_timer_every", "1"},
                                      {"IO::out_dir", quoted(dir / "out")}}));
  std::ostringstream log;
  {
    host::Simulation sim(host::load_setup(dir / "p.par"), MPI_COMM_WORLD, log);
    sim.run();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return; // rank 0 writes the log
  const std::vector<io::PredictionRecord> records = io::read_predictions(dir / "out");
  std::set<std::string> names;
  const bool exchanging = world_size() > 1; // z is split: messages, wave_rhs split around them
  for (const io::PredictionRecord& r : records) {
    names.insert(r.calculation);
    EXPECT_EQ(r.backend, "cpu");
    if (r.calculation == "ghost exchange") {
      // One exchange of the evolved variables per substep; no interconnect description for
      // the CPU: measured only, saying why.
      EXPECT_EQ(r.launches, 12);
      EXPECT_GT(r.measured_median, 0);
      EXPECT_TRUE(std::isnan(r.predicted_hu));
      EXPECT_NE(r.note.find("calibrate --interconnect"), std::string::npos) << r.note;
      EXPECT_NE(r.mapping.find("2 evolved variables"), std::string::npos) << r.mapping;
      continue;
    }
    EXPECT_EQ(r.mapping, "cpu");
    EXPECT_EQ(r.ranks, world_size());
    EXPECT_EQ(r.iteration, 3);
    EXPECT_GT(r.launches, 0) << r.name;
    EXPECT_GT(r.points, 0) << r.name;
    EXPECT_GT(r.measured_median, 0) << r.name;
    EXPECT_GT(r.predicted_hu, 0) << r.name;
    EXPECT_TRUE(std::isfinite(r.error_hu)) << r.name;
    EXPECT_TRUE(r.note.empty()) << r.note;
  }
  // wave_rhs runs in its folded forms (Saguaro::fold_updates): one per stage of RK4, whose
  // stages combine different registers.
  std::set<std::string> expected{"wave_init",          "wave_rhs (stage 1)", "wave_rhs (stage 2)",
                                 "wave_rhs (stage 3)", "wave_rhs (stage 4)", "wave_energy"};
  if (exchanging) expected.insert("ghost exchange");
  EXPECT_EQ(names, expected);
  // 8 points split along z leave a patch too thin for an interior 2 points from both z
  // faces: wave_rhs runs whole (ExchangeOverlap tests the split).
  const std::size_t rows_expected = exchanging ? 7u : 6u;
  EXPECT_EQ(records.size(), rows_expected);
  for (const io::PredictionRecord& r : records)
    if (r.calculation.rfind("wave_rhs", 0) == 0) // 3 steps of RK4
      EXPECT_EQ(r.launches, 3) << r.calculation;

  // The TSV has the same rows.
  std::istringstream tsv(read_file(dir / "out/predictions.tsv"));
  std::string line;
  int rows = 0;
  while (std::getline(tsv, line)) rows += !line.empty() && line[0] != '#';
  EXPECT_EQ(rows, int(rows_expected));

  const std::string text = log.str();
  EXPECT_NE(text.find(", measured at start: "), std::string::npos) << text;
  EXPECT_NE(text.find("Prediction log: "), std::string::npos) << text;
  if (world_size() > 1) {
    EXPECT_NE(text.find("rank 0's kernels of " + std::to_string(world_size()) + " ranks"),
              std::string::npos)
        << text;
  }
}

// The banner's start-up line: where the time before the first step went, its parts inside the
// whole (a CPU run has no empirical finish, so the line names none).
TEST(Startup, PartsAddUpToAtMostTheWholeAndTheBannerSaysSo) {
  SharedTempDir dir("startup");
  write_file(dir / "p.par", wave_par(8, 4,
                                     {{"Cactus::terminate", quoted("iteration")},
                                      {"Cactus::cctk_itlast", "2"},
                                      {"IO::out_dir", quoted(dir / "out")}}));
  std::ostringstream log;
  host::Simulation sim(host::load_setup(dir / "p.par"), MPI_COMM_WORLD, log);
  sim.run();
  const host::Simulation::StartupTimes& t = sim.startup();
  EXPECT_EQ(t.candidate_programs, 0);
  EXPECT_EQ(t.finish_timing, 0);
  EXPECT_EQ(t.finish_recompile, 0);
  for (double part : {t.mapping, t.compile, t.initial_data}) EXPECT_GE(part, 0);
  EXPECT_GT(t.compile, 0); // the generated C++ is compiled (or read from the cache)
  EXPECT_GE(t.total, t.mapping + t.compile + t.initial_data);
  if (world_rank() != 0) return;
  const std::string text = log.str();
  const std::size_t at = text.find("  start-up ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, text.find('\n', at) - at);
  EXPECT_EQ(line, "  " + t.line());
  EXPECT_NE(line.find(" s before the first step: mapping "), std::string::npos) << line;
  EXPECT_EQ(line.find("empirical finish"), std::string::npos) << line;
  EXPECT_LT(at, text.find("dt = ")) << "printed before the evolution starts";

  host::Simulation::StartupTimes finish;
  finish.total = 20.5;
  finish.mapping = 2.5;
  finish.compile = 11.25;
  finish.candidate_programs = 9;
  finish.initial_data = 0.5;
  finish.finish_timing = 2;
  finish.finish_recompile = 4.25;
  EXPECT_EQ(finish.line(), "start-up 20.50 s before the first step: mapping 2.50 s, compile 11.25 "
                           "s (with the empirical finish's 9 candidate programs), initial data "
                           "0.50 s, empirical finish 6.25 s (timing 2.00, the verdicts' compile "
                           "4.25)");
}

// Saguaro::device_description names a file relative to the .par file: its roofline is the
// one used. A missing file and a GPU's description for the CPU backend are .par errors; the
// interpreter and prediction_log = no write no log.
TEST(PredictionLog, DeviceDescriptionFromTheParFile) {
  SharedTempDir dir("predictions-device");
  write_file(dir / "host.yaml", "name: \"test host\"\n"
                                "kind: cpu\n"
                                "quantities:\n"
                                "  cores: {value: 1, unit: count, source: \"test\"}\n"
                                "  fp64_peak: {value: 1, unit: GFLOP/s, source: \"test\"}\n"
                                "  dram_bandwidth: {value: 1000, unit: GB/s, source: \"test\"}\n");
  const Settings short_run = {{"Cactus::terminate", quoted("iteration")},
                              {"Cactus::cctk_itlast", "1"},
                              {"IO::out_dir", quoted(dir / "out")}};
  auto with = [&](Settings more) {
    for (const auto& [k, v] : short_run) more.emplace(k, v);
    return wave_par(8, 4, more);
  };
  write_file(dir / "p.par", with({{"Saguaro::device_description", quoted("host.yaml")}}));
  std::ostringstream log;
  {
    host::Simulation sim(host::load_setup(dir / "p.par"), MPI_COMM_WORLD, log);
    sim.run();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    EXPECT_NE(log.str().find("prediction log: roofline of test host, from " + dir / "host.yaml"),
              std::string::npos)
        << log.str();
    const std::vector<io::PredictionRecord> records = io::read_predictions(dir / "out");
    ASSERT_FALSE(records.empty());
    for (const io::PredictionRecord& r : records) {
      EXPECT_EQ(r.device, "test host");
      if (r.calculation == "ghost exchange") continue; // the host describes no interconnect
      // 1 GFLOP/s against 1000 GB/s: every calculation with flops is compute-bound.
      EXPECT_EQ(r.limiter, "FP64") << r.name;
      EXPECT_NEAR(r.predicted_hu, r.issue, 1e-12 * r.issue) << r.name;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  // Each case its own file: a rank that has thrown must not rewrite one another still reads.
  auto par_error = [&](const std::string& name, const Settings& settings) {
    write_file(dir / name, with(settings));
    std::ostringstream quiet;
    try {
      host::Simulation sim(host::load_setup(dir / name), MPI_COMM_WORLD, quiet);
    } catch (const edl::EdlError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string missing =
      par_error("missing.par", {{"Saguaro::device_description", quoted("nowhere.yaml")}});
  EXPECT_NE(missing.find("missing.par:"), std::string::npos) << missing;
  EXPECT_NE(missing.find("no device description"), std::string::npos) << missing;
  EXPECT_NE(missing.find("nowhere.yaml"), std::string::npos) << missing;
  std::string gpu = par_error(
      "gpu.par", {{"Saguaro::device_description", quoted(source("configs/devices/h100.yaml"))}});
  EXPECT_NE(gpu.find("describes a GPU"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("the backend is cpu"), std::string::npos) << gpu;

  // No log: the interpreter has no timings; prediction_log = no asks for none.
  const std::map<std::string, std::pair<std::string, std::string>> quiet_runs = {
      {"interpreter", {"Saguaro::backend", quoted("interpreter")}},
      {"off", {"Saguaro::prediction_log", "no"}}};
  for (const auto& [name, setting] : quiet_runs) {
    Settings settings = short_run;
    settings[setting.first] = setting.second;
    settings["IO::out_dir"] = quoted(dir / name);
    write_file(dir / (name + ".par"), wave_par(8, 4, settings));
    std::ostringstream quiet;
    {
      host::Simulation sim(host::load_setup(dir / (name + ".par")), MPI_COMM_WORLD, quiet);
      sim.run();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_FALSE(std::filesystem::exists(dir / (name + "/predictions.tsv"))) << name;
    EXPECT_EQ(quiet.str().find("rediction log"), std::string::npos) << quiet.str();
  }
}

} // namespace
} // namespace saguaro::test
