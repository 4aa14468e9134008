// Prints a time-tiled step (see cuda_time_tile.hpp and calc/time_tile.hpp). One thread owns one
// column of the tile grown by the stages' halo; per plane q of the state it reads (one plane
// ahead, so that the load is in flight during the arithmetic):
//
//   queues shifted by one plane; the state's plane q enters
//   centre planes of the values read at x/y neighbours written to shared memory (buffer q & 1)
//   one barrier
//   stage s = 1..S on plane q - s rz (where the thread's column is inside stage s's region):
//     k = f(Y_s): z neighbours from the thread's queue of Y_s, x/y ones from the shared plane
//     Y_{s+1} = y + a_s dt k enters the queue of stage s+1; acc += b_s dt k
//   stage S writes y + dt sum b_s k_s on plane q - S rz of the tile's own columns.
//
// A part of a step (stages f..l, calc/time_tile.hpp) is the same with stage f's input Y_f and
// the accumulator loaded beside the state (the accumulator on the own columns only: nothing
// else of it is ever stored), and, unless it ends the step, Y_{l+1} and the accumulator stored
// instead of the new state. Stage s's coefficients are the tableau's s-th whatever the part.
//
// The stages' own values stay in registers; a shared plane, written once per plane and read
// after the one barrier, is double-buffered so that the next plane's writes need no second
// barrier. Measured by hand first (bench/profile/temporal.cu): B1 at 256^3 on the H100, 0.415 ms
// per RK4 step against 1.8 ms for the folded plain step.
#include "codegen/cuda_time_tile.hpp"

#include "codegen/cuda.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::codegen {

namespace {

using calc::Node;
using calc::NodeId;
using calc::Op;

class TimeTilePrinter : public CudaExpressionEmitter {
public:
  TimeTilePrinter(const calc::Calculation& calc, const calc::TimeTilePlan& plan)
      : CudaExpressionEmitter(calc.dag), calc_(calc), plan_(plan) {
    for (const calc::Store& s : calc.stages.front().stores) roots_.push_back(s.value);
    nodes_ = calc.dag.reachable(roots_);
    for (std::size_t v = 0; v < plan.state.size(); ++v) var_of_[plan.state[v]] = int(v);
    for (std::size_t v = 0, p = 0; v < plan.in_plane.size(); ++v)
      plane_slot_.push_back(plan.in_plane[v] ? int(p++) : -1);
    planes_ = int(std::count(plan.in_plane.begin(), plan.in_plane.end(), true));
  }

  TimeTileKernel print(const std::string& name);

private:
  // Queue names: the state's (plane q - j), stage s's input Y_s (plane q - (s-1) rz - j), the
  // accumulator's (plane q - rz - j).
  static std::string state_q(int v, int j) { return fmt::format("y{}_{}", v, j); }
  static std::string stage_q(int s, int v, int j) { return fmt::format("Y{}_{}_{}", s, v, j); }
  static std::string acc_q(int v, int j) { return fmt::format("a{}_{}", v, j); }
  // A later part's loaded stage input Y_first (plane q - j) and accumulator (plane q - j).
  static std::string loaded_q(int v, int j) { return fmt::format("x{}_{}", v, j); }
  static std::string acc_in_q(int v, int j) { return fmt::format("c{}_{}", v, j); }
  // Local stage i's input: the state (a step's first stage), the loaded Y_first, or the queue
  // the stage before fills.
  std::string input(int i, int v, int j) const {
    if (i > 1) return stage_q(i, v, j);
    return plan_.first == 1 ? state_q(v, j) : loaded_q(v, j);
  }
  std::string stage_body(int i);
  void print_signature(std::ostringstream& o, const std::string& name,
                       const std::vector<int>& parameters) const;
  void print_columns(std::ostringstream& o) const;
  // "12800 + tid": this thread's entry of stage s's centre plane of variable v in `buffer`.
  std::string plane_offset(int s, int v) const {
    return fmt::format("{} + tid",
                       ((s - 1) * planes_ + plane_slot_[std::size_t(v)]) * plan_.threads());
  }

