// CUDA code generation for one mapping: see cuda.hpp for the calling convention and
// calc/mapping.hpp for the design space. Each kernel is written as
//
//   region, strides and this thread's point       (once)
//   uniform values and hoisted factors            (once; parameters are kernel arguments)
//   register pipelines preloaded, shared tiles    (once per block: strategies r, b)
//   for e in this thread's t_ee points:
//     shared plane of the current e-plane         (strategy p, between two barriers)
//     loads, arithmetic, stores                   (loads first, so they are in flight together)
//     register pipelines shifted by one point     (strategies r, p)
//
// Threads outside the region leave at once when the kernel has no barriers, so the main body
// has no bounds test; with barriers (b, p) they stay for the barriers and only their
// arithmetic and stores are skipped.
#include "codegen/cuda.hpp"

#include "codegen/cpp.hpp"
#include "codegen/expression.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#define SAGUARO_STR_(x) #x
#define SAGUARO_STR(x) SAGUARO_STR_(x)

namespace saguaro::codegen {

using calc::Buffering;
using calc::Function;
using calc::Node;
using calc::NodeId;
using calc::Offset;
using calc::Op;

namespace {

const char* kAxis[3] = {"x", "y", "z"};

const char* cuda_function(Function fn) {
  switch (fn) {
  case Function::Sin: return "sin";
  case Function::Cos: return "cos";
  case Function::Tan: return "tan";
  case Function::Asin: return "asin";
  case Function::Acos: return "acos";
  case Function::Atan: return "atan";
  case Function::Atan2: return "atan2";
  case Function::Sinh: return "sinh";
  case Function::Cosh: return "cosh";
  case Function::Tanh: return "tanh";
  case Function::Exp: return "exp";
  case Function::Log: return "log";
  case Function::Sqrt: return "sqrt";
  case Function::Abs: return "fabs";
  case Function::Pow: return "pow";
  case Function::Min: return "fmin"; // the other argument when one is a NaN, as on the CPU
  case Function::Max: return "fmax";
  case Function::Sign: return "saguaro_sign";
  case Function::Fmod: return "fmod";
  }
  return "?";
}

const char* kCudaHelpers[][2] = {
    {"saguaro_sign", "__device__ inline double saguaro_sign(double a) {\n"
                     "  return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0);\n}\n"},
    {"saguaro_powi", "__device__ inline double saguaro_powi(double x, long n) {\n"
                     "  double r = 1.0;\n"
                     "  for (; n > 0; n >>= 1, x *= x)\n"
                     "    if (n & 1) r *= x;\n"
                     "  return r;\n}\n"},
};

std::string name_part(int d) {
  return (d < 0 ? "m" : "") + std::to_string(std::abs(d));
}

// "o_x1_ym2" for the point offset (1,-2,0).
std::string offset_name(const Offset& o) {
  std::string s = "o";
  for (int a = 0; a < 3; ++a)
    if (o[a] != 0) s += std::string("_") + kAxis[a] + name_part(o[a]);
  return s;
}

std::string sanitize(const std::string& name) {
  std::string out;
  for (char ch : name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    out += ok ? ch : '_';
  }
  return out;
}

// The box of a stencil's offsets along each axis, [min, max], containing 0 when `with_zero`.
struct Extent {
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
};
Extent extent_of(const std::vector<Offset>& offsets, bool with_zero) {
  Extent x;
  bool first = !with_zero;
  for (const Offset& o : offsets) {
    for (int a = 0; a < 3; ++a) {
      x.lo[a] = first ? o[a] : std::min(x.lo[a], o[a]);
      x.hi[a] = first ? o[a] : std::max(x.hi[a], o[a]);
    }
    first = false;
  }
  return x;
}

class KernelEmitter : public ExpressionEmitter {
public:
  KernelEmitter(const calc::Calculation& calc, const calc::KernelMapping& km,
                const calc::KernelPlan& plan)
      : ExpressionEmitter(calc.dag), calc_(calc), km_(km), plan_(plan), e_(km.block.iteration_axis),
        f_(km.block.f_axis()) {}

