// The example thorns under par/: every one lowers at every FD order; the micro-benchmark and
// Maxwell thorns lower to the stencils and flop counts their comments promise; and the
// `saguaro inspect --format json` output carries the same numbers.
#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "support.hpp"

namespace saguaro::calc {
namespace {

namespace fs = std::filesystem;
using namespace saguaro::test;

// ============================================================== all examples

TEST(Examples, EveryParFileLowersAtEveryOrder) {
  std::vector<fs::path> files = example_files();
  ASSERT_GE(files.size(), 4u) << "par/ should hold at least wave, maxwell, microbench, advect";
  for (const fs::path& file : files) {
    for (int order : {2, 4, 6, 8}) {
      SCOPED_TRACE(file.string() + " order " + std::to_string(order));
      Program prog;
      ASSERT_NO_THROW(prog = lower(edl::parse_file(file.string()), LowerOptions{order}));
      EXPECT_EQ(prog.fd_order, order);
      EXPECT_FALSE(prog.thorn.empty());
      ASSERT_FALSE(prog.calculations.empty());
      for (const Calculation& c : prog.calculations) {
        SCOPED_TRACE(c.name);
        ASSERT_FALSE(c.stages.empty());
        EXPECT_FALSE(c.outputs.empty());
        EXPECT_FALSE(c.schedule_bin.empty());
        EXPECT_GT(c.node_count, 0u);
        // Every output is a variable or a right-hand side; intermediates stay inside.
        for (int gf : c.outputs)
          EXPECT_NE(c.grid_functions[gf].role, GridFunctionRole::Intermediate);
        // Every input is a declared variable.
        for (const auto& in : c.inputs) {
          const std::string& name = c.grid_functions[in.grid_function].name;
          EXPECT_NE(std::find(prog.variables.begin(), prog.variables.end(), name),
                    prog.variables.end())
              << name;
          EXPECT_TRUE(std::is_sorted(in.offsets.begin(), in.offsets.end()));
          EXPECT_FALSE(in.offsets.empty());
        }
      }
      // Every evolved variable is declared.
      for (const auto& v : prog.evolved)
        EXPECT_NE(std::find(prog.variables.begin(), prog.variables.end(), v), prog.variables.end());
    }
  }
}

TEST(Examples, StencilRadiusGrowsWithOrderForBuiltinDerivatives) {
  for (int order : {2, 4, 6, 8}) {
    Program wave = lower_file("par/wave.edl", order);
    const Calculation& rhs = calc_named(wave, "wave_rhs");
    EXPECT_EQ(rhs.radius, (std::array<int, 3>{order / 2, order / 2, order / 2}));
    // The Laplacian's 3 (order + 1) points, centre shared: 3 order + 1.
    EXPECT_EQ(offsets_of(rhs, "phi").size(), std::size_t(3 * order + 1));
  }
}

// BSSN's advection terms use the upwind stencils, one point wider than the centered ones.
TEST(Examples, BssnAdvectionIsUpwinded) {
  for (int order : {4, 8}) {
    Program bssn = lower_file("par/bssn/bssn.edl", order);
    const int r = order / 2;
    EXPECT_EQ(calc_named(bssn, "bssn_rhs").radius, (std::array<int, 3>{r + 1, r + 1, r + 1}));
    EXPECT_EQ(calc_named(bssn, "bssn_constraints").radius, (std::array<int, 3>{r, r, r}));
  }
}

// ============================================================== microbench

TEST(Examples, Microbench) {
  Program prog = lower_file("par/microbench.edl");
  EXPECT_EQ(prog.thorn, "MicroBench");
  ASSERT_EQ(prog.calculations.size(), 2u); // the benchmark, then its initial data
  const Calculation& c = prog.calculations[0];
  EXPECT_EQ(c.name, "microbench");
  EXPECT_EQ(c.schedule_bin, "evol");
  EXPECT_EQ(c.stages.size(), 1u);
  ASSERT_EQ(c.inputs.size(), 11u);
  const std::set<Offset> nine{{0, 0, 0},  {-1, 0, 0}, {1, 0, 0},  {0, -1, 0}, {0, 1, 0},
                              {0, 0, -1}, {0, 0, 1},  {-1, 1, 0}, {-1, 0, 1}};
  for (int n = 0; n < 10; ++n)
    EXPECT_EQ(offsets_of(c, std::string("A") + std::to_string(n)), nine) << n;
  EXPECT_EQ(offsets_of(c, "B"), (std::set<Offset>{{0, 0, 0}}));
  EXPECT_EQ(output_names(c), (std::vector<std::string>{"B"}));
  EXPECT_EQ(c.flops.add, 90);
  EXPECT_EQ(c.flops.mul, 90);
  EXPECT_EQ(c.flops.div, 0);
  EXPECT_EQ(c.flops.transcendental, 0);
  EXPECT_EQ(c.flops.total(), 180);
  EXPECT_EQ(c.radius, (std::array<int, 3>{1, 1, 1}));
  // The coefficient of A_n at offset m is 0.01 (9n + m + 1): check two of them in the DAG.
  const Node& sum = c.dag.node(store_of(c, "B"));
  ASSERT_EQ(sum.op, Op::Add);
  EXPECT_EQ(sum.kids.size(), 91u);
  auto weight_of = [&](const std::string& gf, Offset o) {
    int index = c.find_grid_function(gf);
    for (std::size_t k = 0; k < sum.kids.size(); ++k) {
      const Node& kid = c.dag.node(sum.kids[k]);
      if (kid.op == Op::Load && kid.index == index && kid.offset == o) return sum.weights[k];
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(weight_of("B", {0, 0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(weight_of("A0", {0, 0, 0}), 0.01);
  EXPECT_DOUBLE_EQ(weight_of("A0", {-1, 1, 0}), 0.08);
  EXPECT_DOUBLE_EQ(weight_of("A9", {-1, 0, 1}), 0.90);
  EXPECT_DOUBLE_EQ(weight_of("A5", {0, 1, 0}), 0.50);
}

// ============================================================== maxwell

TEST(Examples, Maxwell) {
  Program prog = lower_file("par/maxwell.edl", 4);
  EXPECT_EQ(prog.evolved, (std::vector<std::string>{"El1", "El2", "El3", "B1", "B2", "B3"}));
  const Calculation& rhs = calc_named(prog, "maxwell_rhs");
  EXPECT_EQ(rhs.schedule_bin, "MoL_CalcRHS");
  EXPECT_EQ(output_names(rhs),
            (std::vector<std::string>{"El1rhs", "El2rhs", "El3rhs", "B1rhs", "B2rhs", "B3rhs"}));
  for (int gf : rhs.outputs)
    EXPECT_EQ(rhs.grid_functions[gf].role, GridFunctionRole::RightHandSide);
  // El1rhs = D_2 B3 - D_3 B2: B3 along y, B2 along z, nothing else.
  auto loads = loads_below(rhs, store_of(rhs, "El1rhs"));
  EXPECT_EQ(loads, (std::map<std::string, std::set<Offset>>{
                       {"B2", {{0, 0, -2}, {0, 0, -1}, {0, 0, 1}, {0, 0, 2}}},
                       {"B3", {{0, -2, 0}, {0, -1, 0}, {0, 1, 0}, {0, 2, 0}}}}));
  // B1rhs = -(D_2 El3 - D_3 El2)
  loads = loads_below(rhs, store_of(rhs, "B1rhs"));
  EXPECT_EQ(loads, (std::map<std::string, std::set<Offset>>{
                       {"El2", {{0, 0, -2}, {0, 0, -1}, {0, 0, 1}, {0, 0, 2}}},
                       {"El3", {{0, -2, 0}, {0, -1, 0}, {0, 1, 0}, {0, 2, 0}}}}));
  // El2rhs = D_3 B1 - D_1 B3
  loads = loads_below(rhs, store_of(rhs, "El2rhs"));
  EXPECT_EQ(loads.size(), 2u);
  EXPECT_TRUE(loads.count("B1") && loads.count("B3"));

  const Calculation& constraints = calc_named(prog, "maxwell_constraints");
  EXPECT_EQ(constraints.schedule_bin, "analysis");
  EXPECT_EQ(offsets_of(constraints, "El1"),
            (std::set<Offset>{{-2, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {2, 0, 0}}));
  const Calculation& energy = calc_named(prog, "maxwell_energy");
  EXPECT_EQ(energy.radius, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(energy.inputs.size(), 6u);
}

// ============================================================== CLI JSON

// `saguaro inspect --format json` on the example thorn `relative` (below the source tree).
CliRun inspect_json(const std::string& relative, const std::string& options = "") {
  return run_saguaro("inspect \"" + source_dir() + "/" + relative + "\" --format json" + options);
}

TEST(Examples, CliJsonForMicrobench) {
  CliRun run = inspect_json("par/microbench.edl");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(run.out)) << run.out;
  for (const char* key : {"thorn", "parameters", "variables", "calculations"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["thorn"], "MicroBench");
  EXPECT_TRUE(j["parameters"].is_array());
  EXPECT_EQ(j["parameters"].size(), 0u);
  ASSERT_TRUE(j["variables"].is_array());
  EXPECT_EQ(j["variables"].size(), 11u);
  EXPECT_EQ(j["variables"][0], "B");
  ASSERT_EQ(j["calculations"].size(), 2u);
  const auto& c = j["calculations"][0];
  for (const char* key : {"name", "schedule", "inputs", "outputs", "flops", "nodes"})
    EXPECT_TRUE(c.contains(key)) << key;
  EXPECT_EQ(c["name"], "microbench");
  EXPECT_EQ(c["schedule"], "evol");
  ASSERT_EQ(c["inputs"].size(), 11u);
  std::set<std::string> names;
  for (const auto& in : c["inputs"]) {
    ASSERT_TRUE(in.contains("gf") && in.contains("stencil"));
    std::string gf = in["gf"];
    names.insert(gf);
    std::set<std::array<int, 3>> stencil;
    for (const auto& o : in["stencil"]) {
      ASSERT_EQ(o.size(), 3u);
      stencil.insert({o[0].get<int>(), o[1].get<int>(), o[2].get<int>()});
    }
    if (gf == "B") {
      EXPECT_EQ(stencil, (std::set<std::array<int, 3>>{{0, 0, 0}}));
    } else {
      EXPECT_EQ(stencil.size(), 9u) << gf;
      EXPECT_TRUE(stencil.count({-1, 1, 0}) && stencil.count({-1, 0, 1})) << gf;
    }
  }
  EXPECT_EQ(names.size(), 11u);
  EXPECT_TRUE(names.count("B") && names.count("A0") && names.count("A9"));
  ASSERT_EQ(c["outputs"].size(), 1u);
  EXPECT_EQ(c["outputs"][0]["gf"], "B");
  EXPECT_EQ(c["flops"]["add"], 90);
  EXPECT_EQ(c["flops"]["mul"], 90);
  EXPECT_EQ(c["flops"]["total"], 180);
  // The node count is the lowering's.
  Program prog = lower_file("par/microbench.edl");
  EXPECT_EQ(c["nodes"].get<std::size_t>(), prog.calculations[0].node_count);
  EXPECT_GT(c["nodes"].get<std::size_t>(), 91u) << "91 loads plus the sum at least";
}

TEST(Examples, CliJsonFollowsFdOrder) {
  CliRun run = inspect_json("par/wave.edl", " --fd-order 6");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["fd_order"], 6);
  bool found = false;
  for (const auto& c : j["calculations"])
    if (c["name"] == "wave_rhs") {
      found = true;
      for (const auto& in : c["inputs"]) {
        if (in["gf"] == "phi") {
          EXPECT_EQ(in["stencil"].size(), 19u);
        }
      }
      EXPECT_EQ(c["radius"], nlohmann::json({3, 3, 3}));
    }
  EXPECT_TRUE(found);
}

} // namespace
} // namespace saguaro::calc