  const calc::Calculation& calc_;
  const calc::TimeTilePlan& plan_;
  std::vector<NodeId> roots_, nodes_;
  std::map<int, int> var_of_;   // grid function -> evolved variable
  std::vector<int> plane_slot_; // per variable: its shared plane's slot, or -1
  int planes_ = 0;
};

// Local stage i (the part's i-th, the step's stage first + i - 1) on its plane: the right-hand
// side, then the stage's combinations.
std::string TimeTilePrinter::stage_body(int i) {
  const int S = plan_.stages, rz = plan_.radius[2], V = int(plan_.state.size());
  const int s = plan_.first + i - 1; // the tableau's stage
  const bool ends = plan_.ends_step();
  const int bx = plan_.block_x();
  std::ostringstream o;
  for (NodeId id : nodes_) {
    const Node& n = dag_.node(id);
    if (n.uniform) continue;
    o << "      const double n" << id << " = ";
    if (n.op == Op::Load) {
      const int v = var_of_.at(n.index);
      const auto& off = n.offset;
      if (off[0] == 0 && off[1] == 0) {
        o << input(i, v, rz - off[2]);
      } else {
        const int d = off[0] + off[1] * bx;
        o << fmt::format("buffer[{}{}{}]", plane_offset(i, v), d < 0 ? " - " : " + ", std::abs(d));
      }
    } else {
      o << varying_expr(id);
    }
    o << ";\n";
  }
  const std::vector<calc::Store>& stores = calc_.stages.front().stores;
  for (int v = 0; v < V; ++v) {
    const std::string k = ref(stores[std::size_t(plan_.rhs[std::size_t(v)])].value);
    // The state on this stage's plane: for the next stage's input, and as the accumulator's
    // start at the step's first stage.
    const std::string y = state_q(v, i * rz);
    const std::string next = y + " + tab.a[" + std::to_string(s - 1) + "] * " + k;
    if (i < S)
      o << "      " << stage_q(i + 1, v, 0) << " = " << next << ";\n";
    else if (!ends)
      o << "      if (store) y" << v << "_out[col + zo] = " << next << ";\n";
    const std::string before = s == 1 ? y : i == 1 ? acc_in_q(v, rz) : acc_q(v, (i - 1) * rz);
    const std::string sum = before + " + tab.b[" + std::to_string(s - 1) + "] * " + k;
    if (i < S)
      o << "      " << acc_q(v, (i - 1) * rz) << " = " << sum << ";\n";
    else if (ends)
      o << "      if (store) y" << v << "_out[col + zo] = " << sum << ";\n";
    else
      o << "      if (store) acc" << v << "_out[col + zo] = " << sum << ";\n";
  }
  return o.str();
}

// The kernel's signature (cuda_time_tile.hpp's calling convention) up to its opening brace.
void TimeTilePrinter::print_signature(std::ostringstream& o, const std::string& name,
                                      const std::vector<int>& parameters) const {
  const int V = int(plan_.state.size());
  o << "extern \"C\" __global__ void __launch_bounds__(" << plan_.threads() << ", 1) " << name
    << "(\n";
  std::vector<std::string> args;
  for (int v = 0; v < V; ++v) args.push_back(fmt::format("const double* __restrict__ y{}", v));
  for (int v = 0; v < V; ++v) args.push_back(fmt::format("const double* __restrict__ x{}", v));
  for (int v = 0; v < V; ++v) args.push_back(fmt::format("const double* __restrict__ acc{}", v));
  for (int v = 0; v < V; ++v) args.push_back(fmt::format("double* __restrict__ y{}_out", v));
  for (int v = 0; v < V; ++v) args.push_back(fmt::format("double* __restrict__ acc{}_out", v));
  args.push_back("const saguaro_cuda_geometry g");
  args.push_back("const saguaro_tableau tab");
  for (int p : parameters) args.push_back("const double p" + std::to_string(p));
  for (std::size_t a = 0; a < args.size(); ++a)
    o << "    " << args[a] << (a + 1 < args.size() ? ",\n" : ") {\n");
}

// The wait for the previous kernel, this thread's column of the grown tile, the regions of the
// stages and the block's planes.
void TimeTilePrinter::print_columns(std::ostringstream& o) const {
  const int S = plan_.stages, rz = plan_.radius[2];
  const int bx = plan_.block_x(), by = plan_.block_y(), hx = plan_.halo(0), hy = plan_.halo(1);
  const int rx = plan_.radius[0], ry = plan_.radius[1];
  o << "  SAGUARO_AFTER_PREVIOUS_KERNEL();\n";
  o << "  // This thread's column of the grown tile, wrapped around the periodic box.\n";
  o << "  const int tid = int(threadIdx.x), lx = tid % " << bx << ", ly = tid / " << bx << ";\n";
  o << "  const int nx = g.hi[0] - g.lo[0], ny = g.hi[1] - g.lo[1], nz = g.hi[2] - g.lo[2];\n";
  o << "  const int ox = int(blockIdx.x) * " << plan_.tile.tx << " + lx - " << hx
    << ", oy = int(blockIdx.y) * " << plan_.tile.ty << " + ly - " << hy << ";\n";
  o << "  const long long sy = g.pitch, sz = sy * g.alloc[1];\n";
  o << "  const long long col = g.lo[0] + ((ox % nx) + nx) % nx + (g.lo[1] + ((oy % ny) + ny) % "
       "ny) * sy;\n";
  o << "  const bool own = lx >= " << hx << " && lx < " << hx + plan_.tile.tx << " && ly >= " << hy
    << " && ly < " << hy + plan_.tile.ty << " && ox < nx && oy < ny;\n";
  for (int i = 1; i <= S; ++i)
    o << "  const bool in" << i << " = lx >= " << i * rx << " && lx < " << bx - i * rx
      << " && ly >= " << i * ry << " && ly < " << by - i * ry << "; // stage " << i
      << "'s region\n";
  o << "  const int z0 = int(blockIdx.z) * " << plan_.tile.nz << ", z1 = min(z0 + " << plan_.tile.nz
    << ", nz);\n";
  // The wrapped index of the plane loaded next, advanced by one per plane (no modulo in the loop).
  o << "  int zn = ((z0 - " << S * rz << ") % nz + nz) % nz;\n";
}

TimeTileKernel TimeTilePrinter::print(const std::string& name) {
  const int S = plan_.stages, rz = plan_.radius[2], V = int(plan_.state.size());
  const int total = plan_.step_stages();
  if (total > kMaxTimeTileStages)
    throw std::invalid_argument(
        fmt::format("a time-tiled step of {} stages (at most {})", total, kMaxTimeTileStages));
  const bool later = plan_.first > 1, ends = plan_.ends_step();
  // The state is read by the first stage's stencil (a step's first part) and on every stage's
  // plane whose combination takes it.
  const int state_depth =
      plan_.reads_state() ? std::max({later ? 0 : 2 * rz, (ends ? S - 1 : S) * rz, rz}) + 1 : 0;
  const int acc_depth = (S - 1) * rz + 1;
  // The bodies and uniform values first: they create the helpers and hoisted factors.
  std::vector<std::string> bodies;
  for (int i = 1; i <= S; ++i) bodies.push_back(stage_body(i));
  std::ostringstream uniforms;
  std::set<int> parameters;
  for (NodeId id : nodes_) {
    const Node& n = dag_.node(id);
    if (n.uniform && n.op != Op::Constant)
      uniforms << "  const double u" << id << " = " << uniform_expr(id) << ";\n";
    if (n.op == Op::Parameter) parameters.insert(n.index);
  }

  TimeTileKernel out;
  out.name = name;
  out.threads = plan_.threads();
  out.shared_bytes = plan_.shared_bytes();
  out.parameters.assign(parameters.begin(), parameters.end());

  std::ostringstream o;
  o << "// Generated by Saguaro (CUDA backend): calculation '" << calc_.name << "' as a "
    << plan_.text() << ".\n";
  o << "// Double precision; arrays are C order [z][y][x], x fastest.\n";
  o << cuda_prelude(helpers());
  o << "struct saguaro_tableau {\n  double a[" << kMaxTimeTileStages << "];\n  double b["
    << kMaxTimeTileStages << "];\n};\n\n";
  print_signature(o, name, out.parameters);
  print_columns(o);
  if (planes_ > 0) o << "  extern __shared__ double saguaro_smem[];\n";
  o << "  // Values uniform over the grid.\n";
  o << uniforms.str();
  for (const auto& [hname, text] : hoisted())
    o << "  const double " << hname << " = " << text << ";\n";
  o << "  // Queues: the state (plane q - j), stage i's input (plane q - (i-1)"
    << "*" << rz << " - j), the accumulator (plane q - " << rz << " - j)"
    << (later ? "; the loaded stage input and accumulator (plane q - j)" : "") << ".\n";
  // What is loaded per plane: the state, and after the first part the stage's input and the
  // accumulator (own columns only).
  std::vector<std::pair<std::string, std::string>> loads; // (next register prefix, array)
  if (plan_.reads_state()) loads.push_back({"next", "y"});
  if (later) {
    loads.push_back({"nextx", "x"});
    loads.push_back({"nextc", "acc"});
  }
  auto load = [&](const std::string& array, int v) {
    const std::string at = array + std::to_string(v) + "[col + z]";
    return array == "acc" ? "own ? " + at + " : 0.0" : at;
  };
  for (int v = 0; v < V; ++v) {
    o << "  double next" << v << " = 0";
    if (later) o << ", nextx" << v << ", nextc" << v;
    for (int j = 0; j < state_depth; ++j) o << ", " << state_q(v, j) << " = 0";
    if (later) {
      for (int j = 0; j <= 2 * rz; ++j) o << ", " << loaded_q(v, j) << " = 0";
      for (int j = 0; j <= rz; ++j) o << ", " << acc_in_q(v, j) << " = 0";
    }
    for (int i = 2; i <= S; ++i)
      for (int j = 0; j <= 2 * rz; ++j) o << ", " << stage_q(i, v, j) << " = 0";
    if (S > 1)
      for (int j = 0; j < acc_depth; ++j) o << ", " << acc_q(v, j) << " = 0";
    o << ";\n";
  }
  o << "  {\n    const long long z = (long long)(g.lo[2] + zn) * sz;\n";
  for (int v = 0; v < V; ++v)
    for (const auto& [reg, array] : loads)
      o << "    " << reg << v << " = " << load(array, v) << ";\n";
  o << "  }\n";
  auto shift = [&](const std::string& reg, std::string (*queue)(int, int), int v, int depth) {
    for (int j = depth - 1; j > 0; --j)
      o << "    " << queue(v, j) << " = " << queue(v, j - 1) << ";\n";
    o << "    " << queue(v, 0) << " = " << reg << v << ";\n";
  };
  o << "  for (int q = z0 - " << S * rz << "; q < z1 + " << S * rz << "; ++q) {\n";
  for (int v = 0; v < V; ++v) {
    if (state_depth > 0) shift("next", state_q, v, state_depth);
    if (later) {
      shift("nextx", loaded_q, v, 2 * rz + 1);
      shift("nextc", acc_in_q, v, rz + 1);
    }
    for (int i = 2; i <= S; ++i)
      for (int j = 2 * rz; j > 0; --j)
        o << "    " << stage_q(i, v, j) << " = " << stage_q(i, v, j - 1) << ";\n";
    if (S > 1)
      for (int j = acc_depth - 1; j > 0; --j)
        o << "    " << acc_q(v, j) << " = " << acc_q(v, j - 1) << ";\n";
  }
  if (planes_ > 0) {
    o << "    // The centre planes, stage i's at q - i*" << rz << ", per stage and variable read\n"
      << "    // in plane.\n";
    o << "    double* const buffer = saguaro_smem + (q & 1) * " << S * planes_ * plan_.threads()
      << ";\n";
    for (int i = 1; i <= S; ++i)
      for (int v = 0; v < V; ++v)
        if (plane_slot_[std::size_t(v)] >= 0)
          o << "    buffer[" << plane_offset(i, v) << "] = " << input(i, v, rz) << ";\n";
  }
  o << "    if (q + 1 < z1 + " << S * rz << ") {\n      zn = zn + 1 == nz ? 0 : zn + 1;\n"
    << "      const long long z = (long long)(g.lo[2] + zn) * sz;\n";
  for (int v = 0; v < V; ++v)
    for (const auto& [reg, array] : loads)
      o << "      " << reg << v << " = " << load(array, v) << ";\n";
  o << "    }\n";
  if (planes_ > 0) o << "    __syncthreads();\n";
  for (int i = 1; i <= S; ++i) {
    o << "    if (in" << i << ") { // stage " << plan_.first + i - 1 << " on plane q - " << i * rz
      << "\n";
    if (i == S) {
      o << "      const int zs = q - " << S * rz << ";\n";
      o << "      const bool store = own && zs >= z0 && zs < z1;\n";
      o << "      const long long zo = (long long)(g.lo[2] + zs) * sz;\n";
    }
    o << bodies[std::size_t(i - 1)];
    o << "    }\n";
  }
  o << "  }\n}\n";
  out.source = o.str();
  return out;
}

} // namespace

