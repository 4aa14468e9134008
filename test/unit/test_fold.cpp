// calc::fold_stores: a calculation's store of k replaced by combinations of k and other grid
// functions at the point, checked by the reference interpreter against the plain store followed
// by the combinations by hand; and its refusals.
#include "support.hpp"

#include "calc/fold.hpp"
#include "calc/interpreter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace saguaro::test {
namespace {

using calc::FoldedStore;

const char* kWave = R"(
begin thorn FoldTest
  begin variables
    phi pi
  end variables
  begin calculation rhs
    D_t phi = pi
    D_t pi = D_11 phi + D_22 phi + D_33 phi
  end calculation
end thorn
)";

TEST(FoldStores, CombinationsAtTheStoreEqualThePlainStoreThenTheCombinations) {
  const calc::Program prog = lower_text(kWave, 4);
  const calc::Calculation& rhs = prog.calculations.at(0);
  const int p0 = int(prog.parameters.size()); // coefficients after the thorn's parameters
  // An accumulating stage for pi: acc = acc + a k; y1 = y0 + b k.
  FoldedStore fold;
  fold.replaced = "pirhs";
  fold.targets = {{"pi_acc", {{p0, "pi_acc"}, {p0 + 1, ""}}},
                  {"pi_y1", {{p0 + 2, "pi_y0"}, {p0 + 3, ""}}}};
  const calc::Calculation folded = calc::fold_stores(rhs, {fold}, "rhs (stage 2)");
  EXPECT_EQ(folded.name, "rhs (stage 2)");
  for (int o : folded.outputs) EXPECT_NE(folded.grid_functions[std::size_t(o)].name, "pirhs");

  // Both on one block: the plain calculation's pirhs, then the combination by hand.
  const std::array<int, 3> n{6, 5, 4};
  const int g = 2;
  calc::GridBlock plain(n, g, rhs.grid_functions.size());
  calc::GridBlock fused(n, g, folded.grid_functions.size());
  auto fill = [&](calc::GridBlock& b, const calc::Calculation& c, const std::string& name,
                  double seed) {
    const int gf = c.find_grid_function(name);
    if (gf < 0) return;
    for (std::size_t i = 0; i < b.data[std::size_t(gf)].size(); ++i)
      b.data[std::size_t(gf)][i] = std::sin(seed + 0.37 * double(i));
  };
  for (const char* v : {"phi", "pi"}) {
    fill(plain, rhs, v, v[1] == 'h' ? 1.0 : 2.0);
    fill(fused, folded, v, v[1] == 'h' ? 1.0 : 2.0);
  }
  fill(fused, folded, "pi_acc", 3.0);
  fill(fused, folded, "pi_y0", 4.0);
  std::vector<double> params(std::size_t(p0), 0.0);
  calc::run_calculation(rhs, plain, params);
  const std::vector<double> c{1.0, 0.25, 1.0, 0.125};
  params.insert(params.end(), c.begin(), c.end());
  const calc::GridBlock before = fused;
  calc::run_calculation(folded, fused, params);
  const int k = rhs.find_grid_function("pirhs");
  const int acc = folded.find_grid_function("pi_acc"), y0 = folded.find_grid_function("pi_y0"),
            y1 = folded.find_grid_function("pi_y1");
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        const double kv = plain.at(k, x, y, z);
        EXPECT_NEAR(fused.at(acc, x, y, z), c[0] * before.at(acc, x, y, z) + c[1] * kv, 1e-12);
        EXPECT_NEAR(fused.at(y1, x, y, z), c[2] * before.at(y0, x, y, z) + c[3] * kv, 1e-12);
      }
}

// Folds `rhs`'s mapping with its points summed by input (strategy `b`, z 32x8x8): the folded
// mapping plans, and the result says whether its kernel still sums by input.
bool still_summed_by_input(const calc::FoldedForm& form, const calc::Calculation& rhs,
                           const calc::Calculation& folded, calc::Buffering b) {
  const calc::Mapping summed =
      calc::buffered_mapping(rhs, b, calc::parse_block_config("z 32x8x8 by-input"));
  EXPECT_TRUE(summed.kernels[0].block.sums_by_input);
  const calc::Mapping m = calc::fold_mapping(form, rhs, folded, summed);
  EXPECT_NO_THROW(calc::plan_kernels(folded, m));
  return m.kernels[0].block.sums_by_input;
}

