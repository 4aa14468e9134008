#include "codegen/cpp.hpp"
#include "codegen/cpu_args_emitter.hpp"

#include "codegen/expression.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#define SAGUARO_STR_(x) #x
#define SAGUARO_STR(x) SAGUARO_STR_(x)

namespace saguaro::codegen {

using calc::Function;
using calc::Node;
using calc::NodeId;
using calc::Op;

std::string cpu_function_name(const calc::Program& program, std::size_t index) {
  std::string name = "saguaro_calc_" + std::to_string(index) + "_";
  for (char ch : program.calculations.at(index).name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    name += ok ? ch : '_';
  }
  return name;
}

namespace {

const char* kAxis[3] = {"x", "y", "z"};

// Helpers the generated code may call, in the order they are emitted. Transcendental
// functions are wrapped in non-inlined functions with OpenMP SIMD clones: the compiler then
// vectorises the loop around the call and calls the scalar libm function once per lane, so a
// single exp() does not keep the thousands of other operations of a point scalar, and the
// results are those of the same libm the interpreter calls.
struct Helper {
  const char* name;
  const char* text;
};
#define SAGUARO_WRAP1(fn)                                                                          \
  {                                                                                                \
    "saguaro_" #fn,                                                                                \
        "#pragma omp declare simd notinbranch simdlen(4)\n"                                        \
        "__attribute__((noinline)) double saguaro_" #fn "(double a) { return std::" #fn "(a); }\n" \
  }
#define SAGUARO_WRAP2(fn)                                                                          \
  {                                                                                                \
    "saguaro_" #fn, "#pragma omp declare simd notinbranch simdlen(4)\n"                            \
                    "__attribute__((noinline)) double saguaro_" #fn                                \
                    "(double a, double b) { return std::" #fn "(a, b); }\n"                        \
  }
// Points per row chunk of a streamed calculation: its stores wait in buffers of this many doubles.
constexpr int kRowChunk = 128;
// The helper a streamed calculation calls (generate_cpp: its header comes with it).
constexpr const char* kStreamRow = "saguaro_stream_row";

const Helper kHelpers[] = {
    SAGUARO_WRAP1(sin),
    SAGUARO_WRAP1(cos),
    SAGUARO_WRAP1(tan),
    SAGUARO_WRAP1(asin),
    SAGUARO_WRAP1(acos),
    SAGUARO_WRAP1(atan),
    SAGUARO_WRAP2(atan2),
    SAGUARO_WRAP1(sinh),
    SAGUARO_WRAP1(cosh),
    SAGUARO_WRAP1(tanh),
    SAGUARO_WRAP1(exp),
    SAGUARO_WRAP1(log),
    SAGUARO_WRAP2(pow),
    SAGUARO_WRAP2(fmod),
    // std::fmin / std::fmax: the other argument when one is a NaN (written as selects, which
    // vectorise, where the library calls would not).
    {"saguaro_fmin", "inline double saguaro_fmin(double a, double b) {\n"
                     "  return (b != b || a < b) ? a : b;\n}\n"},
    {"saguaro_fmax", "inline double saguaro_fmax(double a, double b) {\n"
                     "  return (b != b || a > b) ? a : b;\n}\n"},
    {"saguaro_if", "inline double saguaro_if(double c, double a, double b) {\n"
                   "  return c != 0.0 ? a : b;\n}\n"},
    {"saguaro_sign", "inline double saguaro_sign(double a) {\n"
                     "  return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0);\n}\n"},
    {"saguaro_powi", "inline double saguaro_powi(double x, long n) {\n"
                     "  double r = 1.0;\n"
                     "  for (; n > 0; n >>= 1, x *= x)\n"
                     "    if (n & 1) r *= x;\n"
                     "  return r;\n}\n"},
    // A streamed row chunk written out of its buffer by non-temporal stores from the first
    // 32-byte (AVX) or 16-byte (SSE2) boundary on; plain stores at the ends, and on hosts without
    // either. The fence orders them before the kernel's barrier.
    {kStreamRow,
     "inline void saguaro_stream_row(double* __restrict__ to, const double* __restrict__ from,\n"
     "                               int n) {\n"
     "  int i = 0;\n"
     "#if defined(__AVX__) || defined(__SSE2__)\n"
     "#if defined(__AVX__)\n"
     "  const int width = 4;\n"
     "#else\n"
     "  const int width = 2;\n"
     "#endif\n"
     "  for (; i < n && reinterpret_cast<unsigned long>(to + i) % (8 * width) != 0; ++i)\n"
     "    to[i] = from[i];\n"
     "  for (; i + width <= n; i += width)\n"
     "#if defined(__AVX__)\n"
     "    _mm256_stream_pd(to + i, _mm256_loadu_pd(from + i));\n"
     "#else\n"
     "    _mm_stream_pd(to + i, _mm_loadu_pd(from + i));\n"
     "#endif\n"
     "#endif\n"
     "  for (; i < n; ++i) to[i] = from[i];\n"
     "}\n"
     "inline void saguaro_stream_fence() {\n"
     "#if defined(__SSE2__)\n"
     "  _mm_sfence();\n"
     "#endif\n"
     "}\n"},
};
#undef SAGUARO_WRAP1
#undef SAGUARO_WRAP2

// The C++ backend's helpers, but the two the host compiler inlines best as they are.
const char* helper_for(Function fn) {
  if (fn == Function::Sqrt) return "std::sqrt";
  if (fn == Function::Abs) return "std::fabs";
  return saguaro_helper(fn);
}

// Emits one calculation's function under one mapping.
class CalculationEmitter : public CpuArgsEmitter {
public:
  CalculationEmitter(const calc::Calculation& calc, const calc::Mapping& mapping, bool streamed)
      : CpuArgsEmitter(calc, mapping), streamed_(streamed) {}

