// The performance model against hand computations of Hu, Koppelman & Brandt's Table IV for
// their micro-benchmark (eq. 4, par/microbench.edl) on the K20xm description (Table III),
// monotonicity where the physics says so, and rejection of mappings that cannot run.
#include "calc/lower.hpp"
#include "calc/mapping.hpp"
#include "calc/sums_by_input.hpp"
#include "edl/parser.hpp"
#include "model/model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

using namespace saguaro;
using calc::Buffering;

namespace {

std::string source(const std::string& file) {
  return std::string(SAGUARO_SOURCE_DIR) + "/" + file;
}

const model::Device& k20xm() {
  static const model::Device d = model::load_device(source("configs/devices/k20xm.yaml"));
  return d;
}
const model::Device& h100() {
  static const model::Device d = model::load_device(source("configs/devices/h100.yaml"));
  return d;
}

const calc::Calculation& microbench() {
  static const calc::Program program =
      calc::lower(edl::parse_file(source("par/microbench.edl")), calc::LowerOptions{4});
  return program.calculations.at(0);
}

// The micro-benchmark's one kernel with the A_n in strategy `a` (B, read at the point only,
// stays unbuffered) and block `block`; n_reg^inter fixed at 10 so the hand computation does
// not depend on the DAG estimate.
model::KernelProfile microbench_kernel(Buffering a, const std::string& block) {
  const calc::Calculation& c = microbench();
  calc::Mapping m = calc::default_mapping(c);
  m.kernels[0].block = calc::parse_block_config(block);
  for (const calc::InputStencil& in : c.inputs)
    if (c.grid_functions[std::size_t(in.grid_function)].name != "B")
      m.kernels[0].buffering[in.grid_function] = a;
  model::KernelProfile k = model::profile_mapping(c, m).at(0);
  k.intermediate_registers = 10;
  return k;
}

// Relative comparison for the hand-computed values.
void expect_near_rel(double actual, double expected, const char* what) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::fabs(expected))) << what;
}

// K20xm in the paper's units: W in elements/cycle/SM = GB/s / (8 B x 0.732 GHz x 14 SMs).
const double kW_L2 = 324.5 / (8 * 0.732 * 14); // 3.958 (Table IIIa: 3.96)
const double kW_GM = 157.5 / (8 * 0.732 * 14); // 1.921 (Table IIIa: 1.92)

} // namespace

TEST(Model, MicroBenchmarkProfileIsThePapers) {
  // Table V: 10 input GFs with reuse, one store, 180 flops per point.
  const model::KernelProfile k = microbench_kernel(Buffering::Unbuffered, "z 32x8x8");
  EXPECT_EQ(k.flops.total(), 180);
  EXPECT_EQ(k.stores, 1);
  ASSERT_EQ(k.inputs.size(), 11u); // A0..A9 and B
  // Each A_n: offsets 0, +-x, +-y, +-z, (-1,+1,0), (-1,0,+1). With e = z, f = y (Table IIb):
  int with_reuse = 0;
  for (const auto& in : k.inputs) {
    const model::StencilShape s = model::stencil_shape(in.offsets, 2);
    if (in.name == "B") {
      EXPECT_EQ(s.r, 0);
      EXPECT_EQ(s.offsets, 1);
      continue;
    }
    ++with_reuse;
    EXPECT_EQ(s.s_xn, 1);
    EXPECT_EQ(s.s_xp, 1);
    EXPECT_EQ(s.s_x, 2);
    EXPECT_EQ(s.s_f, 2);
    EXPECT_EQ(s.s_e, 2);
    EXPECT_EQ(s.r_x, 2); // (+-1, 0, 0)
    EXPECT_EQ(s.r_f, 3); // (0, +-1, 0), (-1, 1, 0)
    EXPECT_EQ(s.r_e, 2); // (0, 0, +-1)
    EXPECT_EQ(s.r_o, 1); // (-1, 0, 1)
    EXPECT_EQ(s.r, 8);
  }
  EXPECT_EQ(with_reuse, 10);
}

