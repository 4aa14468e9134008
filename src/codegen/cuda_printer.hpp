// The CUDA kernel printer, shared by the files that print parts of a kernel (cuda.cpp: the
// prologue, buffers and the loop over a thread's points; cuda_sums_by_input.cpp: a thread's
// points summed by input). Internal to codegen.
#pragma once

#include "calc/code_plan.hpp"
#include "codegen/cuda.hpp"

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace saguaro::codegen::cuda_detail {

inline const char* const kAxis[3] = {"x", "y", "z"};

// "m2" for -2, "3" for 3: offsets in generated names.
inline std::string name_part(int d) {
  return (d < 0 ? "m" : "") + std::to_string(std::abs(d));
}

// Prints one kernel plan. It decides nothing: geometry, buffers, loads, order and arguments
// come from the plan (calc/code_plan.hpp); it knows buffer kinds, not strategies.
class KernelPrinter : public CudaExpressionEmitter {
public:
  KernelPrinter(const calc::Calculation& calc, const calc::CodePlan& plan,
                const std::optional<calc::ArrayLayout>& layout)
      : CudaExpressionEmitter(calc.dag), calc_(calc), plan_(plan), layout_(layout), e_(plan.e),
        f_(plan.f) {}

  // The kernel's text. `whole_register_file`: __launch_bounds__(threads, 1), so ptxas may use
  // 255 registers; `grouped_tiles`: blocks walk (f, e) tiles in groups (KernelForms).
  std::string print(const std::string& name, bool whole_register_file, bool grouped_tiles);

private:
  std::string reg(int g, int d) const { return "r" + std::to_string(g) + "_" + name_part(d); }
  std::string load_text(const calc::Load& l, int g) const;
  // `steps` (Evaluate, LoadTemporary, stores at idx), each line after `indent`.
  std::string steps_text(const std::vector<calc::Step>& steps, const std::string& indent);
  std::string coordinate_e() const; // the e coordinate of point E i, when the plan uses it
  std::string pipeline_preload(const calc::RegisterPipeline& p, const std::string& indent) const;
  void print_prologue(std::ostringstream& o, const std::string& uniforms, bool grouped_tiles) const;
  void print_sums_by_input(std::ostringstream& o); // cuda_sums_by_input.cpp
  void print_buffers(std::ostringstream& o) const;
  void print_loop(std::ostringstream& o, const std::string& inner) const;
  std::string gf_name(int g) const { return calc_.grid_functions[std::size_t(g)].name; }

  const calc::Calculation& calc_;
  const calc::CodePlan& plan_;
  const std::optional<calc::ArrayLayout> layout_;
  const int e_, f_;
  // Register pipelines' offsets read from memory instead (the loop of a kernel whose points are
  // summed by input, taken only by threads the region's end leaves fewer points: carried along
  // e for every input at once, its pipelines would claim the registers the sums need).
  bool pipelines_from_memory_ = false;
};

} // namespace saguaro::codegen::cuda_detail