TimeTileKernel generate_time_tile_cuda(const calc::Calculation& calc,
                                       const calc::TimeTilePlan& plan, const std::string& name) {
  TimeTilePrinter printer(calc, plan);
  return printer.print(name);
}

std::array<unsigned, 3> time_tile_grid(const calc::TimeTilePlan& plan, const std::array<int, 3>& lo,
                                       const std::array<int, 3>& hi) {
  auto blocks = [](int n, int per) { return n <= 0 ? 0u : unsigned((n + per - 1) / per); };
  return {blocks(hi[0] - lo[0], plan.tile.tx), blocks(hi[1] - lo[1], plan.tile.ty),
          blocks(hi[2] - lo[2], plan.tile.nz)};
}

TimeTileTableau time_tile_tableau(const std::vector<double>& a, const std::vector<double>& b) {
  if (b.size() > std::size_t(kMaxTimeTileStages) || a.size() + 1 != b.size())
    throw std::invalid_argument(fmt::format(
        "a time-tiled step takes 1 to {} stages with one sub-diagonal coefficient fewer; got {} "
        "and {}",
        kMaxTimeTileStages, b.size(), a.size()));
  TimeTileTableau t;
  std::copy(a.begin(), a.end(), t.a);
  std::copy(b.begin(), b.end(), t.b);
  return t;
}

} // namespace saguaro::codegen
