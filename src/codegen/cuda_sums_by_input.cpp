// A thread's points summed by input (calc/sums_by_input.hpp says when and why): the plan's
// phases printed one after another, each over all t_ee points of the thread, unrolled.
//
//   if the thread has all its t_ee points:
//     running sums a<value>_<k> = the sums' constants
//     per phase (one input):
//       its register pipeline preloaded at the first point
//       per point k: the pipeline's next slot, the phase's values, a<value>_<k> += its terms
//     every store from the running sums; return
//   (else the loop over the points, as without sums by input)
#include "codegen/cpp.hpp" // cpp_literal
#include "codegen/cuda_printer.hpp"

namespace saguaro::codegen::cuda_detail {

void KernelPrinter::print_sums_by_input(std::ostringstream& o) {
  const int tee = plan_.block.tee;
  const std::string E = kAxis[e_];
  auto running = [](calc::NodeId value, int k) {
    return "a" + std::to_string(value) + "_" + std::to_string(k);
  };
  o << "  // All " << tee << " points of this thread at once, one input at a time (sums by "
    << "input): each\n  // phase adds an input's terms to every point's running sum. A thread the "
    << "region's end\n  // leaves fewer points takes the loop below.\n";
  o << "  if (" << E << "_stop - " << E << "_begin == " << tee << ") {\n";
  for (const auto& [value, start] : plan_.sums) {
    o << "    double";
    for (int k = 0; k < tee; ++k)
      o << (k ? ", " : " ") << running(value, k) << " = " << cpp_literal(start);
    o << ";\n";
  }
  for (const calc::InputPhase& phase : plan_.phases) {
    const int g = phase.grid_function;
    o << "    { // " << (g < 0 ? std::string("the terms that read no input") : gf_name(g)) << "\n";
    std::vector<const calc::RegisterPipeline*> pipelines;
    for (const calc::RegisterPipeline& p : plan_.pipelines)
      if (p.grid_function == g && g >= 0) {
        pipelines.push_back(&p);
        o << pipeline_preload(p, "      ");
      }
    for (int k = 0; k < tee; ++k) {
      o << "      {\n";
      if (g >= 0) o << "        const long long idx = idx0 + " << k << " * s_e;\n";
      if (const std::string z = coordinate_e(); !z.empty())
        o << "        const int " << E << "i = " << E << "_begin + " << k << ";\n        " << z;
      for (const calc::RegisterPipeline* p : pipelines)
        o << "        " << reg(g, p->hi) << " = f" << g << "[idx + " << p->hi << " * s_e];\n";
      o << steps_text(phase.steps, "        ");
      for (const calc::PartialSum& sum : phase.sums)
        o << "        " << running(sum.value, k) << " += " << weighted_sum(sum.terms) << ";\n";
      for (const calc::RegisterPipeline* p : pipelines)
        for (int d = p->lo; d < p->hi; ++d)
          o << "        " << reg(g, d) << " = " << reg(g, d + 1) << ";\n";
      o << "      }\n";
    }
    o << "    }\n";
  }
  for (const calc::Step& s : plan_.steps)
    if (s.kind == calc::Step::Kind::StoreField)
      for (int k = 0; k < tee; ++k)
        o << "    f" << s.target << "[idx0 + " << k << " * s_e] = " << running(s.node, k) << ";\n";
  o << "    return;\n  }\n";
}

} // namespace saguaro::codegen::cuda_detail