  // The kernel's text; fills `k` (fields, temporaries, parameters, shared bytes).
  // `whole_register_file`: __launch_bounds__(threads, 1), so ptxas may use 255 registers.
  std::string emit(CudaKernel& k, const std::map<NodeId, int>& temporary_slot,
                   bool whole_register_file);

private:
  std::string function_name(Function fn) const override { return cuda_function(fn); }
  std::string uniform_leaf(const Node& n) const override {
    switch (n.op) {
    case Op::Parameter: return "p" + std::to_string(n.index);
    case Op::Spacing: return "g.spacing[" + std::to_string(n.index) + "]";
    default: return "g.time";
    }
  }

  Buffering strategy(int g) const {
    auto it = km_.buffering.find(g);
    return it == km_.buffering.end() ? Buffering::Unbuffered : it->second;
  }
  // Global offset constant (in points) for a point offset, declared on first use.
  std::string global_offset(const Offset& o) {
    if (o == Offset{0, 0, 0}) return "";
    std::string name = offset_name(o);
    offsets_.insert(o);
    return " + " + name;
  }
  std::string reg(int g, int d) const { return "r" + std::to_string(g) + "_" + name_part(d); }

  const calc::Calculation& calc_;
  const calc::KernelMapping& km_;
  const calc::KernelPlan& plan_;
  const int e_, f_;
  std::set<Offset> offsets_;
};

std::string KernelEmitter::emit(CudaKernel& k, const std::map<NodeId, int>& temporary_slot,
                                bool whole_register_file) {
  const calc::BlockConfig& blk = km_.block;
  const calc::Stage& stage = calc_.stages[km_.stage];
  const int tx = blk.tx, tf = blk.tf, tee = blk.tee;
  const char* E = kAxis[e_];
  const char* F = kAxis[f_];

  // Per input: its stencil and how each offset is read.
  std::map<int, std::vector<Offset>> stencil;
  for (const calc::InputStencil& in : plan_.inputs) stencil[in.grid_function] = in.offsets;
  std::set<int> written(plan_.outputs.begin(), plan_.outputs.end());

  // Register pipelines (r, p): the e-line range [lo, hi] per grid function.
  std::map<int, std::pair<int, int>> pipeline;
  // Shared tiles (b) and planes (p): element offset in dynamic shared memory and dimensions.
  struct Tile {
    std::size_t base = 0;
    Extent ext;
    int nx = 0, nf = 0, ne = 1;
  };
  std::map<int, Tile> tiles, planes;
  std::size_t shared = 0; // doubles
  for (const auto& [g, offs] : stencil) {
    Buffering b = strategy(g);
    if (b == Buffering::Register || b == Buffering::Plus) {
      std::vector<Offset> line;
      for (const Offset& o : offs)
        if (o[0] == 0 && o[f_] == 0) line.push_back(o);
      Extent x = extent_of(line, b == Buffering::Plus);
      pipeline[g] = {x.lo[e_], x.hi[e_]};
    }
    if (b == Buffering::Shared) {
      Tile t;
      t.ext = extent_of(offs, true);
      t.nx = tx + t.ext.hi[0] - t.ext.lo[0];
      t.nf = tf + t.ext.hi[f_] - t.ext.lo[f_];
      t.ne = tee + t.ext.hi[e_] - t.ext.lo[e_];
      t.base = shared;
      shared += std::size_t(t.nx) * t.nf * t.ne;
      tiles[g] = t;
    }
    if (b == Buffering::Plus) {
      std::vector<Offset> plane;
      for (const Offset& o : offs)
        if (o[e_] == 0) plane.push_back(o);
      Tile t;
      t.ext = extent_of(plane, true);
      t.nx = tx + t.ext.hi[0] - t.ext.lo[0];
      t.nf = tf + t.ext.hi[f_] - t.ext.lo[f_];
      t.base = shared;
      shared += std::size_t(t.nx) * t.nf;
      planes[g] = t;
    }
  }
  const bool barriers = !tiles.empty() || !planes.empty();
  const bool plane_barriers = !planes.empty();

  // The body: loads and arithmetic depth first from each stored value in turn, each store right
  // after its value, so that a value lives from its first use to its last rather than from
  // the start of the body (the plan's id order computes every derivative first: BSSN's
  // right-hand side then spilled 5.7 KB per thread). A kernel that reads a grid function it
  // writes keeps its stores at the end, where no load can see them.
  std::ostringstream loads, body, stores;
  std::set<int> coordinate_axes;
  for (NodeId id : plan_.temporaries_in) {
    int slot = temporary_slot.at(id);
    loads << "    const double n" << id << " = t" << slot << "[idx];\n";
  }
  const std::set<NodeId> evaluated(plan_.nodes.begin(), plan_.nodes.end());
  bool reads_what_it_writes = false;
  for (int g : written) reads_what_it_writes = reads_what_it_writes || stencil.count(g) > 0;
  std::set<NodeId> emitted;
  auto emit_node = [&](NodeId id) {
    const Node& n = dag_.node(id);
    if (n.op == Op::Load) {
      const int g = n.index;
      const Offset& o = n.offset;
      const std::string f = "f" + std::to_string(g);
      std::string text;
      switch (strategy(g)) {
      case Buffering::Unbuffered: text = f + "[idx" + global_offset(o) + "]"; break;
      case Buffering::ReadOnly: text = "__ldg(" + f + " + idx" + global_offset(o) + ")"; break;
      case Buffering::Register: text = reg(g, o[e_]); break;
      case Buffering::Shared: {
        const Tile& t = tiles.at(g);
        long c = long(o[e_]) * t.nf * t.nx + long(o[f_]) * t.nx + o[0];
        text = "s" + std::to_string(g) + "[sb" + std::to_string(g) + (c >= 0 ? " + " : " - ") +
               std::to_string(std::labs(c)) + "]";
        break;
      }
      case Buffering::Plus: {
        if (o[0] == 0 && o[f_] == 0) {
          text = reg(g, o[e_]);
        } else if (o[e_] == 0) {
          const Tile& t = planes.at(g);
          long c = long(o[f_]) * t.nx + o[0];
          text = "q" + std::to_string(g) + "[qb" + std::to_string(g) + (c >= 0 ? " + " : " - ") +
                 std::to_string(std::labs(c)) + "]";
        } else {
          text = f + "[idx" + global_offset(o) + "]";
        }
        break;
      }
      }
      body << "    const double n" << id << " = " << text << ";\n";
    } else if (n.op == Op::Coordinate) {
      int a = n.index;
      coordinate_axes.insert(a);
      std::string text = kAxis[a];
      if (int off = n.offset[a]; off != 0)
        text += " + " + hoist(std::to_string(off) + ".0 * g.spacing[" + std::to_string(a) + "]");
      body << "    const double n" << id << " = " << text << ";\n";
    } else {
      body << "    const double n" << id << " = " << varying_expr(id) << ";\n";
    }
  };
  // Post-order, iteratively (BSSN's expressions nest hundreds deep).
  auto emit_tree = [&](NodeId root) {
    std::vector<std::pair<NodeId, std::size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const Node& n = dag_.node(id);
      if (emitted.count(id) || !evaluated.count(id) || n.uniform) {
        stack.pop_back();
        continue;
      }
      if (next < n.kids.size()) {
        const NodeId kid = n.kids[next++];
        stack.push_back({kid, 0});
        continue;
      }
      emitted.insert(id);
      emit_node(id);
      stack.pop_back();
    }
  };
  std::ostringstream& store_to = reads_what_it_writes ? stores : body;
  for (int st : km_.stores) {
    const calc::Store& s = stage.stores[st];
    emit_tree(s.value);
    store_to << "    f" << s.grid_function << "[idx] = " << ref(s.value) << ";\n";
  }
  for (NodeId t : km_.temporaries) {
    emit_tree(t);
    store_to << "    t" << temporary_slot.at(t) << "[idx] = " << ref(t) << ";\n";
  }

