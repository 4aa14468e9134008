// Shared by the mapper tests: device descriptions and random small stencil calculations
// written as EDL (lower them with unit/support.hpp's lower_text, as the examples with
// lower_file).
#pragma once

#include "mapper/mapper.hpp"
// unit/support.hpp names the saguaro executable, which the mapper suite does not run.
#ifndef SAGUARO_EXE
#define SAGUARO_EXE "saguaro"
#endif
#include "unit/support.hpp"

#include <fmt/format.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace saguaro::test {

inline const model::Device& device(const std::string& name) {
  static std::map<std::string, model::Device> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it =
        cache.emplace(name, model::load_device(source_dir() + "/configs/devices/" + name + ".yaml"))
            .first;
  return it->second;
}

// A random calculation: `inputs` grid functions A0.. read at random stencils (some along z
// only, so that r applies; some with in-plane offsets, so that p applies; some at the point
// only), summed with distinct coefficients into `outputs` grid functions B0.. (each output a
// random subset of the inputs, every input used by some output).
inline std::string random_edl(std::mt19937& rng, int inputs, int outputs = 1) {
  // Shift operators: Dsp_i u = u at +1 along i, Dsm_i at -1; compositions add.
  static const std::vector<std::vector<std::string>> patterns = {
      {""},                                                             // the point only
      {"", "Dsm_3 ", "Dsp_3 "},                                         // along z
      {"Dsm_3 ", "Dsp_3 ", "Dsm_3 Dsm_3 ", "Dsp_3 Dsp_3 "},             // along z, radius 2
      {"", "Dsm_1 ", "Dsp_1 ", "Dsm_2 ", "Dsp_2 "},                     // in the x-y plane
      {"", "Dsm_1 ", "Dsp_1 ", "Dsm_2 ", "Dsp_2 ", "Dsm_3 ", "Dsp_3 "}, // 7-point
      {"", "Dsm_1 ", "Dsp_1 ", "Dsm_2 ", "Dsp_2 ", "Dsm_3 ", "Dsp_3 ", "Dsm_1 Dsp_2 ",
       "Dsm_1 Dsp_3 "},                                     // the micro-benchmark's 9 points
      {"Dsm_2 ", "Dsp_2 ", "Dsm_2 Dsm_2 ", "Dsp_2 Dsp_2 "}, // along y
      {"", "Dsp_1 ", "Dsp_1 Dsp_1 ", "Dsm_3 ", "Dsp_3 Dsp_3 "},
  };
  std::uniform_int_distribution<int> pick(0, int(patterns.size()) - 1);
  std::uniform_int_distribution<int> which(0, outputs - 1);
  std::vector<std::vector<std::string>> terms(static_cast<std::size_t>(outputs));
  int c = 0;
  for (int n = 0; n < inputs; ++n) {
    const auto& pattern = patterns[std::size_t(pick(rng))];
    const int out = which(rng);
    for (const std::string& shift : pattern)
      terms[std::size_t(out)].push_back(fmt::format("{:.3f}*{}A{}", 0.013 * ++c, shift, n));
    if (outputs > 1 && (rng() % 3 == 0)) { // also in another output
      const int other = (out + 1) % outputs;
      terms[std::size_t(other)].push_back(fmt::format("{:.3f}*A{}", 0.017 * ++c, n));
    }
  }
  std::string vars, body;
  for (int n = 0; n < inputs; ++n) vars += fmt::format(" A{}", n);
  for (int o = 0; o < outputs; ++o) {
    vars += fmt::format(" B{}", o);
    if (terms[std::size_t(o)].empty()) terms[std::size_t(o)].push_back("1.5");
    body += fmt::format("    B{} = {}\n", o, fmt::join(terms[std::size_t(o)], " + "));
  }
  return fmt::format("begin thorn Random\n  begin variables\n   {}\n  end variables\n"
                     "  begin derivatives\n    Dsp u_i = u_(i+1)\n    Dsm u_i = u_(i-1)\n"
                     "  end derivatives\n  begin calculation random scheduled in evol\n{}"
                     "  end calculation\nend thorn\n",
                     vars, body);
}

// The one kernel of `calc`'s default mapping at `block`.
inline model::KernelProfile single_kernel(const calc::Calculation& calc,
                                          const calc::BlockConfig& block) {
  calc::Mapping m = calc::default_mapping(calc);
  for (auto& k : m.kernels) k.block = block;
  return model::profile_mapping(calc, m).at(0);
}

} // namespace saguaro::test