TEST(Model, K20xmUnbufferedMatchesHandComputation) {
  const model::Prediction p =
      model::predict(microbench_kernel(Buffering::Unbuffered, "z 32x8x8"), k20xm());
  ASSERT_TRUE(p.valid) << p.invalid_reason;
  // alpha = ceil(t_x / LS_L2) LS_L2 / t_x = ceil(32/4) 4 / 32 = 1.
  expect_near_rel(p.alpha, 1.0, "alpha");
  // Table IVa: D_u^L2 = sum_u (1 + r_i) alpha = 10 x 9 + 1 (B) = 91; stores alpha n_st = 1.
  expect_near_rel(p.D_L2_u, 91, "D_L2_u");
  expect_near_rel(p.D_L2_total, 92, "D_L2_total");
  // Table IVb: M_u^L2 = sum ceil(s_x + t_x)^<+L2> (1 + s_f) t_f, ceil(34/4 + 1/2) 4 = 36:
  // A_n 36 x 3 x 8 = 864 each, B ceil(32/4 + 1/2) 4 = 36, 36 x 1 x 8 = 288; 8928 in all.
  expect_near_rel(p.M_L2_u, 10 * 864 + 288, "M_L2_u");
  // R_SND^L2 = K_L2 / (N_SM M) = (1.5 MiB / 8) / (14 x 8928) = 1.57 > 1: no capacity misses,
  // D_u^GM = M_u^L2 / (t_x t_f) = 8928 / 256.
  expect_near_rel(p.R_SND_L2, (1572864.0 / 8) / (14 * 8928.0), "R_SND_L2");
  expect_near_rel(p.D_GM_u, 8928.0 / 256, "D_GM_u");
  expect_near_rel(p.D_GM_total, 8928.0 / 256 + 1, "D_GM_total");
  // Table IVd: M_reg = t_x t_f (n_inter + |u| + |b| + |c| + ...) = 256 (10 + 11) elements;
  // 42 registers per thread; warps get ceil(42 x 32 / 256) 256 = 1536, 8 warps a block:
  // 65536 / 12288 = 5 blocks (threads would allow 8, blocks 16).
  expect_near_rel(p.M_reg, 256 * 21, "M_reg");
  EXPECT_EQ(p.registers_per_thread, 42);
  EXPECT_EQ(p.blocks_per_sm, 5);
  EXPECT_EQ(p.occupancy_limit, "registers");
  expect_near_rel(p.occupancy, 5 * 8 / 64.0, "occupancy");
  // Table IVc with lambda = 3: N_g = ceil(35.875/3) = 12, N_L2 = ceil(92/3) = 31,
  // N_f = ceil(180/3) = 60; (12 x 305 + 31 x 189 + 60 x 10 + L_m 100) / 256.
  EXPECT_EQ(p.N_g, 12);
  EXPECT_EQ(p.N_L2, 31);
  EXPECT_EQ(p.N_s, 0);
  EXPECT_EQ(p.N_b, 0);
  EXPECT_EQ(p.N_c, 0);
  EXPECT_EQ(p.N_f, 60);
  const double lat = (12 * 305 + 31 * 189 + 60 * 10 + 100) / 256.0;
  expect_near_rel(p.latency_per_block, lat, "latency per block");
  expect_near_rel(p.T_lat, lat / 5, "T_lat");
  // eq. 2: T_data = max(92 / W_L2, 35.875 / W_GM): the L2 limits (23.2 vs 18.7 cycles).
  expect_near_rel(p.T_L2, 92 / kW_L2, "T_L2");
  expect_near_rel(p.T_GM, 35.875 / kW_GM, "T_GM");
  expect_near_rel(p.T_data, 92 / kW_L2, "T_data");
  EXPECT_EQ(p.limiter, "L2");
  // eq. 1, beta = 0.8.
  const double t_data = 92 / kW_L2, t_lat = lat / 5;
  expect_near_rel(p.T_hu, 0.8 * std::max(t_data, t_lat) + 0.2 * (t_data + t_lat) / 2, "T_hu");
  // Chemora: s_i = fp / theta_fp + loads and stores / theta_ls; the 180 flops are 90 mul and
  // 90 add of which the compiler fuses 90 pairs: 90 DFMA / 64; 91 loads + 1 store / 32.
  const double s_i = 90 / 64.0 + 92 / 32.0;
  expect_near_rel(p.s_i, s_i, "s_i");
  const double big = std::max({t_data, t_lat, s_i});
  expect_near_rel(p.T_chemora, big + 0.35 * (t_data + t_lat + s_i - big), "T_chemora");
  // A launch over 256^3 points: T_launch + (N / N_SM) T / f.
  expect_near_rel(p.seconds(256.0 * 256 * 256), 5e-6 + 256.0 * 256 * 256 / 14 * p.T_hu / 0.732e9,
                  "seconds");
}