  // Arguments.
  std::set<int> fields;
  for (const auto& [g, offs] : stencil) fields.insert(g);
  for (int g : written) fields.insert(g);
  std::set<int> parameters;
  std::set<NodeId> uniform;
  for (NodeId id : dag_.reachable(plan_.roots)) {
    const Node& n = dag_.node(id);
    if (!n.uniform || n.op == Op::Constant) continue;
    uniform.insert(id);
    if (n.op == Op::Parameter) parameters.insert(n.index);
  }
  // Uniform values are emitted before the hoisted factors that use them (computing the
  // expressions first creates the hoisted ones).
  std::ostringstream uniforms;
  for (NodeId id : uniform)
    uniforms << "  const double u" << id << " = " << uniform_expr(id) << ";\n";

  k.block = blk;
  k.stage = km_.stage;
  k.extent_lo = stage.extent_lo;
  k.extent_hi = stage.extent_hi;
  k.shared_bytes = shared * sizeof(double);
  for (int g : fields) {
    k.fields.push_back(g);
    k.field_written.push_back(written.count(g) > 0);
  }
  for (NodeId t : plan_.temporaries_in) {
    k.temporaries.push_back(t);
    k.temporary_written.push_back(false);
  }
  for (NodeId t : km_.temporaries) {
    k.temporaries.push_back(t);
    k.temporary_written.push_back(true);
  }
  k.parameters.assign(parameters.begin(), parameters.end());