  std::string emit(const std::string& function_name) {
    const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc_, mapping_);

    // Emit the loop bodies first: they decide which hoisted factors exist.
    std::vector<std::string> kernel_text;
    for (std::size_t k = 0; k < plans.size(); ++k)
      kernel_text.push_back(emit_kernel(int(k), plans[k]));

    std::ostringstream o;
    o << function_head(function_name, plans);
    o << "  (void)sj;\n  (void)sk;\n";
    o << "#pragma omp parallel\n  {\n";
    // Grid function and scratch array base pointers, then the uniform values, once per thread.
    o << bindings("    ") << uniform_values(plans, "    ");
    for (const std::string& text : kernel_text) o << text;
    o << "  }\n}\n";
    return o.str();
  }

private:
  std::string function_name(Function fn) const override { return helper_for(fn); }

  // The loop nest of kernel `k`: plan.nodes at every point of its stage's region, after the
  // earlier kernels' temporaries it uses are loaded; then its stores and its temporaries.
  std::string emit_kernel(int k, const calc::KernelPlan& plan) {
    const calc::KernelMapping& km = mapping_.kernels[k];
    const calc::Stage& stage = calc_.stages[km.stage];
    const std::set<int> written(plan.outputs.begin(), plan.outputs.end());

    // Rows read: (grid function, dy, dz) -> pointer name; offsets (dy, dz) -> stride name.
    std::map<std::tuple<int, int, int>, std::string> rows;
    std::map<std::pair<int, int>, std::string> row_offsets;
    std::set<int> axes;
    std::ostringstream body;
    for (NodeId id : plan.temporaries_in)
      body << "            const double n" << id << " = tr" << slots_.at(id) << "[i];\n";
    for (NodeId id : plan.nodes) {
      const Node& n = dag_.node(id);
      if (n.uniform) continue;
      std::string text;
      switch (n.op) {
      case Op::Load: {
        used_fields_.insert(n.index);
        int dx = n.offset[0], dy = n.offset[1], dz = n.offset[2];
        std::string pointer;
        if (written.count(n.index)) {
          pointer = "w" + std::to_string(n.index); // at the point itself: plan_kernels checks
        } else {
          pointer = "r" + std::to_string(n.index) + row_offset_suffix(dy, dz);
          rows[{n.index, dy, dz}] = pointer;
          if (dy != 0 || dz != 0) row_offsets[{dy, dz}] = "o" + row_offset_suffix(dy, dz);
        }
        text = pointer + "[i" +
               (dx == 0 ? "" : (dx > 0 ? " + " : " - ") + std::to_string(std::abs(dx))) + "]";
        break;
      }
      case Op::Coordinate: {
        int a = n.index;
        axes.insert(a);
        coordinate_axes_.insert(a);
        int off = n.offset[a];
        text = kAxis[a];
        if (off != 0)
          text +=
              " + " + hoist(std::to_string(off) + ".0 * args->spacing[" + std::to_string(a) + "]");
        break;
      }
      default: text = varying_expr(id); break;
      }
      body << "            const double n" << id << " = " << text << ";\n";
    }
    // Streamed, a row's stores wait in buffers of kRowChunk points (in L1) and are written out
    // after the chunk by non-temporal stores, which GCC has no way to ask for in a vectorised
    // loop. Loads of a stored field at the point still read the array: its old value.
    std::vector<std::string> outs; // "w<g>", "tw<slot>"
    for (int st : km.stores) {
      const calc::Store& store = stage.stores[st];
      used_fields_.insert(store.grid_function);
      outs.push_back("w" + std::to_string(store.grid_function));
      body << "            " << stored(outs.back()) << " = " << ref(store.value) << ";\n";
    }
    for (NodeId t : km.temporaries) {
      outs.push_back("tw" + std::to_string(slots_.at(t)));
      body << "            " << stored(outs.back()) << " = " << ref(t) << ";\n";
    }

    std::ostringstream o;
    o << "    // Kernel " << k << " (stage " << km.stage << "): stores";
    for (int st : km.stores) o << " " << calc_.grid_functions[stage.stores[st].grid_function].name;
    if (!km.temporaries.empty()) {
      o << (km.stores.empty() ? " temporaries" : ", temporaries");
      for (NodeId t : km.temporaries) o << " t" << slots_.at(t);
    }
    if (!plan.temporaries_in.empty()) {
      o << ", reads temporaries";
      for (NodeId t : plan.temporaries_in) o << " t" << slots_.at(t);
    }
    o << "; region [lo - (" << stage.extent_lo[0] << "," << stage.extent_lo[1] << ","
      << stage.extent_lo[2] << "), hi + (" << stage.extent_hi[0] << "," << stage.extent_hi[1] << ","
      << stage.extent_hi[2] << ")).\n";
    o << "    {\n";
    auto bound = [](const char* side, int a, int extent) {
      std::string s = std::string("args->") + side + "[" + std::to_string(a) + "]";
      if (extent != 0) s += std::string(side[0] == 'l' ? " - " : " + ") + std::to_string(extent);
      return s;
    };
    o << "      const int i0 = " << bound("lo", 0, stage.extent_lo[0])
      << ", i1 = " << bound("hi", 0, stage.extent_hi[0]) << ";\n";
    o << "      const std::ptrdiff_t j0 = " << bound("lo", 1, stage.extent_lo[1])
      << ", j1 = " << bound("hi", 1, stage.extent_hi[1]) << ";\n";
    o << "      const std::ptrdiff_t k0 = " << bound("lo", 2, stage.extent_lo[2])
      << ", k1 = " << bound("hi", 2, stage.extent_hi[2]) << ";\n";
    for (const auto& [d, name] : row_offsets)
      o << "      const std::ptrdiff_t " << name << " = " << d.first << " * sj + " << d.second
        << " * sk;\n";
    o << "#pragma omp for collapse(2) schedule(static)" << (streamed_ ? " nowait" : "") << "\n";
    o << "      for (std::ptrdiff_t k = k0; k < k1; ++k) {\n";
    o << "        for (std::ptrdiff_t j = j0; j < j1; ++j) {\n";
    o << "          const std::ptrdiff_t row = k * sk + j * sj;\n";
    for (const auto& [key, name] : rows) {
      auto [g, dy, dz] = key;
      o << "          const double* __restrict__ const " << name << " = f" << g << " + ";
      if (dy == 0 && dz == 0)
        o << "row;\n";
      else
        o << "(row + o" << row_offset_suffix(dy, dz) << ");\n";
    }
    for (int g : written)
      o << "          double* __restrict__ const w" << g << " = f" << g << " + row;\n";
    for (NodeId t : plan.temporaries_in)
      o << "          const double* __restrict__ const tr" << slots_.at(t) << " = t" << slots_.at(t)
        << " + row;\n";
    for (NodeId t : km.temporaries)
      o << "          double* __restrict__ const tw" << slots_.at(t) << " = t" << slots_.at(t)
        << " + row;\n";
    if (axes.count(2)) o << "          const double z = origin2 + double(k + ioff2) * spacing2;\n";
    if (axes.count(1)) o << "          const double y = origin1 + double(j + ioff1) * spacing1;\n";
    // The point loop (in a streamed row, the chunk's, indented inside the loop over chunks).
    std::ostringstream points;
    points << "#pragma omp simd\n";
    points << "          for (int i = " << (streamed_ ? "c0; i < c1" : "i0; i < i1")
           << "; ++i) {\n";
    if (axes.count(0))
      points << "            const double x = origin0 + double(i + ioff0) * spacing0;\n";
    points << body.str();
    points << "          }\n";
    if (streamed_) {
      o << "          for (int c0 = i0; c0 < i1; c0 += " << kRowChunk << ") {\n";
      o << "            const int c1 = i1 - c0 < " << kRowChunk << " ? i1 : c0 + " << kRowChunk
        << ";\n";
      for (const std::string& w : outs)
        o << "            alignas(64) double s" << w << "[" << kRowChunk << "];\n";
      std::istringstream lines(points.str());
      for (std::string line; std::getline(lines, line);)
        o << (line.rfind("#pragma", 0) == 0 ? "" : "  ") << line << "\n";
      for (const std::string& w : outs)
        o << "            saguaro_stream_row(" << w << " + c0, s" << w << ", c1 - c0);\n";
      o << "          }\n";
    } else {
      o << points.str();
    }
    o << "        }\n      }\n";
    // Streaming stores are weakly ordered: each thread fences its own before the loop's barrier
    // (nowait above), since the next kernel reads what this one stored.
    if (streamed_) o << "      saguaro_stream_fence();\n#pragma omp barrier\n";
    o << "    }\n";
    return o.str();
  }

