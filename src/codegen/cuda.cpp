// CUDA code generation: prints the kernel plans of calc/code_plan.hpp (see cuda.hpp for the
// calling convention). Every decision (buffers, their geometry, where each load reads, the
// evaluation order, the arguments, the shared memory) is the plan's; this file knows buffer
// kinds, not buffering strategies. Each kernel is written as
//
//   region, strides and this thread's point       (once)
//   uniform values and hoisted factors            (once; parameters are kernel arguments)
//   register pipelines preloaded, shared tiles    (once per block)
//   for e in this thread's t_ee points:
//     shared planes of the current e-plane        (between two barriers)
//     loads, arithmetic, stores                   (the plan's steps, in order)
//     register pipelines shifted by one point
//
// Threads outside the region leave at once when the kernel has no barriers, so the main body
// has no bounds test; with barriers (shared buffers) they stay for the barriers and only their
// arithmetic and stores are skipped.
#include "codegen/cuda.hpp"

#include "calc/code_plan.hpp"

#include "codegen/cpp.hpp"
#include "codegen/cuda_printer.hpp"
#include "codegen/expression.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#define SAGUARO_STR_(x) #x
#define SAGUARO_STR(x) SAGUARO_STR_(x)

namespace saguaro::codegen {

using cuda_detail::kAxis;
using cuda_detail::KernelPrinter;
using cuda_detail::name_part;

using calc::Buffering;
using calc::Function;
using calc::Node;
using calc::NodeId;
using calc::Offset;
using calc::Op;

namespace {

// One point per thread: up to this many loads per point the body is straight-line code
// (KernelPrinter::print_loop says why and what was measured).
constexpr std::size_t kStraightLineLoads = 32;
// The same for a kernel whose registers are capped by blocks per SM (BlockConfig::min_blocks).
constexpr std::size_t kStraightLineLoadsCapped = 64;

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
  case Function::IfThen: return "saguaro_if";
  }
  return "?";
}

} // namespace

const char* const kAfterPreviousKernel =
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
    "#define SAGUARO_AFTER_PREVIOUS_KERNEL()                                   \\\n"
    "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");                 \\\n"
    "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\")\n"
    "#else\n"
    "#define SAGUARO_AFTER_PREVIOUS_KERNEL()\n"
    "#endif\n";

namespace {

const char* kCudaHelpers[][2] = {
    {"saguaro_if", "__device__ inline double saguaro_if(double c, double a, double b) {\n"
                   "  return c != 0.0 ? a : b;\n}\n"},
    {"saguaro_sign", "__device__ inline double saguaro_sign(double a) {\n"
                     "  return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0);\n}\n"},
    {"saguaro_powi", "__device__ inline double saguaro_powi(double x, long n) {\n"
                     "  double r = 1.0;\n"
                     "  for (; n > 0; n >>= 1, x *= x)\n"
                     "    if (n & 1) r *= x;\n"
                     "  return r;\n}\n"},
};

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

} // namespace

