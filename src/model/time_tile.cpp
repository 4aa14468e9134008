// The time-tiled step's time (see time_tile.hpp).
#include "model/time_tile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace saguaro::model {

int estimated_time_tile_registers(const calc::TimeTilePlan& plan) {
  const double variables = double(plan.state.size());
  double queue = plan.stages * (2.0 * plan.radius[2] + 1) + 2; // doubles per variable
  // A later part's loaded stage input and accumulator, and their look-ahead registers.
  if (plan.first > 1) queue += 3.0 * plan.radius[2] + 4;
  if (!plan.reads_state()) queue -= 2.0 * plan.radius[2] + 2;
  return int(std::lround(kRegisterBase + 2 * variables * queue));
}

int arithmetic_depth(const calc::Calculation& calc) {
  std::vector<calc::NodeId> roots;
  for (const calc::Stage& s : calc.stages)
    for (const calc::Store& st : s.stores) roots.push_back(st.value);
  std::map<calc::NodeId, int> depth;
  int deepest = 0;
  for (calc::NodeId id : calc.dag.reachable(roots)) { // kids before parents
    const calc::Node& n = calc.dag.node(id);
    int below = 0;
    for (calc::NodeId k : n.kids) below = std::max(below, depth[k]);
    int own = 0;
    if (!n.uniform) switch (n.op) {
      case calc::Op::Add:
      case calc::Op::Mul: own = std::max<int>(1, int(n.kids.size()) - 1); break;
      case calc::Op::Pow:
      case calc::Op::Call: own = 1; break;
      default: break;
      }
    depth[id] = below + own;
    deepest = std::max(deepest, depth[id]);
  }
  return deepest;
}

TimeTilePrediction predict_time_tile(const calc::Calculation& calc, const calc::TimeTilePlan& plan,
                                     const std::array<long, 3>& extent, const Device& d,
                                     const CompiledResources& compiled) {
  TimeTilePrediction p;
  const double threads = plan.threads();
  const double S = plan.stages, V = double(plan.state.size());

  // Registers: a kernel printed with __launch_bounds__(threads, 1) gets at most what one block
  // of this size leaves per thread; beyond that the estimate spills.
  const double warp = d.warp_size > 0 ? d.warp_size : 32;
  const double per_thread_cap =
      std::min(d.max_registers_per_thread,
               std::floor(d.registers_per_sm / (std::ceil(threads / warp) * warp) / 8) * 8);
  if (compiled.registers > 0) {
    p.registers = compiled.registers;
    p.registers_from_ptxas = true;
    p.spill_bytes = compiled.spill_bytes;
  } else {
    const int wanted = estimated_time_tile_registers(plan);
    p.registers = int(std::min<double>(wanted, per_thread_cap));
    p.spill_bytes = int(std::max(0.0, (wanted - per_thread_cap) * kSpillBytesPerRegister));
  }
  const double shared =
      compiled.shared_bytes >= 0 ? compiled.shared_bytes : double(plan.shared_bytes());
  const Residency residency = resident_blocks(d, threads, p.registers, shared);
  p.blocks_per_sm = residency.blocks;
  p.occupancy_limit = residency.limit;
  if (threads > d.max_threads_per_block || shared > d.shared_memory_per_block ||
      p.blocks_per_sm == 0) {
    p.valid = false;
    p.invalid_reason = fmt::format("{} threads and {:.1f} KiB of shared memory per block do not "
                                   "fit an SM",
                                   threads, shared / 1024);
    p.seconds = std::numeric_limits<double>::infinity();
    return p;
  }

  // Instructions per thread and plane.
  const calc::FlopCounts& f = calc.flops;
  const double fp = S * (double(f.add + f.mul - f.fma + f.other) + 2 * V);
  double shared_loads = 0, shared_stores = 0;
  for (const calc::InputStencil& in : calc.inputs) {
    for (std::size_t v = 0; v < plan.state.size(); ++v)
      if (plan.state[v] == in.grid_function && plan.in_plane[v]) {
        shared_stores += S;
        for (const calc::Offset& o : in.offsets) shared_loads += (o[0] != 0 || o[1] != 0) ? S : 0;
      }
  }
  const double global = V * (plan.arrays_read() + plan.arrays_written());
  const double load_store = shared_loads + shared_stores + global + p.spill_bytes / 8.0;
  const double per_thread = (fp + kPlaneOverheadInstructions) / d.fp64_rate +
                            S * f.div / d.fp64_div_rate + S * f.sqrt / d.fp64_sqrt_rate +
                            S * f.transcendental / d.fp64_special_rate +
                            load_store / d.load_store_rate;
  p.issue = threads * per_thread;
  p.latency = d.dram_latency + d.barrier_latency + d.iteration_overhead +
              S * (d.shared_latency + arithmetic_depth(calc) * d.fp_latency);

  // Blocks, rounds, planes.
  const calc::TimeTile& t = plan.tile;
  p.blocks = ((extent[0] + t.tx - 1) / t.tx) * ((extent[1] + t.ty - 1) / t.ty) *
             ((extent[2] + t.nz - 1) / t.nz);
  p.rounds = std::ceil(double(p.blocks) / (p.blocks_per_sm * d.sm_count));
  p.planes = t.nz + 2 * plan.stages * plan.radius[2];
  const double k = std::min<double>(p.blocks_per_sm, std::ceil(double(p.blocks) / d.sm_count));
  const double plane = std::max(k * p.issue, p.latency);
  p.compute = p.rounds * p.planes * plane / (d.clock_ghz * 1e9);

  // Traffic: what the part reads and writes (calc::TimeTilePlan::arrays_read, arrays_written)
  // once at DRAM; every block's grown columns of the state (and of a later part's stage input)
  // read through L2, the accumulator on the own columns only.
  const double points = double(extent[0]) * double(extent[1]) * double(extent[2]);
  const double grown = plan.arrays_read_grown(), own = plan.arrays_read() - grown;
  p.dram = global * 8 * points / (d.dram_bandwidth * 1e9);
  p.l2 = (double(p.blocks) * threads * p.planes * V * grown +
          V * points * (own + plan.arrays_written())) *
         8 / (d.l2_bandwidth * 1e9);
  p.launch = d.launch_overhead * 1e-6;
  const double body = std::max({p.compute, p.dram, p.l2});
  p.seconds = p.launch + body;
  p.limiter = body == p.dram             ? "DRAM"
              : body == p.l2             ? "L2"
              : k * p.issue >= p.latency ? "issue"
                                         : "latency";
  return p;
}

std::string TimeTilePrediction::text() const {
  if (!valid) return "does not fit: " + invalid_reason;
  return fmt::format("{:.3f} ms ({}-bound; {} registers{}{}, {} block{} per SM, {:.0f} round{} of "
                     "{} planes, {:.0f} cycles issue / {:.0f} latency per plane)",
                     seconds * 1e3, limiter, registers, registers_from_ptxas ? " (ptxas)" : "",
                     spill_bytes > 0 ? fmt::format(", {} B spilled", spill_bytes) : "",
                     blocks_per_sm, blocks_per_sm == 1 ? "" : "s", rounds, rounds == 1 ? "" : "s",
                     planes, issue, latency);
}

} // namespace saguaro::model
