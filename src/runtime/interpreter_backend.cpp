// The "interpreter" backend: calc::Interpreter evaluated point by point over KernelArgs, with
// the semantics of calc::run_calculation (stage s covers [lo - extent_lo, hi + extent_hi); a
// stage's results are written after its whole sweep). Slow and obviously correct: the oracle.
// Points are evaluated in parallel over the OpenMP threads (each its own PointInputs); the
// results are the same for any thread count.
#include "calc/interpreter.hpp"
#include "runtime/backends.hpp"
#include "runtime/check.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

namespace saguaro::runtime {
namespace {

class InterpretedCalculation final : public CompiledCalculation {
public:
  explicit InterpretedCalculation(const calc::Calculation& calc)
      : calc_(calc), interpreter_(calc_), shape_(detail::call_shape(calc_)) {}
  InterpretedCalculation(const InterpretedCalculation&) = delete; // interpreter_ refers to calc_
  InterpretedCalculation& operator=(const InterpretedCalculation&) = delete;

  void run(const KernelArgs& args) const override {
    if (!detail::check_args(shape_, args)) return;
    const std::ptrdiff_t nx = args.row_pitch(), ny = args.alloc[1];
    auto linear = [nx, ny](int i, int j, int k) { return (std::ptrdiff_t(k) * ny + j) * nx + i; };
    for (std::size_t s = 0; s < calc_.stages.size(); ++s) {
      const calc::Stage& stage = calc_.stages[s];
      const std::size_t stores = stage.stores.size();
      std::array<int, 3> lo, n;
      for (int a = 0; a < 3; ++a) {
        lo[a] = args.lo[a] - stage.extent_lo[a];
        n[a] = std::max(0, args.hi[a] + stage.extent_hi[a] - lo[a]);
      }
      const std::ptrdiff_t count = std::ptrdiff_t(n[0]) * n[1] * n[2];
      // Point p of the stage's region is (i, j, k) = lo + (p % n0, p / n0 % n1, p / n0 / n1).
      auto point = [&lo, &n](std::ptrdiff_t p) {
        return std::array<int, 3>{lo[0] + int(p % n[0]), lo[1] + int(p / n[0] % n[1]),
                                  lo[2] + int(p / n[0] / n[1])};
      };
      // Results are written after the sweep, so a stage never sees its own new values. Points
      // are independent: they are spread over the OpenMP threads.
      std::vector<double> results(std::size_t(count) * stores);
#pragma omp parallel
      {
        calc::PointInputs in;
        in.spacing = args.spacing;
        in.time = args.time;
        in.parameters = args.parameters;
        std::array<int, 3> at{0, 0, 0};
        in.load = [&](int gf, const calc::Offset& o) {
          return args.fields[gf][linear(at[0] + o[0], at[1] + o[1], at[2] + o[2])];
        };
#pragma omp for schedule(static)
        for (std::ptrdiff_t p = 0; p < count; ++p) {
          at = point(p);
          // From the global index, as the generated code does.
          for (int a = 0; a < 3; ++a)
            in.coordinate[a] = args.origin[a] + (at[a] + args.index_offset[a]) * args.spacing[a];
          std::vector<double> values = interpreter_.evaluate(int(s), in);
          std::copy(values.begin(), values.end(), results.begin() + p * std::ptrdiff_t(stores));
        }
      }
      for (std::ptrdiff_t p = 0; p < count; ++p) {
        std::array<int, 3> q = point(p);
        for (std::size_t st = 0; st < stores; ++st)
          args.fields[stage.stores[st].grid_function][linear(q[0], q[1], q[2])] =
              results[std::size_t(p) * stores + st];
      }
    }
  }

private:
  calc::Calculation calc_; // a copy: the interpreter refers to it
  calc::Interpreter interpreter_;
  detail::CallShape shape_;
};

class InterpreterBackend final : public Backend {
public:
  std::string name() const override { return "interpreter"; }
  BackendDescription description() const override {
    BackendDescription d;
    d.name = name();
    d.array_space = host_space().name();
    return d; // on the host, ignores mappings, neither predicted nor timed
  }
  std::vector<std::unique_ptr<CompiledCalculation>> compile(const calc::Program& program) override {
    std::vector<std::unique_ptr<CompiledCalculation>> out;
    for (const calc::Calculation& c : program.calculations)
      out.push_back(std::make_unique<InterpretedCalculation>(c));
    return out;
  }
};

} // namespace

std::unique_ptr<Backend> make_interpreter_backend() {
  return std::make_unique<InterpreterBackend>();
}

} // namespace saguaro::runtime