TEST(Model, K20xmSharedMatchesHandComputation) {
  // All A_n in shared memory (b), block z 32x4x4.
  // The paper's kernel keeps a rolling tile s_e + 1 planes deep (Table IVd's M_smem); given as
  // the compiled size, as ptxas would report it for such a kernel. Saguaro's own kernel keeps
  // s_e + t_ee planes, twice as many here, which would not fit (checked at the end).
  const model::Prediction p = model::predict(microbench_kernel(Buffering::Shared, "z 32x4x4"),
                                             k20xm(), {-1, 0, 8 * 6120.0});
  ASSERT_TRUE(p.valid) << p.invalid_reason;
  // D_b^L2 = ceil(s_x + t_x)^<+L2> (s_f + t_f)(s_e + t_ee) / (t_x t_f t_ee)
  //        = 36 x 6 x 6 / 512 = 2.53125 per A_n.
  expect_near_rel(p.D_L2_b, 10 * 36 * 6 * 6 / 512.0, "D_L2_b");
  expect_near_rel(p.D_L2_u, 1, "D_L2_u (B)");
  expect_near_rel(p.D_L2_total, 25.3125 + 1 + 1, "D_L2_total");
  // M_b&p^L2 = 36 x (4 + 2) per A_n; M_u^L2 (B) = 36 x 1 x 4; D_u^GM = 144 / 128.
  expect_near_rel(p.M_L2_bp, 10 * 36 * 6, "M_L2_bp");
  expect_near_rel(p.D_GM_u, 144 / 128.0, "D_GM_u");
  expect_near_rel(p.D_GM_total, 1.125 + 25.3125 + 1, "D_GM_total");
  // M_smem = sum_b (s_x + t_x)(s_f + t_f)(s_e + 1) = 10 x 34 x 6 x 3 = 6120 elements
  // (48960 bytes of the 49152): one block per SM, limited by shared memory.
  expect_near_rel(p.M_smem, 6120, "M_smem");
  EXPECT_EQ(p.blocks_per_sm, 1);
  EXPECT_EQ(p.occupancy_limit, "shared memory");
  // N_s = ceil(sum_b r_i / 3) = ceil(80/3) = 27, N_b = ceil(10/3) = 4,
  // N_g = ceil(27.4375/3) = 10, N_L2 = ceil(27.3125/3) = 10, N_f = 60.
  EXPECT_EQ(p.N_s, 27);
  EXPECT_EQ(p.N_b, 4);
  EXPECT_EQ(p.N_g, 10);
  EXPECT_EQ(p.N_L2, 10);
  const double lat = (10 * 305 + 10 * 189 + 27 * 32 + 4 * 483 + 60 * 10 + 100) / 128.0;
  expect_near_rel(p.T_lat, lat, "T_lat"); // one resident block: the paper's T_lat
  const double t_data = std::max(27.3125 / kW_L2, 27.4375 / kW_GM);
  expect_near_rel(p.T_data, t_data, "T_data");
  EXPECT_EQ(p.limiter, "latency");
  expect_near_rel(p.T_hu, 0.8 * lat + 0.2 * (t_data + lat) / 2, "T_hu");
  // Uncompiled, the model sizes the generated kernel's tiles: 10 x 34 x 6 x (2 + 4) elements,
  // 97920 bytes, more than the K20xm's 48 KiB per block.
  const model::Prediction own =
      model::predict(microbench_kernel(Buffering::Shared, "z 32x4x4"), k20xm());
  expect_near_rel(own.shared_bytes, 8 * 10 * 34 * 6 * 6, "shared_bytes");
  EXPECT_FALSE(own.valid);
}

