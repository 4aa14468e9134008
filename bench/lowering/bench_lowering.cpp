// How long the front end takes to turn EDL into calculations: parse + lower, per file and
// finite-difference order. Run with bench/lowering/run.sh, which records the results.
#include "calc/lower.hpp"
#include "edl/parser.hpp"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void lower_file(benchmark::State& state, const std::string& path, int fd_order) {
  const std::string text = read(path);
  std::size_t nodes = 0, flops = 0;
  for (auto _ : state) {
    auto program = saguaro::calc::lower(saguaro::edl::parse_string(text, path), {fd_order});
    nodes = flops = 0;
    for (const auto& c : program.calculations) {
      nodes += c.node_count;
      flops += static_cast<std::size_t>(c.flops.total());
    }
    benchmark::DoNotOptimize(program);
  }
  state.counters["dag_nodes"] = static_cast<double>(nodes);
  state.counters["flops_per_point"] = static_cast<double>(flops);
}

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const std::filesystem::path root = SAGUARO_SOURCE_DIR;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "par")) {
    if (entry.path().extension() != ".edl") continue;
    std::string rel = std::filesystem::relative(entry.path(), root).string();
    for (int order : {4, 8})
      benchmark::RegisterBenchmark(("lower/" + rel + "/fd" + std::to_string(order)).c_str(),
                                   lower_file, entry.path().string(), order)
          ->Unit(benchmark::kMillisecond)
          ->Repetitions(9)
          ->ReportAggregatesOnly(true);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
