// The method of lines on a System's arrays: the step plan of an integrator of the table
// (integrators.cpp) with one right-hand-side function and one post-step function, run by a
// StepRunner. The caller's arrays cannot move, so the table's register swaps exchange the
// arrays' contents (StepRunner without an owner to tell): the right-hand side always reads
// `state`, and after each stage post_step runs with the time of that stage's state. (The
// simulation renames instead, and folds the combinations into its kernels: step_fold.hpp.)
#include "schedule/schedule.hpp"

#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::schedule {

MethodOfLines::MethodOfLines(const Integrator& integrator, System system)
    : sys_(std::move(system)) {
  if (!sys_.calc_rhs) throw std::invalid_argument("MethodOfLines: calc_rhs is not set");
  if (sys_.state.size() != sys_.rhs.size())
    throw std::invalid_argument(fmt::format("MethodOfLines: {} state arrays but {} rhs arrays",
                                            sys_.state.size(), sys_.rhs.size()));
  if (sys_.points > 0) {
    for (std::size_t v = 0; v < sys_.state.size(); ++v)
      if (sys_.state[v] == nullptr || sys_.rhs[v] == nullptr)
        throw std::invalid_argument(
            fmt::format("MethodOfLines: variable {} has a null state or rhs array", v));
  }
  std::vector<StepFunction> post;
  if (sys_.post_step) post.push_back({"post_step"});
  runtime::ArraySpace& space = sys_.space != nullptr ? *sys_.space : runtime::host_space();
  runner_ = std::make_unique<StepRunner>(build_step_plan(integrator, {{"calc_rhs"}}, post, false),
                                         sys_.state, sys_.rhs, sys_.points, space);
}

MethodOfLines::~MethodOfLines() = default;

const StepPlan& MethodOfLines::plan() const {
  return runner_->plan();
}

void MethodOfLines::step(double t, double dt) {
  runner_->step(t, dt, [this](const StepOp& op, double time) {
    if (op.function == 0)
      sys_.calc_rhs(time);
    else
      sys_.post_step(time);
  });
}

} // namespace saguaro::schedule