TEST(Model, K20xmReadOnlyMatchesHandComputation) {
  // All A_n through the read-only cache (c), iterating along y (e = y, f = z), 32x8x4.
  const model::Prediction p =
      model::predict(microbench_kernel(Buffering::ReadOnly, "y 32x8x4"), k20xm());
  ASSERT_TRUE(p.valid) << p.invalid_reason;
  // M_roc = sum_c ceil(s_x + t_x)^<+c> (1 + s_f) t_f = 10 x 48 x 3 x 8 = 11520 (LS_c = 16).
  expect_near_rel(p.M_roc, 11520, "M_roc");
  // 5 resident blocks (registers: 10 + 1 + 10 elements = 42 per thread) share K_roc = 6144:
  // R_SND^RO = 6144 / (5 x 11520).
  EXPECT_EQ(p.blocks_per_sm, 5);
  const double r_ro = 6144.0 / (5 * 11520);
  expect_near_rel(p.R_SND_RO, r_ro, "R_SND_RO");
  // D_c^L2 = (M_roc + sum_c (r_e + r_o)(1 - sqrt R) t_x t_f) / (t_x t_f), r_e + r_o = 3.
  const double miss = 1 - std::sqrt(r_ro);
  const double d_c = (11520 + 10 * 3 * miss * 256) / 256;
  expect_near_rel(p.D_L2_c, d_c, "D_L2_c");
  expect_near_rel(p.D_L2_total, d_c + 1 + 1, "D_L2_total");
  // M_c^L2 with R <= 1: ceil(s_x + t_x)^<+c> (1 + s_f) t_f (1 - sqrt R) per A_n.
  const double m_c = 10 * 48 * 3 * 8 * miss;
  expect_near_rel(p.M_L2_c, m_c, "M_L2_c");
  expect_near_rel(p.D_GM_c, m_c / 256, "D_GM_c");
  expect_near_rel(p.D_GM_total, 288 / 256.0 + m_c / 256 + 1, "D_GM_total");
  // N_c = ceil(D_c^L2 / 3), N_g, N_L2 likewise.
  const double n_g = std::ceil((288 / 256.0 + m_c / 256 + 1) / 3);
  const double n_l2 = std::ceil((d_c + 2) / 3), n_c = std::ceil(d_c / 3);
  EXPECT_EQ(p.N_c, n_c);
  const double lat = (n_g * 305 + n_l2 * 189 + n_c * 108 + 60 * 10 + 100) / 256.0;
  expect_near_rel(p.T_lat, lat / 5, "T_lat");
}

// On a GPU whose L1 and shared memory are one array (the H100) the read-only cache holds
// 128-byte lines but fills 32-byte sectors: M_roc (its capacity) counts lines, D_c^L2 (the
// traffic) sectors, so a 64-wide row is no longer priced 17% cheaper per point than a 32-wide
// one for its halo's rounding (1.0625 against 1.125 sectors' worth per element, not 1.25 / 1.5).
// The traffic fills the block's t_f rows and their s_f halo rows once (the L1 keeps a row for
// the rows beside it); M_roc keeps the paper's (1 + s_f) t_f rows.
TEST(Model, H100ReadOnlyTrafficCountsSectorsAndCapacityLines) {
  for (const auto& [block, tx, tf] :
       {std::tuple{"y 32x8x4", 32.0, 8.0}, std::tuple{"y 64x4x4", 64.0, 4.0}}) {
    SCOPED_TRACE(block);
    const model::Prediction p =
        model::predict(microbench_kernel(Buffering::ReadOnly, block), h100());
    ASSERT_TRUE(p.valid) << p.invalid_reason;
    // Every A_n spans s_x = 2 along x and s_f = 2 along f: its rows are 16-element lines
    // (M_roc) or 4-element sectors (the traffic) of tx + 2 elements each. B, read at the point
    // (cached in L1 like the A_n on this GPU), has rows of tx.
    const double lines = 16 * std::ceil((tx + 2) / 16 + 0.5);
    const double sectors = 4 * std::ceil((tx + 2) / 4 + 0.5);
    const double b_lines = 16 * std::ceil(tx / 16 + 0.5), b_sectors = 4 * std::ceil(tx / 4 + 0.5);
    EXPECT_LT(sectors, lines);
    expect_near_rel(p.M_roc, 10 * lines * (1 + 2) * tf + b_lines * tf, "M_roc");
    const double miss = 1 - std::sqrt(std::clamp(p.R_SND_RO, 0.0, 1.0));
    const double plane = tx * tf; // r_e + r_o = 3 per A_n, 0 for B
    expect_near_rel(p.D_L2_c,
                    (10 * sectors * (tf + 2) + b_sectors * tf + 10 * 3 * miss * plane) / plane,
                    "D_L2_c");
  }
}

