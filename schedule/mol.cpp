// The method of lines on a System's arrays: the step plan of an integrator of the table
// (integrators.cpp) with one right-hand-side function and one post-step function, run by a
// StepRunner. Each integrator keeps the step's initial state (and RK4 one accumulator) in
// scratch and writes every intermediate state into the state arrays themselves, so the
// right-hand side always reads `state`; after each stage's combinations, post_step runs with
// the time of that stage's state.
#include "schedule/schedule.hpp"

#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::schedule {

namespace {

const char* method_name(OdeMethod method) {
  switch (method) {
  case OdeMethod::ICN: return "ICN";
  case OdeMethod::RK2: return "RK2";
  case OdeMethod::RK3: return "RK3";
  case OdeMethod::RK4: return "RK4";
  }
  return "?";
}

} // namespace

OdeMethod ode_method_from_string(const std::string& word) {
  const Integrator& integrator = find_integrator(word); // throws for unknown names
  for (OdeMethod m : {OdeMethod::ICN, OdeMethod::RK2, OdeMethod::RK3, OdeMethod::RK4})
    if (integrator.name == method_name(m)) return m;
  throw std::invalid_argument(
      fmt::format("MoL::ODE_Method '{}' has no OdeMethod: use find_integrator", word));
}

const Integrator& integrator_of(OdeMethod method) {
  return find_integrator(method_name(method));
}

int order_of(OdeMethod method) {
  return integrator_of(method).order;
}

MethodOfLines::MethodOfLines(OdeMethod method, System system)
    : MethodOfLines(integrator_of(method), std::move(system)) {}

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