  // Where the loop body puts the value of output `w` (w<g> or tw<slot>) at point i.
  std::string stored(const std::string& w) const {
    return streamed_ ? "s" + w + "[i - c0]" : w + "[i]";
  }

  bool streamed_;
};

} // namespace

std::string cpu_args_preamble() {
  std::ostringstream o;
  o << "extern \"C\" {\n";
  o << "struct saguaro_cpu_args {\n  " SAGUARO_STR(SAGUARO_CPU_ARGS_FIELDS) "\n};\n";
  o << "int saguaro_cpu_abi(void) { return " << kCpuAbiVersion << "; }\n";
  o << "unsigned long saguaro_cpu_args_size(void) { return sizeof(saguaro_cpu_args); }\n";
  o << "}\n";
  return o.str();
}

std::string generate_cpp(const calc::Program& program, const std::vector<calc::Mapping>& mappings,
                         const std::vector<bool>& streamed) {
  if (!mappings.empty() && mappings.size() != program.calculations.size())
    throw calc::MappingError("generate_cpp: " + std::to_string(mappings.size()) + " mappings for " +
                             std::to_string(program.calculations.size()) + " calculations");
  std::set<std::string> helpers;
  std::vector<std::string> functions;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const calc::Calculation& calc = program.calculations[c];
    const calc::Mapping mapping = mappings.empty() ? calc::default_mapping(calc) : mappings[c];
    const bool streams = c < streamed.size() && streamed[c];
    CalculationEmitter emitter(calc, mapping, streams);
    functions.push_back(emitter.emit(cpu_function_name(program, c)));
    helpers.insert(emitter.helpers().begin(), emitter.helpers().end());
    if (streams) helpers.insert(kStreamRow);
  }

  std::ostringstream o;
  o << "// Generated by Saguaro (CPU backend) from thorn " << program.thorn << ", fd_order "
    << program.fd_order << ": " << program.calculations.size() << " calculation"
    << (program.calculations.size() == 1 ? "" : "s") << ".\n";
  o << "// One function per calculation: void saguaro_calc_<index>_<name>(const "
       "saguaro_cpu_args*).\n";
  o << "#include <cmath>\n#include <cstddef>\n";
  if (helpers.count(kStreamRow)) o << "#if defined(__SSE2__)\n#include <immintrin.h>\n#endif\n";
  o << "\n" << cpu_args_preamble() << "\n";
  o << "namespace {\n";
  for (const Helper& h : kHelpers)
    if (helpers.count(h.name)) o << h.text;
  o << "} // namespace\n";
  for (const std::string& f : functions) o << "\n" << f;
  return o.str();
}

} // namespace saguaro::codegen