// A folded form's mapping is its plain form's: the kernel that stored k stores the fold's
// targets, every other choice (partition, block, buffering) unchanged, and it plans.
TEST(FoldStores, AFoldedFormTakesThePlainFormsKernels) {
  const calc::Program prog = lower_text(kWave, 4);
  const calc::Calculation& rhs = prog.calculations.at(0);
  const int p0 = int(prog.parameters.size());
  FoldedStore fold;
  fold.replaced = "pirhs";
  fold.targets = {{"pi_acc", {{p0, "pi_acc"}, {p0 + 1, ""}}},
                  {"pi_y1", {{p0 + 2, "pi_y0"}, {p0 + 3, ""}}}};
  const calc::Calculation folded = calc::fold_stores(rhs, {fold}, "rhs (stage 2)");
  const calc::FoldedForm form = calc::folded_form(7, rhs, folded, {fold});
  EXPECT_EQ(form.plain, 7u);

  // Two kernels, one store each, the second buffering phi in shared memory.
  const calc::Stage& stage = rhs.stages.back();
  ASSERT_EQ(stage.stores.size(), 2u);
  calc::Mapping plain;
  for (int s = 0; s < 2; ++s) {
    calc::KernelMapping k;
    k.stores = {s};
    k.block = {2, 64, 4, 2 + s};
    plain.kernels.push_back(k);
  }
  const int phi = rhs.find_grid_function("phi");
  plain.kernels[1].buffering[phi] = calc::Buffering::Shared;
  const calc::Mapping m = calc::fold_mapping(form, rhs, folded, plain);
  ASSERT_EQ(m.kernels.size(), 2u);
  auto stored = [&](const calc::KernelMapping& k) {
    std::vector<std::string> names;
    for (int s : k.stores)
      names.push_back(folded
                          .grid_functions[std::size_t(
                              folded.stages.back().stores[std::size_t(s)].grid_function)]
                          .name);
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::string k0 = rhs.grid_functions[std::size_t(stage.stores[0].grid_function)].name;
  const std::string k1 = rhs.grid_functions[std::size_t(stage.stores[1].grid_function)].name;
  const std::vector<std::string> pi_targets{"pi_acc", "pi_y1"};
  EXPECT_EQ(stored(m.kernels[0]), k0 == "pirhs" ? pi_targets : std::vector<std::string>{k0});
  EXPECT_EQ(stored(m.kernels[1]), k1 == "pirhs" ? pi_targets : std::vector<std::string>{k1});
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(m.kernels[std::size_t(k)].block, plain.kernels[std::size_t(k)].block);
    EXPECT_EQ(m.kernels[std::size_t(k)].buffering, plain.kernels[std::size_t(k)].buffering);
  }
  EXPECT_NO_THROW(calc::plan_kernels(folded, m));
  // A mapping of another calculation does not fold.
  plain.kernels[1].stores = {5};
  EXPECT_THROW(calc::fold_mapping(form, rhs, folded, plain), calc::MappingError);

  // Points summed by input stay so where the folded stores follow the rule: pi_acc = a pi_acc +
  // b k, each term reading one input (k, the Laplacian, reads phi only).
  EXPECT_TRUE(still_summed_by_input(form, rhs, folded, calc::Buffering::Queue));
}

// Where k's terms read different inputs, the folded store's term b k reads them all: the folded
// kernel's points are not summed by input, and the mapping still plans.
TEST(FoldStores, AFoldedStoreReadingSeveralInputsPerTermIsNotSummedByInput) {
  const calc::Program prog = lower_file("test/codegen/edl/two_inputs.edl");
  const calc::Calculation& rhs = prog.calculations.at(0);
  const int p0 = int(prog.parameters.size());
  FoldedStore fold;
  fold.replaced = "urhs";
  fold.targets = {{"u_y1", {{p0, "u_y0"}, {p0 + 1, ""}}}};
  const calc::Calculation folded = calc::fold_stores(rhs, {fold}, "rhs (stage 2)");
  const calc::FoldedForm form = calc::folded_form(0, rhs, folded, {fold});
  EXPECT_FALSE(still_summed_by_input(form, rhs, folded, calc::Buffering::Unbuffered));
}

TEST(FoldStores, RefusesWhatWouldChangeTheResult) {
  const calc::Program prog = lower_text(kWave, 4);
  const calc::Calculation& rhs = prog.calculations.at(0);
  auto error = [&](const FoldedStore& f) {
    try {
      calc::fold_stores(rhs, {f}, "x");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  // Not stored by the calculation.
  EXPECT_NE(error({"phi", {{"phi_y1", {{0, ""}}}}}).find("does not store phi"), std::string::npos);
  // A target the calculation reads at neighbouring points (the stencil of phi).
  EXPECT_NE(error({"pirhs", {{"phi", {{0, ""}}}}}).find("reads phi at neighbouring points"),
            std::string::npos);
}

} // namespace
} // namespace saguaro::test