TEST(Model, MoreUnbufferedOffsetsNeverReduceTraffic) {
  // One grid function read unbuffered at a growing set of offsets, on both descriptions.
  const std::vector<calc::Offset> all = {{0, 0, 0},  {1, 0, 0}, {-1, 0, 0}, {0, 1, 0},
                                         {0, -1, 0}, {0, 0, 1}, {0, 0, -1}, {2, 0, 0},
                                         {0, 2, 0},  {0, 0, 2}, {1, 1, 0},  {-1, 0, 3}};
  for (const model::Device* d : {&k20xm(), &h100()})
    for (const std::string block : {"z 32x8x8", "y 64x4x16", "z 32x2x4"}) {
      double l2 = 0, gm = 0;
      for (std::size_t n = 1; n <= all.size(); ++n) {
        model::KernelProfile k;
        k.block = calc::parse_block_config(block);
        k.stores = 1;
        k.intermediate_registers = 8;
        k.inputs.push_back({0, "u", std::vector<calc::Offset>(all.begin(), all.begin() + long(n)),
                            Buffering::Unbuffered});
        const model::Prediction p = model::predict(k, *d);
        EXPECT_GE(p.D_L2_total, l2 - 1e-12) << d->name << " " << block << " offsets " << n;
        EXPECT_GE(p.D_GM_total, gm - 1e-12) << d->name << " " << block << " offsets " << n;
        l2 = p.D_L2_total;
        gm = p.D_GM_total;
      }
    }
}

TEST(Model, MoreSharedMemoryNeverRaisesOccupancy) {
  for (const model::Device* d : {&k20xm(), &h100()}) {
    const model::KernelProfile k = microbench_kernel(Buffering::Unbuffered, "z 32x4x8");
    int blocks = 1 << 30;
    for (double bytes = 0; bytes <= d->shared_memory_per_block; bytes += 1024) {
      model::CompiledResources r;
      r.registers = 32;
      r.shared_bytes = bytes;
      const model::Prediction p = model::predict(k, *d, r);
      EXPECT_LE(p.blocks_per_sm, blocks) << d->name << " " << bytes << " bytes";
      blocks = p.blocks_per_sm;
    }
    EXPECT_GE(blocks, 1);
  }
}

TEST(Model, MoreRegistersNeverRaiseOccupancy) {
  const model::KernelProfile k = microbench_kernel(Buffering::Unbuffered, "z 32x8x8");
  int blocks = 1 << 30;
  for (int regs = 16; regs <= 255; ++regs) {
    model::CompiledResources r;
    r.registers = regs;
    const model::Prediction p = model::predict(k, h100(), r);
    EXPECT_LE(p.blocks_per_sm, blocks) << regs;
    blocks = p.blocks_per_sm;
  }
}

TEST(Model, RejectsMappingsThatCannotRun) {
  // All ten A_n in shared memory with a 32x8x8 block: 10 x 34 x 10 x 3 elements = 80 KiB
  // of the K20xm's 48.
  const model::Prediction smem =
      model::predict(microbench_kernel(Buffering::Shared, "z 32x8x8"), k20xm());
  EXPECT_FALSE(smem.valid);
  EXPECT_NE(smem.invalid_reason.find("shared memory"), std::string::npos) << smem.invalid_reason;

  // 2048 threads per block.
  model::KernelProfile big = microbench_kernel(Buffering::Unbuffered, "z 32x8x8");
  big.block.tx = 64;
  big.block.tf = 32;
  const model::Prediction threads = model::predict(big, h100());
  EXPECT_FALSE(threads.valid);
  EXPECT_NE(threads.invalid_reason.find("threads"), std::string::npos) << threads.invalid_reason;

  // 1024 threads of 255 registers (ptxas) do not fit in the 64K register file.
  model::KernelProfile full = microbench_kernel(Buffering::Unbuffered, "z 32x32x8");
  model::CompiledResources r;
  r.registers = 255;
  const model::Prediction regs = model::predict(full, h100(), r);
  EXPECT_FALSE(regs.valid);
  EXPECT_NE(regs.invalid_reason.find("register"), std::string::npos) << regs.invalid_reason;

  // The same kernel with 32 registers runs.
  r.registers = 32;
  EXPECT_TRUE(model::predict(full, h100(), r).valid);
}

TEST(Model, RegistersFromPtxasReplaceTheEstimate) {
  const model::KernelProfile k = microbench_kernel(Buffering::Unbuffered, "z 32x8x8");
  model::CompiledResources r;
  r.registers = 168;
  const model::Prediction p = model::predict(k, h100(), r);
  EXPECT_TRUE(p.registers_from_ptxas);
  EXPECT_EQ(p.registers_per_thread, 168);
  // 168 x 32 = 5376 -> 5376 per warp (a multiple of 256), 8 warps: 43008 of 65536: 1 block.
  EXPECT_EQ(p.blocks_per_sm, 1);
  EXPECT_EQ(p.occupancy_limit, "registers");
  EXPECT_FALSE(model::predict(k, h100()).registers_from_ptxas);
}