namespace cuda_detail {

std::string KernelPrinter::load_text(const calc::Load& l, int g) const {
  const std::string f = "f" + std::to_string(g);
  const std::string off = l.offset == Offset{0, 0, 0} ? "" : " + " + offset_name(l.offset);
  auto element = [&l](const std::string& array, const std::string& base) {
    return array + "[" + base + (l.element >= 0 ? " + " : " - ") +
           std::to_string(std::labs(l.element)) + "]";
  };
  switch (l.kind) {
  case calc::BufferKind::Global: return f + "[idx" + off + "]";
  case calc::BufferKind::ReadOnly: return "__ldg(" + f + " + idx" + off + ")";
  case calc::BufferKind::Register:
    if (pipelines_from_memory_) return f + "[idx + " + std::to_string(l.element) + " * s_e]";
    return reg(plan_.pipelines[std::size_t(l.buffer)].grid_function, int(l.element));
  case calc::BufferKind::SharedTile: {
    const std::string G = std::to_string(plan_.tiles[std::size_t(l.buffer)].grid_function);
    return element("s" + G, "sb" + G);
  }
  case calc::BufferKind::SharedPlane: {
    const std::string G = std::to_string(plan_.planes[std::size_t(l.buffer)].grid_function);
    return element("q" + G, "qb" + G);
  }
  }
  return "?";
}

// `steps` in order: the loop body (the plan's steps), or a phase of sums by input.
std::string KernelPrinter::steps_text(const std::vector<calc::Step>& steps,
                                      const std::string& indent) {
  std::ostringstream o;
  for (const calc::Step& s : steps) {
    const Node& n = dag_.node(s.node);
    switch (s.kind) {
    case calc::Step::Kind::LoadTemporary:
      o << indent << "const double n" << s.node << " = t" << s.target << "[idx];\n";
      break;
    case calc::Step::Kind::StoreField:
      o << indent << "f" << s.target << "[idx] = " << ref(s.node) << ";\n";
      break;
    case calc::Step::Kind::StoreTemporary:
      o << indent << "t" << s.target << "[idx] = " << ref(s.node) << ";\n";
      break;
    case calc::Step::Kind::Evaluate:
      if (n.op == Op::Load) {
        o << indent << "const double n" << s.node << " = " << load_text(s.load, n.index) << ";\n";
      } else if (n.op == Op::Coordinate) {
        const int a = n.index;
        std::string text = kAxis[a];
        if (int off = n.offset[a]; off != 0)
          text += " + " + hoist(std::to_string(off) + ".0 * g.spacing[" + std::to_string(a) + "]");
        o << indent << "const double n" << s.node << " = " << text << ";\n";
      } else {
        o << indent << "const double n" << s.node << " = " << varying_expr(s.node) << ";\n";
      }
      break;
    }
  }
  return o.str();
}

// The coordinate along e of the point E i (a line of the loop over a thread's points).
std::string KernelPrinter::coordinate_e() const {
  if (!plan_.coordinates[std::size_t(e_)]) return "";
  const char* E = kAxis[e_];
  return std::string("const double ") + E + " = g.origin[" + std::to_string(e_) + "] + double(" +
         E + "i + g.index_offset[" + std::to_string(e_) + "]) * g.spacing[" + std::to_string(e_) +
         "];\n";
}

// A register pipeline's declaration and its slots lo .. hi - 1 of the thread's first point.
std::string KernelPrinter::pipeline_preload(const calc::RegisterPipeline& p,
                                            const std::string& indent) const {
  const int g = p.grid_function;
  std::ostringstream o;
  o << indent << "// " << gf_name(g) << ": registers along " << kAxis[e_] << " for offsets " << p.lo
    << " .. " << p.hi << ".\n";
  o << indent << "double";
  for (int d = p.lo; d <= p.hi; ++d) o << (d == p.lo ? " " : ", ") << reg(g, d);
  o << ";\n";
  for (int d = p.lo; d < p.hi; ++d) {
    const std::string load = "f" + std::to_string(g) + "[idx0 + " + std::to_string(d) + " * s_e]";
    o << indent << reg(g, d) << " = " << (plan_.barriers ? "inside ? " + load + " : 0.0" : load)
      << ";\n";
  }
  return o.str();
}

std::string KernelPrinter::print(const std::string& name, bool whole_register_file,
                                 bool grouped_tiles) {
  const calc::BlockConfig& blk = plan_.block;
  const int tx = blk.tx, tf = blk.tf, tee = blk.tee;
  const char* E = kAxis[e_];
  const char* F = kAxis[f_];
  const calc::Stage& stage = calc_.stages[std::size_t(plan_.stage)];

  // The body first: it creates the hoisted factors, which the uniform values come before.
  std::ostringstream by_input;
  if (!plan_.phases.empty()) print_sums_by_input(by_input);
  pipelines_from_memory_ = !plan_.phases.empty();
  const std::string inner = steps_text(plan_.steps, "    ");
  std::ostringstream uniforms;
  for (NodeId id : plan_.uniforms)
    uniforms << "  const double u" << id << " = " << uniform_expr(id) << ";\n";

  std::ostringstream o;
  // Header comment: what the kernel does and how.
  o << "// Calculation '" << calc_.name << "', kernel " << plan_.kernel << " (stage " << plan_.stage
    << "): stores";
  for (int st : plan_.stores) o << " " << gf_name(stage.stores[std::size_t(st)].grid_function);
  if (plan_.temporaries_out > 0) o << " and " << plan_.temporaries_out << " temporaries";
  o << ".\n// Block: " << tx << " x " << tf << " threads along x and " << F << ", " << tee
    << " points per thread along " << E;
  if (blk.min_blocks > 0) o << "; " << blk.min_blocks << " blocks per SM (registers capped)";
  o << ".\n";
  for (const calc::PlannedInput& in : plan_.inputs)
    o << "// " << gf_name(in.grid_function) << ": " << describe(in.strategy) << ", "
      << in.loads.size() << (in.loads.size() == 1 ? " offset" : " offsets") << "\n";
  // Given only the block size, ptxas (CUDA 13.0, sm_90) trades registers for occupancy, and
  // not always well: it once squeezed the BSSN right-hand side into 32 registers and 14 KB of
  // stack per thread (24 KB of spill stores), where a minimum of 1 block per SM gave 255
  // registers and 5.7 KB; yet small kernels given that minimum take 2-3x the registers they
  // need. So the runtime gives `whole_register_file` at once to the kernels the model expects
  // at one block per SM, and compiles the kernels that spilled again in the other form,
  // keeping whichever spills less (runtime::cuda::compile_generated).
  // A mapping's blocks per SM (BlockConfig::min_blocks) ask ptxas for fewer registers instead.
  const int min_blocks = whole_register_file ? 1 : blk.min_blocks;
  o << "extern \"C\" __global__ void __launch_bounds__(" << tx * tf
    << (min_blocks > 0 ? ", " + std::to_string(min_blocks) : std::string()) << ") " << name
    << "(\n";
  std::vector<std::string> args;
  for (const calc::FieldArgument& a : plan_.fields)
    args.push_back((a.written ? "double* __restrict__ f" : "const double* __restrict__ f") +
                   std::to_string(a.grid_function));
  for (const calc::TemporaryArgument& t : plan_.temporaries)
    args.push_back((t.written ? "double* __restrict__ t" : "const double* __restrict__ t") +
                   std::to_string(t.slot));
  args.push_back("const saguaro_cuda_geometry g");
  for (int p : plan_.parameters) args.push_back("const double p" + std::to_string(p));
  for (std::size_t a = 0; a < args.size(); ++a)
    o << "    " << args[a] << (a + 1 < args.size() ? ",\n" : ") {\n");

  o << "  SAGUARO_AFTER_PREVIOUS_KERNEL();\n";
  print_prologue(o, uniforms.str(), grouped_tiles);
  o << by_input.str();
  print_buffers(o);
  print_loop(o, inner);
  return o.str();
}

// The region, strides, this thread's point, coordinates, uniform values and offsets.
void KernelPrinter::print_prologue(std::ostringstream& o, const std::string& uniforms,
                                   bool grouped_tiles) const {
  const calc::BlockConfig& blk = plan_.block;
  const int tx = blk.tx, tf = blk.tf, tee = blk.tee;
  const char* E = kAxis[e_];
  const char* F = kAxis[f_];
  auto bound = [](const char* side, int a, int extent) {
    std::string s = std::string("r_") + side + "[" + std::to_string(a) + "]";
    if (extent != 0) s += std::string(side[0] == 'l' ? " - " : " + ") + std::to_string(extent);
    return s;
  };
  const auto& lo = plan_.extent_lo;
  const auto& hi = plan_.extent_hi;
  // A launch over several boxes (a boundary shell): blockIdx.z says which box, counted from the
  // box's first block; the bounds are dead once the loop's are set.
  o << "  // This launch's region: the geometry's, or the box of several this block is in.\n";
  o << "  int r_lo[3] = {g.lo[0], g.lo[1], g.lo[2]}, r_hi[3] = {g.hi[0], g.hi[1], g.hi[2]};\n";
  o << "  int block_e = int(blockIdx.z), block_f = int(blockIdx.y);\n";
  if (grouped_tiles) {
    // Consecutive blocks after x walk G x G groups of (f, e) tiles (KernelForms): a wave of
    // one block per SM then holds e neighbours whose shared planes are still in L2.
    const std::string G = std::to_string(kTileGroup);
    o << "  if (g.boxes <= 1 && gridDim.y % " << G << " == 0 && gridDim.z % " << G << " == 0) {\n"
      << "    const unsigned rest = blockIdx.y + gridDim.y * blockIdx.z;\n"
      << "    const unsigned group = rest / " << kTileGroup * kTileGroup << ", in = rest % "
      << kTileGroup * kTileGroup << ", per_row = gridDim.y / " << G << ";\n"
      << "    block_f = int((group % per_row) * " << G << " + in % " << G << ");\n"
      << "    block_e = int((group / per_row) * " << G << " + in / " << G << ");\n"
      << "  }\n";
  }
  o << "  if (g.boxes > 1) {\n"
    << "    int b = 0;\n"
    << "    while (b + 1 < g.boxes && block_e >= g.box_first[b + 1]) ++b;\n"
    << "    block_e -= g.box_first[b];\n"
    << "    for (int a = 0; a < 3; ++a) {\n"
    << "      r_lo[a] = g.box_lo[b][a];\n"
    << "      r_hi[a] = g.box_hi[b][a];\n"
    << "    }\n"
    << "  }\n";
  o << "  // This stage's region, [lo - extent_lo, hi + extent_hi).\n";
  o << "  const int x_end = " << bound("hi", 0, hi[0]) << ";\n";
  o << "  const int " << F << "_end = " << bound("hi", f_, hi[std::size_t(f_)]) << ";\n";
  o << "  const int " << E << "_end = " << bound("hi", e_, hi[std::size_t(e_)]) << ";\n";
  if (layout_) {
    o << "  // Strides of arrays of pitch " << layout_->pitch << " and " << layout_->rows
      << " rows per plane (CudaModule::layout).\n";
    o << "  constexpr long long sy = " << layout_->pitch << ";\n";
    o << "  constexpr long long sz = sy * " << layout_->rows << ";\n";
  } else {
    o << "  const long long sy = g.pitch;\n";
    o << "  const long long sz = sy * g.alloc[1];\n";
  }
  o << "  const long long s_e = s" << E << ", s_f = s" << F << "; // strides along e = " << E
    << " and f = " << F << "\n";
  o << "  const int x_block = " << bound("lo", 0, lo[0]) << " + int(blockIdx.x) * " << tx << ";\n";
  o << "  const int " << F << "_block = " << bound("lo", f_, lo[std::size_t(f_)]) << " + block_f * "
    << tf << ";\n";
  o << "  const int i = x_block + int(threadIdx.x);\n";
  o << "  const int " << F << "i = " << F << "_block + int(threadIdx.y);\n";
  o << "  const int " << E << "_begin = " << bound("lo", e_, lo[std::size_t(e_)]) << " + block_e * "
    << tee << ";\n";
  o << "  const int " << E << "_stop = min(" << E << "_begin + " << tee << ", " << E << "_end);\n";
  o << "  const bool active = i < x_end && " << F << "i < " << F << "_end;\n";
  if (!plan_.barriers)
    o << "  if (!active) return;\n";
  else
    o << "  // Points outside the array (partial blocks) load nothing.\n"
      << "  const bool inside = i < g.alloc[0] && " << F << "i < g.alloc[" << f_ << "];\n";
  o << "  const long long idx0 = i + " << F << "i * s_f + " << E << "_begin * s_e;\n";

  // Coordinates along x and f are fixed per thread.
  if (plan_.coordinates[0])
    o << "  const double x = g.origin[0] + double(i + g.index_offset[0]) * g.spacing[0];\n";
  if (plan_.coordinates[std::size_t(f_)])
    o << "  const double " << F << " = g.origin[" << f_ << "] + double(" << F
      << "i + g.index_offset[" << f_ << "]) * g.spacing[" << f_ << "];\n";

  if (!plan_.uniforms.empty() || !hoisted().empty()) o << "  // Values uniform over the grid.\n";
  o << uniforms;
  for (const auto& [name, text] : hoisted())
    o << "  const double " << name << " = " << text << ";\n";
  if (!plan_.global_offsets.empty()) o << "  // Stencil offsets in points.\n";
  for (const Offset& off : plan_.global_offsets) {
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
}

// Register pipelines preloaded, shared tiles filled, shared planes' halo slots set up.
void KernelPrinter::print_buffers(std::ostringstream& o) const {
  const calc::BlockConfig& blk = plan_.block;
  const int tx = blk.tx, tf = blk.tf;
  const char* E = kAxis[e_];
  const char* F = kAxis[f_];
  const bool barriers = plan_.barriers;
  // Register pipelines: preload [lo, hi - 1] of the first point.
  if (!pipelines_from_memory_)
    for (const calc::RegisterPipeline& p : plan_.pipelines) o << pipeline_preload(p, "  ");
  if (barriers) o << "  extern __shared__ double saguaro_smem[];\n";
  // Shared tiles: the block's points grown by the stencil, loaded once.
  for (const calc::SharedBuffer& t : plan_.tiles) {
    const int g = t.grid_function;
    const std::string s = "s" + std::to_string(g);
    o << "  // " << gf_name(g) << ": shared tile " << t.nx << " x " << t.nf << " x " << t.ne
      << " (x, " << F << ", " << E << ").\n";
    o << "  double* const " << s << " = saguaro_smem + " << t.base << ";\n";
    o << "  for (int t = int(threadIdx.y) * " << tx << " + int(threadIdx.x); t < "
      << t.nx * t.nf * t.ne << "; t += " << tx * tf << ") {\n";
    o << "    const int a = x_block + " << t.lo[0] << " + t % " << t.nx << ";\n";
    o << "    const int b = " << F << "_block + " << t.lo[std::size_t(f_)] << " + (t / " << t.nx
      << ") % " << t.nf << ";\n";
    o << "    const int c = " << E << "_begin + " << t.lo[std::size_t(e_)] << " + t / "
      << t.nx * t.nf << ";\n";
    o << "    " << s << "[t] = (a >= 0 && a < g.alloc[0] && b >= 0 && b < g.alloc[" << f_
      << "] && c >= 0 && c < g.alloc[" << e_ << "])\n"
      << "        ? f" << g << "[a + b * s_f + c * s_e] : 0.0;\n";
    o << "  }\n";
    o << "  int sb" << g << " = (int(threadIdx.y) - " << t.lo[std::size_t(f_)] << ") * " << t.nx
      << " + int(threadIdx.x) - " << t.lo[0] << " - " << t.lo[std::size_t(e_)] * t.nf * t.nx
      << ";\n";
  }
  if (!plan_.tiles.empty()) {
    o << "  __syncthreads();\n";
    if (plan_.planes.empty()) o << "  if (!active) return;\n";
  }
  // A plane's halo (its points that are no thread's own) is filled by slots: slot k of a
  // thread is plane entry qt + k * threads. Each slot's value is loaded one plane ahead into a
  // register, so the DRAM latency of the halo overlaps the current plane's arithmetic instead
  // of standing between the barriers of every step.
  const int threads = tx * tf;
  if (!plan_.planes.empty())
    o << "  const int qt = int(threadIdx.y) * " << tx << " + int(threadIdx.x);\n";
  for (const calc::SharedBuffer& t : plan_.planes) {
    const std::string G = std::to_string(t.grid_function), q = "q" + G;
    o << "  // " << gf_name(t.grid_function) << ": shared plane " << t.nx << " x " << t.nf
      << " (x, " << F << ") of the current " << E << ", its halo in " << t.halo_slots
      << " slot(s) per thread.\n";
    o << "  double* const " << q << " = saguaro_smem + " << t.base << ";\n";
    o << "  const int qb" << G << " = (int(threadIdx.y) - " << t.lo[std::size_t(f_)] << ") * "
      << t.nx << " + int(threadIdx.x) - " << t.lo[0] << ";\n";
    for (int k = 0; k < t.halo_slots; ++k) {
      const std::string K = G + "_" + std::to_string(k);
      o << "  bool qw" << K << " = false, qr" << K << " = false; // write the slot; load it\n";
      o << "  long long qo" << K << " = 0;\n";
      o << "  {\n";
      o << "    const int t = qt + " << k * threads << ";\n";
      o << "    const int a = " << t.lo[0] << " + t % " << t.nx << ", b = " << t.lo[std::size_t(f_)]
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
}

// The loop over this thread's points along e: pipelines and planes advanced around the body.
void KernelPrinter::print_loop(std::ostringstream& o, const std::string& body_text) const {
  const int threads = plan_.block.threads();
  const char* E = kAxis[e_];
  const bool barriers = plan_.barriers, plane_barriers = !plan_.planes.empty();
  auto guarded = [barriers](const std::string& load) {
    return barriers ? "inside ? " + load + " : 0.0" : load;
  };
  // The point's index is computed from the loop counter, not stepped (idx += s_e): stepped,
  // the compiler strength-reduces every load address into an induction variable of its own,
  // two registers each, live across the loop (168 registers for the micro-benchmark's 90
  // loads, one block per SM; computed, 32).
  // One point per thread and few loads: straight-line code, not a loop of at most one trip,
  // so that the compiler issues the point's loads beside the uniform values' divisions
  // instead of behind them (a loop it cannot prove short it unrolls, the loads after the
  // divisions). With many loads the loop stays: straight-line, the compiler keeps every load's
  // address live at once. Measured on the H100 at 256^3 (bench suite, 2026-11-24): B1, 8 loads,
  // 209 -> 192 us (the naive kernel: 190); B2, 26 loads, 226 -> 221 us; but B4, 48 loads,
  // 721 -> 728 us, and B3, 90 loads, 822 -> 1062 us (32 -> 182 registers). With its registers
  // capped by blocks per SM the addresses cannot all stay live, and the limit is higher: at
  // 8/SM (32 registers, H100, 2026-11-27) B4 ran 690 us as a loop and 658 straight-line (the
  // hand-written kernel: 643), but B3's 90 loads 736 as a loop and 751 straight-line.
  std::size_t loads = 0;
  for (const calc::PlannedInput& in : plan_.inputs) loads += in.loads.size();
  const std::size_t straight_line =
      plan_.block.min_blocks > 0 ? kStraightLineLoadsCapped : kStraightLineLoads;
  if (plan_.block.tee == 1 && loads <= straight_line)
    o << "  if (" << E << "_begin < " << E << "_stop) {\n    const int " << E << "i = " << E
      << "_begin;\n";
  else
    o << "  for (int " << E << "i = " << E << "_begin; " << E << "i < " << E << "_stop; ++" << E
      << "i) {\n";
  o << "    const long long idx = idx0 + (long long)(" << E << "i - " << E << "_begin) * s_e;\n";
  if (const std::string z = coordinate_e(); !z.empty()) o << "    " << z;
  const std::vector<calc::RegisterPipeline> none;
  const auto& pipelines = pipelines_from_memory_ ? none : plan_.pipelines;
  for (const calc::RegisterPipeline& p : pipelines)
    o << "    " << reg(p.grid_function, p.hi) << " = "
      << guarded("f" + std::to_string(p.grid_function) + "[idx + " + std::to_string(p.hi) +
                 " * s_e]")
      << ";\n";
  if (plane_barriers) {
    o << "    __syncthreads(); // the previous plane is no longer read\n";
    for (const calc::SharedBuffer& t : plan_.planes) {
      const std::string G = std::to_string(t.grid_function), q = "q" + G;
      const calc::RegisterPipeline& fill = plan_.pipelines[std::size_t(t.fill_pipeline)];
      o << "    " << q << "[qb" << G << "] = " << reg(fill.grid_function, 0) << ";\n";
      for (int k = 0; k < t.halo_slots; ++k) {
        const std::string K = G + "_" + std::to_string(k);
        o << "    if (qw" << K << ") " << q << "[qt + " << k * threads << "] = qh" << K << ";\n";
      }
    }
    o << "    __syncthreads();\n";
    o << "    if (" << E << "i + 1 < " << E
      << "_stop) { // the next plane's halo, in flight meanwhile\n";
    for (const calc::SharedBuffer& t : plan_.planes)
      for (int k = 0; k < t.halo_slots; ++k) {
        const std::string K = std::to_string(t.grid_function) + "_" + std::to_string(k);
        o << "      qh" << K << " = qr" << K << " ? f" << t.grid_function << "[qo" << K << " + ("
          << E << "i + 1) * s_e] : 0.0;\n";
      }
    o << "    }\n";
    o << "    if (active) {\n";
  }
  std::string inner = body_text;
  if (plane_barriers) {
    std::string indented;
    std::istringstream lines(inner);
    for (std::string line; std::getline(lines, line);) indented += "  " + line + "\n";
    inner = indented;
  }
  o << inner;
  if (plane_barriers) o << "    }\n";
  for (const calc::RegisterPipeline& p : pipelines)
    for (int d = p.lo; d < p.hi; ++d)
      o << "    " << reg(p.grid_function, d) << " = " << reg(p.grid_function, d + 1) << ";\n";
  for (const calc::SharedBuffer& t : plan_.tiles)
    o << "    sb" << t.grid_function << " += " << t.nf * t.nx << ";\n";
  o << "  }\n}\n";
}

} // namespace cuda_detail

std::string CudaExpressionEmitter::function_name(Function fn) const {
  return cuda_function(fn);
}

std::string CudaExpressionEmitter::uniform_leaf(const Node& n) const {
  switch (n.op) {
  case Op::Parameter: return "p" + std::to_string(n.index);
  case Op::Spacing: return "g.spacing[" + std::to_string(n.index) + "]";
  default: return "g.time";
  }
}

std::string cuda_prelude(const std::set<std::string>& helpers) {
  std::string o =
      "struct saguaro_cuda_geometry {\n  " SAGUARO_STR(SAGUARO_CUDA_GEOMETRY_FIELDS) "\n};\n";
  o += kAfterPreviousKernel;
  for (const auto& h : kCudaHelpers)
    if (helpers.count(h[0])) o += h[1];
  return o;
}

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

bool launch_boxes_fit(const CudaKernel& kernel, const std::vector<calc::Region>& boxes) {
  if (boxes.size() > std::size_t(kMaxLaunchBoxes)) return false;
  unsigned long blocks_e = 0;
  for (const calc::Region& box : boxes) blocks_e += launch_grid(kernel, box.lo, box.hi)[2];
  return blocks_e <= 65535;
}

std::array<unsigned, 3> launch_grid(const CudaKernel& kernel,
                                    const std::vector<calc::Region>& boxes,
                                    CudaGeometry& geometry) {
  auto refuse = [&boxes] {
    return std::invalid_argument("launch_grid: " + std::to_string(boxes.size()) +
                                 " boxes do not fit one launch (at most " +
                                 std::to_string(kMaxLaunchBoxes) + ", 65535 blocks along z)");
  };
  if (boxes.size() > std::size_t(kMaxLaunchBoxes)) throw refuse();
  std::array<unsigned, 3> grid{0, 0, 0};
  geometry.boxes = 0;
  for (const calc::Region& box : boxes) {
    const std::array<unsigned, 3> own = launch_grid(kernel, box.lo, box.hi);
    if (own[0] == 0) continue;
    const int b = geometry.boxes++;
    geometry.box_first[b] = int(grid[2]);
    for (int a = 0; a < 3; ++a) {
      geometry.box_lo[b][a] = box.lo[a];
      geometry.box_hi[b][a] = box.hi[a];
    }
    grid = {std::max(grid[0], own[0]), std::max(grid[1], own[1]), grid[2] + own[2]};
  }
  if (grid[2] > 65535) throw refuse();
  if (geometry.boxes == 1) { // one box: the plain region
    for (int a = 0; a < 3; ++a) {
      geometry.lo[a] = geometry.box_lo[0][a];
      geometry.hi[a] = geometry.box_hi[0][a];
    }
    geometry.boxes = 0;
  }
  return grid;
}

CudaModule generate_cuda(const calc::Program& program, const std::vector<calc::Mapping>& mappings,
                         const KernelForms& forms, int only,
                         const std::optional<calc::ArrayLayout>& layout) {
  if (!mappings.empty() && mappings.size() != program.calculations.size())
    throw calc::MappingError("generate_cuda: " + std::to_string(mappings.size()) +
                             " mappings for " + std::to_string(program.calculations.size()) +
                             " calculations");
  if (only >= int(program.calculations.size()))
    throw calc::MappingError("generate_cuda: no calculation " + std::to_string(only) + " of " +
                             std::to_string(program.calculations.size()));
  CudaModule module;
  module.layout = layout;
  std::set<std::string> helpers;
  std::vector<std::string> kernels_text;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const calc::Calculation& calc = program.calculations[c];
    if (only >= 0 && c != std::size_t(only)) {
      module.temporaries.emplace_back();
      continue;
    }
    const calc::Mapping mapping = mappings.empty() ? calc::default_mapping(calc) : mappings[c];
    const calc::CalculationPlan plan = calc::plan_code(calc, mapping);
    module.temporaries.push_back(plan.temporaries);
    for (const calc::CodePlan& kp : plan.kernels) {
      CudaKernel kernel;
      kernel.calculation = int(c);
      kernel.kernel = kp.kernel;
      kernel.name = "saguaro_" + std::to_string(c) + "_" + sanitize(calc.name) + "_k" +
                    std::to_string(kp.kernel);
      kernel.mapping = calc::to_string(calc, mapping.kernels[std::size_t(kp.kernel)]);
      kernel.stage = kp.stage;
      kernel.block = kp.block;
      kernel.extent_lo = kp.extent_lo;
      kernel.extent_hi = kp.extent_hi;
      kernel.shared_bytes = kp.shared_bytes;
      for (const calc::FieldArgument& a : kp.fields) {
        kernel.fields.push_back(a.grid_function);
        kernel.field_written.push_back(a.written);
      }
      for (const calc::TemporaryArgument& t : kp.temporaries) {
        kernel.temporaries.push_back(t.node);
        kernel.temporary_written.push_back(t.written);
      }
      kernel.parameters = kp.parameters;
      kernel.whole_register_file = forms.whole_register_file.count(kernel.name) > 0;
      kernel.grouped_tiles = forms.grouped_tiles.count(kernel.name) > 0;
      KernelPrinter printer(calc, kp, layout);
      kernels_text.push_back(
          printer.print(kernel.name, kernel.whole_register_file, kernel.grouped_tiles));
      helpers.insert(printer.helpers().begin(), printer.helpers().end());
      module.kernels.push_back(std::move(kernel));
    }
  }

  std::ostringstream o;
  o << "// Generated by Saguaro (CUDA backend) from thorn " << program.thorn << ", fd_order "
    << program.fd_order << ": " << module.kernels.size() << " kernel"
    << (module.kernels.size() == 1 ? "" : "s");
  if (only >= 0)
    o << " for calculation " << only << " (" << program.calculations[std::size_t(only)].name
      << ") of " << program.calculations.size();
  else
    o << " for " << program.calculations.size() << " calculation"
      << (program.calculations.size() == 1 ? "" : "s");
  o << ".\n";
  o << "// Double precision; arrays are C order [z][y][x], x fastest.\n";
  o << cuda_prelude(helpers);
  for (const std::string& text : kernels_text) o << "\n" << text;
  module.source = o.str();
  return module;
}

} // namespace saguaro::codegen
