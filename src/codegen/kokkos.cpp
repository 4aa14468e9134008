#include "codegen/kokkos.hpp"

#include "codegen/cpp.hpp"
#include "codegen/cpu_args_emitter.hpp"
#include "codegen/expression.hpp"

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace saguaro::codegen {

using calc::Function;
using calc::Node;
using calc::NodeId;
using calc::Op;

namespace {

// Helpers the generated code may call, in the order they are emitted: Kokkos's mathematical
// functions (host and device) under one name per function, and the few written out here.
struct Helper {
  const char* name;
  const char* text;
};
#define SAGUARO_KOKKOS_WRAP1(fn)                                                                   \
  {                                                                                                \
    "saguaro_" #fn, "KOKKOS_INLINE_FUNCTION double saguaro_" #fn                                   \
                    "(double a) { return saguaro_math::" #fn "(a); }\n"                            \
  }
#define SAGUARO_KOKKOS_WRAP2(fn)                                                                   \
  {                                                                                                \
    "saguaro_" #fn, "KOKKOS_INLINE_FUNCTION double saguaro_" #fn                                   \
                    "(double a, double b) { return saguaro_math::" #fn "(a, b); }\n"               \
  }
const Helper kHelpers[] = {
    SAGUARO_KOKKOS_WRAP1(sin),
    SAGUARO_KOKKOS_WRAP1(cos),
    SAGUARO_KOKKOS_WRAP1(tan),
    SAGUARO_KOKKOS_WRAP1(asin),
    SAGUARO_KOKKOS_WRAP1(acos),
    SAGUARO_KOKKOS_WRAP1(atan),
    SAGUARO_KOKKOS_WRAP2(atan2),
    SAGUARO_KOKKOS_WRAP1(sinh),
    SAGUARO_KOKKOS_WRAP1(cosh),
    SAGUARO_KOKKOS_WRAP1(tanh),
    SAGUARO_KOKKOS_WRAP1(exp),
    SAGUARO_KOKKOS_WRAP1(log),
    SAGUARO_KOKKOS_WRAP1(sqrt),
    SAGUARO_KOKKOS_WRAP1(fabs),
    SAGUARO_KOKKOS_WRAP2(pow),
    SAGUARO_KOKKOS_WRAP2(fmod),
    // The other argument when one is a NaN, as std::fmin / std::fmax.
    {"saguaro_fmin", "KOKKOS_INLINE_FUNCTION double saguaro_fmin(double a, double b) {\n"
                     "  return (b != b || a < b) ? a : b;\n}\n"},
    {"saguaro_fmax", "KOKKOS_INLINE_FUNCTION double saguaro_fmax(double a, double b) {\n"
                     "  return (b != b || a > b) ? a : b;\n}\n"},
    {"saguaro_if", "KOKKOS_INLINE_FUNCTION double saguaro_if(double c, double a, double b) {\n"
                   "  return c != 0.0 ? a : b;\n}\n"},
    {"saguaro_sign", "KOKKOS_INLINE_FUNCTION double saguaro_sign(double a) {\n"
                     "  return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0);\n}\n"},
    {"saguaro_powi", "KOKKOS_INLINE_FUNCTION double saguaro_powi(double x, long n) {\n"
                     "  double r = 1.0;\n"
                     "  for (; n > 0; n >>= 1, x *= x)\n"
                     "    if (n & 1) r *= x;\n"
                     "  return r;\n}\n"},
};
#undef SAGUARO_KOKKOS_WRAP1
#undef SAGUARO_KOKKOS_WRAP2

// Emits one calculation's function under one mapping.
class KokkosEmitter : public CpuArgsEmitter {
public:
  KokkosEmitter(const calc::Calculation& calc, const calc::Mapping& mapping)
      : CpuArgsEmitter(calc, mapping) {}

  std::string emit(const std::string& function_name) {
    const std::vector<calc::KernelPlan> plans = calc::plan_kernels(calc_, mapping_);

    // The kernels first: they decide which hoisted factors, fields and offsets exist.
    std::vector<std::string> kernel_text;
    for (std::size_t k = 0; k < plans.size(); ++k)
      kernel_text.push_back(emit_kernel(function_name, int(k), plans[k]));

    std::ostringstream o;
    o << function_head(function_name, plans) << bindings("  ");
    for (const auto& [d, name] : row_offsets_)
      o << "  const std::ptrdiff_t " << name << " = " << d.first << " * sj + " << d.second
        << " * sk;\n";
    // Uniform values, computed once on the host and captured by the kernels.
    o << uniform_values(plans, "  ");
    for (const std::string& text : kernel_text) o << text;
    o << "  Kokkos::fence();\n}\n";
    return o.str();
  }

private:
  std::string function_name(Function fn) const override { return saguaro_helper(fn); }

  // The load of grid function `g` at offset (dx, dy, dz) from point p.
  std::string load(int g, int dx, int dy, int dz) {
    std::string at = "p";
    if (dy != 0 || dz != 0) {
      const std::string name = "o" + row_offset_suffix(dy, dz);
      row_offsets_[{dy, dz}] = name;
      at += " + " + name;
    }
    if (dx != 0) at += (dx > 0 ? " + " : " - ") + std::to_string(std::abs(dx));
    return "f" + std::to_string(g) + "[" + at + "]";
  }

  // Kernel `k`: a parallel_for over its stage's region computing plan.nodes at every point
  // after loading the earlier kernels' temporaries it uses; then its stores and temporaries.
  std::string emit_kernel(const std::string& function_name, int k, const calc::KernelPlan& plan) {
    const calc::KernelMapping& km = mapping_.kernels[k];
    const calc::Stage& stage = calc_.stages[km.stage];
    std::set<int> axes;
    std::ostringstream body;
    for (NodeId id : plan.temporaries_in)
      body << "        const double n" << id << " = t" << slots_.at(id) << "[p];\n";
    for (NodeId id : plan.nodes) {
      const Node& n = dag_.node(id);
      if (n.uniform) continue;
      std::string text;
      switch (n.op) {
      case Op::Load:
        used_fields_.insert(n.index);
        text = load(n.index, n.offset[0], n.offset[1], n.offset[2]);
        break;
      case Op::Coordinate: {
        const int a = n.index;
        axes.insert(a);
        coordinate_axes_.insert(a);
        text = std::string(a == 0 ? "x" : a == 1 ? "y" : "z");
        if (n.offset[a] != 0)
          text += " + " + hoist(std::to_string(n.offset[a]) + ".0 * args->spacing[" +
                                std::to_string(a) + "]");
        break;
      }
      default: text = varying_expr(id); break;
      }
      body << "        const double n" << id << " = " << text << ";\n";
    }
    for (int st : km.stores) {
      const calc::Store& store = stage.stores[st];
      used_fields_.insert(store.grid_function);
      body << "        f" << store.grid_function << "[p] = " << ref(store.value) << ";\n";
    }
    for (NodeId t : km.temporaries)
      body << "        t" << slots_.at(t) << "[p] = " << ref(t) << ";\n";

    // Tiles from the block configuration: t_x along x, t_f along f, 1 along e.
    int tile[3] = {km.block.tx, 1, 1};
    tile[km.block.f_axis()] = km.block.tf;
    std::ostringstream o;
    o << "  // Kernel " << k << " (stage " << km.stage << "), block " << calc::to_string(km.block)
      << ": stores";
    for (int st : km.stores) o << " " << calc_.grid_functions[stage.stores[st].grid_function].name;
    if (!km.temporaries.empty()) {
      o << (km.stores.empty() ? " temporaries" : ", temporaries");
      for (NodeId t : km.temporaries) o << " t" << slots_.at(t);
    }
    o << ".\n  {\n";
    auto bound = [](const char* side, int a, int extent) {
      std::string s = std::string("args->") + side + "[" + std::to_string(a) + "]";
      if (extent != 0) s += std::string(side[0] == 'l' ? " - " : " + ") + std::to_string(extent);
      return s;
    };
    o << "    const saguaro_range range({" << bound("lo", 0, stage.extent_lo[0]) << ", "
      << bound("lo", 1, stage.extent_lo[1]) << ", " << bound("lo", 2, stage.extent_lo[2])
      << "},\n                              {" << bound("hi", 0, stage.extent_hi[0]) << ", "
      << bound("hi", 1, stage.extent_hi[1]) << ", " << bound("hi", 2, stage.extent_hi[2])
      << "},\n                              {" << tile[0] << ", " << tile[1] << ", " << tile[2]
      << "});\n";
    o << "    Kokkos::parallel_for(\n        \"" << function_name << "_k" << k
      << "\", range, KOKKOS_LAMBDA(const int i, const int j, const int k) {\n";
    o << "        const std::ptrdiff_t p = k * sk + j * sj + i;\n";
    for (int a = 0; a < 3; ++a)
      if (axes.count(a)) {
        const char* index = a == 0 ? "i" : a == 1 ? "j" : "k";
        o << "        const double "
          << (a == 0   ? "x"
              : a == 1 ? "y"
                       : "z")
          << " = origin" << a << " + double(" << index << " + ioff" << a << ") * spacing" << a
          << ";\n";
      }
    o << body.str();
    o << "      });\n  }\n";
    return o.str();
  }

  std::map<std::pair<int, int>, std::string> row_offsets_; // (dy, dz) -> its name
};

} // namespace

std::string generate_kokkos(const calc::Program& program,
                            const std::vector<calc::Mapping>& mappings) {
  if (!mappings.empty() && mappings.size() != program.calculations.size())
    throw calc::MappingError("generate_kokkos: " + std::to_string(mappings.size()) +
                             " mappings for " + std::to_string(program.calculations.size()) +
                             " calculations");
  std::set<std::string> helpers;
  std::vector<std::string> functions;
  for (std::size_t c = 0; c < program.calculations.size(); ++c) {
    const calc::Calculation& calc = program.calculations[c];
    const calc::Mapping mapping = mappings.empty() ? calc::default_mapping(calc) : mappings[c];
    KokkosEmitter emitter(calc, mapping);
    functions.push_back(emitter.emit(cpu_function_name(program, c)));
    helpers.insert(emitter.helpers().begin(), emitter.helpers().end());
  }

  std::ostringstream o;
  o << "// Generated by Saguaro (Kokkos backend) from thorn " << program.thorn << ", fd_order "
    << program.fd_order << ": " << program.calculations.size() << " calculation"
    << (program.calculations.size() == 1 ? "" : "s") << ".\n";
  o << "// One function per calculation: void saguaro_calc_<index>_<name>(const "
       "saguaro_cpu_args*).\n";
  o << "#include <Kokkos_Core.hpp>\n#include <cstddef>\n\n";
  o << cpu_args_preamble() << "\n";
  o << "namespace {\n";
  o << "#if KOKKOS_VERSION >= 30700\nnamespace saguaro_math = Kokkos;\n#else\n"
       "namespace saguaro_math = Kokkos::Experimental;\n#endif\n";
  o << "// i fastest, within tiles and across them, on every execution space.\n";
  o << "using saguaro_range = Kokkos::MDRangePolicy<Kokkos::Rank<3, Kokkos::Iterate::Left, "
       "Kokkos::Iterate::Left>, Kokkos::IndexType<int>>;\n";
  for (const Helper& h : kHelpers)
    if (helpers.count(h.name)) o << h.text;
  o << "} // namespace\n";
  for (const std::string& f : functions) o << "\n" << f;
  return o.str();
}

} // namespace saguaro::codegen