  std::ostringstream o;
  // Header comment: what the kernel does and how.
  o << "// Calculation '" << calc_.name << "', kernel " << k.kernel << " (stage " << km_.stage
    << "): stores";
  for (int st : km_.stores) o << " " << calc_.grid_functions[stage.stores[st].grid_function].name;
  if (!km_.temporaries.empty()) o << " and " << km_.temporaries.size() << " temporaries";
  o << ".\n// Block: " << tx << " x " << tf << " threads along x and " << F << ", " << tee
    << " points per thread along " << E << ".\n";
  for (const auto& [g, offs] : stencil)
    o << "// " << calc_.grid_functions[g].name << ": " << describe(strategy(g)) << ", "
      << offs.size() << (offs.size() == 1 ? " offset" : " offsets") << "\n";
  // Given only the block size, ptxas (CUDA 13.0, sm_90) trades registers for occupancy, and
  // not always well: it once squeezed the BSSN right-hand side into 32 registers and 14 KB of
  // stack per thread (24 KB of spill stores), where a minimum of 1 block per SM gave 255
  // registers and 5.7 KB; yet small kernels given that minimum take 2-3x the registers they
  // need. So the runtime compiles once as below, and again with `whole_register_file` for the
  // kernels that spilled, keeping whichever spills less (runtime::cuda::compile_generated).
  o << "extern \"C\" __global__ void __launch_bounds__(" << tx * tf
    << (whole_register_file ? ", 1" : "") << ") " << k.name << "(\n";
  std::vector<std::string> args;
  for (int g : fields)
    args.push_back((written.count(g) ? "double* __restrict__ f" : "const double* __restrict__ f") +
                   std::to_string(g));
  for (std::size_t t = 0; t < k.temporaries.size(); ++t)
    args.push_back(
        (k.temporary_written[t] ? "double* __restrict__ t" : "const double* __restrict__ t") +
        std::to_string(temporary_slot.at(k.temporaries[t])));
  args.push_back("const saguaro_cuda_geometry g");
  for (int p : parameters) args.push_back("const double p" + std::to_string(p));
  for (std::size_t a = 0; a < args.size(); ++a)
    o << "    " << args[a] << (a + 1 < args.size() ? ",\n" : ") {\n");

  auto bound = [](const char* side, int a, int extent) {
    std::string s = std::string("g.") + side + "[" + std::to_string(a) + "]";
    if (extent != 0) s += std::string(side[0] == 'l' ? " - " : " + ") + std::to_string(extent);
    return s;
  };
  o << "  // This stage's region, [lo - extent_lo, hi + extent_hi).\n";
  o << "  const int x_end = " << bound("hi", 0, stage.extent_hi[0]) << ";\n";
  o << "  const int " << F << "_end = " << bound("hi", f_, stage.extent_hi[f_]) << ";\n";
  o << "  const int " << E << "_end = " << bound("hi", e_, stage.extent_hi[e_]) << ";\n";
  o << "  const long long sy = g.alloc[0];\n";
  o << "  const long long sz = sy * g.alloc[1];\n";
  o << "  const long long s_e = s" << E << ", s_f = s" << F << "; // strides along e = " << E
    << " and f = " << F << "\n";
  o << "  const int x_block = " << bound("lo", 0, stage.extent_lo[0]) << " + int(blockIdx.x) * "
    << tx << ";\n";
  o << "  const int " << F << "_block = " << bound("lo", f_, stage.extent_lo[f_])
    << " + int(blockIdx.y) * " << tf << ";\n";
  o << "  const int i = x_block + int(threadIdx.x);\n";
  o << "  const int " << F << "i = " << F << "_block + int(threadIdx.y);\n";
  o << "  const int " << E << "_begin = " << bound("lo", e_, stage.extent_lo[e_])
    << " + int(blockIdx.z) * " << tee << ";\n";
  o << "  const int " << E << "_stop = min(" << E << "_begin + " << tee << ", " << E << "_end);\n";
  o << "  const bool active = i < x_end && " << F << "i < " << F << "_end;\n";
  if (!barriers)
    o << "  if (!active) return;\n";
  else
    o << "  // Points outside the array (partial blocks) load nothing.\n"
      << "  const bool inside = i < g.alloc[0] && " << F << "i < g.alloc[" << f_ << "];\n";
  o << "  const long long idx0 = i + " << F << "i * s_f + " << E << "_begin * s_e;\n";