// lambda_g and lambda_L2 scale as (registers / 64)^gamma_R with ptxas's count (h100.yaml: 0.5):
// at 64 registers they are the description's, at 256 twice, at 16 half; the search's estimate
// and gamma_R = 0 leave them constant.
TEST(Model, LoadsInFlightGrowWithPtxasRegisters) {
  const model::KernelProfile k = microbench_kernel(Buffering::Unbuffered, "y 32x4x1");
  model::Device d = h100();
  ASSERT_EQ(d.parallel_register_exponent, 0.5);
  auto at = [&](const model::Device& dev, int registers) {
    model::CompiledResources r;
    r.registers = registers;
    return model::predict(k, dev, r);
  };
  for (int regs : {16, 64, 256}) {
    const model::Prediction p = at(d, regs);
    const double scale = std::sqrt(regs / 64.0);
    EXPECT_EQ(p.N_g, std::ceil(p.D_GM_total / (d.parallel_global * scale))) << regs;
    EXPECT_EQ(p.N_L2, std::ceil(p.D_L2_total / (d.parallel_l2 * scale))) << regs;
  }
  EXPECT_GT(at(d, 16).N_g, at(d, 256).N_g);
  // The estimate's registers do not scale them.
  const model::Prediction estimated = model::predict(k, d);
  EXPECT_FALSE(estimated.registers_from_ptxas);
  EXPECT_EQ(estimated.N_g, std::ceil(estimated.D_GM_total / d.parallel_global));
  // Without the exponent (the paper's model) the register count leaves them alone.
  d.parallel_register_exponent = 0;
  EXPECT_EQ(at(d, 16).N_g, at(d, 256).N_g);
  EXPECT_EQ(at(d, 16).N_g, std::ceil(at(d, 16).D_GM_total / d.parallel_global));
}

// Beyond the paper (docs/model.md, "The front of the launch in L2"): an input's planes along e
// come from DRAM again when L1 cannot hold the resident threads' walk and L2 cannot hold the
// front (every resident block's whole tile of every input read). The micro-benchmark's ten
// A_n each reach one plane either side along z (s_e = 2), B none.
TEST(Model, PlanesAlongEComeFromDramWhenTheFrontOutgrowsL2) {
  model::Device d = h100();
  ASSERT_EQ(d.l2_front_share, 1.0) << "the shipped description: the whole L2";
  model::CompiledResources r;
  r.registers = 48; // 5 blocks of 256 threads per SM, as ptxas compiles B3 at z 64x4x*
  auto at = [&](const model::Device& dev, const std::string& block) {
    return model::predict(microbench_kernel(Buffering::Unbuffered, block), dev, r);
  };
  model::Device paper = d;
  paper.l2_front_share = 0;
  for (int tee : {1, 2, 4, 8}) {
    const std::string block = "z 64x4x" + std::to_string(tee);
    const model::Prediction p = at(d, block), q = at(paper, block);
    ASSERT_EQ(p.blocks_per_sm, 5);
    ASSERT_GT(q.R_SND_L2, 1) << "the paper's L2 demand has no misses here";
    const double threads = 5 * 256.0, walk = 10 * 3.0;
    const double l1_supply = p.K_roc / (threads * walk);
    const double l1_miss = tee > 1 ? std::min(1.0, 1 / (l1_supply * l1_supply)) : 1.0;
    const double front = d.sm_count * threads * tee * 11; // elements: ten A_n and B
    EXPECT_NEAR(p.R_SND_L2, d.K_L2() / front, 1e-12) << tee;
    const double miss = l1_miss * (1 - std::sqrt(std::min(1.0, d.K_L2() / front)));
    // Each A_n's two planes off the point, read again with probability `miss`.
    EXPECT_NEAR(p.D_GM_total - q.D_GM_total, 10 * 2 * miss, 1e-9) << tee;
  }
  // One point per thread and a front within L2: the compulsory traffic, as the paper has it;
  // eight points per thread: a front 8x as deep, and the e-neighbours from DRAM again.
  EXPECT_DOUBLE_EQ(at(d, "z 64x4x1").D_GM_total, at(paper, "z 64x4x1").D_GM_total);
  EXPECT_GT(at(d, "z 64x4x8").D_GM_total, at(d, "z 64x4x4").D_GM_total);
  EXPECT_GT(at(d, "z 64x4x4").D_GM_total, at(d, "z 64x4x2").D_GM_total + 1);
}

