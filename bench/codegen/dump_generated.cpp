// Writes the generated CUDA and C++ of B1-B5 (bench/common/benchmarks.hpp), every calculation,
// under the default mapping, the model's mapping (h100.yaml unless --device) and each buffering
// strategy's mapping, with the model's prediction of each: one file per benchmark and mapping
// kind in OUTDIR, and a SHA-like digest per file on stdout. Two trees that print the same
// digests generate the same code: the check that a refactoring left code generation alone
// (bench/codegen/compare.sh). Needs no GPU.
#include "../common/benchmarks.hpp"

#include "calc/mapping.hpp"
#include "codegen/cpp.hpp"
#include "codegen/cuda.hpp"
#include "mapper/mapper.hpp"
#include "model/device.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace saguaro;

namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  std::cout << fmt::format("{:016x}  {}\n", fnv1a(text), path.filename().string());
}

} // namespace

int main(int argc, char** argv) {
  // An option is no directory name: `dump_generated --help` wrote its files into "--help/".
  if (argc < 2 || argv[1][0] == '-') {
    std::cerr << "usage: dump_generated OUTDIR [DEVICE.yaml]\n";
    return argc >= 2 && std::string(argv[1]) == "--help" ? 0 : 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const model::Device device = model::load_device(
      argc > 2 ? argv[2] : std::string(SAGUARO_SOURCE_DIR) + "/configs/devices/h100.yaml");
  const calc::BlockConfig block = calc::parse_block_config("z 32x8x8");
  for (const bench::Benchmark& b : bench::suite_benchmarks()) {
    const bench::LoadedBenchmark l = bench::load_benchmark(b);
    const calc::Program& program = l.program;
    std::vector<std::pair<std::string, std::vector<calc::Mapping>>> kinds;
    std::vector<calc::Mapping> defaults, model_choice;
    std::string predictions;
    for (const calc::Calculation& calc : program.calculations) {
      defaults.push_back(calc::default_mapping(calc));
      const mapper::MapResult r = mapper::map_calculation(calc, device);
      model_choice.push_back(r.best.mapping);
      const mapper::PricedMapping d = mapper::price_mapping(calc, defaults.back(), device);
      predictions += fmt::format("{} model {:.17g} {}\n{} default {:.17g} {}\n", calc.name,
                                 r.best.seconds, calc::to_string(calc, r.best.mapping), calc.name,
                                 d.seconds, calc::to_string(calc, d.mapping));
      for (const mapper::PricedMapping& p : r.runners_up)
        predictions += fmt::format("{} runner-up {:.17g} {}\n", calc.name, p.seconds,
                                   calc::to_string(calc, p.mapping));
    }
    kinds.emplace_back("default", defaults);
    kinds.emplace_back("model", model_choice);
    for (const char* s : {"u", "r", "b", "p", "c", "q", "mixed"}) {
      std::vector<calc::Mapping> ms;
      for (const calc::Calculation& calc : program.calculations)
        ms.push_back(calc::strategy_mapping(calc, s, block));
      kinds.emplace_back(s, ms);
    }
    write(out / (b.name + ".predictions.txt"), predictions);
    for (const auto& [kind, ms] : kinds) {
      write(out / (b.name + "." + kind + ".cu"), codegen::generate_cuda(program, ms).source);
      write(out / (b.name + "." + kind + ".cpp"), codegen::generate_cpp(program, ms));
    }
  }
  return 0;
}