  // Coordinates along x and f are fixed per thread.
  if (coordinate_axes.count(0))
    o << "  const double x = g.origin[0] + double(i + g.index_offset[0]) * g.spacing[0];\n";
  if (coordinate_axes.count(f_))
    o << "  const double " << F << " = g.origin[" << f_ << "] + double(" << F
      << "i + g.index_offset[" << f_ << "]) * g.spacing[" << f_ << "];\n";

  if (!uniform.empty() || !hoisted().empty()) o << "  // Values uniform over the grid.\n";
  o << uniforms.str();
  for (const auto& [name, text] : hoisted())
    o << "  const double " << name << " = " << text << ";\n";
  if (!offsets_.empty()) o << "  // Stencil offsets in points.\n";
  for (const Offset& off : offsets_) {
    std::string text;
    auto term = [&text](int c, const char* stride) {
      if (c == 0) return;
      std::string mag = std::to_string(std::abs(c));
      std::string t =
          *stride ? (std::abs(c) == 1 ? std::string(stride) : mag + " * " + stride) : mag;
      text += text.empty() ? (c < 0 ? "-" + t : t) : (c < 0 ? " - " : " + ") + t;
    };
    term(off[0], "");
    term(off[1], "sy");
    term(off[2], "sz");
    o << "  const long long " << offset_name(off) << " = " << text << ";\n";
  }

  auto guarded = [barriers](const std::string& load) {
    return barriers ? "inside ? " + load + " : 0.0" : load;
  };
  // Register pipelines: preload [lo, hi - 1] of the first point.
  for (const auto& [g, range] : pipeline) {
    o << "  // " << calc_.grid_functions[g].name << ": registers along " << E << " for offsets "
      << range.first << " .. " << range.second << ".\n";
    o << "  double";
    for (int d = range.first; d <= range.second; ++d)
      o << (d == range.first ? " " : ", ") << reg(g, d);
    o << ";\n";
    for (int d = range.first; d < range.second; ++d)
      o << "  " << reg(g, d) << " = "
        << guarded("f" + std::to_string(g) + "[idx0 + " + std::to_string(d) + " * s_e]") << ";\n";
  }
  if (barriers) o << "  extern __shared__ double saguaro_smem[];\n";
  // Shared tiles: the block's points grown by the stencil, loaded once.
  for (const auto& [g, t] : tiles) {
    const std::string s = "s" + std::to_string(g);
    o << "  // " << calc_.grid_functions[g].name << ": shared tile " << t.nx << " x " << t.nf
      << " x " << t.ne << " (x, " << F << ", " << E << ").\n";
    o << "  double* const " << s << " = saguaro_smem + " << t.base << ";\n";
    o << "  for (int t = int(threadIdx.y) * " << tx << " + int(threadIdx.x); t < "
      << t.nx * t.nf * t.ne << "; t += " << tx * tf << ") {\n";
    o << "    const int a = x_block + " << t.ext.lo[0] << " + t % " << t.nx << ";\n";
    o << "    const int b = " << F << "_block + " << t.ext.lo[f_] << " + (t / " << t.nx << ") % "
      << t.nf << ";\n";
    o << "    const int c = " << E << "_begin + " << t.ext.lo[e_] << " + t / " << t.nx * t.nf
      << ";\n";
    o << "    " << s << "[t] = (a >= 0 && a < g.alloc[0] && b >= 0 && b < g.alloc[" << f_
      << "] && c >= 0 && c < g.alloc[" << e_ << "])\n"
      << "        ? f" << g << "[a + b * s_f + c * s_e] : 0.0;\n";
    o << "  }\n";
    o << "  int sb" << g << " = (int(threadIdx.y) - " << t.ext.lo[f_] << ") * " << t.nx
      << " + int(threadIdx.x) - " << t.ext.lo[0] << " - " << t.ext.lo[e_] * t.nf * t.nx << ";\n";
  }
  if (!tiles.empty()) {
    o << "  __syncthreads();\n";
    if (!plane_barriers) o << "  if (!active) return;\n";
  }
  // A plane's halo (its points that are no thread's own) is filled by slots: slot k of a
  // thread is plane entry qt + k * threads. Each slot's value is loaded one plane ahead into a
  // register, so the DRAM latency of the halo overlaps the current plane's arithmetic instead
  // of standing between the barriers of every step.
  const int threads = tx * tf;
  auto halo_slots = [threads](const Tile& t) { return (t.nx * t.nf + threads - 1) / threads; };
  if (!planes.empty())
    o << "  const int qt = int(threadIdx.y) * " << tx << " + int(threadIdx.x);\n";
  for (const auto& [g, t] : planes) {
    const std::string q = "q" + std::to_string(g), G = std::to_string(g);
    o << "  // " << calc_.grid_functions[g].name << ": shared plane " << t.nx << " x " << t.nf
      << " (x, " << F << ") of the current " << E << ", its halo in " << halo_slots(t)
      << " slot(s) per thread.\n";
    o << "  double* const " << q << " = saguaro_smem + " << t.base << ";\n";
    o << "  const int qb" << G << " = (int(threadIdx.y) - " << t.ext.lo[f_] << ") * " << t.nx
      << " + int(threadIdx.x) - " << t.ext.lo[0] << ";\n";
    for (int k = 0; k < halo_slots(t); ++k) {
      const std::string K = G + "_" + std::to_string(k);
      o << "  bool qw" << K << " = false, qr" << K << " = false; // write the slot; load it\n";
      o << "  long long qo" << K << " = 0;\n";
      o << "  {\n";
      o << "    const int t = qt + " << k * threads << ";\n";
      o << "    const int a = " << t.ext.lo[0] << " + t % " << t.nx << ", b = " << t.ext.lo[f_]
        << " + t / " << t.nx << ";\n";
      o << "    const int ga = x_block + a, gb = " << F << "_block + b;\n";
      o << "    qw" << K << " = t < " << t.nx * t.nf << " && !(a >= 0 && a < " << tx
        << " && b >= 0 && b < " << tf << ");\n";
      o << "    qr" << K << " = qw" << K
        << " && ga >= 0 && ga < g.alloc[0] && gb >= 0 && gb < g.alloc[" << f_ << "];\n";
      o << "    qo" << K << " = ga + gb * s_f;\n";
      o << "  }\n";
      o << "  double qh" << K << " = qr" << K << " ? f" << G << "[qo" << K << " + " << E
        << "_begin * s_e] : 0.0;\n";
    }
  }