// Before ptxas has seen a kernel, its registers come from the DAG (model.hpp's fit):
// R = 40 + 0.23 flops - 0.32 loads, less one element per input for n_reg^inter.
TEST(Model, RegisterEstimateIsTheFit) {
  calc::Mapping m = calc::default_mapping(microbench());
  const model::KernelProfile k = model::profile_mapping(microbench(), m).at(0);
  // 180 flops; ten A_n at 9 offsets and B at one: 91 loads.
  ASSERT_EQ(k.flops.total(), 180);
  ASSERT_EQ(k.inputs.size(), 11u);
  EXPECT_DOUBLE_EQ(model::estimated_registers(k), 40 + 0.23 * 180 - 0.32 * 91);
  EXPECT_EQ(k.intermediate_registers, 26 - 11); // round(52.28 / 2) less the inputs
  const model::Prediction p = model::predict(k, h100());
  EXPECT_EQ(p.registers_per_thread, 2 * 26); // all inputs unbuffered: R, rounded to elements
  EXPECT_EQ(p.spill_bytes, 0);
}

// An estimate beyond the 255 registers a thread can have is capped, and what does not fit
// spills: 4 bytes per register missing, as L2 traffic, like ptxas's spills once compiled.
TEST(Model, EstimateBeyondTheRegisterFileSpills) {
  model::KernelProfile k = microbench_kernel(Buffering::Unbuffered, "z 32x8x4");
  k.intermediate_registers = 100; // 2 x (100 + 11) = 222 registers: fits
  const model::Prediction fits = model::predict(k, h100());
  EXPECT_EQ(fits.registers_per_thread, 222);
  EXPECT_EQ(fits.spill_bytes, 0);
  k.intermediate_registers = 200; // 2 x (200 + 11) = 422: 255 and 167 spilled
  const model::Prediction spills = model::predict(k, h100());
  ASSERT_TRUE(spills.valid) << spills.invalid_reason;
  EXPECT_FALSE(spills.registers_from_ptxas);
  EXPECT_EQ(spills.registers_per_thread, 255);
  EXPECT_EQ(spills.spill_bytes, 4 * 167);
  expect_near_rel(spills.M_reg, 256 * 127.5, "M_reg");
  expect_near_rel(spills.D_L2_total - fits.D_L2_total, 4 * 167 / 8.0, "spilled elements");
  EXPECT_GT(spills.T_L2, fits.T_L2);
  // ptxas's report replaces both the count and the spills.
  model::CompiledResources r;
  r.registers = 255;
  r.spill_bytes = 64;
  const model::Prediction compiled = model::predict(k, h100(), r);
  EXPECT_TRUE(compiled.registers_from_ptxas);
  EXPECT_EQ(compiled.spill_bytes, 64);
  expect_near_rel(compiled.D_L2_total - fits.D_L2_total, 8, "ptxas's spilled elements");
}

// A thread that sums its points by input keeps their loads in flight together: lambda_g and
// lambda_L2 grow as (points in lockstep)^gamma_P, the points counted up to 16 running sums;
// the traffic does not change.
TEST(Model, PointsSummedByInputKeepMoreLoadsInFlight) {
  model::KernelProfile k = microbench_kernel(Buffering::Unbuffered, "z 32x8x8");
  model::CompiledResources r;
  r.registers = 64; // lambda_g and lambda_L2 at their 64-register values
  const model::Prediction plain = model::predict(k, h100(), r);
  k.block.sums_by_input = true;
  const model::Prediction summed = model::predict(k, h100(), r);
  const double gamma = h100().lockstep_exponent;
  ASSERT_GT(gamma, 0);
  EXPECT_DOUBLE_EQ(calc::points_in_lockstep(k.block, k.stores), 8.0);
  EXPECT_EQ(summed.N_g,
            std::ceil(plain.D_GM_total / (h100().parallel_global * std::pow(8.0, gamma))));
  EXPECT_EQ(summed.N_L2, std::ceil(plain.D_L2_total / (h100().parallel_l2 * std::pow(8.0, gamma))));
  EXPECT_LT(summed.T_lat, plain.T_lat);
  EXPECT_DOUBLE_EQ(summed.D_GM_total, plain.D_GM_total);
  EXPECT_DOUBLE_EQ(summed.D_L2_total, plain.D_L2_total);
  // Six stored values (Maxwell's) at 8 points: 16 / 6 points in lockstep; none without sums by
  // input or with one point; none where the description has no exponent.
  EXPECT_DOUBLE_EQ(calc::points_in_lockstep(k.block, 6), 16.0 / 6);
  k.block.tee = 1;
  EXPECT_DOUBLE_EQ(calc::points_in_lockstep(k.block, 1), 1.0);
  k.block = calc::parse_block_config("z 32x8x8 by-input");
  model::Device off = h100();
  off.lockstep_exponent = 0;
  EXPECT_EQ(model::predict(k, off, r).T_lat, plain.T_lat);
}

