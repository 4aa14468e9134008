// The method of lines: ICN, RK2, RK3, RK4 on the System's arrays, point by point.
//
// Each method keeps the step's initial state y0 in scratch and writes every intermediate
// state into the state arrays themselves, so the right-hand side always reads `state`. After
// each update of the state, post_step runs with the time of that substep's state.
//
//   ICN (Cactus MoL, 3 iterations, ICN_avg_theta = 1/2):
//        y1 = y0 + dt/2 f(t, y0)            [t + dt/2]
//        y2 = y0 + dt/2 f(t + dt/2, y1)     [t + dt/2]
//        y  = y0 + dt   f(t + dt/2, y2)     [t + dt]      second order
//   RK2 (Heun): y1 = y0 + dt f(t, y0) [t + dt]; y = (y0 + y1 + dt f(t + dt, y1)) / 2 [t + dt]
//   RK3 (SSP, Shu & Osher 1988):
//        y1 = y0 + dt f(t, y0)                             [t + dt]
//        y2 = 3/4 y0 + 1/4 (y1 + dt f(t + dt, y1))         [t + dt/2]
//        y  = 1/3 y0 + 2/3 (y2 + dt f(t + dt/2, y2))       [t + dt]
//   RK4 (classical): k1..k4 at t, t + dt/2, t + dt/2, t + dt; the sum k1 + 2 k2 + 2 k3 is
//        accumulated in a second scratch array.
//
// The updates run in the System's ArraySpace (runtime/host_array_space.cpp on the host: the
// OpenMP loops; kernels on the GPU).
#include "schedule/names.hpp"
#include "schedule/schedule.hpp"

#include <cstddef>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::schedule {

OdeMethod ode_method_from_string(const std::string& word) {
  static const std::vector<std::string> names = {"ICN", "RK2", "RK3", "RK4"};
  std::string up = support::upper(word);
  if (up == "ICN") return OdeMethod::ICN;
  if (up == "RK2") return OdeMethod::RK2;
  if (up == "RK3") return OdeMethod::RK3;
  if (up == "RK4") return OdeMethod::RK4;
  throw support::InputError(
      {}, fmt::format("unknown MoL::ODE_Method '{}': expected ICN, RK2, RK3 or RK4", word),
      support::did_you_mean(word, names));
}

int order_of(OdeMethod method) {
  switch (method) {
  case OdeMethod::ICN: return 2;
  case OdeMethod::RK2: return 2;
  case OdeMethod::RK3: return 3;
  case OdeMethod::RK4: return 4;
  }
  return 0;
}

MethodOfLines::MethodOfLines(OdeMethod method, System system)
    : method_(method), sys_(std::move(system)),
      space_(sys_.space != nullptr ? sys_.space : &runtime::host_space()) {
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
  // y0 for every variable; RK4 also accumulates k1 + 2 k2 + 2 k3.
  std::size_t per_variable = method_ == OdeMethod::RK4 ? 2 : 1;
  const std::size_t arrays = per_variable * sys_.state.size();
  scratch_.reserve(arrays);
  try {
    for (std::size_t a = 0; a < arrays; ++a) scratch_.push_back(space_->allocate(sys_.points));
  } catch (...) {
    for (double* s : scratch_) space_->release(s);
    throw;
  }
}

MethodOfLines::~MethodOfLines() {
  for (double* s : scratch_) space_->release(s);
}

void MethodOfLines::step(double t, double dt) {
  const std::size_t nv = sys_.state.size();
  const std::size_t n = sys_.points;
  runtime::ArraySpace& sp = *space_;
  auto y0 = [&](std::size_t v) { return scratch_[v]; };
  auto post = [&](double time) {
    if (sys_.post_step) sys_.post_step(time);
  };
  for (std::size_t v = 0; v < nv; ++v) sp.copy(y0(v), sys_.state[v], n);

  switch (method_) {
  case OdeMethod::ICN: {
    constexpr int iterations = 3;
    for (int k = 0; k < iterations; ++k) {
      bool last = k == iterations - 1;
      sys_.calc_rhs(k == 0 ? t : t + 0.5 * dt);
      double c = last ? dt : 0.5 * dt;
      for (std::size_t v = 0; v < nv; ++v) sp.euler(sys_.state[v], y0(v), sys_.rhs[v], c, n);
      post(last ? t + dt : t + 0.5 * dt);
    }
    break;
  }
  case OdeMethod::RK2: {
    sys_.calc_rhs(t);
    for (std::size_t v = 0; v < nv; ++v) sp.euler(sys_.state[v], y0(v), sys_.rhs[v], dt, n);
    post(t + dt);
    sys_.calc_rhs(t + dt);
    for (std::size_t v = 0; v < nv; ++v)
      sp.blend(sys_.state[v], y0(v), sys_.rhs[v], 0.5, 0.5, dt, n);
    post(t + dt);
    break;
  }
  case OdeMethod::RK3: {
    sys_.calc_rhs(t);
    for (std::size_t v = 0; v < nv; ++v) sp.euler(sys_.state[v], y0(v), sys_.rhs[v], dt, n);
    post(t + dt);
    sys_.calc_rhs(t + dt);
    for (std::size_t v = 0; v < nv; ++v)
      sp.blend(sys_.state[v], y0(v), sys_.rhs[v], 0.75, 0.25, dt, n);
    post(t + 0.5 * dt);
    sys_.calc_rhs(t + 0.5 * dt);
    for (std::size_t v = 0; v < nv; ++v)
      sp.blend(sys_.state[v], y0(v), sys_.rhs[v], 1.0 / 3.0, 2.0 / 3.0, dt, n);
    post(t + dt);
    break;
  }
  case OdeMethod::RK4: {
    auto acc = [&](std::size_t v) { return scratch_[nv + v]; };
    // k1, k2, k3: accumulate with weights 1, 2, 2 and step to the next stage's state.
    const double weight[3] = {1.0, 2.0, 2.0};
    const double stage_c[3] = {0.5 * dt, 0.5 * dt, dt};
    const double stage_t[4] = {t, t + 0.5 * dt, t + 0.5 * dt, t + dt};
    for (int s = 0; s < 3; ++s) {
      sys_.calc_rhs(stage_t[s]);
      for (std::size_t v = 0; v < nv; ++v) {
        sp.accumulate(acc(v), sys_.rhs[v], weight[s], s == 0, n);
        sp.euler(sys_.state[v], y0(v), sys_.rhs[v], stage_c[s], n);
      }
      post(stage_t[s + 1]);
    }
    sys_.calc_rhs(t + dt);
    for (std::size_t v = 0; v < nv; ++v)
      sp.rk4_final(sys_.state[v], y0(v), acc(v), sys_.rhs[v], dt / 6.0, n);
    post(t + dt);
    break;
  }
  }
}

} // namespace saguaro::schedule
