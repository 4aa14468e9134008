// bench_suite's whole step (B1 and B5): one RK4 step of a periodic n^3 box as the `saguaro`
// driver runs it, on the CPU backend for the reference and on the CUDA backend with each
// mapping for the rows, and the naive whole step of B1 (naive.cu's periodic kernel with RK4
// stage kernels). Apart from the right-hand side's rows (suite_rows.cpp): a whole step runs a
// host::Simulation from a .par, not a kernel on a patch.
#include "suite_rows.hpp"

#include "runtime/cuda.hpp"
#include "runtime/statistics.hpp"
#include "schedule/simulation.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace saguaro::bench::suite {

// ---- the whole step ------------------------------------------------------------------------

// B1 (the wave's own initial data) and B5 (BSSN: a gauge wave and a linearized wave along x
// with the robust-stability noise on every variable, so that every variable and direction is
// non-trivial; the dissipation on as in B5's patch); none for the others.
std::optional<WholeStep> whole_step_of(const bench::Benchmark& b) {
  if (b.name == "wave2")
    return WholeStep{"Saguaro WaveDemo", b.fill.parameters,
                     "wave_init with the EDL's default parameters"};
  if (b.name == "bssn") {
    WholeStep s{
        "Saguaro SaguaroBSSN", b.fill.parameters,
        "bssn_init: gauge wave gwAmp 0.1 plus linearized wave lwAmp 0.05 along x, noiseAmp 0.01 on "
        "every variable"};
    s.settings["gwAmp"] = 0.1;
    s.settings["lwAmp"] = 0.05;
    s.settings["noiseAmp"] = 0.01;
    return s;
  }
  return std::nullopt;
}

namespace {

std::string step_par(const Options& opt, const bench::Benchmark& b, const std::string& thorn,
                     const WholeStep& ws, const std::string& backend, const std::string& mapper,
                     int iterations, const fs::path& out_dir, const std::string& cache) {
  std::string text = fmt::format(
      R"(# bench_suite's whole step: {title} ({edl_rel}, fd order {order}), RK4, periodic {n}^3.
ActiveThorns = "{thorns}"
Saguaro::equations = "{edl}"
Saguaro::fd_order  = {order}
Saguaro::backend   = "{backend}"
Saguaro::mapper    = "{mapper}"
Saguaro::progress_every = 0
CoordBase::xmax = 1.0
CoordBase::ymax = 1.0
CoordBase::zmax = 1.0
CoordBase::spacing  = "numcells"
CoordBase::ncells_x = {n}
CoordBase::ncells_y = {n}
CoordBase::ncells_z = {n}
Periodic::periodic  = yes
MoL::ODE_Method = "RK4"
Time::dtfac     = 0.25
Cactus::terminate   = "iteration"
Cactus::cctk_itlast = {it}
IO::out_dir   = "{out}"
IO::out_every = 0
)",
      fmt::arg("title", b.title), fmt::arg("edl_rel", b.file), fmt::arg("order", b.fd_order),
      fmt::arg("n", opt.n), fmt::arg("thorns", ws.thorns),
      fmt::arg("edl", std::string(SAGUARO_SOURCE_DIR) + "/" + b.file), fmt::arg("backend", backend),
      fmt::arg("mapper", mapper), fmt::arg("it", iterations), fmt::arg("out", out_dir.string()));
  if (!cache.empty()) text += fmt::format("Saguaro::cache_dir = \"{}\"\n", cache);
  for (const auto& [name, value] : ws.settings)
    text += fmt::format("{}::{} = {}\n", thorn, name, value);
  return text;
}

} // namespace

StepRun run_steps(const Options& opt, const bench::Benchmark& b, const std::string& thorn,
                  const WholeStep& ws, const std::string& backend, const std::string& mapper,
                  int iterations, const std::string& cache) {
  const fs::path dir =
      fs::absolute(opt.data) / fmt::format("step-{}-{}-{}", b.name, backend, mapper);
  fs::create_directories(dir);
  const fs::path par = dir / "step.par";
  write_text(par, step_par(opt, b, thorn, ws, backend, mapper, iterations, dir / "out", cache));
  std::ostringstream log;
  host::Simulation sim(host::load_setup(par.string()), MPI_COMM_WORLD, log);
  sim.run();
  StepRun r;
  r.log = log.str();
  r.variant = sim.time_tile().step();
  r.step_seconds = sim.step_seconds();
  r.dt = sim.dt();
  const grid::Patch& patch = sim.decomposition().patch();
  r.spacing = patch.spec.spacing;
  const grid::Index3 size = patch.size();
  r.points = {size[0], size[1], size[2]};
  const grid::Index3 alloc = patch.alloc();
  r.variables = sim.setup().program.evolved;
  for (const std::string& v : r.variables) {
    const int f = sim.fields().find(v);
    if (f < 0) throw std::runtime_error("whole step: no grid function " + v);
    const double* h = sim.fields().host(f);
    std::vector<double> in = interior(std::vector<double>(h, h + patch.points()), alloc,
                                      patch.pitch(), patch.ghost(), r.points);
    r.state.push_back(std::move(in));
  }
  return r;
}