// One exchange's ghost fill on the device: latency + bytes / bandwidth; nothing where the
// description has no ghost fill or there is nothing to fill.
TEST(Model, GhostFillIsLatencyPlusBytesOverBandwidth) {
  model::Device d = h100();
  d.ghost_fill_latency = 20;     // us
  d.ghost_fill_bandwidth = 1000; // GB/s
  EXPECT_DOUBLE_EQ(model::ghost_fill_seconds(d, 25.6e6), 20e-6 + 25.6e6 / 1e12);
  EXPECT_EQ(model::ghost_fill_seconds(d, 0), 0);
  d.ghost_fill_bandwidth = 0;
  EXPECT_EQ(model::ghost_fill_seconds(d, 25.6e6), 0);
}

TEST(Model, CpuRooflineCountsCompulsoryTraffic) {
  model::Device host;
  host.kind = "cpu";
  host.dram_bandwidth = 100; // GB/s
  host.fp64_peak = 1000;     // GFLOP/s
  const model::CpuPrediction p = model::predict_cpu(microbench(), host);
  // 11 inputs (A0..A9, B) read once and B written once: 12 x 8 bytes; 180 flops.
  EXPECT_DOUBLE_EQ(p.bytes_per_point, 96);
  EXPECT_DOUBLE_EQ(p.flops_per_point, 180);
  EXPECT_DOUBLE_EQ(p.T_memory, 96 / 100e9);
  EXPECT_DOUBLE_EQ(p.T_compute, 180 / 1000e9);
  EXPECT_EQ(p.limiter, "DRAM");
  EXPECT_DOUBLE_EQ(p.seconds(1e6), 1e6 * 96 / 100e9);
}

TEST(Model, MessageSecondsIsLatencyPlusBytesOverBandwidth) {
  model::Device d;
  d.name = "two ranks";
  EXPECT_FALSE(model::describes_interconnect(d));
  EXPECT_EQ(model::message_seconds(d, 0), 0); // nothing exchanged costs nothing, described or not
  EXPECT_EQ(model::message_seconds(d, -1), 0);
  d.interconnect_latency = 20;   // us
  d.interconnect_bandwidth = 10; // GB/s
  EXPECT_TRUE(model::describes_interconnect(d));
  EXPECT_DOUBLE_EQ(model::message_seconds(d, 1e6), 20e-6 + 1e6 / 10e9);
  EXPECT_DOUBLE_EQ(model::message_seconds(d, 1), 20e-6 + 1 / 10e9);
  EXPECT_EQ(model::message_seconds(d, 0), 0);
}

TEST(Model, MessageSecondsRefusesAnUndescribedInterconnect) {
  for (auto [latency, bandwidth] : {std::pair{0.0, 10.0}, {20.0, 0.0}, {0.0, 0.0}, {-1.0, 10.0}}) {
    model::Device d;
    d.name = "NVIDIA H200";
    d.interconnect_latency = latency;
    d.interconnect_bandwidth = bandwidth;
    EXPECT_FALSE(model::describes_interconnect(d));
    try {
      model::message_seconds(d, 8192);
      ADD_FAILURE() << "no error for latency " << latency << ", bandwidth " << bandwidth;
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      for (const char* part : {"interconnect_latency", "interconnect_bandwidth",
                               "saguaro calibrate --interconnect", "NVIDIA H200"})
        EXPECT_NE(what.find(part), std::string::npos) << "missing '" << part << "' in: " << what;
    }
  }
}