  // The point's index is computed from the loop counter, not stepped (idx += s_e): stepped,
  // the compiler strength-reduces every load address into an induction variable of its own,
  // two registers each, live across the loop (168 registers for the micro-benchmark's 90
  // loads, one block per SM; computed, 32).
  o << "  for (int " << E << "i = " << E << "_begin; " << E << "i < " << E << "_stop; ++" << E
    << "i) {\n";
  o << "    const long long idx = idx0 + (long long)(" << E << "i - " << E << "_begin) * s_e;\n";
  if (coordinate_axes.count(e_))
    o << "    const double " << E << " = g.origin[" << e_ << "] + double(" << E
      << "i + g.index_offset[" << e_ << "]) * g.spacing[" << e_ << "];\n";
  for (const auto& [g, range] : pipeline)
    o << "    " << reg(g, range.second) << " = "
      << guarded("f" + std::to_string(g) + "[idx + " + std::to_string(range.second) + " * s_e]")
      << ";\n";
  if (plane_barriers) {
    o << "    __syncthreads(); // the previous plane is no longer read\n";
    for (const auto& [g, t] : planes) {
      const std::string q = "q" + std::to_string(g), G = std::to_string(g);
      o << "    " << q << "[qb" << G << "] = " << reg(g, 0) << ";\n";
      for (int k = 0; k < halo_slots(t); ++k) {
        const std::string K = G + "_" + std::to_string(k);
        o << "    if (qw" << K << ") " << q << "[qt + " << k * threads << "] = qh" << K << ";\n";
      }
    }
    o << "    __syncthreads();\n";
    o << "    if (" << E << "i + 1 < " << E
      << "_stop) { // the next plane's halo, in flight meanwhile\n";
    for (const auto& [g, t] : planes)
      for (int k = 0; k < halo_slots(t); ++k) {
        const std::string K = std::to_string(g) + "_" + std::to_string(k);
        o << "      qh" << K << " = qr" << K << " ? f" << g << "[qo" << K << " + (" << E
          << "i + 1) * s_e] : 0.0;\n";
      }
    o << "    }\n";
    o << "    if (active) {\n";
  }
  std::string inner = loads.str() + body.str() + stores.str();
  if (plane_barriers) {
    std::string indented;
    std::istringstream lines(inner);
    for (std::string line; std::getline(lines, line);) indented += "  " + line + "\n";
    inner = indented;
  }
  o << inner;
  if (plane_barriers) o << "    }\n";
  for (const auto& [g, range] : pipeline)
    for (int d = range.first; d < range.second; ++d)
      o << "    " << reg(g, d) << " = " << reg(g, d + 1) << ";\n";
  for (const auto& [g, t] : tiles) o << "    sb" << g << " += " << t.nf * t.nx << ";\n";
  o << "  }\n}\n";
  return o.str();
}

} // namespace