// max over the variables of the normwise relative error against the reference step.
double step_error(const StepRun& got, const StepRun& ref) {
  if (got.variables != ref.variables)
    throw std::runtime_error("whole step: the evolved variables differ");
  double worst = 0;
  for (std::size_t v = 0; v < ref.state.size(); ++v)
    worst = std::max(worst, relative_error(got.state[v], ref.state[v]));
  return worst;
}

// The naive whole step of B1: periodic right-hand side plus RK4 stage kernels.
json naive_step(Context& ctx, runtime::cuda::KernelModule& module, const StepRun& s0,
                const StepRun& s1) {
  const Options& opt = ctx.opt;
  json row{{"system", "naive-cuda"}, {"kind", "step"}, {"benchmark", "wave2"}};
  if (s0.variables != std::vector<std::string>{"phi", "pi"})
    throw std::runtime_error("naive step: the wave's evolved variables are not phi, pi");
  runtime::ArraySpace& space = runtime::cuda::device_space();
  const int n = s0.points[0];
  const std::size_t count = std::size_t(n) * n * n;
  std::vector<double*> a; // phi, pi, phi_s, pi_s, kphi, kpi, accphi, accpi
  for (int i = 0; i < 8; ++i) a.push_back(space.allocate(count));
  double ih2[3];
  for (int d = 0; d < 3; ++d) ih2[d] = 1.0 / (s0.spacing[d] * s0.spacing[d]);
  int nn = n;
  double dt = s0.dt;
  unsigned long long cnt = count;
  const std::array<unsigned, 3> block{32, 8, 1},
      grid{unsigned((n + 31) / 32), unsigned((n + 7) / 8), unsigned(n)};
  const int sms = runtime::cuda::device_info().multiprocessors;
  const std::array<unsigned, 3> lblock{256, 1, 1}, lgrid{unsigned(8 * sms), 1, 1};
  auto step = [&] {
    for (int stage = 1; stage <= 4; ++stage) {
      double* phi = stage == 1 ? a[0] : a[2];
      double* pi = stage == 1 ? a[1] : a[3];
      void* rp[] = {&phi, &pi, &a[4], &a[5], &nn, &ih2[0], &ih2[1], &ih2[2]};
      module.launch("wave2_periodic", grid, block, rp);
      for (int v = 0; v < 2; ++v) {
        int st = stage;
        void* up[] = {&a[std::size_t(v)],
                      &a[std::size_t(2 + v)],
                      &a[std::size_t(6 + v)],
                      &a[std::size_t(4 + v)],
                      &st,
                      &dt,
                      &cnt};
        module.launch("rk4_stage", lgrid, lblock, up);
      }
    }
  };
  auto upload = [&] {
    space.from_host(a[0], s0.state[0].data(), count);
    space.from_host(a[1], s0.state[1].data(), count);
  };
  upload();
  step();
  double worst = 0;
  for (int v = 0; v < 2; ++v)
    worst = std::max(
        worst, relative_error(download(space, a[std::size_t(v)], count), s1.state[std::size_t(v)]));
  row["max_rel_error"] = worst;
  row["status"] = worst <= kTolerance ? "ok" : "wrong";
  if (worst > kTolerance)
    ctx.failed = true;
  else {
    upload(); // steps chain from the initial state, as in the simulation
    const std::vector<double> wall = time_batches(opt, step, space);
    row["wall"] = statistics(wall);
    row["median_s"] = runtime::median(wall);
    row["points_per_s"] = double(count) / runtime::median(wall);
    row["ns_per_point"] = runtime::median(wall) / double(count) * 1e9;
  }
  for (double* p : a) space.release(p);
  return row;
}

} // namespace saguaro::bench::suite