std::array<unsigned, 3> launch_grid(const CudaKernel& kernel, const std::array<int, 3>& lo,
                                    const std::array<int, 3>& hi) {
  const int e = kernel.block.iteration_axis, f = kernel.block.f_axis();
  auto count = [&](int axis) {
    long n = long(hi[axis]) + kernel.extent_hi[axis] - (long(lo[axis]) - kernel.extent_lo[axis]);
    return n > 0 ? n : 0L;
  };
  auto blocks = [](long n, int per) { return unsigned((n + per - 1) / per); };
  long nx = count(0), nf = count(f), ne = count(e);
  if (nx == 0 || nf == 0 || ne == 0) return {0, 0, 0};
  return {blocks(nx, kernel.block.tx), blocks(nf, kernel.block.tf), blocks(ne, kernel.block.tee)};
}

CudaModule generate_cuda(const calc::Program& program, const std::vector<calc::Mapping>& mappings,
                         const std::set<std::string>& whole_register_file) {
  if (!mappings.empty() && mappings.size() != program.calculations.size())
    throw calc::MappingError("generate_cuda: " + std::to_string(mappings.size()) +
                             " mappings for " + std::to_string(program.calculations.size()) +
                             " calculations");
  CudaModule module;
  std::set<std::string> helpers;
  std::vector<std::string> kernels_text;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const calc::Calculation& calc = program.calculations[c];
    const calc::Mapping mapping = mappings.empty() ? calc::default_mapping(calc) : mappings[c];
    const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc, mapping);
    const std::vector<NodeId> temporaries = calc::temporary_arrays(mapping);
    std::map<NodeId, int> slots;
    for (std::size_t t = 0; t < temporaries.size(); ++t) slots.emplace(temporaries[t], int(t));
    module.temporaries.push_back(temporaries);
    for (std::size_t k = 0; k < mapping.kernels.size(); ++k) {
      CudaKernel kernel;
      kernel.calculation = int(c);
      kernel.kernel = int(k);
      kernel.name =
          "saguaro_" + std::to_string(c) + "_" + sanitize(calc.name) + "_k" + std::to_string(k);
      kernel.mapping = calc::to_string(calc, mapping.kernels[k]);
      KernelEmitter emitter(calc, mapping.kernels[k], plans[k]);
      kernel.whole_register_file = whole_register_file.count(kernel.name) > 0;
      kernels_text.push_back(emitter.emit(kernel, slots, kernel.whole_register_file));
      helpers.insert(emitter.helpers().begin(), emitter.helpers().end());
      module.kernels.push_back(std::move(kernel));
    }
  }

  std::ostringstream o;
  o << "// Generated by Saguaro (CUDA backend) from thorn " << program.thorn << ", fd_order "
    << program.fd_order << ": " << module.kernels.size() << " kernel"
    << (module.kernels.size() == 1 ? "" : "s") << " for " << program.calculations.size()
    << " calculation" << (program.calculations.size() == 1 ? "" : "s") << ".\n";
  o << "// Double precision; arrays are C order [z][y][x], x fastest.\n";
  o << "struct saguaro_cuda_geometry {\n  " SAGUARO_STR(SAGUARO_CUDA_GEOMETRY_FIELDS) "\n};\n";
  for (const auto& h : kCudaHelpers)
    if (helpers.count(h[0])) o << h[1];
  for (const std::string& text : kernels_text) o << "\n" << text;
  module.source = o.str();
  return module;
}

} // namespace saguaro::codegen
